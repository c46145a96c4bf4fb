// socket.io as clients use it by default: HTTP long-polling first, then the upgrade to websocket
// (no `transports` option), on a single node; the org spelled as the HTTP header (`orgid`); and
// the log lines of socket connections, refusals and disconnections.
import { Writable } from 'node:stream';
import t from 'tap';
import { io, type Socket } from 'socket.io-client';
import { createLogger } from '../../core/log.js';
import { createOrg, startTestApp } from '../helpers/app.js';
import { ack, customer, eventually, once, until } from './helpers.js';

const lines: Array<Record<string, any>> = [];
const logger = createLogger(
  'info',
  new Writable({
    write(chunk, _enc, done) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(JSON.parse(l));
      done();
    },
  }),
);
const app = await startTestApp(t, { modules: ['chat'], logger });
await createOrg(app, 'fest');

/** socket.io-client as a browser page uses it: no transports option. */
function defaultClient(t: { teardown(fn: () => unknown): void }, nsp: string, auth: Record<string, unknown>, opts: Record<string, unknown> = {}): Socket {
  const s = io(app.url + nsp, { forceNew: true, reconnection: false, auth, ...opts });
  t.teardown(() => {
    s.disconnect();
  });
  return s;
}

const transportOf = (s: Socket) => s.io.engine?.transport?.name;

t.test('transports - the default client starts on polling, gets authenticate on /chat, and upgrades to websocket', async (t) => {
  const ann = await customer(app, 'fest', 'ann');
  const s = defaultClient(t, '/chat', { token: ann.token, orgId: 'fest' });
  const transports: string[] = [];
  s.io.on('open', () => transports.push(transportOf(s)));
  const auth = await once(s, 'authenticate');
  t.match(auth, { chatId: /^[0-9a-f]{24}$/, userId: ann.id, role: 'customer' });
  t.same(transports, ['polling'], 'the session opened on HTTP long-polling');
  await eventually(() => transportOf(s) === 'websocket', 5000, 'upgrade to websocket');

  // After the upgrade the websocket carries the socket's topics (joined while polling): the
  // chat's fan-out (the assistant's answer) arrives.
  const answer = until(s, 'message', (m: any) => m.from?.role === 'ai');
  await ack(s, 'sendMessage', { text: 'hello from the default client' });
  t.match(await answer, { chatId: auth.chatId, from: { role: 'ai' } });
  t.equal(transportOf(s), 'websocket');
});

t.test('transports - a client that stays on polling hears fan-out (DMs, and after joining a group)', async (t) => {
  const [ann, ben] = await Promise.all([customer(app, 'fest', 'ann'), customer(app, 'fest', 'ben')]);
  const polling = defaultClient(t, '/community-chat', { token: ann.token, orgId: 'fest' }, { upgrade: false });
  await once(polling, 'connect');
  t.equal(transportOf(polling), 'polling');
  const b = defaultClient(t, '/community-chat', { token: ben.token, orgId: 'fest' }, { transports: ['websocket'] });
  await once(b, 'connect');

  const dm = once(polling, 'message');
  const sent = await ack(b, 'sendMessage', { to: ann.id, text: 'over long-polling' });
  t.match(await dm, { id: sent.id, seq: 1, text: 'over long-polling' });

  await ack(polling, 'joinGroup', { groupId: 'crew' });
  await ack(b, 'joinGroup', { groupId: 'crew' });
  const heard = once(polling, 'groupMessage');
  const onB = once(b, 'groupMessage');
  const g = await ack(b, 'sendGroupMessage', { groupId: 'crew', text: 'to the group' });
  t.match(await heard, { id: g.id, groupId: 'crew' });
  // The polling sender is left out of its own fan-out, the websocket member is not.
  const mine = await ack(polling, 'sendGroupMessage', { groupId: 'crew', text: 'from the polling side' });
  t.match(await onB, { id: mine.id });
  t.equal(transportOf(polling), 'polling', 'still polling throughout');
});

t.test('handshake - auth.orgid (spelled as the HTTP header) is taken like orgId; a mismatch is refused', async (t) => {
  const ann = await customer(app, 'fest', 'ann');
  const chat = defaultClient(t, '/chat', { token: ann.token, orgid: 'fest' });
  t.match(await once(chat, 'authenticate'), { userId: ann.id });
  const community = defaultClient(t, '/community-chat', { token: ann.token, orgid: 'fest' });
  await once(community, 'connect');
  t.ok(community.connected, '/community-chat too');
  const both = defaultClient(t, '/community-chat', { token: ann.token, orgId: 'fest', orgid: 'other' });
  const err = await once<Error & { data?: any }>(both, 'connect_error');
  t.match(err.message, /orgId and auth.orgid differ/);
  t.match(err.data, { statusCode: 400 });
});

t.test('logs - a socket connection, a refusal and a disconnection are logged with namespace, tenant and reason', async (t) => {
  const ann = await customer(app, 'fest', 'ann');
  const s = defaultClient(t, '/community-chat', { token: ann.token, orgId: 'fest' }, { transports: ['websocket'] });
  await once(s, 'connect');
  const socketId = s.id;
  const connected = lines.find((l) => l.msg === 'socket connected' && l.socketId === socketId);
  t.match(connected, { level: 30, nsp: '/community-chat', tenant: 'fest', role: 'customer', userId: ann.id, transport: 'websocket' });
  s.disconnect();
  await eventually(() => lines.some((l) => l.msg === 'socket disconnected' && l.socketId === socketId), 3000, 'disconnect line');
  const gone = lines.find((l) => l.msg === 'socket disconnected' && l.socketId === socketId);
  t.match(gone, { level: 30, nsp: '/community-chat', tenant: 'fest', role: 'customer', reason: 'client namespace disconnect', durationMs: Number });

  const bad = defaultClient(t, '/chat', { token: 'not-a-jwt', orgId: 'fest' }, { transports: ['websocket'] });
  await once(bad, 'connect_error');
  t.match(
    lines.find((l) => l.msg === 'socket refused' && l.nsp === '/chat'),
    { level: 30, tenant: 'fest', statusCode: 401, reason: /invalid or expired/ },
  );
  t.notOk(JSON.stringify(lines).includes('not-a-jwt'), 'the token is not logged');
});
