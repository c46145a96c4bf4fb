// The module table (edge/modules.ts): a node runs the modules named and those they require, in
// start-up order; with no names, every module, the reference last.
import t from 'tap';
import type { Module } from '../../edge/module.js';
import { loadModules, MODULE_NAMES } from '../../edge/modules.js';
import { createOrg, staffHeaders, startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const names = (ms: Module[]) => ms.map((m) => m.name);

t.test('module table - every module by default, in start-up order, the reference last', async (t) => {
  const all = await loadModules();
  t.same(names(all), MODULE_NAMES);
  t.equal(all.length, 12);
  t.equal(all.at(-1)?.name, 'reference');
});

t.test('module table - a named module brings the modules it requires, in start-up order', async (t) => {
  t.same(names(await loadModules(['checkin'])), ['workflow', 'reservations', 'checkin']);
  t.same(names(await loadModules(['storefront', 'auth'])), ['auth', 'workflow', 'reservations', 'storefront']);
  t.same(names(await loadModules(['phone'])), ['crm', 'phone']);
  t.same(names(await loadModules(['events', 'events'])), ['events'], 'once each');
  const own: Module = { name: 'own', requires: ['records'] };
  t.same(names(await loadModules(['chat', own])), ['own', 'records', 'chat'], "a caller's own module first, with what it requires");
  t.same(names(await loadModules([])), [], 'none named, none run');
});

t.test('module table - a name not in the table is refused before anything starts', async (t) => {
  await t.rejects(loadModules(['nope' as never]), { message: /no module named nope/ });
});

t.test('module table - a node serves the routes of its modules only; the storefront and chat ports say whose they are', async (t) => {
  const app = await startTestApp(t, { modules: ['auth'] });
  await createOrg(app, 'acme');
  const h = staffHeaders(app, 'acme');
  t.not((await request(app.url, '/profile/outbox', { headers: h })).status, 404, 'an auth route');
  t.equal((await request(app.url, '/events', { headers: h })).status, 404, 'no events route');
  t.throws(() => app.deps.services.storefront, { message: /storefront module, which this node does not run/ });
  // No socket channels (nor socket.io) on a node without the chat module.
  t.throws(() => app.deps.services.chatFanout, { message: /chatFanout belongs to the chat module/ });
  t.throws(() => app.deps.services.sockets, { message: /sockets belongs to the chat module/ });
  t.equal((await request(app.url, '/socket.io/?EIO=4&transport=polling')).status, 404, 'no socket endpoint');
});
