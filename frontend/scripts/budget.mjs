// Fails when the built JS and CSS together exceed 300 KiB gzipped. Run after `npm run build`.
import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { join } from 'node:path';

const BUDGET = 300 * 1024;
const dir = new URL('../dist/assets/', import.meta.url).pathname;
if (!existsSync(dir)) {
  console.error('budget: dist/assets is missing: run npm run build first');
  process.exit(1);
}
let total = 0;
for (const f of readdirSync(dir)) {
  if (!/\.(js|css)$/.test(f)) continue;
  const gz = gzipSync(readFileSync(join(dir, f)), { level: 9 }).length;
  total += gz;
  console.log(`budget: ${f} ${(gz / 1024).toFixed(1)} KiB gzipped`);
}
console.log(`budget: JS + CSS ${(total / 1024).toFixed(1)} KiB gzipped (limit ${BUDGET / 1024} KiB)`);
if (total > BUDGET) {
  console.error('budget: over the limit');
  process.exit(1);
}
