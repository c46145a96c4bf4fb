import t from 'tap';
import { createOrg, startTestApp } from '../helpers/app.js';
import { ack, agent, chatSocket, collect, customer, once, sleep, until } from './helpers.js';

t.test('session - an idle customer gets session-expiring, then session-expired, and the session cannot be resumed', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { customerIdleMs: 600, sessionWarningMs: 300, sweepIntervalMs: 20 } } });
  await createOrg(app, 'acme');
  const cust = await customer(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s, auth } = await chatSocket(t, app, 'acme', cust);
  const expiring = once(s, 'session-expiring', 2000);
  const expired = once(s, 'session-expired', 2000);
  const gone = once(s, 'disconnect', 2000);
  const started = Date.now();
  t.match(await expiring, { chatSessionId: auth.chatSessionId, chatId: auth.chatId, expiresAt: /Z$/, secondsLeft: Number });
  t.ok(Date.now() - started >= 250, 'warned only near the end');
  t.match(await expired, { chatSessionId: auth.chatSessionId });
  await gone;
  t.ok(sa.connected, 'staff sockets do not expire');

  const { auth: again } = await chatSocket(t, app, 'acme', cust, { chatSessionId: auth.chatSessionId });
  t.not(again.chatSessionId, auth.chatSessionId, 'an expired session gives way to a new one');
  t.equal(again.resumed, false);
});

t.test('session - activity keeps a customer session alive', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { customerIdleMs: 400, sessionWarningMs: 100, sweepIntervalMs: 20 } } });
  await createOrg(app, 'acme');
  const cust = await customer(app, 'acme');
  const { s } = await chatSocket(t, app, 'acme', cust);
  const expired = collect(s, 'session-expired');
  for (let i = 0; i < 5; i++) {
    await sleep(150);
    await ack(s, 'shareStatus', { status: 'active' });
  }
  t.equal(expired.length, 0);
  t.ok(s.connected);
});

t.test('session - token_expired when the handshake token runs out, then a disconnect after the grace', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { tokenExpiryGraceMs: 200 } } });
  await createOrg(app, 'acme');
  const cust = await customer(app, 'acme');
  // Two seconds: `exp` is in whole seconds, so a one-second token signed late in a second could
  // expire before the handshake that uses it (seen on a loaded machine).
  const shortLived = app.deps.tokens.signAccess({ sub: cust.id, org: 'acme', roles: [], kind: 'customer', email: cust.email }, 2);
  const { s } = await chatSocket(t, app, 'acme', { ...cust, token: shortLived });
  const expired = await once(s, 'token_expired', 4000);
  t.match(expired, { expiredAt: /Z$/, disconnectInMs: 200 });
  const at = Date.now();
  await once(s, 'disconnect', 2000);
  t.ok(Date.now() - at >= 150, 'a short grace first');
});

t.test('chat - chat-inactivity when an open chat has been quiet too long', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { chatInactivityMs: 300, sweepIntervalMs: 20 } } });
  await createOrg(app, 'acme');
  const cust = await customer(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  await ack(sc, 'chatRequest', {});
  await ack(sa, 'pick-next', {});
  const both = [once(sc, 'chat-inactivity', 2000), once(sa, 'chat-inactivity', 2000)];
  const sent = Date.now();
  await ack(sa, 'sendMessage', { chatId: auth.chatId, text: 'anything else?' });
  for (const e of await Promise.all(both)) t.match(e, { chatId: auth.chatId, idleSeconds: Number, lastMessageAt: /Z$/ });
  t.ok(Date.now() - sent >= 280, 'after the quiet period');
  const more = collect(sc, 'chat-inactivity');
  await sleep(400);
  t.equal(more.length, 0, 'once per quiet period');
});

t.test('chat - sms.received reaches staff sockets of the tenant only', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  await createOrg(app, 'other');
  const alice = agent(app, 'acme', 'alice');
  const olga = agent(app, 'other', 'olga');
  const cust = await customer(app, 'acme');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: so } = await chatSocket(t, app, 'other', olga);
  const { s: sc } = await chatSocket(t, app, 'acme', cust);
  const otherGot = collect(so, 'sms.received');
  const customerGot = collect(sc, 'sms.received');
  const got = once(sa, 'sms.received');
  const sms = { pk: 'acme', sk: '0123456789abcdef01234567', datatype: 'sms', data: { from: '+15550100', body: 'Running late' } };
  app.deps.bus.publish('sms.received.acme', sms);
  t.same(await got, sms);
  await sleep(50);
  t.equal(otherGot.length, 0);
  t.equal(customerGot.length, 0);
});

t.test('chat - observers join and leave, shareStatus is an update, a customer can close their chat', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const cust = await customer(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const sup = agent(app, 'acme', 'sup');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const { s: ss } = await chatSocket(t, app, 'acme', sup);
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  const chatId = auth.chatId;
  await ack(sc, 'chatRequest', {});
  await ack(sa, 'pick-next', {});

  t.match(await ack(ss, 'join-chat', { chatId }), { chatId, lastSeq: 0, chat: { status: 'assigned' } });
  const observed = until(ss, 'message', (m: any) => m.text === 'hello');
  await ack(sc, 'sendMessage', { text: 'hello' });
  await observed;
  t.match(await ack(ss, 'sendMessage', { chatId, text: 'observer speaking' }), { error: { statusCode: 403 } }, 'observers read only');
  t.match(await ack(ss, 'leave-chat', { chatId }), { left: true });
  const afterLeave = collect(ss, 'message');

  const typing = until(sa, 'update', (d: any) => d.type === 'participant-status');
  await ack(sc, 'shareStatus', { status: 'typing', page: '/checkout' });
  t.match(await typing, { chatId, status: 'typing', page: '/checkout', from: { id: cust.id, role: 'customer' } });

  const ended = once(sa, 'chat-ended');
  t.match(await ack(sc, 'close-chat', { reason: 'solved' }), { chatId, status: 'closed' });
  t.match(await ended, { chatId, closedBy: { role: 'customer', id: cust.id }, reason: 'solved' });
  t.equal(afterLeave.length, 0);
  t.match(await ack(sa, 'close-chat', {}), { error: { statusCode: 400, message: 'payload/chatId is required' } });
});
