// Listings of combined filters (core/store/listing-plan.ts narrowingListings, lmdb-records.ts): an
// event's tickets by status and type together and by holder have listings of their own; a holder
// with a status or a type reads the holder's listing narrowed (every record of it tested, while it
// is small). Each pages by number and by cursor like a full sorted read, `total` exact.
import t from 'tap';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { eventsWorld, makeEvent } from '../events/setup.js';
import { byCursor, byPages, listingKit, sorted } from './listing-kit.js';

// A query budget no worker could read thousands of tickets within: these listings answer only
// because they never go to a worker.
const w = await eventsWorld(t, { config: { query: { timeoutMs: 10, workers: 1, spareWorkers: 0, warmAtStart: false } } });
const { staff } = w;
const store = w.app.deps.store;
const { ticket, seed } = listingKit(w.org, store);

const statuses = ['valid', 'valid', 'checked_in', 'refunded'];
const holders = ['ann@example.com', 'bob@example.com', 'cy@example.com', 'dee@example.com', 'eve@example.com'];

t.test('listing combinations - status and type together, and a holder: pages by number and by cursor equal a full sorted read', async (t) => {
  const ev = await makeEvent(staff, { name: 'Combined night' });
  const rs: StoredRecord[] = [];
  // 3,000 over 25 hours (runs of three share one createdate); a quarter without a holder.
  for (let i = 0; i < 3000; i++) {
    const holder = i % 4 === 3 ? {} : { holderEmail: holders[(i * 7) % holders.length] };
    rs.push(ticket(ev.id, Math.floor(i / 3) * 91_000, { status: statuses[i % 4], ticketTypeId: i % 5 === 0 ? ev.types.Backstage : ev.types.General, ...holder }));
  }
  // By slug: the route lists both.
  for (let i = 0; i < 40; i++) rs.push(ticket(ev.slug, i * 61_000 + 700, { status: 'checked_in', ticketTypeId: ev.types.Backstage, holderEmail: holders[0] }));
  await seed(rs);
  const base = `/events/${ev.id}/tickets`;

  const vipIn = sorted(rs.filter((r) => r.data.status === 'checked_in' && r.data.ticketTypeId === ev.types.Backstage));
  const q = `${base}?status=checked_in&ticketTypeId=${ev.types.Backstage}`;
  const numbered = await byPages(staff, q, 37);
  t.same([numbered.sks, [...numbered.totals]], [vipIn, [vipIn.length]], 'status and type, by number; total exact');
  t.same((await byCursor(staff, q, 41)).sks, vipIn, 'status and type, by cursor');
  const ex = await staff.post('/dynamic-query/explain', {
    datatype: 'ticket',
    filter: { 'data.event': { $in: [ev.id, ev.slug] }, 'data.status': 'checked_in', 'data.ticketTypeId': ev.types.Backstage },
    sort: 'createdate',
    options: { page: 4, pageSize: 20 },
  });
  t.match(ex.body, { plan: { stage: 'IXSCAN', index: { listing: 'data.event,data.status,data.ticketTypeId>createdate' } }, sort: { by: 'index' }, total: vipIn.length, docsExamined: 20, ranIn: 'event-loop' });

  const ann = rs.filter((r) => r.data.holderEmail === holders[0]);
  const annQ = `${base}?holderEmail=${encodeURIComponent(holders[0])}`;
  const annPages = await byCursor(staff, annQ, 50);
  t.same([annPages.sks, [...annPages.totals]], [sorted(ann), [ann.length]], 'a holder\'s tickets, by cursor; total exact');
  t.same((await byPages(staff, annQ, 60)).sks, sorted(ann), 'and by number');

  for (const [label, extra, keep] of [
    ['status', '&status=refunded', (r: StoredRecord) => r.data.status === 'refunded'],
    ['type', `&ticketTypeId=${ev.types.Backstage}`, (r: StoredRecord) => r.data.ticketTypeId === ev.types.Backstage],
    ['status and type', `&status=checked_in&ticketTypeId=${ev.types.Backstage}`, (r: StoredRecord) => r.data.status === 'checked_in' && r.data.ticketTypeId === ev.types.Backstage],
  ] as const) {
    const want = sorted(ann.filter(keep));
    const c = await byCursor(staff, annQ + extra, 9);
    t.same([c.sks, [...c.totals]], [want, [want.length]], `a holder with ${label}, by cursor; total exact`);
    t.same((await byPages(staff, annQ + extra, 11)).sks, want, `a holder with ${label}, by number`);
  }
  const narrowed = await staff.post('/dynamic-query/explain', {
    datatype: 'ticket',
    filter: { 'data.event': { $in: [ev.id, ev.slug] }, 'data.holderEmail': holders[0], 'data.status': 'refunded' },
    sort: 'createdate',
    options: { page: 2, pageSize: 10 },
  });
  // The holder's listing read whole and tested, not the event's 3,040 tickets.
  t.match(narrowed.body, { plan: { stage: 'IXSCAN', narrowed: true, index: { listing: 'data.event,data.holderEmail>createdate' } }, sort: { by: 'index' }, ranIn: 'event-loop' });
  t.equal(narrowed.body.docsExamined, ann.length, 'every ticket of the holder tested once');

  // Descending through the store: equal createdates stay by id.
  const filter = { 'data.event': { $in: [ev.id, ev.slug] }, 'data.holderEmail': holders[0], 'data.ticketTypeId': ev.types.Backstage };
  const desc = [...ann.filter((r) => r.data.ticketTypeId === ev.types.Backstage)]
    .sort((a, b) => (a.createdate > b.createdate ? -1 : a.createdate < b.createdate ? 1 : a.sk < b.sk ? -1 : 1))
    .map((r) => r.sk);
  const got: string[] = [];
  let after: string | undefined;
  do {
    const r = store.find(w.org, 'ticket', filter, { sort: 'createdate', sortType: 'desc', pageSize: 13, ...(after ? { after } : {}) });
    t.equal(r.total, desc.length);
    got.push(...r.data.map((x) => x.sk));
    after = r.next;
  } while (after);
  t.same(got, desc, 'a narrowed read descending by cursor');
});

