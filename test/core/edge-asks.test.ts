// The edge only translates (README: Architecture): a route, socket handler or module makes one call
// into its area's API, which chooses the actor, its key and the message. Checked on the sources, as
// layers.test.ts checks imports: no edge file under routes/, sockets/ or modules/ asks an actor
// through the runtime, no route hands an area a message it built, the socket handlers hold no
// store, and hashing a secret is the auth area's, not the edge's.
import t from 'tap';
import { source as text, sources } from '../helpers/sources.js';


/** `file:line` of each line of `files` matching `re`. */
function hits(files: string[], re: RegExp): string[] {
  return files.flatMap((f) => text(f).split('\n').flatMap((line, i) => (re.test(line) ? [`${f}:${i + 1}`] : [])));
}

t.test('edge asks - no route, socket handler or module asks an actor through the runtime', async (t) => {
  const handlers = ['edge/routes', 'edge/sockets', 'edge/modules'].flatMap(sources);
  t.ok(handlers.length > 20, 'the sources were found');
  // `runtime.ask(`, `runtime.ask<R>(`, also with `ctx.deps.` before it; and an area API's raw
  // message passing (`api.ask<StoredRecord>(`) is the same thing under another name.
  t.same(hits(handlers, /\bruntime\s*\.\s*ask\s*[<(]/), [], 'no runtime.ask');
  t.same(hits(handlers, /\.ask\s*</), [], 'no .ask<R>(');
});

/**
 * `file:line` of each call `.ask(` or `askPos(` in `files` with an object literal among its
 * arguments (the message, however many lines the call spans).
 */
function messageAsks(files: string[]): string[] {
  return files.flatMap((f) => {
    const src = text(f);
    const out: string[] = [];
    for (const m of src.matchAll(/(?:\.ask|\baskPos)\s*(?:<[^>()]*>)?\s*\(/g)) {
      let depth = 1;
      for (let i = m.index + m[0].length; i < src.length && depth > 0; i++) {
        const c = src[i];
        if (c === '{' && depth === 1) {
          out.push(`${f}:${src.slice(0, m.index).split('\n').length}`);
          break;
        }
        if (c === '(' || c === '{' || c === '[') depth++;
        else if (c === ')' || c === '}' || c === ']') depth--;
      }
    }
    return out;
  });
}

t.test('edge asks - no route hands its area an actor message it built', async (t) => {
  const routes = sources('edge/routes');
  t.ok(routes.length > 20, 'the sources were found');
  // `api.ask(tenant, location, {type: ...})`, `sf.askPos<R>(tenant, slug, {...})`: the area's API
  // names the operation instead, and the message shapes stay inside the area.
  t.same(messageAsks(routes), [], 'no .ask( or askPos( with an object literal');
});

t.test('edge asks - no socket handler holds the store', async (t) => {
  const sockets = sources('edge/sockets');
  t.ok(sockets.length > 5, 'the sources were found');
  // What a handler needs of an organisation (does it exist, its plan) is a port it is given.
  t.same(
    sockets.filter((f) => /import\s+(?:type\s+)?\{[^}]*\bStore\b[^}]*\}\s*from/.test(text(f))),
    [],
    'no edge/sockets file imports Store',
  );
  t.same(hits(sockets, /\bdeps\s*\??\.\s*store\b/), [], 'no deps.store');
});

t.test('edge asks - no edge file hashes a password or PIN itself', async (t) => {
  const edge = sources('edge');
  t.same(
    edge.filter((f) => /from\s+'[^']*core\/auth\/password(\.js)?'/.test(text(f))),
    [],
    'no edge file imports core/auth/password',
  );
});
