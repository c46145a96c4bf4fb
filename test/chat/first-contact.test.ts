// A direct message to someone who never connected reaches them on their first connect with the
// spec's handshake ({token, orgId}, no lastSeqs), the thread list shows it with its unread count,
// and a replay past the limit says where to page on.
import t from 'tap';
import { createOrg, startTestApp } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { ack, agent, collect, communitySocket, customer, eventually, once, socketTo } from './helpers.js';

const REPLAY_LIMIT = 4;
const app = await startTestApp(t, { modules: ['chat'], config: { chat: { communityReplayLimit: REPLAY_LIMIT } } });
await createOrg(app, 'fest');
const as = (token: string) => client(app.url, { orgid: 'fest', authorization: `Bearer ${token}` });

t.test('first contact - two DMs (socket and REST) to a customer with no socket arrive on their first connect; the thread list shows them', async (t) => {
  const [ann, ben] = await Promise.all([customer(app, 'fest', 'ann'), customer(app, 'fest', 'ben')]);
  const a = await communitySocket(t, app, 'fest', ann);
  const first = await ack(a, 'sendMessage', { to: ben.id, text: 'Are you at the festival?' });
  const second = await as(ann.token).post('/client/community/messages', { to: ben.id, text: 'Meet at the gate at 6' });
  t.equal(second.status, 201);

  // Ben has never connected: his thread list already has the conversation.
  const list = await as(ben.token).get('/client/community/threads');
  t.equal(list.status, 200);
  t.match(list.body, { total: 1, data: [{ threadId: first.threadId, kind: 'direct', with: ann.id, lastSeq: 2, readSeq: 0, unread: 2, lastMessage: { seq: 2 } }] });
  t.match((await as(ann.token).get('/client/community/threads')).body.data, [{ threadId: first.threadId, with: ben.id, unread: 0 }], "the sender's own messages are not unread to her");

  // First connect, the spec's handshake: both arrive, in order.
  const b = socketTo(t, app, '/community-chat', { token: ben.token, orgId: 'fest' });
  const got = collect(b, 'message');
  await once(b, 'connect');
  await eventually(() => got.length === 2, 3000, 'both messages');
  t.same(got.map((m) => [m.seq, m.text]), [[1, 'Are you at the festival?'], [2, 'Meet at the gate at 6']]);

  // Marked read (over REST), a new socket replays nothing and the list shows nothing unread.
  t.match((await as(ben.token).post(`/client/community/threads/${encodeURIComponent(first.threadId)}/read`, { seq: 2 })).body, { threadId: first.threadId, seq: 2 });
  t.same((await as(ben.token).get('/client/community/threads?unread=true')).body.data, []);
  const again = socketTo(t, app, '/community-chat', { token: ben.token, orgId: 'fest' });
  const replayed = collect(again, 'message');
  // Handlers wait for the connection's set-up, replay included: once an ack is back, it is done.
  await ack(again, 'getOnlineUsers', {});
  t.equal(replayed.length, 0, 'what was read is not replayed');

  // Known-thread replay still follows lastSeqs.
  const withSeqs = socketTo(t, app, '/community-chat', { token: ben.token, orgId: 'fest', lastSeqs: { [first.threadId]: 1 } });
  const fromSeq = collect(withSeqs, 'message');
  await once(withSeqs, 'connect');
  await eventually(() => fromSeq.length === 1, 3000, 'replay after lastSeqs');
  t.equal(fromSeq[0].seq, 2);
});