t.test('listing combinations - writes between pages of a narrowed read skip and repeat nothing', async (t) => {
  const ev = await makeEvent(staff, { name: 'Narrow night' });
  const holder = 'fay@example.com';
  const rs = Array.from({ length: 300 }, (_, i) => ticket(ev.id, i * 1000, { status: 'valid', holderEmail: holder }));
  // Others' tickets: more than the holder's, never listed.
  await seed([...rs, ...Array.from({ length: 1500 }, (_, i) => ticket(ev.id, i * 700, { status: 'valid', holderEmail: 'gus@example.com' }))]);
  const added: StoredRecord[] = [];
  const left = new Set<string>();
  const checkedIn = new Set<string>();
  const seen = await byCursor(staff, `/events/${ev.id}/tickets?holderEmail=${holder}&status=valid`, 40, async (page) => {
    // After each page: one sold now (after every one listed), one back-dated before the cursor,
    // one already listed checked in (it leaves the filter), one further on checked in.
    const fresh = ticket(ev.id, 10_000_000 + page, { holderEmail: holder });
    const old = ticket(ev.id, -1000 * page, { holderEmail: holder });
    added.push(fresh);
    const listed = rs[Math.min(page * 40 - 1, 200)];
    const ahead = rs[299 - page];
    left.add(ahead.sk);
    checkedIn.add(listed.sk);
    const b = new WriteBatch().putRecord(fresh).putRecord(old);
    for (const r of [listed, ahead]) b.putRecord({ ...r, version: 2, data: { ...r.data, status: 'checked_in' } });
    await store.commit(b);
  });
  t.equal(new Set(seen.sks).size, seen.sks.length, 'no ticket twice');
  t.same(seen.sks, sorted([...rs.filter((r) => !left.has(r.sk)), ...added]), 'every ticket still valid, in order, and every one added past the cursor');
  const final = await staff.get(`/events/${ev.id}/tickets?holderEmail=${holder}&status=valid&pageSize=1`);
  t.equal(final.body.total, 300 + 2 * added.length - checkedIn.size - left.size, 'total follows every write');
});

t.test('listing combinations - a holder past the narrowed bound is read the usual way, and says so', async (t) => {
  const ev = await makeEvent(staff, { name: 'Bulk night' });
  const holder = 'bulk@example.com';
  // Every listing holding the filter's records (the event's, its valid ones, the holder's) is over 1,000.
  await seed(Array.from({ length: 2402 }, (_, i) => ticket(ev.id, i * 500, { status: i % 2 ? 'valid' : 'checked_in', holderEmail: holder })));
  const filter = { 'data.event': ev.id, 'data.holderEmail': holder, 'data.status': 'valid' };
  const ex = store.explain(w.org, 'ticket', filter, { sort: 'createdate', pageSize: 10 });
  t.equal(ex.sort?.by, 'memory', 'over 1,000 tickets of one holder, and of the status: not narrowed in place');
  t.equal(ex.total, 1201);
  const alone = store.explain(w.org, 'ticket', { 'data.event': ev.id, 'data.holderEmail': holder }, { sort: 'createdate', page: 30, pageSize: 10 });
  t.match(alone, { sort: { by: 'index' }, total: 2402, docsExamined: 10 }, 'the holder alone is still its own listing');
  const cursor = store.find(w.org, 'ticket', { 'data.event': ev.id, 'data.holderEmail': holder }, { sort: 'createdate', pageSize: 10 }).next!;
  t.throws(() => store.find(w.org, 'ticket', filter, { sort: 'createdate', pageSize: 10, after: cursor }), { code: 'ERR_VALIDATION' }, 'a cursor there is refused: pages by number');
});
