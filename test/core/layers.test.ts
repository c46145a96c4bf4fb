// The shape of the house (README: Architecture), checked on the sources: the edge reaches an area
// only through its index.ts and never commits, no module-level map carries wiring, an area reaches
// another only through its index.ts, the areas stand in layers (no circle between them), no
// import runs in a circle between files, type-only imports included, and an area's files are named
// for what they hold (api.ts, actor.ts or <kind>-actor.ts, messages.ts, <name>-job.ts).
import { dirname, join, normalize, relative } from 'node:path';
import t from 'tap';
import { source, sources } from '../helpers/sources.js';

const files = ['actors', 'core', 'edge'].flatMap(sources);
const text = new Map(files.map((f) => [f, source(f)]));
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
  // The scanner's per-WriteBatch caches (its records, its feed's watermark) are the only WeakMaps: they key state on a batch, not a node.
  t.same(files.filter((f) => /new WeakMap/.test(text.get(f)!)), ['actors/scanner/door-feed.ts', 'actors/scanner/record-overlay.ts'], 'WeakMaps');
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

/** A file's name without its folder. */
const baseOf = (f: string): string => f.slice(f.lastIndexOf('/') + 1);
const areaFiles = files.filter((f) => areaOf(f));

/** The type arguments of each `: ActorKind<...>` annotation that names a kind's definition (not a list of kinds). */
function actorKindsOf(source: string): string[][] {
  const out: string[][] = [];
  for (const m of source.matchAll(/:\s*ActorKind</g)) {
    const args: string[] = [];
    let depth = 1;
    let from = m.index! + m[0].length;
    let i = from;
    for (; depth > 0; i++) {
      const c = source[i];
      if (c === '<' || c === '{' || c === '(' || c === '[') depth++;
      else if (c === '>' || c === '}' || c === ')' || c === ']') depth--;
      if ((c === ',' && depth === 1) || depth === 0) {
        args.push(source.slice(from, i).trim());
        from = i + 1;
      }
    }
    if (/^\s*[={]/.test(source.slice(i))) out.push(args);
  }
  return out;
}

t.test("layers - an area's files are named for what they hold", async (t) => {
  const apis = areaFiles.filter((f) => /^export (?:async )?function create\w+Api\b|^export class \w+Api\b/m.test(text.get(f)!));
  t.same(apis.filter((f) => baseOf(f) !== 'api.ts'), [], "a file that defines an area's API is its api.ts");
  t.ok(apis.length >= 10, `the areas' APIs are found (${apis.length})`);

  const kinds = files.filter((f) => actorKindsOf(text.get(f)!).length > 0);
  t.same(kinds.filter((f) => !/^(?:.+-)?actor\.ts$/.test(baseOf(f))), [], 'a file that defines an actor kind is actor.ts or <kind>-actor.ts');
  t.ok(kinds.length >= 20, `the actor kinds are found (${kinds.length})`);

  // The job modules the query workers load (edge/query-jobs.ts lists them by their constants).
  const listed = /QUERY_JOBS[^=]*=\s*\[([^\]]*)\]/.exec(text.get('edge/query-jobs.ts')!)![1].split(',').map((s) => s.trim()).filter(Boolean);
  const modules = listed.map((name) => {
    const at = areaFiles.find((f) => new RegExp(`^export const ${name} = new URL\\(`, 'm').test(text.get(f)!));
    const url = at && new RegExp(`^export const ${name} = new URL\\([^;]*'(\\./[^']+)\\.ts'`, 'm').exec(text.get(at)!)?.[1];
    return at && url ? normalize(join(dirname(at), url)) + '.ts' : `${name}: not found`;
  });
  t.equal(modules.length, 5, 'the query jobs are found');
  t.same(modules.filter((f) => !text.has(f) || !baseOf(f).endsWith('-job.ts')), [], 'a query-pool job module is <name>-job.ts');
});

t.test("layers - an area's actor messages live in its messages.ts", async (t) => {
  const declared = new Map<string, string>();
  for (const f of areaFiles) {
    for (const m of text.get(f)!.matchAll(/^export (?:type|interface) (\w+)/gm)) declared.set(`${areaOf(f)}:${m[1]}`, f);
  }
  const misplaced = [...declared].filter(([key, f]) => /(?:Msg|Message)$/.test(key) && baseOf(f) !== 'messages.ts').map(([key, f]) => `${key.split(':')[1]} in ${f}`);
  t.same(misplaced, [], 'an exported type named *Msg or *Message lives in a messages.ts');
  // What each kind accepts is a type its area's messages.ts declares, not an inline shape or a type of the actor file.
  const accepted = areaFiles.flatMap((f) =>
    actorKindsOf(text.get(f)!).map(([, msg]) => {
      const home = declared.get(`${areaOf(f)}:${msg}`);
      return `${f}: ${msg} in ${home ?? 'no exported type of the area'}`;
    }),
  );
  t.same(accepted.filter((line) => !line.endsWith('/messages.ts')), [], "an actor kind's message type is declared in its area's messages.ts");
  // A messages.ts is what callers import to address a kind without the actor: it imports no actor file.
  const back = areaFiles
    .filter((f) => baseOf(f) === 'messages.ts')
    .flatMap((f) => importsOf(f).map(([to]) => `${f} -> ${to}`))
    .filter((edge) => /-> .*(?:^|\/|-)actor\.ts$/.test(edge));
  t.same(back, [], 'no messages.ts imports an actor file');
});
