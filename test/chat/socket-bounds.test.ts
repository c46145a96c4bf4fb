// What one client can make a node do over a socket is bounded like a request: every event is
// charged to its organisation's rate limit (the same budget as its HTTP requests), a chat
// message's metadata has a size cap, and an agent's reconnect replays at most the replay limit
// over all the chats its handshake names. One node serves every case.
import t from 'tap';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp, staffHeaders } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { ack, agent, chatSocket, collect, communitySocket, customer, eventually, once, sleep, socketTo } from './helpers.js';

const REPLAY_LIMIT = 5;
const MAX_METADATA = 256;
const app = await startTestApp(t, {
  modules: ['chat'],
  config: {
    rateLimits: { enabled: true, plans: { tiny: { perSecond: 1, burst: 6 } } },
    chat: { replayLimit: REPLAY_LIMIT, maxMetadataBytes: MAX_METADATA },
  },
});
const at = new Date().toISOString();
await app.deps.store.commit(
  new WriteBatch().putOrg({ orgId: 'acme', displayName: 'Acme', createdate: at }).putOrg({ orgId: 'slow', displayName: 'Slow', createdate: at, plan: 'tiny' }),
);

/** An agent in a chat with a fresh customer: the chat id, the agent's socket. */
async function chatWith(alice: ReturnType<typeof agent>, sa: Awaited<ReturnType<typeof chatSocket>>['s']) {
  const cust = await customer(app, 'acme');
  const { s: sc, auth } = await chatSocket(t, app, 'acme', cust);
  await ack(sc, 'chatRequest', {});
  await ack(sa, 'pick-next', {});
  sc.disconnect();
  return auth.chatId as string;
}

t.test('socket events are charged to the organisation: past its plan they answer 429, its requests too, other organisations are untouched', async (t) => {
  const slowAgent = agent(app, 'slow', 'sam');
  const { s } = await chatSocket(t, app, 'slow', slowAgent);
  const replies = await Promise.all(Array.from({ length: 10 }, () => ack(s, 'set-status', { status: 'online' })));
  const refused = replies.filter((r) => r?.error);
  const granted = replies.length - refused.length;
  t.ok(granted >= 6 && granted <= 7, `the burst of 6 (and at most one refilled token) was granted: ${granted}`);
  t.ok(refused.length >= 3, `the rest were refused: ${refused.length}`);
  for (const r of refused) t.match(r.error, { statusCode: 429, error: 'Too Many Requests' }, 'each with the rate-limit envelope');
  t.ok(s.connected, 'a refused event does not cost the connection');

  // One budget per organisation: its HTTP requests find it spent, on either channel.
  const rest = await request(app.url, '/chat/sessions', { headers: staffHeaders(app, 'slow') });
  t.equal(rest.status, 429, 'a request of the same organisation is refused too');
  t.ok(Number(rest.headers['retry-after']) >= 1, 'with Retry-After');
  const cs = await communitySocket(t, app, 'slow', await customer(app, 'slow'));
  t.match(await ack(cs, 'getOnlineUsers', {}), { error: { statusCode: 429 } }, '/community-chat charges the same budget');

  // Another organisation's sockets and requests are not charged for it.
  const { s: other } = await chatSocket(t, app, 'acme', agent(app, 'acme', 'olga'));
  for (let i = 0; i < 10; i++) t.notOk((await ack(other, 'set-status', { status: 'online' }))?.error, `acme event ${i + 1} granted`);
  t.equal((await request(app.url, '/chat/sessions', { headers: staffHeaders(app, 'acme') })).status, 200, 'acme requests still answered');
});

t.test("socket events are charged by principal: one customer spends only its share of the plan, its organisation's staff keep the rest", async (t) => {
  await app.deps.store.commit(new WriteBatch().putOrg({ orgId: 'shop', displayName: 'Shop', createdate: at, plan: 'tiny' }));
  // Plan tiny: burst 6; one customer's share (RATE_LIMIT_CUSTOMER_SHARE 0.1) rounds to 1.
  const cs = await communitySocket(t, app, 'shop', await customer(app, 'shop'));
  const replies = [];
  for (let i = 0; i < 4; i++) replies.push(await ack(cs, 'getOnlineUsers', {}));
  t.notOk(replies[0]?.error, "the customer's first event is granted");
  for (const r of replies.slice(1)) t.match(r, { error: { statusCode: 429, message: /one customer of organisation shop/ } }, 'the rest are refused at its share');
  const other = await communitySocket(t, app, 'shop', await customer(app, 'shop'));
  t.notOk((await ack(other, 'getOnlineUsers', {}))?.error, 'another customer has its own share');
  const { s } = await chatSocket(t, app, 'shop', agent(app, 'shop', 'sue'));
  for (let i = 0; i < 4; i++) t.notOk((await ack(s, 'set-status', { status: 'online' }))?.error, `staff event ${i + 1} granted: the plan was not spent by the customer`);
});

t.test('a chat message whose metadata is over CHAT_MAX_METADATA_BYTES is refused before it is stored', async (t) => {
  const alice = agent(app, 'acme', 'alice');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const chatId = await chatWith(alice, sa);
  const big = await ack(sa, 'sendMessage', { chatId, text: 'hi', metadata: { blob: 'x'.repeat(MAX_METADATA) } });
  t.match(big, { error: { statusCode: 400, message: /payload\/metadata is \d+ bytes of JSON; at most 256/ } }, 'too large: 400 naming the field and the cap');
  const ok = await ack(sa, 'sendMessage', { chatId, text: 'hi', metadata: { orderRef: 'A-1001' } });
  t.match(ok, { chatId, seq: 1 }, 'a small one is stored, and the refused one took no seq');
  const history = await request(app.url, `/chat/history/${chatId}`, { headers: staffHeaders(app, 'acme') });
  t.same(
    history.body.data.map((m: any) => m.metadata),
    [{ orderRef: 'A-1001' }],
    'only the accepted message is in the history',
  );
});

t.test("an agent's reconnect replays at most the replay limit over every chat it names, and says where each stopped", async (t) => {
  const alice = agent(app, 'acme', 'alice');
  const { s: sa } = await chatSocket(t, app, 'acme', alice);
  const chats: string[] = [];
  for (let c = 0; c < 3; c++) {
    const chatId = await chatWith(alice, sa);
    for (let i = 1; i <= 4; i++) await ack(sa, 'sendMessage', { chatId, text: `chat ${c} message ${i}` });
    chats.push(chatId);
  }
  sa.disconnect();

  const back = socketTo(t, app, '/chat', { token: alice.token, orgId: 'acme', lastSeqs: Object.fromEntries(chats.map((id) => [id, 0])) });
  const messages = collect(back, 'message');
  const truncated = collect<any>(back, 'update');
  await once(back, 'authenticate');
  await eventually(() => messages.length >= REPLAY_LIMIT && truncated.length >= 2, 3000, 'the replay and its truncation notices');
  await sleep(200); // nothing more follows
  t.same(
    messages.map((m) => [m.chatId, m.seq]),
    [...[1, 2, 3, 4].map((q) => [chats[0], q]), [chats[1], 1]],
    `${REPLAY_LIMIT} messages in all, chat by chat in the order named`,
  );
  t.same(
    truncated.filter((u) => u.type === 'replay-truncated').map((u) => [u.chatId, u.nextAfterSeq]),
    [
      [chats[1], 1],
      [chats[2], 0],
    ],
    'the chats that stopped early, each with where to page on',
  );
});
