import t from 'tap';
import { createOrg, startTestApp, staffHeaders, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { ack, agent, chatSocket, collect, customer, eventually, once, sleep, until } from './helpers.js';

t.test('presence - offline only after the grace period; a reconnect within it does not flap', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { presenceGraceMs: 400 } } });
  await createOrg(app, 'acme');
  const boss = agent(app, 'acme', 'boss');
  const alice = agent(app, 'acme', 'alice');
  const { s: watcher } = await chatSocket(t, app, 'acme', boss);
  const changes = collect(watcher, 'presence-change');
  const http = client(app.url, staffHeaders(app, 'acme'));

  const online = until(watcher, 'presence-change', (d: any) => d.email === alice.email && d.online);
  const first = await chatSocket(t, app, 'acme', alice);
  t.match(await online, { userId: alice.id, email: alice.email, kind: 'agent', status: 'online', online: true, connections: 1, at: /Z$/ });

  // Gone and back within the grace period: nobody is told anything.
  first.s.disconnect();
  await sleep(100);
  const second = await chatSocket(t, app, 'acme', alice);
  await sleep(500);
  t.same(
    changes.filter((c) => c.email === alice.email).map((c) => c.status),
    ['online'],
    'no offline/online flap across a quick reconnect',
  );
  t.match((await http.get(`/chat/agents/${alice.email}/presence`)).body, { status: 'online', online: true, connections: 1 });

  // Gone for good: offline after the grace period.
  const offline = until(watcher, 'presence-change', (d: any) => d.email === alice.email && !d.online);
  const leftAt = Date.now();
  second.s.disconnect();
  t.match(await offline, { status: 'offline', online: false, connections: 0, lastSeen: /Z$/ });
  t.ok(Date.now() - leftAt >= 380, 'not before the grace period');
  t.match((await http.get(`/chat/agents/${alice.email}/presence`)).body, { status: 'offline', online: false });
  t.match((await http.get('/chat/agents/online')).body, { data: [{ email: boss.email }], total: 1 });
});

t.test('presence - the default grace period is 10 s', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  t.equal(app.config.chat.presenceGraceMs, 10_000);
});

t.test('presence - agent states online, away, busy, offline over the socket and REST', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { presenceGraceMs: 100, presenceTtlMs: 1000 } } });
  await createOrg(app, 'acme');
  const boss = agent(app, 'acme', 'boss', ['User', 'Supervisor']);
  const alice = agent(app, 'acme', 'alice');
  const bob = agent(app, 'acme', 'bob');
  const { s: watcher } = await chatSocket(t, app, 'acme', boss);
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const asAlice = client(app.url, { orgid: 'acme', authorization: `Bearer ${alice.token}` });
  const asBoss = client(app.url, { orgid: 'acme', authorization: `Bearer ${boss.token}` });

  for (const status of ['away', 'busy', 'online'] as const) {
    const seen = until(watcher, 'presence-change', (d: any) => d.email === alice.email && d.status === status);
    t.match(await ack(sa, 'set-status', { status }), { status, online: true });
    await seen;
  }
  const hidden = until(watcher, 'presence-change', (d: any) => d.email === alice.email && d.status === 'offline');
  await ack(sa, 'set-status', { status: 'offline' });
  t.match(await hidden, { online: false }, 'offline hides a connected agent');
  t.notOk((await asBoss.get('/chat/agents/online')).body.data.some((u: any) => u.email === alice.email));

  // REST: an agent sets their own status; someone else's needs a supervisor.
  const busy = await asAlice.post(`/chat/agents/${alice.email}/status`, { status: 'busy' });
  t.equal(busy.status, 200);
  t.match(busy.body, { email: alice.email, status: 'busy', online: true });
  t.equal((await asAlice.post(`/chat/agents/${boss.email}/status`, { status: 'away' })).status, 403);
  t.equal((await asAlice.post(`/chat/agents/${alice.email}/status`, { status: 'napping' })).status, 400);
  t.equal((await asAlice.post('/chat/agents/not-an-email/status', { status: 'busy' })).status, 400);

  // A REST status alone keeps an agent without sockets online for presenceTtlMs.
  const restOnline = until(watcher, 'presence-change', (d: any) => d.email === bob.email && d.online);
  const viaBoss = await asBoss.post(`/chat/agents/${bob.email}/status`, { status: 'away' });
  t.match(viaBoss.body, { email: bob.email, status: 'away', online: true, connections: 0 });
  await restOnline;
  const stats = (await asBoss.get('/chat/presence/stats')).body;
  t.match(stats, { agents: { online: 1, away: 1, busy: 1 }, connections: 2 });
  const expired = until(watcher, 'presence-change', (d: any) => d.email === bob.email && !d.online, 3000);
  t.match(await expired, { status: 'offline' }, 'offline once the REST status is stale');
});

