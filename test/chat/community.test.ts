import t from 'tap';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { ack, collect, communitySocket, customer, eventually, once, sleep, socketTo, until } from './helpers.js';

t.test('community - a direct message reaches every socket of the recipient and the sender', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'fest');
  const ann = await customer(app, 'fest', 'ann');
  const ben = await customer(app, 'fest', 'ben');
  const annPhone = await communitySocket(t, app, 'fest', ann);
  const annLaptop = await communitySocket(t, app, 'fest', ann);
  const benPhone = await communitySocket(t, app, 'fest', ben);
  const benTablet = await communitySocket(t, app, 'fest', ben);

  const onPhone = once(benPhone, 'message');
  const onTablet = once(benTablet, 'message');
  const onAnnLaptop = once(annLaptop, 'message');
  const echoed = collect(annPhone, 'message');
  const sent = await ack(annPhone, 'sendMessage', { to: ben.id, text: 'See you at the main stage?' });
  t.match(sent, { id: /^[0-9a-f]{24}$/, seq: 1, to: ben.id, from: { id: ann.id }, text: 'See you at the main stage?' });
  for (const got of [await onPhone, await onTablet, await onAnnLaptop]) t.match(got, { id: sent.id, seq: 1, threadId: sent.threadId });
  await sleep(50);
  t.equal(echoed.length, 0, 'the sending socket has it from the ack, not again as an event');

  // The same send over REST (socket down), answered by the other side.
  const reply = once(annLaptop, 'message');
  const rest = await client(app.url, { orgid: 'fest', authorization: `Bearer ${ben.token}` }).post('/client/community/messages', {
    to: ann.id,
    text: 'Yes, at 8!',
  });
  t.equal(rest.status, 201);
  t.match(rest.body, { seq: 2, threadId: sent.threadId, from: { id: ben.id }, to: ann.id });
  t.match(await reply, { seq: 2, text: 'Yes, at 8!' });

  // Refusals come back in the ack (or as `error` without one).
  t.match(await ack(annPhone, 'sendMessage', { to: 'nobody-here', text: 'hi' }), { error: { statusCode: 404 } });
  t.match(await ack(annPhone, 'sendMessage', { to: ann.id, text: 'me' }), { error: { statusCode: 400 } });
  const err = once(annPhone, 'error');
  annPhone.emit('sendMessage', { to: ben.id });
  t.match(await err, { event: 'sendMessage', statusCode: 400, message: ['payload/text is required'] });

  // markRead keeps the highest seq.
  t.match(await ack(benPhone, 'markRead', { with: ann.id, seq: 2 }), { threadId: sent.threadId, seq: 2 });
  t.match(await ack(benPhone, 'markRead', { with: ann.id, seq: 9 }), { error: { statusCode: 400 } });
});

