import t from 'tap';
import { createOrg, startTestApp, staffHeaders } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { ack, agent, chatSocket, collect, customer, eventually, once, until } from './helpers.js';

t.test('support journey - request, queue position, pick-next, messages both ways with acks and status, transfer, close', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const bob = agent(app, 'acme', 'bob');
  const cust = await customer(app, 'acme', 'carol');
  const http = client(app.url, staffHeaders(app, 'acme'));

  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: sb } = await chatSocket(t, app, 'acme', bob);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  t.match(auth, { chatSessionId: /^[0-9a-f]{24}$/, chatId: /^[0-9a-f]{24}$/, userId: cust.id, role: 'customer', resumed: false, chat: null });
  const chatId: string = auth.chatId;

  // The customer asks for a human: a place in the queue, and agents hear of it.
  const position = once(sc, 'queue-notification');
  const queueUpdated = until(sa, 'queue-updated', (d: any) => d.waiting === 1);
  const req = await ack(sc, 'chatRequest', { subject: 'late order', department: 'orders' });
  t.match(req, { chatId, status: 'queued', position: 1, waiting: 1 });
  t.match(await position, { chatId, position: 1, waiting: 1 });
  t.match(await queueUpdated, { waiting: 1, chats: [{ chatId, position: 1, department: 'orders', customer: { id: cust.id } }] });
  t.match((await http.get(`/chat/queue/position/${chatId}`)).body, { chatId, status: 'queued', position: 1, waiting: 1 });

  // Written while waiting: stored with seq 1, acked after commit.
  const first = await ack(sc, 'sendMessage', { text: 'Hello, my order is late' });
  t.match(first, { id: /^[0-9a-f]{24}$/, seq: 1, chatId });

  // pick-next: the agent gets the chat, the customer gets the agent.
  const chatAssigned = once(sa, 'chat-assigned');
  const agentAssigned = once(sc, 'agent-assigned');
  const picked = await ack(sa, 'pick-next', {});
  t.match(picked.chat, { chatId, status: 'assigned', agentId: alice.id, agent: { id: alice.id, role: 'agent', email: alice.email } });
  t.match(await chatAssigned, { chatId, chat: { status: 'assigned' } });
  t.match(await agentAssigned, { chatId, agent: { id: alice.id } });
  t.equal((await ack(sb, 'pick-next', {})).chat, null, 'nothing left for the next agent');

  // The agent reads what came before.
  const history = await ack(sa, 'getMessages', { chatId });
  t.match(history, { chatId, hasMore: false, lastSeq: 1, messages: [{ seq: 1, text: 'Hello, my order is late', from: { role: 'customer', id: cust.id } }] });

  // Agent to customer.
  const toCustomer = until(sc, 'message', (m: any) => m.from.role === 'agent');
  const second = await ack(sa, 'sendMessage', { chatId, text: 'Sorry about that! Let me check.' });
  t.match(second, { seq: 2, chatId });
  t.match(await toCustomer, { seq: 2, id: second.id, text: 'Sorry about that! Let me check.', from: { id: alice.id } });

  // Customer to agent (the alias event name).
  const toAgent = until(sa, 'message', (m: any) => m.seq === 3);
  const third = await ack(sc, 'chat-message', { text: 'Order 1234', clientId: 'c-3' });
  t.match(third, { seq: 3 });
  t.match(await toAgent, { text: 'Order 1234', from: { role: 'customer' }, clientId: 'c-3' });
  t.match(await ack(sc, 'chat-message', { text: 'Order 1234', clientId: 'c-3' }), { seq: 3, id: third.id }, 'a resend is acked again, not stored twice');

  // Receipts: delivered and read reach the other side as `status`, and show in the history.
  const readEvent = until(sa, 'status', (d: any) => d.status === 'read');
  t.match(await ack(sc, 'updateMessageStatus', { chatId, seq: 2, status: 'read', messageId: second.id }), { chatId, seq: 2, status: 'read' });
  t.match(await readEvent, { chatId, seq: 2, status: 'read', messageId: second.id, by: { role: 'customer', id: cust.id } });
  await ack(sa, 'updateMessageStatus', { chatId, seq: 3, status: 'delivered' });
  const rest = await http.get(`/chat/history/${chatId}`);
  t.equal(rest.status, 200);
  t.same(
    rest.body.data.map((m: any) => [m.seq, m.status]),
    [
      [1, 'delivered'],
      [2, 'read'],
      [3, 'delivered'],
    ],
  );

  // Transfer to Bob: both agents and the customer are told; Alice can no longer write.
  const toBob = once(sb, 'chat-transferred');
  const fromAlice = once(sa, 'chat-transferred');
  const changed = once(sc, 'agent-changed');
  const tr = await ack(sa, 'transfer-chat', { chatId, toAgent: bob.email, note: 'billing question' });
  t.match(tr.chat, { agentId: bob.id, status: 'assigned' });
  t.match(await toBob, { chatId, from: { id: alice.id }, to: { id: bob.id }, note: 'billing question' });
  t.match(await fromAlice, { chatId, to: { id: bob.id } });
  t.match(await changed, { chatId, agent: { id: bob.id }, previousAgent: { id: alice.id } });
  const refused = await ack(sa, 'sendMessage', { chatId, text: 'still here?' });
  t.match(refused, { error: { statusCode: 403, error: 'Forbidden' } });

  const fromBob = until(sc, 'message', (m: any) => m.from.id === bob.id);
  const aliceHears = collect(sa, 'message');
  await ack(sb, 'sendMessage', { chatId, text: 'Bob here, refund is on its way.' });
  t.match(await fromBob, { seq: 4 });

  // Close: chat-ended to everyone in the chat; nothing more can be written.
  const ended = once(sc, 'chat-ended');
  const closed = await ack(sb, 'close-chat', { chatId, reason: 'resolved' });
  t.match(closed, { chatId, status: 'closed' });
  t.match(await ended, { chatId, closedBy: { id: bob.id, role: 'agent' }, reason: 'resolved' });
  t.match(await ack(sc, 'sendMessage', { text: 'one more thing' }), { error: { statusCode: 409 } });
  t.equal(aliceHears.length, 0, 'the agent who transferred the chat no longer hears it');

  const sessions = await http.get('/chat/sessions?status=closed');
  t.match(sessions.body, { total: 1, data: [{ sk: chatId, datatype: 'chat', data: { status: 'closed', lastSeq: 4, customer: { id: cust.id } } }] });

  // A new request after the close opens a new chat in the same session.
  const again = await ack(sc, 'chatRequest', {});
  t.not(again.chatId, chatId);
  t.match(again, { status: 'queued', position: 1 });
  await eventually(async () => (await http.get('/chat/queue')).body.total === 1, 2000, 'queue holds the new chat');
});

