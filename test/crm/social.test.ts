import t from 'tap';
import { A, assertStaffOnly, B, messages, setup } from './setup.js';

const items = [
  { kind: 'comment', platform: 'Instagram', externalId: 'c1', postId: 'p1', author: { handle: '@fan1', name: 'Fan One' }, text: 'Great show!', at: '2026-05-01T10:00:00Z' },
  { kind: 'comment', platform: 'facebook', externalId: 'c2', postId: 'p2', author: { id: '77' }, text: 'When is the next one?', at: '2026-05-01T11:00:00Z' },
  { kind: 'message', platform: 'instagram', externalId: 'm1', author: { handle: '@fan1', name: 'Fan One' }, text: 'Can I get a refund?', at: '2026-05-01T12:00:00Z' },
  { kind: 'engagement', platform: 'instagram', externalId: 'p1:2026-05-01', postId: 'p1', metrics: { likes: 120, shares: 8, views: 4000 }, at: '2026-05-01T23:59:00Z' },
];

t.test('social sync - ingest, lists per kind, dedupe by platform id, inbox threading', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const { a, admin, b } = env;
  const r = await admin.post('/sync/social-activities/ingest', { items });
  t.equal(r.status, 200);
  t.same(r.body, { received: 4, created: 4, updated: 0, threaded: 1 });

  const comments = await a.get('/sync/social-activities/comments');
  t.equal(comments.status, 200);
  t.same(comments.body.data.map((c: any) => c.data.externalId), ['c2', 'c1'], 'newest first');
  t.equal(comments.body.data[1].data.platform, 'instagram', 'platform lower-cased');
  t.equal((await a.get('/sync/social-activities/comments?platform=facebook')).body.total, 1);
  t.equal((await a.get('/sync/social-activities/comments?postId=p1')).body.data[0].data.text, 'Great show!');
  t.equal((await a.get(`/sync/social-activities/comments?until=${encodeURIComponent('2026-05-01T10:30:00Z')}`)).body.total, 1);
  const msgs = await a.get('/sync/social-activities/messages');
  t.equal(msgs.body.total, 1);
  t.equal(msgs.body.data[0].data.direction, 'inbound');
  const eng = await a.get('/sync/social-activities/engagement');
  t.same(eng.body.data[0].data.metrics, { likes: 120, shares: 8, views: 4000 });

  // The direct message is in the inbox, threaded by platform and handle.
  const conv = await a.get(`/crm/inbox/conversations/${encodeURIComponent('social:instagram:@fan1')}`);
  t.equal(conv.status, 200);
  t.equal(conv.body.conversation.data.contactName, 'Fan One');
  t.same(conv.body.messages.data.map((m: any) => m.data.body), ['Can I get a refund?']);
  const sendSocial = await a.post('/crm/inbox/update?send=true', { conversationId: conv.body.conversation.sk, message: { body: 'Sure' } });
  t.equal(sendSocial.status, 400, 'social has no outbox provider to send through');

  // The same items again (a connector retry), one of them changed: updated, not duplicated.
  const again = await admin.post('/sync/social-activities/ingest', {
    items: [{ ...items[3], metrics: { likes: 150, shares: 9, views: 5000 } }, items[2], items[2]],
  });
  t.same(again.body, { received: 3, created: 0, updated: 2, threaded: 0 });
  const eng2 = await a.get('/sync/social-activities/engagement');
  t.equal(eng2.body.total, 1);
  t.equal(eng2.body.data[0].data.metrics.likes, 150);
  t.equal(eng2.body.data[0].version, 2);
  t.equal((await a.get('/sync/social-activities/messages')).body.total, 1);
  const conv2 = await a.get(`/crm/inbox/conversations/${encodeURIComponent('social:instagram:@fan1')}`);
  t.equal(conv2.body.conversation.data.unread, 1, 'a re-ingested message is not threaded twice');

  // Paging.
  const p = await a.get('/sync/social-activities/comments?pageSize=1&page=2');
  t.equal(p.body.data[0].data.externalId, 'c1');
  t.equal(p.body.hasNext, false);

  // Isolation.
  for (const path of ['comments', 'messages', 'engagement']) {
    t.equal((await b.get(`/sync/social-activities/${path}`)).body.total, 0, `${path}: nothing of A in B`);
  }
  t.equal((await b.get('/crm/inbox/conversations')).body.total, 0);
});

t.test('social sync - validation, Admin only, staff only', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const { a, admin, app } = env;
  t.equal((await a.post('/sync/social-activities/ingest', { items })).status, 403, 'ingest needs Admin');
  const bad = await admin.post('/sync/social-activities/ingest', {
    items: [
      { kind: 'comment', platform: 'x', externalId: 'c1' },
      { kind: 'message', platform: 'x', externalId: 'm1', text: 'hi' },
      { kind: 'engagement', platform: 'x', externalId: 'e1' },
    ],
  });
  t.equal(bad.status, 400);
  t.match(messages(bad), /body\/items\/0\/text is required for a comment/);
  t.match(messages(bad), /body\/items\/1\/author\/handle/);
  t.match(messages(bad), /body\/items\/2\/metrics is required/);
  const shape = await admin.post('/sync/social-activities/ingest', { items: [{ kind: 'like', platform: 'bad platform!', externalId: '' }] });
  t.match(messages(shape), /body\/items\/0\/kind must be one of: comment, message, engagement/);
  t.match(messages(shape), /body\/items\/0\/platform/);
  t.match(messages(shape), /body\/items\/0\/externalId/);
  t.match(messages(await admin.post('/sync/social-activities/ingest', { items: [] })), /body\/items/);
  t.match(messages(await admin.post('/sync/social-activities/ingest', { items: Array(501).fill(items[0]) })), /body\/items/);
  t.equal(app.deps.store.count(A, 'social_activity'), 0, 'nothing stored by refused ingests');
  t.match(messages(await a.get('/sync/social-activities/comments?since=nope')), /query\/since/);

  for (const path of ['comments', 'messages', 'engagement']) await assertStaffOnly(t, env, 'get', `/sync/social-activities/${path}`);
  await assertStaffOnly(t, env, 'post', '/sync/social-activities/ingest', { items });
  t.equal(app.deps.store.count(A, 'social_activity') + app.deps.store.count(B, 'social_activity'), 0);
});
