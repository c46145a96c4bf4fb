// The edge only translates (README: Architecture): a route, socket handler or module makes one call
// into its area's API, which chooses the actor, its key and the message. Checked on the sources, as
// layers.test.ts checks imports: no edge file under routes/, sockets/ or modules/ asks an actor
// through the runtime, and hashing a secret is the auth area's, not the edge's.
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

t.test('edge asks - no edge file hashes a password or PIN itself', async (t) => {
  const edge = sources('edge');
  t.same(
    edge.filter((f) => /from\s+'[^']*core\/auth\/password(\.js)?'/.test(text(f))),
    [],
    'no edge file imports core/auth/password',
  );
});
