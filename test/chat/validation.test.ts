import t from 'tap';
import { io } from 'socket.io-client';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { ack, agent, chatSocket, customer, once, socketTo } from './helpers.js';

t.test('handshake - /chat refuses an empty, invalid, foreign or application token with connect_error', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  await createOrg(app, 'other');
  const cust = await customer(app, 'acme');
  const expired = app.deps.tokens.signAccess({ sub: cust.id, org: 'acme', roles: [], kind: 'customer', email: cust.email }, -10);
  const cases: Array<[string, Record<string, unknown>, RegExp, number]> = [
    ['no auth at all', {}, /send the access token/, 401],
    ['an empty token', { token: '', orgId: 'acme' }, /send the access token/, 401],
    ['a token that is not a JWT', { token: 'not-a-jwt', orgId: 'acme' }, /invalid or expired/, 401],
    ['an expired token', { token: expired, orgId: 'acme' }, /invalid or expired/, 401],
    ['no orgId', { token: cust.token }, /orgId is required/, 400],
    ['a token of another org', { token: cust.token, orgId: 'other' }, /do not belong to organisation "other"/, 403],
    ['an unknown org', { token: tokenFor(app, { org: 'ghost' }), orgId: 'ghost' }, /does not name a known organisation/, 400],
    ['an application token alone', { token: tokenFor(app, { org: 'acme', kind: 'app', roles: [] }), orgId: 'acme' }, /application token/, 403],
    ['a malformed chatSessionId', { token: cust.token, orgId: 'acme', chatSessionId: 'abc' }, /chatSessionId/, 400],
    ['lastSeqs keyed by something else than chat ids', { token: cust.token, orgId: 'acme', lastSeqs: { 'not-a-chat': 1 } }, /lastSeqs\/not-a-chat is not allowed/, 400],
    [
      'lastSeqs naming more than 500 chats',
      { token: cust.token, orgId: 'acme', lastSeqs: Object.fromEntries(Array.from({ length: 501 }, (_, i) => [i.toString(16).padStart(24, '0'), 1])) },
      /lastSeqs/,
      400,
    ],
  ];
  for (const [what, auth, message, status] of cases) {
    const s = socketTo(t, app, '/chat', auth);
    const err = await once<Error & { data?: any }>(s, 'connect_error');
    t.match(err.message, message, what);
    t.match(err.data, { statusCode: status }, `${what}: ${status}`);
    t.notOk(s.connected);
  }

  // The default namespace is closed to everyone.
  const root = io(app.url, { transports: ['websocket'], forceNew: true, reconnection: false, auth: { token: cust.token, orgId: 'acme' } });
  t.teardown(() => {
    root.disconnect();
  });
  t.match((await once<Error>(root, 'connect_error')).message, /\/chat or \/community-chat/);

  // Long-polling and websocket only (polling is served on a single node: test/chat/transports.test.ts).
  const unknown = await fetch(`${app.url}/socket.io/?EIO=4&transport=webtransport`);
  t.equal(unknown.status, 400);
});

t.test('payloads - a bad payload is refused through the ack or an error event; the socket and others go on', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'acme');
  const alice = agent(app, 'acme', 'alice');
  const cust = await customer(app, 'acme');
  const other = await customer(app, 'acme', 'other');
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  const { s: so } = await chatSocket(t, app, 'acme', other);
  const { s: sa } = await chatSocket(t, app, 'acme', alice);

  t.match(await ack(sc, 'sendMessage', { text: '' }), {
    error: { statusCode: 400, error: 'Bad Request', message: ['payload/text must NOT have fewer than 1 characters'] },
  });
  t.match(await ack(sc, 'sendMessage', { text: 'x'.repeat(4001) }), { error: { statusCode: 400 } }, 'too long');
  t.match(await ack(sc, 'sendMessage', 'just a string'), { error: { statusCode: 400, message: ['payload must be object'] } });
  t.match(await ack(sc, 'sendMessage', { text: 'hi', chatId: 'nope' }), { error: { message: [/payload\/chatId must match pattern/] } });
  t.match(await ack(sc, 'updateMessageStatus', { chatId: auth.chatId, seq: 0, status: 'seen' }), {
    error: { statusCode: 400, message: ['payload/seq must be >= 1', 'payload/status must be one of: delivered, read'] },
  });
  t.match(await ack(sc, 'pick-next', {}), { error: { statusCode: 403, message: 'pick-next needs a staff token' } });
  t.match(await ack(sc, 'set-status', { status: 'online' }), { error: { statusCode: 403 } });
  t.match(await ack(sa, 'chatRequest', {}), { error: { statusCode: 403 } });
  t.match(await ack(sa, 'transfer-chat', { chatId: auth.chatId }), { error: { statusCode: 404 } }, 'no such chat yet');
  t.match(await ack(sc, 'no-such-event', {}), { error: { statusCode: 400, message: 'unknown event "no-such-event"' } });

  // Without an ack the refusal is an `error` event naming the event.
  const err = once(sc, 'error');
  sc.emit('getMessages', { limit: 1000 });
  t.match(await err, { event: 'getMessages', statusCode: 400, message: ['payload/limit must be <= 200'] });

  // Someone else's chat is invisible.
  const first = await ack(sc, 'sendMessage', { text: 'hello' });
  t.match(first, { seq: 1 });
  t.match(await ack(so, 'getMessages', { chatId: auth.chatId }), { error: { statusCode: 404 } });
  t.match(await ack(so, 'sendMessage', { chatId: auth.chatId, text: 'intrude' }), { error: { statusCode: 404 } });
  t.match(await ack(so, 'close-chat', { chatId: auth.chatId }), { error: { statusCode: 404 } });

  // Everyone is still connected and working.
  t.ok(sc.connected && so.connected && sa.connected);
  t.match(await ack(sc, 'sendMessage', { text: 'still here' }), { seq: 2 });
  t.match(await ack(so, 'sendMessage', { text: 'me too' }), { seq: 1 });
});