t.test('presence - customers online, journey from customer activity, staff only, per tenant', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { presenceGraceMs: 50 } } });
  await createOrg(app, 'acme');
  await createOrg(app, 'other');
  const cust = await customer(app, 'acme', 'dana');
  const { s } = await chatSocket(t, app, 'acme', cust);
  const http = client(app.url, staffHeaders(app, 'acme'));
  const otherHttp = client(app.url, staffHeaders(app, 'other'));

  await eventually(async () => (await http.get('/chat/customers/online')).body.total === 1, 2000, 'customer online');
  t.match((await http.get('/chat/customers/online')).body.data, [{ userId: cust.id, email: cust.email, kind: 'customer', online: true }]);
  t.match((await otherHttp.get('/chat/customers/online')).body, { data: [], total: 0, hasNext: false }, 'another tenant sees nobody');

  // Journey: the CRM area's customer_activity records, newest first; empty when none.
  t.match((await http.get(`/chat/customers/${cust.email}/journey`)).body, { data: [], total: 0 });
  const { WriteBatch } = await import('../../core/store/store.js');
  const { newRecord } = await import('../../core/store/record.js');
  const b = new WriteBatch();
  for (const [i, name] of ['home', 'tickets', 'checkout'].entries()) {
    b.putRecord(
      newRecord('acme', 'customer_activity', { email: cust.email, type: 'screen_view', name, importance: 1, properties: {}, at: new Date(Date.UTC(2026, 0, 1, 10, i)).toISOString() }),
      0,
    );
  }
  await app.deps.store.commit(b);
  const journey = await http.get(`/chat/customers/${cust.email.toUpperCase()}/journey`);
  t.equal(journey.status, 200);
  t.same(journey.body.data.map((r: any) => r.data.name), ['checkout', 'tickets', 'home']);
  t.equal((await otherHttp.get(`/chat/customers/${cust.email}/journey`)).body.total, 0, 'per tenant');

  // Staff only.
  const asCustomer = client(app.url, { orgid: 'acme', authorization: `Bearer ${cust.token}` });
  for (const path of ['/chat/customers/online', '/chat/agents/online', '/chat/presence/stats', `/chat/customers/${cust.email}/journey`, `/chat/agents/${cust.email}/presence`]) {
    t.equal((await asCustomer.get(path)).status, 403, `${path} refuses a customer`);
    t.equal((await client(app.url, { orgid: 'acme' }).get(path)).status, 401, `${path} needs a token`);
  }
  t.equal((await client(app.url, { orgid: 'other', authorization: `Bearer ${tokenFor(app, { org: 'acme' })}` }).get('/chat/agents/online')).status, 403);

  const offline = once(s, 'disconnect');
  s.disconnect();
  await offline;
  await eventually(async () => (await http.get('/chat/customers/online')).body.total === 0, 2000, 'customer offline');
});

t.test('presence - sockets closing over half a second set off a few sweeps, not one per grace deadline', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { presenceGraceMs: 50 } } });
  await createOrg(app, 'acme');
  const http = client(app.url, staffHeaders(app, 'acme'));
  const agents = Array.from({ length: 40 }, (_, i) => agent(app, 'acme', `crowd${i}`));
  const sockets = await Promise.all(agents.map((a) => chatSocket(t, app, 'acme', a)));
  await eventually(async () => (await http.get('/chat/agents/online')).body.total === 40, 5000, 'all online');
  // Count the sweeps the edge asks the presence actor for (the real runtime answers them).
  let sweeps = 0;
  const runtime = app.deps.runtime;
  const ask = runtime.ask.bind(runtime);
  runtime.ask = ((tenant: string, kind: string, key: string, msg: { type?: string }) => {
    if (kind === 'presence' && msg.type === 'sweep') sweeps++;
    return ask(tenant, kind, key, msg);
  }) as typeof runtime.ask;
  // Each leaves 12 ms after the last: 40 grace deadlines over ~0.5 s.
  for (const { s } of sockets) {
    s.disconnect();
    await sleep(12);
  }
  await eventually(async () => (await http.get('/chat/agents/online')).body.total === 0, 5000, 'all offline after their grace period');
  t.ok(sweeps <= 10, `${sweeps} sweeps for 40 deadlines (at most one per 100 ms, not one per deadline)`);
});
