import t from 'tap';
import { CUSTOMER_ACTIVITY_ACTOR } from '../../actors/crm/messages.js';
import { ManualClock } from '../../core/clock.js';
import { A, assertStaffOnly, B, messages, setup } from './setup.js';

const DAY = 86_400_000;

t.test('customer activity - record, timeline newest first, summary figures', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 2, 1, 12));
  const env = await setup(t, { modules: ['crm'], clock });
  const { a, app } = env;
  const ana = 'ana@example.com';
  const rec = (body: Record<string, unknown>) => a.post('/crm/customer-activity/record', { email: ana, ...body });

  const first = await rec({ type: 'screen_view', name: 'home' });
  t.equal(first.status, 201);
  t.equal(first.body.datatype, 'customer_activity');
  t.same(
    Object.keys(first.body.data).sort(),
    ['at', 'email', 'importance', 'name', 'properties', 'type'],
    'data is {email, type, name, importance, properties, at}',
  );
  t.equal(first.body.data.importance, 1, 'a screen view defaults to importance 1');
  t.equal(first.body.data.at, new Date(clock.now()).toISOString(), 'at defaults to now');
  clock.advance(60_000);
  const purchase = await rec({ type: 'event_action', name: 'ticket_purchase', properties: { eventId: 'e1', amount: 40 } });
  t.equal(purchase.body.data.importance, 5, 'a ticket purchase has importance 5');
  t.same(purchase.body.data.properties, { eventId: 'e1', amount: 40 });
  clock.advance(60_000);
  t.equal((await rec({ type: 'search', name: 'jazz' })).body.data.importance, 2);
  t.equal((await rec({ type: 'action', name: 'share', importance: 4 })).body.data.importance, 4, 'explicit importance wins');
  t.equal((await rec({ type: 'event_action', name: 'bookmark' })).body.data.importance, 3);
  t.equal((await rec({ type: 'screen_view', name: 'event' })).status, 201);
  t.equal((await rec({ type: 'screen_view', name: 'event' })).status, 201);
  // Backdated by 30 days (one half-life): counts half.
  const old = await rec({ type: 'screen_view', name: 'home', at: new Date(clock.now() - 30 * DAY).toISOString(), email: 'ANA@Example.com' });
  t.equal(old.body.data.email, ana, 'emails are lower-cased');
  // Someone else.
  await a.post('/crm/customer-activity/record', { email: 'bo@example.com', type: 'screen_view', name: 'home' });

  const tl = await a.get(`/crm/customer-activity/${ana}/timeline`);
  t.equal(tl.status, 200);
  t.equal(tl.body.total, 8);
  const names = tl.body.data.map((r: any) => `${r.data.type}:${r.data.name}`);
  t.same(
    names,
    ['screen_view:event', 'screen_view:event', 'event_action:bookmark', 'action:share', 'search:jazz', 'event_action:ticket_purchase', 'screen_view:home', 'screen_view:home'],
    'newest first; same instant: the later write first',
  );
  t.equal(tl.body.data[0].sk > tl.body.data[1].sk, true, 'ties broken by id, newest first');
  t.equal(tl.body.data[7].sk, old.body.sk, 'the backdated one is last');
  const p2 = await a.get(`/crm/customer-activity/${encodeURIComponent(ana)}/timeline?pageSize=3&page=2`);
  t.same(p2.body.data.map((r: any) => `${r.data.type}:${r.data.name}`), names.slice(3, 6), 'page 2 continues page 1');
  t.equal(p2.body.hasNext, true);
  const views = await a.get(`/crm/customer-activity/${ana}/timeline?type=screen_view`);
  t.equal(views.body.total, 4);
  const since = await a.get(`/crm/customer-activity/${ana}/timeline?since=${encodeURIComponent(new Date(clock.now() - DAY).toISOString())}`);
  t.equal(since.body.total, 7, 'since leaves out the backdated one');

  const sum = await a.get(`/crm/customer-activity/${ana}/summary`);
  t.equal(sum.status, 200);
  t.equal(sum.body.email, ana);
  t.equal(sum.body.total, 8);
  t.same(sum.body.byType, { screen_view: 4, action: 1, search: 1, event_action: 2 });
  t.equal(sum.body.firstSeen, old.body.data.at);
  t.equal(sum.body.lastSeen, new Date(clock.now()).toISOString());
  t.same(sum.body.topScreens, [
    { name: 'event', count: 2 },
    { name: 'home', count: 2 },
  ]);
  t.same(sum.body.topActions.map((x: any) => x.name).sort(), ['bookmark', 'share', 'ticket_purchase']);
  // 1 (home, 2 min ago) + 5 + 2 + 4 + 3 + 1 + 1 ≈ 17 (the minutes of age barely count) + 0.5 (30 days old)
  t.ok(Math.abs(sum.body.engagementScore - 17.5) < 0.1, `engagement score ${sum.body.engagementScore} ≈ 17.5`);

  clock.advance(30 * DAY);
  // (A fresh token: the first one expired with the month.)
  const later = await env.as({ org: A, email: 'agent@acme.test' }).get(`/crm/customer-activity/${ana}/summary`);
  t.ok(Math.abs(later.body.engagementScore - 8.75) < 0.1, `a month later the score halves: ${later.body.engagementScore}`);

  const a2 = env.as({ org: A, email: 'agent@acme.test' });
  const b2 = env.as({ org: B, email: 'agent@globex.test' });
  const nobody = await a2.get('/crm/customer-activity/nobody@example.com/summary');
  t.same(nobody.body, {
    email: 'nobody@example.com',
    total: 0,
    byType: { screen_view: 0, action: 0, search: 0, event_action: 0 },
    firstSeen: null,
    lastSeen: null,
    topScreens: [],
    topActions: [],
    engagementScore: 0,
  });
  t.same((await a2.get('/crm/customer-activity/nobody@example.com/timeline')).body, { data: [], total: 0, hasNext: false, page: 1, pageSize: 20 });

  // Tenant isolation.
  t.equal((await b2.get(`/crm/customer-activity/${ana}/timeline`)).body.total, 0);
  t.equal((await b2.get(`/crm/customer-activity/${ana}/summary`)).body.total, 0);
  t.equal(app.deps.store.count(A, 'customer_activity'), 9);
  t.equal(app.deps.store.count(B, 'customer_activity'), 0);
});

