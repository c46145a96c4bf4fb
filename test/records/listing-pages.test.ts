// Listings that page by index (core/store/listing-plan.ts, lmdb-listings.ts): an event's tickets
// read one page in `createdate` order by page number or by cursor at any size, `total` exact
// from counts kept in each write, on a real server and a real LMDB.
import t from 'tap';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { setup } from '../crm/setup.js';
import { eventsWorld, makeEvent, type Client } from '../events/setup.js';
import { byCursor, byPages, EPOCH, listingKit, sorted } from './listing-kit.js';

// A query budget no worker could read thousands of tickets within: the listings below answer only
// because they never go to a worker.
const w = await eventsWorld(t, { config: { query: { timeoutMs: 10, workers: 1, spareWorkers: 0, warmAtStart: false } } });
const { staff } = w;
const store = w.app.deps.store;

const { ticket, seed } = listingKit(w.org, store);

const statuses = ['valid', 'valid', 'checked_in', 'refunded'];

t.test('listing pages - pages by number and by cursor equal a full sorted read; totals exact with filters', async (t) => {
  const ev = await makeEvent(staff, { name: 'Big night' });
  const rs: StoredRecord[] = [];
  // 2,400 by id over 21 hours (runs of three tickets share one createdate), 30 by slug (valid only), 20 of another event.
  for (let i = 0; i < 2400; i++) rs.push(ticket(ev.id, Math.floor(i / 3) * 97_000, { status: statuses[i % 4], ticketTypeId: i % 5 === 0 ? ev.types.Backstage : ev.types.General }));
  for (let i = 0; i < 30; i++) rs.push(ticket(ev.slug, i * 77_000 + 500, { ticketTypeId: ev.types.General }));
  await seed(rs);
  const other = await makeEvent(staff, { name: 'Other night' });
  await seed(Array.from({ length: 20 }, (_, i) => ticket(other.id, i)));
  const mine = rs;

  const all = sorted(mine);
  const base = `/events/${ev.id}/tickets`;
  const numbered = await byPages(staff, base, 200);
  t.same(numbered.sks, all, 'page by page, by number: the whole listing in order');
  t.same([...numbered.totals], [all.length], 'total exact on every page');
  const cursored = await byCursor(staff, base, 170);
  t.same(cursored.sks, all, 'page after page, by cursor: the same');

  const checkedIn = sorted(mine.filter((r) => r.data.status === 'checked_in'));
  const byStatus = await byPages(staff, `${base}?status=checked_in`, 150);
  t.same(byStatus.sks, checkedIn, 'with a status filter: one tuple, skipped natively');
  t.same([...byStatus.totals], [checkedIn.length], 'and its total exact');
  t.same((await byCursor(staff, `/events/${ev.slug}/tickets?status=checked_in`, 99)).sks, checkedIn);

  const backstage = sorted(mine.filter((r) => r.data.ticketTypeId === ev.types.Backstage));
  const byType = await byCursor(staff, `${base}?ticketTypeId=${ev.types.Backstage}`, 40);
  t.same(byType.sks, backstage, 'with a type filter');
  t.same([...byType.totals], [backstage.length]);

  const last = await staff.get(`${base}?page=13&pageSize=200`);
  t.same([last.status, last.body.data.length, last.body.hasNext, last.body.page], [200, all.length - 12 * 200, false, 13]);
  const beyond = await staff.get(`${base}?page=50&pageSize=200`);
  t.same([beyond.status, beyond.body.data, beyond.body.total, beyond.body.hasNext], [200, [], all.length, false]);

  // Descending (a store find with the same filter and sort): equal createdates stay by id, as the store's sort keeps them.
  const filter = { 'data.event': { $in: [ev.id, ev.slug] } };
  const desc = [...mine].sort((a, b) => (a.createdate > b.createdate ? -1 : a.createdate < b.createdate ? 1 : a.sk < b.sk ? -1 : 1)).map((r) => r.sk);
  const got: string[] = [];
  for (let page = 1; page <= 14; page++) got.push(...store.find(w.org, 'ticket', filter, { sort: 'createdate', sortType: 'desc', page, pageSize: 180 }).data.map((r) => r.sk));
  t.same(got, desc, 'descending by page number (two tuples merged)');
  const onlyId = { 'data.event': ev.id, 'data.status': 'valid' };
  const descValid = desc.filter((sk) => mine.find((r) => r.sk === sk)!.data.status === 'valid' && mine.find((r) => r.sk === sk)!.data.event === ev.id);
  const gotValid: string[] = [];
  for (let page = 1; page <= 9; page++) gotValid.push(...store.find(w.org, 'ticket', onlyId, { sort: 'createdate', sortType: 'desc', page, pageSize: 137 }).data.map((r) => r.sk));
  t.same(gotValid, descValid, 'descending by page number (one tuple, a native skip into a run of equal values)');
  const gotCursor: string[] = [];
  let after: string | undefined;
  do {
    const r = store.find(w.org, 'ticket', filter, { sort: 'createdate', sortType: 'desc', pageSize: 250, ...(after ? { after } : {}) });
    gotCursor.push(...r.data.map((x) => x.sk));
    after = r.next;
  } while (after);
  t.same(gotCursor, desc, 'descending by cursor');
});

