import t from 'tap';
import { CHAT_DATATYPE, chatLog } from '../../actors/chat-room/types.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { createOrg, startTestApp, staffHeaders, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { ack, agent, chatSocket, customer } from './helpers.js';

t.test('chat REST - sessions, history, messages by email, queue: success, validation, auth, tenant isolation', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { providers: { ai: { wordDelayMs: 0 } } } });
  await createOrg(app, 'acme');
  await createOrg(app, 'other');
  const http = client(app.url, staffHeaders(app, 'acme'));
  const otherHttp = client(app.url, staffHeaders(app, 'other'));
  const alice = agent(app, 'acme', 'alice');
  const cust = await customer(app, 'acme', 'erin');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  const chatId = auth.chatId;
  await ack(sc, 'chatRequest', { message: 'first' });
  await ack(sc, 'sendMessage', { text: 'second' });

  // Queue: list, position, stats.
  t.match((await http.get('/chat/queue')).body, { total: 1, hasNext: false, page: 1, data: [{ chatId, position: 1, waitSeconds: Number, customer: { id: cust.id } }] });
  t.match((await http.get('/chat/queue?department=none-such')).body, { data: [], total: 0 });
  t.match((await http.get('/chat/queue/stats')).body, { waiting: 1, longestWaitSeconds: Number, byDepartment: { none: 1 }, agentsOnline: 1, agentsAvailable: 1 });
  t.match((await http.get(`/chat/queue/position/${chatId}`)).body, { chatId, status: 'queued', position: 1, waiting: 1 });
  t.equal((await http.get('/chat/queue/position/0123456789abcdef01234567')).status, 404);
  t.equal((await http.get('/chat/queue/position/bad')).status, 400);
  t.match((await otherHttp.get('/chat/queue')).body, { total: 0 }, 'another tenant has its own queue');

  // POST /chat/queue is idempotent for a waiting chat, refuses an assigned one.
  t.match((await http.post('/chat/queue', { chatId })).body, { chatId, status: 'queued', position: 1 });
  const bad = await http.post('/chat/queue', {});
  t.equal(bad.status, 400);
  t.same(bad.body.message, ['body/chatId is required']);
  t.equal((await http.post('/chat/queue', { chatId: '0123456789abcdef01234567' })).status, 404);
  t.equal((await otherHttp.post('/chat/queue', { chatId })).status, 404, "another tenant's chat does not exist there");
  await ack(sa, 'pick-next', {});
  t.equal((await http.post('/chat/queue', { chatId })).status, 409);

  // Sessions: paged, filtered, newest first, per tenant.
  const second = await customer(app, 'acme', 'fred');
  const { s: sc2 } = await chatSocket(t, app, 'acme', second);
  await ack(sc2, 'chatRequest', {});
  const all = (await http.get('/chat/sessions?pageSize=1')).body;
  t.match(all, { total: 2, hasNext: true, page: 1, pageSize: 1, data: [{ data: { customer: { id: second.id }, status: 'queued' } }] });
  t.match((await http.get('/chat/sessions?status=assigned')).body, { total: 1, data: [{ sk: chatId, data: { agentId: alice.id, lastSeq: 2 } }] });
  t.match((await http.get(`/chat/sessions?agentId=${alice.id}`)).body, { total: 1 });
  t.match((await http.get(`/chat/sessions?email=${cust.email}`)).body, { total: 1 });
  t.equal((await http.get('/chat/sessions?status=lost')).status, 400);
  t.match((await otherHttp.get('/chat/sessions')).body, { total: 0, data: [] });

  // History paged by sequence.
  await ack(sa, 'sendMessage', { chatId, text: 'third' });
  const h = (await http.get(`/chat/history/${chatId}?limit=2`)).body;
  t.match(h, { chatId, hasMore: true, lastSeq: 3, chat: { status: 'assigned' } });
  t.same(h.data.map((m: any) => m.text), ['second', 'third']);
  t.same((await http.get(`/chat/history/${chatId}?afterSeq=1&limit=1`)).body.data.map((m: any) => m.seq), [2]);
  t.same((await http.get(`/chat/history/${chatId}?beforeSeq=2`)).body.data.map((m: any) => m.seq), [1]);
  t.equal((await http.get(`/chat/history/${chatId}?limit=0`)).status, 400);
  t.equal((await otherHttp.get(`/chat/history/${chatId}`)).status, 404, 'tenant isolation');

  // A customer's messages across their chats, by email.
  const mine = (await http.get(`/chat/messages/${cust.email.toUpperCase()}`)).body;
  t.match(mine, { total: 3, hasNext: false });
  t.same(mine.data.map((m: any) => m.text), ['third', 'second', 'first']);
  // A second, older chat of the same customer whose messages fall before and after these: pages
  // merge the chats newest first, each reading only its newest messages.
  const older = newRecord('acme', CHAT_DATATYPE, { customerEmail: cust.email, status: 'closed', customer: mine.data[0].from });
  const at = (m: any, ms: number) => new Date(Date.parse(m.at) + ms).toISOString();
  const msg = (seq: number, text: string, when: string) => ({ ...mine.data[0], id: `${older.sk}-${seq}`, chatId: older.sk, seq, text, at: when });
  await app.deps.store.commit(
    new WriteBatch()
      .putRecord(older, 0)
      .append('acme', chatLog(older.sk), 1, msg(1, 'zero', at(mine.data[2], -60_000)))
      .append('acme', chatLog(older.sk), 2, msg(2, 'fourth', at(mine.data[0], 60_000))),
  );
  const pages = [1, 2, 3].map((n) => http.get(`/chat/messages/${cust.email}?pageSize=2&page=${n}`));
  t.same(
    (await Promise.all(pages)).map((r) => [r.body.total, r.body.hasNext, r.body.data.map((m: any) => m.text)]),
    [
      [5, true, ['fourth', 'third']],
      [5, true, ['second', 'first']],
      [5, false, ['zero']],
    ],
    'both chats, newest first, page by page',
  );
  // The first page of 2 reads at most 2 messages of each chat, not all 5.
  const store = app.deps.store as { readLog: (...a: any[]) => unknown[] };
  const readLog = store.readLog;
  let read = 0;
  store.readLog = (...a: any[]) => {
    const out = readLog.apply(store, a);
    read += out.length;
    return out;
  };
  const first = await http.get(`/chat/messages/${cust.email}?pageSize=2`);
  store.readLog = readLog;
  t.same([first.body.total, read], [5, 4], 'the first page read the newest 2 of each chat');
  t.match((await http.get('/chat/messages/nobody@example.com')).body, { data: [], total: 0 });
  t.equal((await http.get('/chat/messages/not-an-email')).status, 400);
  t.equal((await otherHttp.get(`/chat/messages/${cust.email}`)).body.total, 0);

  // Staff only.
  const asCustomer = client(app.url, { orgid: 'acme', authorization: `Bearer ${cust.token}` });
  for (const path of ['/chat/sessions', `/chat/history/${chatId}`, `/chat/messages/${cust.email}`, '/chat/queue', '/chat/queue/stats', `/chat/queue/position/${chatId}`]) {
    t.equal((await asCustomer.get(path)).status, 403, `${path}: customer refused`);
    t.equal((await client(app.url, { orgid: 'acme' }).get(path)).status, 401, `${path}: token required`);
  }
  t.equal((await asCustomer.post('/chat/queue', { chatId })).status, 403);
  t.equal((await client(app.url, { orgid: 'other', authorization: `Bearer ${tokenFor(app, { org: 'acme' })}` }).get('/chat/sessions')).status, 403, 'token of another org');
  t.equal((await client(app.url, { authorization: `Bearer ${tokenFor(app, { org: 'acme' })}` }).get('/chat/sessions')).status, 400, 'orgid required');
});

