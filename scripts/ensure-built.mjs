// Builds dist/ (tsc -p tsconfig.build.json) when it is missing or older than any source file; the
// npm scripts that run built code call it first.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = join(dirname(fileURLToPath(import.meta.url)), '..');

function newest(dir) {
  let t = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) t = Math.max(t, newest(p));
    else if (/\.(ts|json)$/.test(e.name)) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

/** Builds when `entry` (a file under dist/) is missing or older than the sources. */
export function ensureBuilt(entry) {
  const sources = ['core', 'actors', 'edge', 'config', 'bench'].map((d) => join(root, d)).filter(existsSync);
  const stale = !existsSync(entry) || Math.max(...sources.map(newest), statSync(join(root, 'tsconfig.json')).mtimeMs) > statSync(entry).mtimeMs;
  if (!stale) return;
  process.stderr.write('building (tsc -p tsconfig.build.json)...\n');
  const tsc = join(root, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', join(root, 'tsconfig.build.json')], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
