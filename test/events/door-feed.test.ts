// The door feed (issue 32): a full sync in pages, deltas that carry exactly what changed, a cursor
// that is a watermark (writes racing the pages are not lost), its list changes, its checks.
import t from 'tap';
import { tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeEvent, type Client, type EventSetup } from './setup.js';

const w = await eventsWorld(t);
const admin = client(w.app.url, { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'admin-1', roles: ['User', 'Admin'] })}` });

async function festival(name: string): Promise<EventSetup> {
  return makeEvent(w.staff, { name, ticketTypes: [{ title: 'General', price: 0, quantity: 5000 }] });
}

/** `n` comped tickets of `ev` (their ids). */
async function comp(ev: EventSetup, n: number): Promise<string[]> {
  const ids: string[] = [];
  while (ids.length < n) {
    const quantity = Math.min(500, n - ids.length);
    const r = await w.staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.types.General, quantity, holderEmail: 'guest@example.com', holderName: 'Guest' }] });
    if (r.status !== 201) throw new Error(`comp failed: ${r.status} ${r.text}`);
    ids.push(...r.body.tickets.map((x: any) => x.sk));
  }
  return ids;
}

interface Synced {
  pages: any[];
  cursor: string;
}

/** Calls the feed from `since` until `complete`, `between` run after each page but the last. */
async function sync(c: Client, ev: EventSetup, since: string | undefined, limit: number, between?: (page: number) => Promise<void>): Promise<Synced> {
  const pages: any[] = [];
  let cursor = since;
  for (let i = 0; i < 100; i++) {
    const q = new URLSearchParams({ limit: String(limit), ...(cursor !== undefined ? { since: cursor } : {}) });
    const r = await c.get(`/events/${ev.id}/door-feed?${q}`);
    if (r.status !== 200) throw new Error(`feed failed: ${r.status} ${r.text}`);
    pages.push(r.body);
    cursor = r.body.cursor;
    if (r.body.complete) return { pages, cursor: cursor! };
    if (between) await between(i);
  }
  throw new Error('the feed never completed');
}

const ticketIds = (s: Synced) => s.pages.flatMap((p) => p.tickets.map((x: any) => x.id));

function eventTicketIds(ev: EventSetup): string[] {
  return w.app.deps.store.scan(w.org, 'ticket', { 'data.event': ev.id }).map((r) => r.sk);
}

const ev = await festival('Feed fest');
const other = await festival('Other fest');
const gate = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Gate' })).body;
await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Lounge', zones: ['vip'] });
const issued = await comp(ev, 1000);
await comp(other, 3);
let last = '';

t.test('door feed - a full sync of 1,000 tickets over pages is exactly the event’s tickets', async (t) => {
  const s = await sync(w.staff, ev, undefined, 300);
  t.equal(s.pages.length, 4, '300 + 300 + 300 + 100');
  t.same(s.pages.map((p) => p.complete), [false, false, false, true]);
  const ids = ticketIds(s);
  t.equal(ids.length, 1000, 'no ticket twice');
  t.same([...ids].sort(), eventTicketIds(ev).sort(), 'every ticket of the event, none of another');
  t.same(ids, [...ids].sort(), 'in id order (a keyset)');
  t.same(new Set(ids), new Set(issued));
  t.same(s.pages.map((p) => p.lists.length), [2, 0, 0, 0], 'every list on the first page only');
  t.match(s.pages[0].lists.find((l: any) => l.id === gate.sk), {
    name: 'Gate',
    ticketTypeIds: null,
    zones: null,
    allowReentry: null,
    allowMultipleEntries: false,
    rules: { validFrom: null, validUntil: null, maxEntries: null, maxEntriesPerDay: null, weekdays: null },
  });
  const rec = w.app.deps.store.getRecord(w.org, 'ticket', ids[0])!;
  t.same(s.pages[0].tickets[0], {
    id: ids[0],
    number: rec.data.number,
    codeTag: null,
    ticketTypeId: ev.types.General,
    holderName: 'Guest',
    status: 'valid',
    requiresActivation: false,
    activated: false,
    checkedIn: false,
    lists: {},
  });
  t.match(s.pages[0].event, { id: ev.id, timezone: 'UTC', allowReentry: true, codeWindowSeconds: 30, codeSkewSeconds: 60, zones: [{ id: 'main', name: 'Main hall', capacity: 100 }, { id: 'vip' }] });
  t.same(s.pages.flatMap((p) => p.revoked), []);
  const again = await w.staff.get(`/events/${ev.id}/door-feed?since=${s.cursor}`);
  t.same([again.body.tickets, again.body.lists, again.body.revoked, again.body.complete], [[], [], [], true], 'nothing changed: an empty delta');
  last = again.body.cursor;
});

t.test('door feed - after exactly 100 changes the delta carries those 100 tickets and the revocations, nothing else', async (t) => {
  const pool = issued.slice(500);
  const fresh = await comp(ev, 30);
  const transferred = pool.slice(0, 20);
  const refunded = pool.slice(20, 35);
  const cancelled = pool.slice(35, 50);
  const entered = pool.slice(50, 65);
  const shown = pool.slice(65, 70);
  for (const id of transferred) t.equal((await w.staff.post(`/events/tickets/${id}/transfer`, { holderEmail: 'new@example.com', holderName: 'New Holder' })).status, 200);
  for (const id of refunded) t.equal((await w.staff.post(`/events/tickets/${id}/refund`, {})).status, 200);
  for (const id of cancelled) t.equal((await w.staff.del(`/events/tickets/${id}`)).status, 200);
  for (const id of entered) {
    const number = w.app.deps.store.getRecord(w.org, 'ticket', id)!.data.number;
    t.equal((await w.staff.post('/events/checkin', { code: number, listId: gate.sk })).body.success, true);
  }
  for (const id of shown) t.equal((await w.staff.get(`/events/tickets/${id}/qr`)).status, 200);
  // A ticket changed twice is one ticket of the delta, and one entry of the log.
  t.equal((await w.staff.post(`/events/tickets/${transferred[0]}/transfer`, { holderEmail: 'third@example.com', holderName: 'Third Holder' })).status, 200);

  const changed = [...fresh, ...transferred, ...refunded, ...cancelled, ...entered, ...shown];
  t.equal(new Set(changed).size, 100);
  const s = await sync(w.staff, ev, last, 1000);
  const ids = ticketIds(s);
  t.same([...ids].sort(), [...changed].sort(), 'exactly the 100, once each');
  const revoked = s.pages.flatMap((p) => p.revoked);
  const byReason = (r: string) => revoked.filter((x: any) => x.reason === r).map((x: any) => x.id).sort();
  t.same(byReason('transferred'), [...transferred].sort());
  t.same(byReason('refunded'), [...refunded].sort());
  t.same(byReason('cancelled'), [...cancelled].sort());
  t.equal(revoked.length, 50, 'no other revocation');
  const tickets = new Map(s.pages.flatMap((p) => p.tickets).map((x: any) => [x.id, x]));
  t.match(tickets.get(transferred[0]), { holderName: 'Third Holder', codeTag: null });
  t.match(tickets.get(refunded[0]), { status: 'refunded' });
  t.match(tickets.get(entered[0]), { status: 'checked_in', checkedIn: true, lists: { [gate.sk]: { entries: 1, inside: true } } });
  t.match(tickets.get(shown[0])!.codeTag, /^[A-Za-z0-9_-]{8}$/, 'a QR code minted its secret: the codeTag is known');
  t.same(s.pages.flatMap((p) => p.lists), [], 'no list changed');

  // Bounded: one entry per ticket that ever changed and one per list.
  const entries = w.app.deps.store.listKv(w.org, `door-feed:${ev.id}`);
  t.equal(entries.length, 2 + 1030, 'the lists, the 1,030 tickets: the second transfer replaced its older entry');
  last = s.cursor;
});

t.test('door feed - tickets written or deleted through the record store reach the feed', async (t) => {
  const [gone, renamed] = issued.slice(100, 102);
  t.equal((await w.staff.del(`/repository/delete/ticket/${gone}`)).status, 200);
  t.equal((await w.staff.post(`/repository/update-partial/ticket/${renamed}`, { 'data.holderName': 'Renamed Around' })).status, 200);
  // Heard on the bus after the write: give the scanner a moment.
  let d: any;
  for (let i = 0; i < 50; i++) {
    d = (await w.staff.get(`/events/${ev.id}/door-feed?since=${last}`)).body;
    if (d.tickets.length + d.revoked.length >= 2) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  t.same(d.revoked, [{ id: gone, reason: 'deleted', at: d.revoked[0]?.at }]);
  t.same(d.tickets.map((x: any) => [x.id, x.holderName]), [[renamed, 'Renamed Around']]);
  last = d.cursor;
});

t.test('door feed - writes racing a paged full sync are not lost', async (t) => {
  const racer = await festival('Race fest');
  const before = await comp(racer, 600);
  const sorted = [...before].sort();
  let added: string[] = [];
  const s = await sync(w.staff, racer, undefined, 100, async (page) => {
    if (page !== 0) return;
    // After the first page: tickets written behind and ahead of the cursor, and changes to both sides.
    added = await comp(racer, 50);
    await w.staff.post(`/events/tickets/${sorted[0]}/transfer`, { holderEmail: 'late@example.com', holderName: 'Late Holder' });
    await w.staff.post(`/events/tickets/${sorted[599]}/refund`, {});
    const number = w.app.deps.store.getRecord(w.org, 'ticket', sorted[1])!.data.number;
    await w.staff.post('/events/checkin', { code: number });
  });
  // The newest view of each ticket wins, as a device applies them.
  const seen = new Map<string, any>();
  for (const p of s.pages) for (const x of p.tickets) seen.set(x.id, x);
  t.same([...seen.keys()].sort(), [...before, ...added].sort(), 'every ticket, those written during the sync too');
  t.ok(added.some((id) => id < sorted[99]), 'some new tickets sort before the first page’s end (a plain paging would miss them)');
  t.match(seen.get(sorted[0]), { holderName: 'Late Holder' }, 'a change to a ticket already paged');
  t.match(seen.get(sorted[599]), { status: 'refunded' });
  t.match(seen.get(sorted[1]), { status: 'checked_in', checkedIn: true }, 'a check-in materialized during the sync');
  const revoked = s.pages.flatMap((p) => p.revoked);
  t.ok(revoked.some((x: any) => x.id === sorted[0] && x.reason === 'transferred'));
  t.ok(revoked.some((x: any) => x.id === sorted[599] && x.reason === 'refunded'));
});

t.test('door feed - an interrupted full sync resumes from its last cursor', async (t) => {
  const first = await w.staff.get(`/events/${ev.id}/door-feed?limit=400`);
  const second = await w.staff.get(`/events/${ev.id}/door-feed?limit=400&since=${first.body.cursor}`);
  const retry = await w.staff.get(`/events/${ev.id}/door-feed?limit=400&since=${first.body.cursor}`);
  t.same(retry.body.tickets.map((x: any) => x.id), second.body.tickets.map((x: any) => x.id), 'the same page again');
  t.equal(second.body.tickets[0].id > first.body.tickets[399].id, true, 'the next page starts after the last id');
});

t.test('door feed - a cursor it did not answer, or a limit out of bounds, is a 400', async (t) => {
  const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const seq = w.app.deps.store.getKv<number>(w.org, 'door-feed-seq', ev.id)!;
  for (const since of [
    'not a cursor!',
    'AAAA',
    b64({ e: other.id, s: 0 }),
    b64({ e: ev.id, s: seq + 1 }),
    b64({ e: ev.id, s: -1 }),
    b64({ e: ev.id, s: 1, x: 2 }),
    b64({ e: ev.id, w: 0, v: 2, a: null }),
    b64([ev.id]),
    'x'.repeat(2000),
  ]) {
    const r = await w.staff.get(`/events/${ev.id}/door-feed?since=${encodeURIComponent(since)}`);
    t.equal(r.status, 400, since.slice(0, 40));
    t.match(r.body, { statusCode: 400, error: 'Bad Request' });
    t.match(String(r.body.message), /query\/since/, 'the envelope names the parameter');
  }
  for (const limit of ['0', '1001', 'many']) t.equal((await w.staff.get(`/events/${ev.id}/door-feed?limit=${limit}`)).status, 400, `limit ${limit}`);
  t.equal((await w.staff.get(`/events/${ev.id}/door-feed?since=${last}`)).status, 200, 'its own cursor');
});

t.test('door feed - a device enrolled for the event reads it; another event’s device is a 403', async (t) => {
  const device = async (eventId: string) => {
    const { initToken } = (await admin.post('/events/devices', { name: `Gate ${eventId.slice(-4)}`, eventIds: [eventId] })).body;
    const r = await w.anon.post('/events/devices/initialize', { initToken });
    return client(w.app.url, { orgid: w.org, authorization: `Device ${r.body.token}` });
  };
  const mine = await device(ev.id);
  const theirs = await device(other.id);
  const ok = await mine.get(`/events/${ev.id}/door-feed?limit=5`);
  t.same([ok.status, ok.body.tickets.length], [200, 5]);
  const refused = await theirs.get(`/events/${ev.id}/door-feed?limit=5`);
  t.same([refused.status, refused.body.error], [403, 'Forbidden']);
  t.equal((await w.anon.get(`/events/${ev.id}/door-feed`)).status, 401);
  t.equal((await w.customer.get(`/events/${ev.id}/door-feed`)).status, 403);
  t.equal((await w.other.get(`/events/${ev.id}/door-feed`)).status, 404, 'another organisation does not see the event');
});

t.test('door feed - a list change shows in lists; a deleted list is missing from them', async (t) => {
  t.equal((await w.staff.put(`/events/checkin-lists/${gate.sk}`, { name: 'Main gate', rules: { maxEntries: 2 } })).status, 200);
  let d = await w.staff.get(`/events/${ev.id}/door-feed?since=${last}`);
  t.same(d.body.tickets, [], 'no ticket changed');
  t.same(d.body.lists.map((l: any) => l.name).sort(), ['Lounge', 'Main gate'], 'every list of the event');
  t.match(d.body.lists.find((l: any) => l.id === gate.sk), { rules: { maxEntries: 2 } });
  last = d.body.cursor;
  d = await w.staff.get(`/events/${ev.id}/door-feed?since=${last}`);
  t.same(d.body.lists, [], 'not again');
  t.equal((await w.staff.del(`/events/checkin-lists/${gate.sk}`)).status, 204);
  d = await w.staff.get(`/events/${ev.id}/door-feed?since=${last}`);
  t.same(d.body.lists.map((l: any) => l.name), ['Lounge']);
});