t.test('customer activity - erase removes every record of the person and nothing else', async (t) => {
  const { a, b, app } = await setup(t, { modules: ['crm'] });
  const ana = 'ana@example.com';
  for (let i = 0; i < 25; i++) await a.post('/crm/customer-activity/record', { email: ana, type: 'screen_view', name: `s${i}` });
  await a.post('/crm/customer-activity/record', { email: 'bo@example.com', type: 'search', name: 'x' });
  await b.post('/crm/customer-activity/record', { email: ana, type: 'action', name: 'in-globex' });

  const r = await a.post('/crm/customer-activity/erase', { email: 'Ana@Example.com' });
  t.equal(r.status, 200);
  t.same(r.body, { email: ana, erased: 25 });
  t.equal(app.deps.store.scan(A, 'customer_activity', { 'data.email': ana }).length, 0, 'nothing left in the store');
  t.equal((await a.get(`/crm/customer-activity/${ana}/timeline`)).body.total, 0);
  t.equal((await a.get(`/crm/customer-activity/${ana}/summary`)).body.total, 0);
  t.equal((await a.get('/crm/customer-activity/bo@example.com/timeline')).body.total, 1, 'other people untouched');
  t.equal((await b.get(`/crm/customer-activity/${ana}/timeline`)).body.total, 1, 'the same person in another org untouched');
  t.same((await a.post('/crm/customer-activity/erase', { email: ana })).body, { email: ana, erased: 0 }, 'erasing again answers 0');

  // Erase racing writes: every record written before the erase answered is gone.
  const writes = Array.from({ length: 20 }, (_, i) => a.post('/crm/customer-activity/record', { email: ana, type: 'action', name: `w${i}` }));
  const erase = a.post('/crm/customer-activity/erase', { email: ana });
  await Promise.all(writes);
  const erased = (await erase).body.erased;
  const left = app.deps.store.scan(A, 'customer_activity', { 'data.email': ana }).length;
  t.equal(erased + left, 20, 'each write is either erased or written after the erase, never lost or half-done');

  // In mailbox order: an erase queued right behind a write (still committing) erases it too.
  const one = 'one@example.com';
  const record = app.deps.runtime.ask(A, CUSTOMER_ACTIVITY_ACTOR, one, { type: 'record', activity: { email: one, type: 'action', name: 'just now' } });
  const wipe = app.deps.runtime.ask<{ erased: number }>(A, CUSTOMER_ACTIVITY_ACTOR, one, { type: 'erase' });
  await record;
  t.same(await wipe, { erased: 1 }, 'the write before it is erased');
  t.equal(app.deps.store.scan(A, 'customer_activity', { 'data.email': one }).length, 0, 'nothing left');
});

t.test('customer activity - validation and access', async (t) => {
  const env = await setup(t, { modules: ['crm'] });
  const { a } = env;
  const bad = await a.post('/crm/customer-activity/record', { email: 'nope', type: 'click', importance: 9, at: 'yesterday' });
  t.equal(bad.status, 400);
  const m = messages(bad);
  t.match(m, /body\/email/);
  t.match(m, /body\/type must be one of: screen_view, action, search, event_action/);
  t.match(m, /body\/name is required/);
  t.match(m, /body\/importance/);
  t.match(m, /body\/at/);
  t.equal((await a.post('/crm/customer-activity/erase', {})).status, 400);
  t.match(messages(await a.post('/crm/customer-activity/erase', { email: 'x' })), /body\/email/);
  t.match(messages(await a.get('/crm/customer-activity/not-an-email/timeline')), /params\/email/);
  t.match(messages(await a.get('/crm/customer-activity/a@b.co/timeline?type=x')), /query\/type/);
  t.equal(env.app.deps.store.count(A, 'customer_activity'), 0, 'refused writes stored nothing');

  await assertStaffOnly(t, env, 'post', '/crm/customer-activity/record', { email: 'a@b.co', type: 'search', name: 'x' });
  await assertStaffOnly(t, env, 'get', '/crm/customer-activity/a@b.co/timeline');
  await assertStaffOnly(t, env, 'get', '/crm/customer-activity/a@b.co/summary');
  await assertStaffOnly(t, env, 'post', '/crm/customer-activity/erase', { email: 'a@b.co' });
  t.equal(env.app.deps.store.count(A, 'customer_activity') + env.app.deps.store.count(B, 'customer_activity'), 0);
});