t.test('first contact - a replay past the limit stops with replay-truncated; the rest is paged over REST', async (t) => {
  const cat = await customer(app, 'fest', 'cat');
  const staff = agent(app, 'fest', 'steward');
  const s = await communitySocket(t, app, 'fest', staff);
  for (let i = 1; i <= REPLAY_LIMIT + 2; i++) await ack(s, 'sendMessage', { to: cat.id, text: `notice ${i}` });

  const c = socketTo(t, app, '/community-chat', { token: cat.token, orgId: 'fest' });
  const got = collect(c, 'message');
  const truncated = once(c, 'replay-truncated');
  await once(c, 'connect');
  const stop = await truncated;
  const threadId = got[0]?.threadId;
  t.same(got.map((m) => m.seq), [1, 2, 3, 4], `the first ${REPLAY_LIMIT} (COMMUNITY_REPLAY_LIMIT)`);
  t.match(stop, { total: 1, threads: [{ threadId, nextAfterSeq: REPLAY_LIMIT, lastSeq: REPLAY_LIMIT + 2 }] });

  const page = await as(cat.token).get(`/client/community/threads/${threadId}/messages?afterSeq=${stop.threads[0].nextAfterSeq}`);
  t.equal(page.status, 200);
  t.match(page.body, { threadId, hasMore: false, lastSeq: 6, readSeq: 0 });
  t.same(page.body.messages.map((m: any) => m.text), ['notice 5', 'notice 6']);
  t.same(
    (await as(cat.token).get(`/client/community/threads/${threadId}/messages?limit=2`)).body.messages.map((m: any) => m.seq),
    [5, 6],
    'without afterSeq: the latest page',
  );
  t.match((await as(staff.token).get('/client/community/threads')).body.data, [{ threadId, with: cat.id, unread: 0 }], 'staff list their threads too');

  // Only the two users read a direct thread; malformed ids are refused.
  const other = await customer(app, 'fest', 'dan');
  t.equal((await as(other.token).get(`/client/community/threads/${threadId}/messages`)).status, 404);
  t.equal((await as(other.token).post(`/client/community/threads/${threadId}/read`, { seq: 1 })).status, 404);
  t.equal((await as(cat.token).get('/client/community/threads/nonsense/messages')).status, 400);
  t.equal((await as(cat.token).get('/client/community/threads/g:crew/messages')).status, 403, 'a group is read by its members');
  t.equal((await as(cat.token).post(`/client/community/threads/${threadId}/read`, { seq: 99 })).status, 400);
});

t.test('first contact - a member gets what their group said while they had no socket; a later joiner is not sent its history', async (t) => {
  const [ann, ben, cat] = await Promise.all([customer(app, 'fest', 'ann'), customer(app, 'fest', 'ben'), customer(app, 'fest', 'cat')]);
  const a = await communitySocket(t, app, 'fest', ann);
  const b = await communitySocket(t, app, 'fest', ben);
  await ack(a, 'joinGroup', { groupId: 'stage' });
  await ack(b, 'joinGroup', { groupId: 'stage' });
  b.disconnect();
  await ack(a, 'sendGroupMessage', { groupId: 'stage', text: 'doors at 7' });
  await ack(a, 'sendGroupMessage', { groupId: 'stage', text: 'doors at 8 now' });
  const c = await communitySocket(t, app, 'fest', cat);
  await ack(c, 'joinGroup', { groupId: 'stage' });

  const back = socketTo(t, app, '/community-chat', { token: ben.token, orgId: 'fest' });
  const missed = collect(back, 'groupMessage');
  await ack(back, 'getOnlineUsers', {});
  t.same(missed.map((m) => [m.seq, m.text]), [[1, 'doors at 7'], [2, 'doors at 8 now']]);
  t.match((await as(ben.token).get('/client/community/threads')).body.data, [{ threadId: 'g:stage', kind: 'group', groupId: 'stage', unread: 2 }]);

  const catAgain = socketTo(t, app, '/community-chat', { token: cat.token, orgId: 'fest' });
  const history = collect(catAgain, 'groupMessage');
  await ack(catAgain, 'getOnlineUsers', {});
  t.equal(history.length, 0, 'what the group said before cat joined is not unread to cat');
  t.match((await as(cat.token).get('/client/community/threads')).body.data, [{ threadId: 'g:stage', unread: 0, lastSeq: 2, readSeq: 2 }]);
  t.equal((await as(cat.token).get('/client/community/threads/g:stage/messages')).body.messages.length, 2, 'and a member pages it when they want it');
});
