// Fails when the main UI's JS and CSS together exceed 300 KiB gzipped: the files that
// index.html loads, statically or lazily (from Vite's manifest). GraphiQL's page
// (graphiql.html) has its own bundle, which the UI never loads: it is reported, not
// counted. Run after `npm run build`.
import { readFileSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

const BUDGET = 300 * 1024;
const dist = new URL('../dist/', import.meta.url).pathname;
const manifestPath = join(dist, '.vite/manifest.json');
if (!existsSync(manifestPath)) {
  console.error('budget: dist/.vite/manifest.json is missing: run npm run build first');
  process.exit(1);
}
const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));

/** Every JS and CSS file an entry loads, its lazy imports included. */
function filesOf(entry) {
  const files = new Set();
  const seen = new Set();
  (function walk(key) {
    if (seen.has(key) || !manifest[key]) return;
    seen.add(key);
    const chunk = manifest[key];
    files.add(chunk.file);
    for (const css of chunk.css ?? []) files.add(css);
    for (const k of [...(chunk.imports ?? []), ...(chunk.dynamicImports ?? [])]) walk(k);
  })(entry);
  return files;
}

const gz = (f) => gzipSync(readFileSync(join(dist, f)), { level: 9 }).length;
const main = filesOf('index.html');
let total = 0;
for (const f of main) {
  const n = gz(f);
  total += n;
  console.log(`budget: ${f} ${(n / 1024).toFixed(1)} KiB gzipped`);
}
console.log(`budget: main UI JS + CSS ${(total / 1024).toFixed(1)} KiB gzipped (limit ${BUDGET / 1024} KiB)`);
if (manifest['graphiql.html']) {
  const own = [...filesOf('graphiql.html')].filter((f) => !main.has(f));
  const size = own.reduce((sum, f) => sum + gz(f), 0);
  console.log(`budget: GraphiQL's own page (not counted) ${(size / 1024).toFixed(1)} KiB gzipped`);
}
if (total > BUDGET) {
  console.error('budget: over the limit');
  process.exit(1);
}
