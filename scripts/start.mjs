// `npm start`: builds dist/ when it is missing or older than any source file, then serves.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const entry = join(root, 'dist', 'edge', 'main.js');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p));
    else if (/\.(ts|json)$/.test(e.name)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

const sources = ['core', 'actors', 'edge', 'config', 'bench'].map((d) => join(root, d)).filter(existsSync);
const stale = !existsSync(entry) || Math.max(...sources.map(newest), statSync(join(root, 'tsconfig.json')).mtimeMs) > statSync(entry).mtimeMs;
if (stale) {
  process.stderr.write('building (tsc -p tsconfig.build.json)...\n');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
await import(entry);
