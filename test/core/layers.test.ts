// The shape of the house (README: Architecture), checked on the sources: the edge reaches an area
// only through its index.ts and never commits, no module-level map carries wiring, an area reaches
// another only through its index.ts, the areas stand in layers (no circle between them), and no
// import runs in a circle between files, type-only imports included.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(join(root, dir))) {
    const rel = join(dir, name);
    if (statSync(join(root, rel)).isDirectory()) out.push(...sources(rel));
    else if (name.endsWith('.ts')) out.push(rel);
  }
  return out;
}

const files = ['actors', 'core', 'edge'].flatMap(sources);
const text = new Map(files.map((f) => [f, readFileSync(join(root, f), 'utf8')]));
const IMPORT = /^(?:import|export)\s+(type\s+)?[^'"]*?from\s+'(\.[^']+)'/gm;

/** Relative imports of `file`: [target file, whether the whole statement is type-only]. */
function importsOf(file: string): Array<[string, boolean]> {
  const out: Array<[string, boolean]> = [];
  for (const m of text.get(file)!.matchAll(IMPORT)) {
    out.push([normalize(join(dirname(file), m[2])).replace(/\.js$/, '.ts'), m[1] !== undefined]);
  }
  return out;
}

t.test('layers - the edge imports an area only through its index.ts', async (t) => {
  const inside = files
    .filter((f) => f.startsWith('edge/'))
    .flatMap((f) => importsOf(f).map(([to]) => `${f} -> ${to}`))
    .filter((edge) => /-> actors\/[^/]+\/(?!index\.ts$)/.test(edge));
  t.same(inside, [], 'no edge file imports an area file other than its index.ts');
});

t.test('layers - the edge never commits, and no module-level WeakMap carries wiring', async (t) => {
  t.same(files.filter((f) => f.startsWith('edge/') && /\.commit\(/.test(text.get(f)!)), [], 'no .commit( under edge/');
  // The scanner's per-WriteBatch cache is the one WeakMap: it keys state on a batch, not a node.
  t.same(files.filter((f) => /new WeakMap/.test(text.get(f)!)), ['actors/scanner/record-overlay.ts'], 'WeakMaps');
});

/** The circles of a graph, each as `a -> b -> ... -> a` (one per back edge a depth-first walk meets). */
function circlesOf(graph: Map<string, string[]>): string[] {
  const circles: string[] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    path.push(f);
    for (const to of graph.get(f) ?? []) {
      if (state.get(to) === 'open') circles.push([...path.slice(path.indexOf(to)), to].map((p) => relative('.', p)).join(' -> '));
      else if (!state.has(to)) visit(to);
    }
    path.pop();
    state.set(f, 'done');
  };
  for (const f of graph.keys()) if (!state.has(f)) visit(f);
  return circles;
}

/** The area of a file under actors/ (`actors/<area>`), undefined elsewhere. */
const areaOf = (f: string): string | undefined => /^actors\/[^/]+(?=\/)/.exec(f)?.[0];

t.test('layers - no value import runs in a circle between files', async (t) => {
  const graph = new Map(files.map((f) => [f, importsOf(f).filter(([to, typeOnly]) => !typeOnly && text.has(to)).map(([to]) => to)]));
  t.same(circlesOf(graph), [], 'no circle of value imports');
});

t.test('layers - no import runs in a circle between files, type-only imports included', async (t) => {
  const graph = new Map(files.map((f) => [f, importsOf(f).filter(([to]) => text.has(to)).map(([to]) => to)]));
  t.same(circlesOf(graph), [], 'no circle of imports');
});

t.test('layers - an area imports another area only through its index.ts', async (t) => {
  const inside = files
    .filter((f) => areaOf(f))
    .flatMap((f) => importsOf(f).map(([to]) => [f, to] as const))
    .filter(([f, to]) => areaOf(to) && areaOf(to) !== areaOf(f) && !to.endsWith('/index.ts'))
    .map(([f, to]) => `${f} -> ${to}`);
  t.same(inside, [], "no actors/ file imports another area's file other than its index.ts");
});

t.test('layers - the areas stand in layers: no circle between areas', async (t) => {
  const graph = new Map<string, string[]>();
  for (const f of files) {
    const from = areaOf(f);
    if (!from) continue;
    const deps = graph.get(from) ?? [];
    graph.set(from, deps);
    for (const [to] of importsOf(f)) {
      const area = areaOf(to);
      if (area && area !== from && !deps.includes(area)) deps.push(area);
    }
  }
  t.same(circlesOf(graph), [], 'no circle in the graph of areas');
});