t.test('community - group messages fan out to every socket of every member; membership survives reconnects', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'fest');
  const [ann, ben, cat] = await Promise.all([customer(app, 'fest', 'ann'), customer(app, 'fest', 'ben'), customer(app, 'fest', 'cat')]);
  const ann1 = await communitySocket(t, app, 'fest', ann);
  const ann2 = await communitySocket(t, app, 'fest', ann);
  const ben1 = await communitySocket(t, app, 'fest', ben);
  const ben2 = await communitySocket(t, app, 'fest', ben);
  const cat1 = await communitySocket(t, app, 'fest', cat);

  t.match(await ack(ann1, 'joinGroup', { groupId: 'stage-crew' }), { groupId: 'stage-crew', members: 1, joined: true });
  t.match(await ack(ben1, 'joinGroup', { groupId: 'stage-crew' }), { members: 2 });
  t.match(await ack(cat1, 'sendGroupMessage', { groupId: 'stage-crew', text: 'let me in' }), { error: { statusCode: 403 } });

  const gets = [ann1, ann2, ben2].map((s) => once(s, 'groupMessage'));
  const catGot = collect(cat1, 'groupMessage');
  const senderGot = collect(ben1, 'groupMessage');
  const m = await ack(ben1, 'sendGroupMessage', { groupId: 'stage-crew', text: 'Soundcheck at 5', clientId: 'b-1' });
  t.match(m, { seq: 1, groupId: 'stage-crew', threadId: 'g:stage-crew', from: { id: ben.id } });
  for (const g of await Promise.all(gets)) t.match(g, { id: m.id, text: 'Soundcheck at 5' });
  await sleep(50);
  t.equal(senderGot.length, 0, 'the sending socket only gets the ack');
  t.match(await ack(ben1, 'sendGroupMessage', { groupId: 'stage-crew', text: 'Soundcheck at 5', clientId: 'b-1' }), { id: m.id }, 'resend is not stored twice');

  // A socket opened later rejoins the user's groups, and replays what it missed.
  const ann3 = socketTo(t, app, '/community-chat', { token: ann.token, orgId: 'fest', lastSeqs: { 'g:stage-crew': 0 } });
  const replayed = collect(ann3, 'groupMessage');
  await once(ann3, 'connect');
  await eventually(() => replayed.length === 1, 2000, 'replay');
  t.match(replayed[0], { seq: 1, id: m.id });
  const live = once(ann3, 'groupMessage');
  await ack(ann1, 'sendGroupMessage', { groupId: 'stage-crew', text: 'On my way' });
  t.match(await live, { seq: 2, from: { id: ann.id } });

  // Leaving stops delivery to all of that user's sockets.
  t.match(await ack(ben1, 'leaveGroup', { groupId: 'stage-crew' }), { left: true, members: 1 });
  const benAfter = collect(ben1, 'groupMessage');
  const annGot = once(ann2, 'groupMessage');
  await ack(ann1, 'sendGroupMessage', { groupId: 'stage-crew', text: 'bye ben' });
  await annGot;
  await sleep(50);
  t.equal(benAfter.length, 0);
  t.equal(catGot.length, 0, 'a non-member never hears the group');
  t.match(await ack(ben1, 'leaveGroup', { groupId: 'stage-crew' }), { error: { statusCode: 404 } });

  // Group send over REST.
  const viaRest = await client(app.url, { orgid: 'fest', authorization: `Bearer ${ann.token}` }).post('/client/community/messages', {
    groupId: 'stage-crew',
    text: 'posted over REST',
  });
  t.equal(viaRest.status, 201);
  t.match(viaRest.body, { seq: 4, groupId: 'stage-crew' });
});

t.test('community - typing is cleared by the server 3 s after the last one (default)', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  t.equal(app.config.chat.typingClearMs, 3000, 'the default is the spec value');
  await createOrg(app, 'fest');
  const ann = await customer(app, 'fest', 'ann');
  const ben = await customer(app, 'fest', 'ben');
  const a = await communitySocket(t, app, 'fest', ann);
  const b = await communitySocket(t, app, 'fest', ben);
  const on = until(b, 'typing', (d: any) => d.isTyping === true);
  const off = until(b, 'typing', (d: any) => d.isTyping === false, 6000);
  const started = Date.now();
  t.match(await ack(a, 'typing', { to: ben.id }), { ok: true });
  t.match(await on, { from: ann.id, to: ben.id, isTyping: true });
  t.match(await off, { from: ann.id, isTyping: false });
  const after = Date.now() - started;
  t.ok(after >= 2900 && after < 6000, `cleared after ${after} ms, not before 3 s`);
});