t.test('chat REST - widget configuration is public, per widget, with the tenant default', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  await createOrg(app, 'other');
  const pub = client(app.url, { orgid: 'acme' });
  t.match((await pub.get('/chat/config/site-widget')).body, { chatId: 'site-widget', aiEnabled: true, source: 'built-in', departments: [] });
  const b = new WriteBatch();
  b.putRecord(newRecord('acme', 'chat_config', { chatId: 'default', greeting: 'Welcome to Acme!' }), 0);
  b.putRecord(
    newRecord('acme', 'chat_config', { chatId: 'support', greeting: 'Support here', aiEnabled: false, departments: [{ id: 'billing', name: 'Billing' }] }),
    0,
  );
  await app.deps.store.commit(b);
  t.match((await pub.get('/chat/config/anything')).body, { greeting: 'Welcome to Acme!', aiEnabled: true, source: 'default' });
  t.match((await pub.get('/chat/config/support')).body, { greeting: 'Support here', aiEnabled: false, departments: [{ id: 'billing', name: 'Billing' }], source: 'widget' });
  t.match((await client(app.url, { orgid: 'other' }).get('/chat/config/support')).body, { source: 'built-in' }, 'per tenant');
  t.equal((await client(app.url).get('/chat/config/support')).status, 400, 'orgid required');
  t.equal((await pub.get('/chat/config/bad%20id')).status, 400);

  // AI off: a customer's first message goes straight to the queue.
  const cust = await customer(app, 'acme');
  const { s, auth } = await chatSocket(t, app, 'acme', cust, { widgetId: 'support' });
  t.match(auth.config, { aiEnabled: false, greeting: 'Support here' });
  await ack(s, 'sendMessage', { text: 'hello' });
  t.match((await client(app.url, staffHeaders(app, 'acme')).get(`/chat/queue/position/${auth.chatId}`)).body, { status: 'queued', position: 1 });
  t.match((await pub.get(`/chat/config/${auth.chatId}`)).body, { greeting: 'Support here', source: 'widget' }, "a conversation's widget");

  // The spec's handshake names the widget by chatId (the id GET /chat/config/:chatId took).
  const cust2 = await customer(app, 'acme');
  const viaChatId = await chatSocket(t, app, 'acme', cust2, { chatId: 'support' });
  t.match(viaChatId.auth, { chatId: /^[0-9a-f]{24}$/, config: { aiEnabled: false, greeting: 'Support here' } }, 'a server-issued chat id, the widget config');
  await ack(viaChatId.s, 'sendMessage', { text: 'hello' });
  t.match((await client(app.url, staffHeaders(app, 'acme')).get(`/chat/queue/position/${viaChatId.auth.chatId}`)).body, { status: 'queued' }, 'AI off: queued');
  // A widget whose id happens to be 24-hex, naming no chat: still the widget.
  const hexWidget = '0123456789abcdef01234567';
  await app.deps.store.commit(new WriteBatch().putRecord(newRecord('acme', 'chat_config', { chatId: hexWidget, greeting: 'Hex desk', aiEnabled: false }), 0));
  const viaHex = await chatSocket(t, app, 'acme', await customer(app, 'acme'), { chatId: hexWidget });
  t.match(viaHex.auth, { config: { greeting: 'Hex desk', aiEnabled: false } });
  t.not(viaHex.auth.chatId, hexWidget, 'a conversation of its own');
  // Reconnecting with the conversation id it was given resumes that conversation.
  viaChatId.s.disconnect();
  const again = await chatSocket(t, app, 'acme', cust2, { chatId: viaChatId.auth.chatId });
  t.match(again.auth, { chatId: viaChatId.auth.chatId, chat: { status: 'queued' }, config: { aiEnabled: false } });
});