t.test('listing pages - writes between pages: a cursor skips and repeats nothing', async (t) => {
  const ev = await makeEvent(staff, { name: 'Moving night' });
  const rs = Array.from({ length: 600 }, (_, i) => ticket(ev.id, i * 1000, { status: 'valid' }));
  await seed(rs);
  const added: StoredRecord[] = [];
  const early: StoredRecord[] = [];
  const removed = new Set<string>();
  const checkedIn = new Set<string>();
  const base = `/events/${ev.id}/tickets`;
  const seen = await byCursor(staff, base, 100, async (page) => {
    // After each page: a ticket sold now (after every one listed), one back-dated before the
    // cursor (a page number would now repeat a ticket), a listed one checked in, one further on deleted.
    const fresh = ticket(ev.id, 10_000_000 + page);
    const old = ticket(ev.id, -1000 * page);
    added.push(fresh);
    early.push(old);
    const moved = { ...rs[page * 40], version: 2, data: { ...rs[page * 40].data, status: 'checked_in' } };
    checkedIn.add(moved.sk);
    const gone = rs[599 - page];
    removed.add(gone.sk);
    await store.commit(new WriteBatch().putRecord(fresh).putRecord(old).putRecord(moved).deleteRecord(w.org, 'ticket', gone.sk));
  });
  t.ok(added.length >= 4, `writes between ${added.length + 1} pages`);
  t.equal(new Set(seen.sks).size, seen.sks.length, 'no ticket twice');
  t.same(seen.sks, sorted([...rs.filter((r) => !removed.has(r.sk)), ...added]), 'every ticket present throughout, in order, and every one added past the cursor; none deleted ahead');
  const final = await staff.get(`${base}?pageSize=1`);
  t.equal(final.body.total, 600 - removed.size + added.length + early.length, 'total follows every write (counts kept in the writes)');
  const checked = await staff.get(`${base}?status=checked_in&pageSize=200`);
  t.same([checked.body.total, checked.body.data.map((r: StoredRecord) => r.sk)], [checkedIn.size, sorted(rs.filter((r) => checkedIn.has(r.sk)))], 'a status change moves the ticket between the counts');
});

t.test('listing pages - a listing past the old in-worker bound answers, read by index', async (t) => {
  const ev = await makeEvent(staff, { name: 'Huge night' });
  // One sold every 1.5 s, over two hours.
  await seed(Array.from({ length: 5000 }, (_, i) => ticket(ev.id, i * 1500)));
  const r = await staff.get(`/events/${ev.id}/tickets?page=240&pageSize=20`);
  t.equal(r.status, 200, 'no 400 query budget');
  t.same([r.body.total, r.body.data.length, r.body.hasNext], [5000, 20, true]);
  t.equal(r.body.data[0].createdate, new Date(EPOCH + 239 * 20 * 1500).toISOString());

  const explain = await staff.post('/dynamic-query/explain', { datatype: 'ticket', filter: { 'data.event': { $in: [ev.id, ev.slug] } }, sort: 'createdate', options: { page: 240 } });
  t.equal(explain.status, 200);
  t.match(explain.body, {
    plan: { stage: 'IXSCAN', index: { datatype: 'ticket', path: 'createdate', listing: 'data.event>createdate' } },
    sort: { path: 'createdate', by: 'index' },
    total: 5000,
    nReturned: 20,
    docsExamined: 20,
    ranIn: 'event-loop',
  });
  // Counts of two hours and of a minute's, a skip inside that minute, the page and one more: not the 4,780 keys before it.
  t.ok(explain.body.keysExamined < 150, `keys examined: ${explain.body.keysExamined}`);

  // The record store's own find takes the cursor too, where a listing answers it.
  const find = await staff.post('/repository/find/ticket', { query: { 'data.event': ev.id }, options: { sort: 'createdate', pageSize: 20, after: r.body.next } });
  const route = await staff.get(`/events/${ev.id}/tickets?pageSize=20&after=${encodeURIComponent(r.body.next)}`);
  t.same([find.status, find.body.total, find.body.data.map((x: StoredRecord) => x.sk)], [200, 5000, route.body.data.map((x: StoredRecord) => x.sk)]);
  t.equal(route.body.data[0].createdate, new Date(EPOCH + 240 * 20 * 1500).toISOString(), 'the page after page 240');
  const unsorted = await staff.post('/repository/find/ticket', { query: { 'data.event': ev.id }, options: { sort: 'data.number', after: r.body.next } });
  t.equal(unsorted.status, 400, 'a cursor on a find no listing answers');

  const badCursor = await staff.get(`/events/${ev.id}/tickets?after=not-a-cursor`);
  t.equal(badCursor.status, 400);
  const email = await staff.get(`/events/${ev.id}/tickets?holderEmail=a@example.com&after=${encodeURIComponent(r.body.next)}`);
  t.same([email.status, email.body.total], [200, 0], 'a holder\'s tickets are a listing too (listing-combinations.test.ts)');
});

