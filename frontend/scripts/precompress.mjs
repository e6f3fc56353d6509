// Writes NAME.gz beside every text file of the build (JS, CSS, HTML, SVG, JSON) that
// gzip shrinks, so that the server sends it as it is to clients that accept gzip
// instead of compressing it on every request. Run after `vite build` (npm run build).
// Usage: node scripts/precompress.mjs [dir]   (default: dist)
import { readdirSync, readFileSync, writeFileSync, statSync } from 'node:fs';
import { gzipSync, constants } from 'node:zlib';
import { join } from 'node:path';

const MIN_SIZE = 1024; // the server does not compress smaller answers either
const TEXT = /\.(js|mjs|css|html|svg|json|txt|map)$/;

const root = process.argv[2] ?? new URL('../dist/', import.meta.url).pathname;
let files = 0, before = 0, after = 0;
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      walk(path);
      continue;
    }
    if (!TEXT.test(name)) continue;
    const raw = readFileSync(path);
    if (raw.length < MIN_SIZE) continue;
    const gz = gzipSync(raw, { level: constants.Z_BEST_COMPRESSION });
    if (gz.length >= raw.length * 0.9) continue; // not worth a second copy
    writeFileSync(path + '.gz', gz);
    files++, before += raw.length, after += gz.length;
  }
})(root);
console.log(`precompress: ${files} files, ${(before / 1024).toFixed(1)} KiB -> ${(after / 1024).toFixed(1)} KiB gzipped`);