t.test('community - typing: the last event re-arms the clear, a message clears it, groups too', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { typingClearMs: 300 } } });
  await createOrg(app, 'fest');
  const ann = await customer(app, 'fest', 'ann');
  const ben = await customer(app, 'fest', 'ben');
  const a = await communitySocket(t, app, 'fest', ann);
  const b = await communitySocket(t, app, 'fest', ben);
  const events = collect(b, 'typing');

  await ack(a, 'typing', { to: ben.id });
  await sleep(200);
  const lastTyping = Date.now();
  await ack(a, 'typing', { to: ben.id });
  const off = until(b, 'typing', (d: any) => d.isTyping === false);
  await off;
  t.ok(Date.now() - lastTyping >= 280, 'cleared 300 ms after the last typing event, not the first');
  t.same(
    events.map((e) => e.isTyping),
    [true, false],
    'one start, one stop',
  );

  // A message ends the indicator at once.
  events.length = 0;
  await ack(a, 'typing', { to: ben.id });
  await ack(a, 'sendMessage', { to: ben.id, text: 'hi' });
  await eventually(() => events.length === 2, 1000, 'typing on and off');
  t.same(events.map((e) => e.isTyping), [true, false]);

  // Group typing goes to the members.
  await ack(a, 'joinGroup', { groupId: 'g1' });
  await ack(b, 'joinGroup', { groupId: 'g1' });
  t.match(await ack(a, 'groupTyping', { groupId: 'nope' }), { error: { statusCode: 403 } });
  const gOn = until(b, 'typing', (d: any) => d.groupId === 'g1' && d.isTyping);
  const gOff = until(b, 'typing', (d: any) => d.groupId === 'g1' && !d.isTyping);
  await ack(a, 'groupTyping', { groupId: 'g1' });
  t.match(await gOn, { from: ann.id, threadId: 'g:g1' });
  await gOff;
});

t.test('community - getOnlineUsers, then onlineStatus when someone connects and when they are gone', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'], config: { chat: { presenceGraceMs: 200 } } });
  await createOrg(app, 'fest');
  const ann = await customer(app, 'fest', 'ann');
  const ben = await customer(app, 'fest', 'ben');
  const a = await communitySocket(t, app, 'fest', ann);
  const list = await ack(a, 'getOnlineUsers', {});
  t.match(list, { users: [{ userId: ann.id, online: true, status: 'online' }] });
  const noAck = once(a, 'onlineStatus');
  a.emit('getOnlineUsers', {});
  t.match(await noAck, { users: [{ userId: ann.id }] }, 'without an ack the list comes as onlineStatus');

  const benOn = until(a, 'onlineStatus', (d: any) => d.userId === ben.id && d.online);
  const b = await communitySocket(t, app, 'fest', ben);
  t.match(await benOn, { userId: ben.id, online: true, status: 'online' });
  const benOff = until(a, 'onlineStatus', (d: any) => d.userId === ben.id && !d.online);
  const gone = Date.now();
  b.disconnect();
  t.match(await benOff, { userId: ben.id, online: false, status: 'offline', lastSeen: /Z$/ });
  t.ok(Date.now() - gone >= 190, 'offline only after the grace period');
});

t.test('community - handshake needs a customer token of the org', async (t) => {
  const app = await startTestApp(t, { modules: ['chat'] });
  await createOrg(app, 'fest');
  await createOrg(app, 'other');
  const ann = await customer(app, 'fest', 'ann');
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ orgId: 'fest' }, /token/],
    [{ token: '', orgId: 'fest' }, /token/],
    [{ token: 'garbage', orgId: 'fest' }, /invalid or expired/],
    [{ token: ann.token, orgId: 'other' }, /do not belong to organisation "other"/],
    [{ token: tokenFor(app, { org: 'fest', kind: 'app', roles: [] }), orgId: 'fest' }, /application token/],
  ];
  for (const [auth, message] of cases) {
    const s = socketTo(t, app, '/community-chat', auth);
    const err = await once<Error & { data?: any }>(s, 'connect_error');
    t.match(err.message, message);
    t.ok(err.data?.statusCode === 401 || err.data?.statusCode === 403, `status ${err.data?.statusCode}`);
  }
});
