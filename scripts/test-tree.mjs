// The project as plain JavaScript, for `npm test` (scripts/test.mjs): every source transpiled once
// (TypeScript's transpileModule, no type check: the typecheck script does that) into a tree that
// mirrors the repository file for file (sources, fixtures, README, config: what tests read by a
// path relative to themselves), with a `.js` beside each `.ts`; node_modules is a link. Through a
// TypeScript loader every test process, every server a test starts as a child and every query
// worker thread resolves and transforms the project's ~500 modules through the loader's hooks
// again; from the tree they load as they are.
//
// The tree lives in the temp directory under a hash of the sources, so a second run of unchanged
// sources reuses it; trees a day old are removed.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = fileURLToPath(new URL('..', import.meta.url));
/** Not part of the tree: installed, built, generated or run-time directories. */
const SKIP = new Set(['node_modules', '.git', 'dist', 'data', '.tap', 'coverage']);
/** Trees of earlier sources are removed once this old (another checkout may be using a newer one). */
const STALE_MS = 24 * 3600_000;

function files() {
  const out = [];
  const walk = (rel) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (SKIP.has(e.name)) continue;
      const r = rel ? join(rel, e.name) : e.name;
      if (e.isDirectory()) walk(r);
      else if (e.isFile()) out.push(r);
    }
  };
  walk('');
  return out.sort();
}

/** The package.json of the tree: tap (run there by hand) finds the `.js` twins, with no loader. */
function treePackage() {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const tap = { ...pkg.tap };
  tap.include = tap.include.map((p) => p.replace(/\.ts$/, '.js'));
  delete tap['node-arg'];
  return JSON.stringify({ ...pkg, tap }, null, 2);
}

function transpile(rel, text) {
  // Loaded only when a tree is built: a test process that merely asks where the tree is does not
  // load the compiler.
  const ts = createRequire(import.meta.url)('typescript');
  return ts.transpileModule(text, {
    fileName: rel,
    compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, sourceMap: false },
  }).outputText;
}

/** Builds (or finds) the tree of the current sources; returns its directory. */
export function buildTree() {
  const list = files();
  const h = createHash('sha256');
  for (const f of list) {
    const s = statSync(join(root, f));
    h.update(`${f}\0${s.size}\0${s.mtimeMs}\0`);
  }
  const name = `bp-test-tree-${h.digest('hex').slice(0, 16)}`;
  const dir = join(tmpdir(), name);
  removeStale(name);
  if (existsSync(join(dir, '.complete'))) return dir;

  const started = Date.now();
  const work = mkdtempSync(join(tmpdir(), 'bp-test-building-'));
  for (const f of list) {
    const to = join(work, f);
    mkdirSync(dirname(to), { recursive: true });
    copyFileSync(join(root, f), to);
    if (f.endsWith('.ts') && !f.endsWith('.d.ts')) writeFileSync(to.slice(0, -3) + '.js', transpile(f, readFileSync(join(root, f), 'utf8')));
  }
  writeFileSync(join(work, 'package.json'), treePackage());
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');
  writeFileSync(join(work, '.complete'), '');
  try {
    renameSync(work, dir);
  } catch {
    // Another run built the same sources first: use its tree.
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(dir, '.complete'))) throw new Error(`could not prepare the test tree in ${dir}`);
  }
  process.stderr.write(`test tree: transpiled ${list.length} files into ${dir} in ${Date.now() - started} ms\n`);
  return dir;
}

function removeStale(keep) {
  const now = Date.now();
  for (const e of readdirSync(tmpdir())) {
    if (!e.startsWith('bp-test-tree-') || e === keep) continue;
    const p = join(tmpdir(), e);
    try {
      if (now - statSync(p).mtimeMs > STALE_MS) rmSync(p, { recursive: true, force: true });
    } catch {
      // Removed by another run meanwhile.
    }
  }
}
