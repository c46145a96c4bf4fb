// The server's sources as plain JavaScript, for tests that start it as a child process many times
// (crash safety, cluster nodes). Through a TypeScript loader every child transforms the whole
// project again (~12 s per start on a loaded 2-core machine); transpiled once (transpileModule,
// no type check: the typecheck script does that) a start takes 2-4 s.
//
// The output is shared by every test process of a run: it lives in the temp directory under a
// hash of the sources, is built in a private directory and renamed into place, so test files that
// race to build it all end up using one complete copy.
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = fileURLToPath(new URL('../..', import.meta.url));
/** What a child server may import: the service and the test helpers and fixtures it runs. */
const DIRS = ['core', 'actors', 'edge', 'config', 'test/helpers', 'test/cluster'];

function sources(): string[] {
  const out: string[] = [];
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      const r = join(rel, e.name);
      if (e.isDirectory()) walk(r);
      else if ((e.name.endsWith('.ts') && !e.name.endsWith('.d.ts') && !e.name.endsWith('.test.ts')) || e.name.endsWith('.json')) out.push(r);
    }
  };
  for (const d of DIRS) walk(d);
  return out.sort();
}

/** The directory holding the transpiled tree (root-relative paths, `.ts` → `.js`). */
export function transpiledRoot(): string {
  // Already running as JavaScript (npm test runs the tree scripts/test.mjs transpiled): it is the tree.
  if (import.meta.url.endsWith('.js')) return root;
  const files = sources();
  const h = createHash('sha256');
  for (const f of files) {
    const s = statSync(join(root, f));
    h.update(`${f}\0${s.size}\0${s.mtimeMs}\0`);
  }
  const dir = join(tmpdir(), `bp-transpiled-${h.digest('hex').slice(0, 16)}`);
  if (existsSync(join(dir, '.complete'))) return dir;

  const work = mkdtempSync(join(tmpdir(), 'bp-transpiling-'));
  for (const f of files) {
    const to = join(work, f.endsWith('.ts') ? f.slice(0, -3) + '.js' : f);
    mkdirSync(dirname(to), { recursive: true });
    if (f.endsWith('.json')) copyFileSync(join(root, f), to);
    else {
      const js = ts.transpileModule(readFileSync(join(root, f), 'utf8'), {
        fileName: f,
        compilerOptions: { target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext, sourceMap: false },
      }).outputText;
      writeFileSync(to, js);
    }
  }
  writeFileSync(join(work, 'package.json'), JSON.stringify({ type: 'module' }));
  symlinkSync(join(root, 'node_modules'), join(work, 'node_modules'), 'dir');
  writeFileSync(join(work, '.complete'), '');
  try {
    renameSync(work, dir);
  } catch {
    // Another test process renamed its copy into place first: use that one.
    rmSync(work, { recursive: true, force: true });
    if (!existsSync(join(dir, '.complete'))) throw new Error(`could not prepare the transpiled sources in ${dir}`);
  }
  return dir;
}

/** The transpiled path of a root-relative TypeScript file, e.g. `edge/main.ts`. */
export function transpiled(rel: string): string {
  return join(transpiledRoot(), rel.replace(/\.ts$/, '.js'));
}