t.test('listing pages - sort values of any length: a page number lands where the store sort puts it', async (t) => {
  await store.declareListing({ datatype: 'shelf_item', equals: ['data.shelf'], sort: 'data.name' });
  const names = ['a', 'ab', 'abc', 'abcdefghijklm', 'abcdefghijklmn', 'abcdefghijklmnop', 'abcdefghijklmnopq', 'abd', 'b', 'ba', 'zz'];
  const rs: StoredRecord[] = [];
  for (let i = 0; i < 330; i++) {
    const iso = new Date(EPOCH).toISOString();
    rs.push({ pk: w.org, sk: `s${(i * 7919) % 1000}`.padEnd(6, 'x') + i, datatype: 'shelf_item', version: 1, state: 'new', createdate: iso, modifydate: iso, data: { shelf: i % 2 ? 'top' : 'low', name: names[i % names.length] } });
  }
  await seed(rs);
  const top = rs.filter((r) => r.data.shelf === 'top');
  const name = (r: StoredRecord) => r.data.name as string;
  const order = (dir: 1 | -1) => [...top].sort((a, b) => (name(a) !== name(b) ? (name(a) < name(b) ? -dir : dir) : a.sk < b.sk ? -1 : 1)).map((r) => r.sk);
  for (const [sortType, dir] of [['asc', 1], ['desc', -1]] as const) {
    for (const pageSize of [1, 7, 16]) {
      const got: string[] = [];
      for (let page = 1; page <= Math.ceil(top.length / pageSize); page++) {
        const r = store.find(w.org, 'shelf_item', { 'data.shelf': 'top' }, { sort: 'data.name', sortType, page, pageSize });
        t.equal(r.total, top.length);
        got.push(...r.data.map((x) => x.sk));
      }
      t.same(got, order(dir), `${sortType}, pages of ${pageSize}`);
    }
  }
  const ex = store.explain(w.org, 'shelf_item', { 'data.shelf': 'top' }, { sort: 'data.name', sortType: 'desc', page: 3, pageSize: 16 });
  t.equal(ex.sort?.by, 'index');
});

t.test('listing pages - leads and tasks page by cursor, newest or oldest first', async (t) => {
  const crm = await setup(t, { modules: ['crm', 'workflow'] });
  const org = 'acme';
  const at = (i: number) => new Date(EPOCH + Math.floor(i / 2) * 45_000).toISOString();
  const leads: StoredRecord[] = Array.from({ length: 61 }, (_, i) => ({ pk: org, sk: `le${String((i * 37) % 61).padStart(4, '0')}`, datatype: 'lead', version: 1, state: 'new', createdate: at(i), modifydate: at(i), data: { name: `Lead ${i}`, status: i % 3 ? 'new' : 'won' } }));
  const tasks: StoredRecord[] = Array.from({ length: 45 }, (_, i) => ({ pk: org, sk: `ta${String((i * 11) % 45).padStart(4, '0')}`, datatype: 'task', version: 1, state: 'open', createdate: at(i), modifydate: at(i), data: { workflowId: 'kitchen', stageId: i % 2 ? 'prep' : 'cook', status: 'open' } }));
  const b = new WriteBatch();
  for (const r of [...leads, ...tasks]) b.putRecord(r);
  await crm.app.deps.store.commit(b);
  const newest = (rs: StoredRecord[]) => [...rs].sort((x, y) => (x.createdate > y.createdate ? -1 : x.createdate < y.createdate ? 1 : x.sk < y.sk ? -1 : 1)).map((r) => r.sk);
  const c = crm.a as unknown as Client;
  const all = await byCursor(c, '/crm/leads/detail', 7);
  t.same([all.sks, [...all.totals]], [newest(leads), [61]], 'leads, newest first, by cursor');
  const won = await byCursor(c, '/crm/leads/detail?status=won', 4);
  t.same(won.sks, newest(leads.filter((r) => r.data.status === 'won')), 'leads of one status');
  const cook = await byCursor(c, '/workflow/task?workflow=kitchen&stage=cook', 5);
  t.same(cook.sks, sorted(tasks.filter((r) => r.data.stageId === 'cook')), 'tasks of one stage, oldest first');
});
