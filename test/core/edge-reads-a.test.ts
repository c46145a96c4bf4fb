// Areas A (auth, crm, inbox, phone) in the house's shape, checked on the sources: their routes,
// the tenant header and the socket handshake read through an area's API (or core's org lookup),
// never the store itself; and the areas' writes are made by actors, never by a commit of their own.
import t from 'tap';
import { source as read, sources } from '../helpers/sources.js';

/** A call of a store read method on anything named store (ctx.deps.store, deps.store, store). */
const STORE_READ = /\bstore\s*\.\s*(get|scan|list|read|query|count|has|candidates|usage)[A-Za-z]*\s*\(/;

const edgeFiles = ['edge/routes/auth', 'edge/routes/crm', 'edge/routes/phone', 'edge/http/tenant.ts', 'edge/sockets/handshake.ts'].flatMap(sources);
const areaFiles = ['actors/auth', 'actors/crm', 'actors/inbox', 'actors/phone'].flatMap(sources);

t.test('edge reads (areas A) - routes, the tenant header and the handshake read no store directly', async (t) => {
  t.ok(edgeFiles.length > 15, 'the files are found');
  t.same(edgeFiles.filter((f) => STORE_READ.test(read(f))), [], 'no store read call');
  t.same(edgeFiles.filter((f) => f.startsWith('edge/routes/') && /deps\.store\b/.test(read(f))), [], 'no route hands the store to anything');
  t.same(edgeFiles.filter((f) => /\.commit\(/.test(read(f))), [], 'no commit');
});

t.test('edge reads (areas A) - auth, crm, inbox and phone write only through actors', async (t) => {
  t.ok(areaFiles.length > 30, 'the files are found');
  t.same(areaFiles.filter((f) => /\.commit\(/.test(read(f))), [], 'no area file commits: each write is a message to the actor that owns its key');
});