t.test('pick-next - two agents picking at once never get the same chat, longest-waiting first', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const agents = [agent(app, 'acme', 'a1'), agent(app, 'acme', 'a2')];
  const sockets = await Promise.all(agents.map(async (a) => (await chatSocket(t, app, 'acme', a)).s));
  const order: string[] = [];
  for (let i = 0; i < 6; i++) {
    const c = await customer(app, 'acme', `c${i}`);
    const { s } = await chatSocket(t, app, 'acme', c);
    order.push((await ack(s, 'chatRequest', {})).chatId);
  }
  const first = await ack(sockets[1], 'pick-next', {});
  t.equal(first.chat.chatId, order[0], 'the longest-waiting chat goes first');
  // Eight picks race for the five left: four from each agent, all in flight together.
  const picks = await Promise.all([0, 1, 2, 3].flatMap(() => sockets.map((s) => ack(s, 'pick-next', {}))));
  const got = picks.map((p) => p.chat?.chatId).filter(Boolean) as string[];
  t.equal(got.length, 5, 'every waiting chat is picked once');
  t.same(new Set(got), new Set(order.slice(1)), 'no chat is given to two agents, none is skipped');
  t.equal(picks.filter((p) => p.chat === null).length, 3, 'the extra picks find the queue empty');
  const http = client(app.url, staffHeaders(app, 'acme'));
  t.match((await http.get('/chat/queue')).body, { data: [], total: 0, hasNext: false });
  const assigned = (await http.get('/chat/sessions?status=assigned&pageSize=50')).body.data;
  t.equal(assigned.length, 6);
  for (const r of assigned) t.ok(agents.some((a) => a.id === r.data.agentId), 'assigned to one of the agents');
});

t.test('transfer of a chat still in the queue - to an agent it leaves the queue; to a department it waits there under the new one', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const boss = agent(app, 'acme', 'boss', ['User', 'Supervisor']);
  const dave = agent(app, 'acme', 'dave');
  const http = client(app.url, staffHeaders(app, 'acme'));
  const { s: sBoss } = await chatSocket(t, app, 'acme', boss);
  const { s: sDave } = await chatSocket(t, app, 'acme', dave);
  const c1 = await customer(app, 'acme', 'erin');
  const c2 = await customer(app, 'acme', 'finn');
  const { s: s1, auth: a1 } = await chatSocket(t, app, 'acme', c1);
  const { s: s2, auth: a2 } = await chatSocket(t, app, 'acme', c2);
  t.match(await ack(s1, 'chatRequest', { subject: 'one', department: 'orders' }), { status: 'queued', position: 1 });
  t.match(await ack(s2, 'chatRequest', { subject: 'two', department: 'orders' }), { status: 'queued', position: 2 });

  // Straight to an agent: out of the queue, so no one else picks it and the list is right.
  const tr = await ack(sBoss, 'transfer-chat', { chatId: a1.chatId, toAgent: dave.email });
  t.match(tr.chat, { chatId: a1.chatId, status: 'assigned', agentId: dave.id });
  const queue = (await http.get('/chat/queue')).body;
  t.match(queue, { total: 1 });
  t.same(queue.data.map((c: any) => c.chatId), [a2.chatId], 'only the other chat waits');
  t.match((await http.get(`/chat/queue/position/${a1.chatId}`)).body, { chatId: a1.chatId, status: 'assigned', position: null });
  t.match((await http.get(`/chat/queue/position/${a2.chatId}`)).body, { position: 1, waiting: 1 });
  t.match((await http.get('/chat/queue/stats')).body, { waiting: 1 });

  // To another department: still waiting, picked by that department.
  const moved = await ack(sBoss, 'transfer-chat', { chatId: a2.chatId, department: 'billing' });
  t.match(moved.chat, { status: 'queued', department: 'billing' });
  t.match((await http.get('/chat/queue')).body, { total: 1, data: [{ chatId: a2.chatId, department: 'billing' }] });
  t.equal((await ack(sDave, 'pick-next', { department: 'orders' })).chat, null, 'nothing waits under orders now');
  t.match((await ack(sDave, 'pick-next', { department: 'billing' })).chat, { chatId: a2.chatId, status: 'assigned' });
  t.match((await http.get('/chat/queue')).body, { total: 0 });
});
