// Offline uploads (issue 32): `POST /events/checkin/batch` items with `offline: true` carry the
// device's decision, which the server records as made (at `scannedAt`, received now) instead of
// deciding again; an admission it would have refused is a `conflict`, counted and readable in the
// scan log; a bad item answers in its slot and the rest commit; the door folds the same on replay.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { tempDir, tokenFor, startTestApp } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { SCANNER } from '../../actors/scanner/index.js';
import { eventsWorld, makeEvent, makeTicket, type Client, type EventsWorld } from './setup.js';

const NOW = Date.UTC(2026, 6, 1, 20);
const clock = new ManualClock(NOW);
const shared = await eventsWorld(t, { clock });

const at = (min: number) => new Date(NOW - 120 * 60_000 + min * 60_000).toISOString();
const stats = async (c: Client, id: string, q = '') => (await c.get(`/events/${id}/checkin-stats${q}`)).body;
const scans = async (c: Client, id: string, q = '') => (await c.get(`/events/${id}/scans?limit=500${q}`)).body.data;
const admitted = (code: string, nonce: string, min: number, extra: Record<string, unknown> = {}) => ({
  code,
  nonce,
  scannedAt: at(min),
  offline: true,
  decision: 'admitted',
  zone: 'main',
  ...extra,
});

async function upload(c: Client, items: unknown[]): Promise<any[]> {
  const r = await c.post('/events/checkin/batch', { scans: items });
  if (r.status !== 200) throw new Error(`batch: ${r.status} ${r.text}`);
  return r.body.results;
}