t.test('community REST - POST /client/community/messages: validation, auth, isolation', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'fest');
  await createOrg(app, 'other');
  const ann = await customer(app, 'fest', 'ann');
  const ben = await customer(app, 'fest', 'ben');
  const asAnn = client(app.url, { orgid: 'fest', authorization: `Bearer ${ann.token}` });
  const ok = await asAnn.post('/client/community/messages', { to: ben.id, text: 'hi', clientId: 'r-1' });
  t.equal(ok.status, 201);
  t.match(ok.body, { seq: 1, to: ben.id, from: { id: ann.id } });
  t.match((await asAnn.post('/client/community/messages', { to: ben.id, text: 'hi', clientId: 'r-1' })).body, { id: ok.body.id }, 'a retry is not stored twice');

  const both = await asAnn.post('/client/community/messages', { to: ben.id, groupId: 'g', text: 'x' });
  t.equal(both.status, 400);
  t.match(both.body.message, /exactly one of to or groupId/);
  const missing = await asAnn.post('/client/community/messages', { to: ben.id });
  t.same(missing.body.message, ['body/text is required']);
  t.equal((await asAnn.post('/client/community/messages', { groupId: 'not joined', text: 'x' })).status, 400, 'group ids are validated');
  t.equal((await asAnn.post('/client/community/messages', { groupId: 'crew', text: 'x' })).status, 403, 'join first');
  t.equal((await asAnn.post('/client/community/messages', { to: 'ghost', text: 'x' })).status, 404);

  t.equal((await client(app.url, { orgid: 'fest' }).post('/client/community/messages', { to: ben.id, text: 'x' })).status, 401);
  const appToken = tokenFor(app, { org: 'fest', kind: 'app', roles: [] });
  t.equal((await client(app.url, { orgid: 'fest', authorization: `Bearer ${appToken}` }).post('/client/community/messages', { to: ben.id, text: 'x' })).status, 403, 'an app token alone');
  const relayed = await client(app.url, { orgid: 'fest', authorization: `Bearer ${appToken}`, 'x-client-authorization': `Bearer ${ann.token}` }).post(
    '/client/community/messages',
    { to: ben.id, text: 'via the gateway' },
  );
  t.equal(relayed.status, 201, 'an app relaying the customer token');
  t.match(relayed.body, { from: { id: ann.id }, seq: 2 });
  t.equal((await client(app.url, { orgid: 'other', authorization: `Bearer ${ann.token}` }).post('/client/community/messages', { to: ben.id, text: 'x' })).status, 403);
  const otherAnn = tokenFor(app, { org: 'other', kind: 'customer', roles: [], sub: ann.id, email: ann.email });
  t.equal((await client(app.url, { orgid: 'other', authorization: `Bearer ${otherAnn}` }).post('/client/community/messages', { to: ben.id, text: 'x' })).status, 404, 'recipients are per tenant');
});

t.test('chat REST - every chat route is in the OpenAPI document under its section', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  const doc = (await client(app.url).get('/openapi.json')).body;
  const want: Array<[string, string, string]> = [
    ['get', '/chat/sessions', 'Chat'],
    ['get', '/chat/history/{chatId}', 'Chat'],
    ['get', '/chat/messages/{email}', 'Chat'],
    ['get', '/chat/config/{chatId}', 'Chat'],
    ['get', '/chat/queue', 'Chat'],
    ['post', '/chat/queue', 'Chat'],
    ['get', '/chat/queue/stats', 'Chat'],
    ['get', '/chat/queue/position/{chatId}', 'Chat'],
    ['get', '/chat/agents/online', 'Presence'],
    ['get', '/chat/agents/{email}/presence', 'Presence'],
    ['post', '/chat/agents/{email}/status', 'Presence'],
    ['get', '/chat/customers/online', 'Presence'],
    ['get', '/chat/customers/{email}/journey', 'Presence'],
    ['get', '/chat/presence/stats', 'Presence'],
    ['get', '/ai/stream/{streamId}', 'AI'],
    ['post', '/client/community/messages', 'Attendee community'],
  ];
  for (const [method, path, tag] of want) t.same(doc.paths?.[path]?.[method]?.tags, [tag], `${method.toUpperCase()} ${path}`);
});