/** A device enrolled by an Admin for `eventId`, sending its token as `Authorization: Device`. */
async function device(w: EventsWorld, eventId: string, name: string): Promise<{ id: string; c: Client }> {
  const admin = client(w.app.url, { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'admin-1', roles: ['User', 'Admin'] })}` });
  const { initToken } = (await admin.post('/events/devices', { name, eventIds: [eventId] })).body;
  const r = await w.anon.post('/events/devices/initialize', { initToken });
  if (r.status !== 200) throw new Error(`initialize: ${r.status} ${r.text}`);
  return { id: r.body.deviceId, c: client(w.app.url, { orgid: w.org, authorization: `Device ${r.body.token}` }) };
}

t.test('offline batch - 50 admissions are logged admitted at their scannedAt and counted', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tickets: any[] = [];
  for (let i = 0; i < 50; i++) tickets.push(await makeTicket(w.staff, ev));
  const results = await upload(w.staff, tickets.map((tk, i) => admitted(tk.data.number, `o50-${i}`, i)));
  t.equal(results.length, 50);
  t.same(results, tickets.map((tk) => ({ success: true, offline: true, ticketId: tk.sk })), 'each admitted, no conflict, the ticket by id');
  const stored = (await w.staff.get(`/events/tickets/${tickets[0].sk}`)).body;
  t.match(stored.data, { status: 'checked_in', inside: true, zone: 'main', checkedInAt: at(0) }, 'the ticket entered when the device let it in');

  const log = await scans(w.staff, ev.id);
  t.equal(log.length, 50);
  t.same(
    log.map((x: any) => [x.success, x.at, x.offline, x.conflict, x.conflictReason]),
    tickets.map((_, i) => [true, at(i), true, false, null]),
    'logged admitted, at the time each was made',
  );
  const s = await stats(w.staff, ev.id);
  t.match(s, { total: 50, successful: 50, denied: 0, uniqueAttendees: 50, inside: 50, conflicts: 0 });
  t.same(s.byHour, { '2026-07-01T18:00:00.000Z': { total: 50, successful: 50, denied: 0 } }, 'counted in the hour they were made');
  t.equal((await w.staff.get(`/events/${ev.id}/occupancy`)).body.main.currentOccupancy, 50);
});

t.test('offline batch - a ticket admitted offline at two devices is one entry and one conflict', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const a = await device(w, ev.id, 'Gate A');
  const b = await device(w, ev.id, 'Gate B');
  const [ra] = await upload(a.c, [admitted(tk.data.number, 'a-1', 10)]);
  t.match(ra, { success: true, offline: true });
  t.notOk('conflict' in ra, 'the first upload is no conflict');
  const [rb] = await upload(b.c, [admitted(tk.data.number, 'b-1', 12)]);
  t.match(rb, { success: true, offline: true, conflict: true, conflictReason: 'already_checked_in' }, 'the second is, and stays admitted');

  const s = await stats(w.staff, ev.id);
  t.match(s, { total: 2, successful: 2, denied: 0, uniqueAttendees: 1, inside: 1, conflicts: 1 });
  t.same(s.byDevice, { [a.id]: 1, [b.id]: 1 }, 'each device keeps its scan');
  t.equal((await w.staff.get(`/events/${ev.id}/occupancy`)).body.main.currentOccupancy, 1, 'inside once');
  const log = await scans(w.staff, ev.id);
  t.match(log, [
    { success: true, deviceId: a.id, conflict: false, conflictReason: null, at: at(10) },
    { success: true, deviceId: b.id, conflict: true, conflictReason: 'already_checked_in', at: at(12), offline: true },
  ]);
  t.same((await scans(w.staff, ev.id, '&conflict=true')).map((x: any) => x.deviceId), [b.id], 'the log filters conflicts');
  const elsewhere = await makeEvent(w.staff, { name: 'Elsewhere' });
  const foreign = await makeTicket(w.staff, elsewhere);
  const refused = await a.c.post('/events/checkin/batch', { scans: [admitted(foreign.data.number, 'a-2', 11, { eventId: elsewhere.id })] });
  t.equal(refused.status, 403, 'a device keeps its scope: an offline scan at another event refuses the upload');
  t.equal((await w.staff.post('/events/checkin', { code: tk.data.number })).body.reason, 'already_checked_in', 'still inside');
  t.equal((await w.staff.post('/events/checkout', { code: tk.data.number })).body.success, true, 'one check-out lets it out');
  t.equal((await stats(w.staff, ev.id)).inside, 0);
});

t.test('offline batch - two admissions of one ticket in one upload: the later scan is the conflict', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  // Sent late one first: decided in the order they were made.
  const results = await upload(w.staff, [admitted(tk.data.number, 'late', 30), admitted(tk.data.number, 'early', 5)]);
  t.match(results, [{ success: true, conflict: true, conflictReason: 'already_checked_in' }, { success: true }]);
  t.notOk('conflict' in results[1]);
  t.match((await stats(w.staff, ev.id)).conflicts, 1);
});

t.test('offline batch - an admission of a ticket refunded before the upload is kept, with a conflict', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  t.equal((await w.staff.post(`/events/tickets/${tk.sk}/refund`, {})).status, 200);
  const [r] = await upload(w.staff, [admitted(tk.data.number, 'ref-1', 20)]);
  t.same(r, { success: true, offline: true, conflict: true, conflictReason: 'refunded', ticketId: tk.sk });
  t.match((await w.staff.get(`/events/tickets/${tk.sk}`)).body.data, { status: 'refunded', inside: true }, 'the refund stands; the person is inside');
  t.match(await stats(w.staff, ev.id), { successful: 1, denied: 0, conflicts: 1, inside: 1 });
  t.match(await scans(w.staff, ev.id), [{ success: true, reason: null, conflict: true, conflictReason: 'refunded', ticketId: tk.sk }]);
});

t.test('offline batch - a denial is logged denied with the device reason', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const results = await upload(w.staff, [
    { code: tk.data.number, nonce: 'd-1', scannedAt: at(3), offline: true, decision: 'denied', reason: 'invalid_time' },
    { code: 'NO-SUCH', eventId: ev.id, nonce: 'd-2', scannedAt: at(4), offline: true, decision: 'denied', reason: 'invalid_code' },
  ]);
  t.match(results, [
    { success: false, offline: true, reason: 'invalid_time', ticketId: tk.sk },
    { success: false, offline: true, reason: 'invalid_code' },
  ]);
  t.notOk(results.some((r) => 'conflict' in r), 'a denial is never a conflict');
  t.match(await stats(w.staff, ev.id), { total: 2, successful: 0, denied: 2, inside: 0, conflicts: 0, byReason: { invalid_time: 1, invalid_code: 1 } });
  t.match(await scans(w.staff, ev.id), [
    { success: false, reason: 'invalid_time', ticketId: tk.sk, at: at(3), offline: true },
    { success: false, reason: 'invalid_code', ticketId: null, at: at(4), offline: true },
  ]);
  t.equal((await w.staff.post('/events/checkin', { code: tk.data.number })).body.success, true, 'the ticket never entered');
});

t.test('offline batch - a retry with the same nonces answers the same and changes nothing', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const [a, b] = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev)];
  await upload(w.staff, [admitted(a.data.number, 'r-0', 1)]);
  const items = [
    admitted(b.data.number, 'r-1', 2),
    admitted(a.data.number, 'r-2', 3),
    { code: b.data.number, nonce: 'r-3', scannedAt: at(4), offline: true, decision: 'denied', reason: 'zone_full' },
  ];
  const first = await upload(w.staff, items);
  const before = [await stats(w.staff, ev.id), await scans(w.staff, ev.id)];
  clock.advance(60_000);
  const again = await upload(w.staff, items);
  t.same(again, first, 'the original answers, conflict included');
  t.match(first[1], { conflict: true, conflictReason: 'already_checked_in' });
  t.same([await stats(w.staff, ev.id), await scans(w.staff, ev.id)], before, 'nothing counted or logged twice');
});

t.test('offline batch - a bad item answers 400 in its slot and the others commit', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const other = await makeEvent(w.staff, { name: 'Other' });
  const foreignList = (await w.staff.post(`/events/${other.id}/checkin-lists`, { name: 'Their door' })).body;
  const tks: any[] = [];
  for (let i = 0; i < 6; i++) tks.push(await makeTicket(w.staff, ev));
  const r = await w.staff.post('/events/checkin/batch', {
    scans: [
      admitted(tks[0].data.number, 'b-0', 1),
      admitted(tks[1].data.number, 'b-1', 2, { zone: 'attic' }),
      admitted(tks[2].data.number, 'b-2', 3, { scannedAt: new Date(NOW + 3_600_000).toISOString() }),
      { code: tks[3].data.number, offline: true, decision: 'admitted', scannedAt: at(4) },
      admitted(tks[4].data.number, 'b-4', 5, { listId: foreignList.sk, eventId: ev.id }),
      admitted(tks[5].data.number, 'b-5', 6),
    ],
  });
  t.equal(r.status, 200, 'the batch is taken');
  const res = r.body.results;
  t.match(res[0], { success: true, offline: true });
  t.match(res[5], { success: true, offline: true });
  for (const [i, what] of [
    [1, /zone "attic"/],
    [2, /scannedAt is in the future/],
    [3, /nonce is required/],
    [4, /listId/],
  ] as const) {
    t.same(Object.keys(res[i]).sort(), ['error', 'success'], `slot ${i}: an error only`);
    t.match(res[i], { success: false, error: { statusCode: 400, error: 'Bad Request', message: what } }, `slot ${i}`);
  }
  t.match(await stats(w.staff, ev.id), { total: 2, successful: 2, inside: 2 }, 'the good items committed');
  t.equal((await w.staff.post('/events/checkin/batch', { scans: 'nope' })).status, 400, 'a body that is not a batch is still a 400');
});

t.test('offline batch - a list deleted on the way answers in its slot, not for the batch', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const [a, b] = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev)];
  // The edge found the list; the scanner no longer has it (as when it is deleted in between).
  const gone = 'f'.repeat(24);
  const out = await w.app.deps.runtime.ask<any[]>(w.org, SCANNER, ev.id, {
    type: 'batch',
    by: 'staff-1',
    scans: [
      { code: a.data.number, direction: 'in', list: gone, nonce: 'g-1', scannedAt: NOW - 60_000, offline: { decision: 'admitted' } },
      { code: b.data.number, direction: 'in' },
    ],
  });
  t.match(out, [{ success: false, error: { statusCode: 400, message: /check-in list/ } }, { success: true }]);
  t.match(await stats(w.staff, ev.id), { total: 1, successful: 1 });
});

t.test('offline batch - the door after a restart is the door before, conflicts included', async (t) => {
  const dataDir = tempDir(t);
  const w = await eventsWorld(t, { dataDir, clock });
  const ev = await makeEvent(w.staff);
  const list = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Hall', rules: { maxEntries: 2 }, allowReentry: true })).body;
  const tks: any[] = [];
  for (let i = 0; i < 4; i++) tks.push(await makeTicket(w.staff, ev));
  t.equal((await w.staff.post(`/events/tickets/${tks[3].sk}/refund`, {})).status, 200);
  await upload(w.staff, [
    admitted(tks[0].data.number, 'x-0', 1),
    admitted(tks[0].data.number, 'x-1', 2, { zone: 'vip' }),
    admitted(tks[1].data.number, 'x-2', 3, { listId: list.sk }),
    admitted(tks[1].data.number, 'x-3', 4, { listId: list.sk }),
    { code: tks[1].data.number, listId: list.sk, direction: 'out', nonce: 'x-4', scannedAt: at(5), offline: true, decision: 'admitted' },
    admitted(tks[1].data.number, 'x-5', 6, { listId: list.sk }),
    admitted(tks[3].data.number, 'x-6', 7),
    { code: tks[2].data.number, nonce: 'x-7', scannedAt: at(8), offline: true, decision: 'denied', reason: 'zone_full' },
  ]);
  const door = async (c: Client) => ({
    stats: await stats(c, ev.id),
    list: await stats(c, ev.id, `?listId=${list.sk}`),
    occupancy: (await c.get(`/events/${ev.id}/occupancy`)).body,
    listOccupancy: (await c.get(`/events/${ev.id}/occupancy?listId=${list.sk}`)).body,
    log: await scans(c, ev.id),
  });
  const before = await door(w.staff);
  t.match(before.stats, { conflicts: 4, successful: 6, inside: 3 });
  t.match(before.list, { conflicts: 2, successful: 3, inside: 1 });
  t.match(before.occupancy, { main: { currentOccupancy: 2 }, vip: { currentOccupancy: 1 } });
  await w.app.close();

  const app2 = await startTestApp(t, { modules: ['events', 'records'], dataDir, clock });
  const staff = client(app2.url, { orgid: w.org, authorization: `Bearer ${tokenFor(app2, { org: w.org, sub: 'staff-1' })}` });
  t.same(await door(staff), before, 'the same figures, occupancy and log from the replay');
  t.equal((await staff.post('/events/checkin', { code: tks[0].data.number })).body.reason, 'already_checked_in', 'inside once');
  t.equal((await staff.post('/events/checkin', { code: tks[1].data.number, listId: list.sk })).body.reason, 'already_checked_in', 'inside on the list');
  t.equal((await staff.post('/events/checkout', { code: tks[1].data.number, listId: list.sk })).body.success, true);
  t.equal((await staff.post('/events/checkin', { code: tks[1].data.number, listId: list.sk })).body.reason, 'max_entries', 'the conflicting entries count against the list');
  t.same(
    (await upload(staff, [admitted(tks[0].data.number, 'x-1', 2, { zone: 'vip' })])).map((r) => [r.success, r.conflictReason]),
    [[true, 'already_checked_in']],
    'nonces survive, with their conflict',
  );
});
