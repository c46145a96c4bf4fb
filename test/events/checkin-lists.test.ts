// Check-in lists (issue 31): each list admits its ticket types at its zones and times, counts its
// own entries and keeps its own door state; scans name their list with `listId`.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { eventsWorld, makeTicket, makeVenue, type Client, type EventSetup } from './setup.js';

// 2026-07-01 18:00 UTC, a Wednesday; Thursday 06:00 in Auckland (UTC+12 in July).
const clock = new ManualClock(Date.UTC(2026, 6, 1, 18));
const w = await eventsWorld(t, { clock });

const venue = makeVenue;

async function list(c: Client, ev: EventSetup, body: Record<string, unknown>): Promise<any> {
  const r = await c.post(`/events/${ev.id}/checkin-lists`, body);
  if (r.status !== 201) throw new Error(`list create failed: ${r.status} ${r.text}`);
  return r.body;
}

const scan = (c: Client, body: Record<string, unknown>) => c.post('/events/checkin', body).then((r) => r.body);

t.test('checkin lists - a GA ticket is refused at the lounge with product, a VIP ticket enters both', async (t) => {
  const ev = await venue(w.staff);
  const general = await list(w.staff, ev, { name: 'General admission', zones: ['hall'], ticketTypeIds: [ev.types.GA, ev.types.VIP] });
  const lounge = await list(w.staff, ev, { name: 'VIP lounge', zones: ['lounge'], ticketTypeIds: [ev.types.VIP] });
  const ga = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const vip = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.VIP });

  let r = await scan(w.staff, { code: ga.data.number, listId: general.sk });
  t.same([r.success, r.ticket.data.zone], [true, 'hall'], 'GA enters the hall: the list of one zone places the scan there');
  r = await scan(w.staff, { code: ga.data.number, listId: lounge.sk });
  t.same([r.success, r.reason], [false, 'product'], 'GA is not on the lounge list');
  t.same((await w.staff.post('/events/tickets/validate', { code: ga.data.number, listId: lounge.sk })).body.reason, 'product', 'validate says so too');

  t.equal((await scan(w.staff, { code: vip.data.number, listId: general.sk, zone: 'hall' })).success, true, 'VIP enters the hall');
  r = await scan(w.staff, { code: vip.data.number, listId: lounge.sk });
  t.same([r.success, r.ticket.data.zone], [true, 'lounge'], 'and the lounge: inside on both lists at once');
  t.same((await scan(w.staff, { code: vip.data.number, listId: lounge.sk })).reason, 'already_checked_in', 'inside on the lounge list');
  t.same((await scan(w.staff, { code: vip.data.number, listId: general.sk })).reason, 'already_checked_in', 'inside on the hall list');

  const bad = await w.staff.post('/events/checkin', { code: vip.data.number, listId: lounge.sk, zone: 'hall' });
  t.equal(bad.status, 400, 'a zone the list does not serve is a 400');
  t.match(bad.body.message, /not a zone of check-in list/);

  // Stats per list, and the event's over every scan.
  const s = (await w.staff.get(`/events/${ev.id}/checkin-stats`)).body;
  t.match(s, { total: 6, successful: 3, denied: 3, uniqueAttendees: 2, inside: 2 }, 'the event: a ticket inside on two lists counts once');
  t.same(s.byList[general.sk], { name: 'General admission', total: 3, successful: 2, denied: 1, uniqueAttendees: 2, checkouts: { total: 0, successful: 0, denied: 0 }, inside: 2 });
  t.same(s.byList[lounge.sk], { name: 'VIP lounge', total: 3, successful: 1, denied: 2, uniqueAttendees: 1, checkouts: { total: 0, successful: 0, denied: 0 }, inside: 1 });
  const one = (await w.staff.get(`/events/${ev.id}/checkin-stats?listId=${lounge.sk}`)).body;
  t.match(one, { total: 3, successful: 1, denied: 2, uniqueAttendees: 1, inside: 1, byReason: { product: 1, already_checked_in: 1 }, byZone: { lounge: { total: 3 } } });
  t.same(Object.keys(one.byList), [lounge.sk], 'narrowed to the list');

  let occ = (await w.staff.get(`/events/${ev.id}/occupancy?listId=${lounge.sk}`)).body;
  t.same(Object.keys(occ), ['lounge'], "the list's zones only");
  t.match(occ.lounge, { currentOccupancy: 1, totalEntranceScans: 1, capacity: 50 });
  occ = (await w.staff.get(`/events/${ev.id}/occupancy`)).body;
  t.match(occ, { hall: { currentOccupancy: 2 }, lounge: { currentOccupancy: 1 } }, "the event's zones count every list");

  // Leaving the lounge leaves the hall list as it was.
  r = (await w.staff.post('/events/checkout', { code: vip.data.number, listId: lounge.sk })).body;
  t.equal(r.success, true, 'checked out of the lounge');
  t.same((await w.staff.post('/events/checkout', { code: vip.data.number, listId: lounge.sk })).body.reason, 'not_checked_in');
  t.same((await scan(w.staff, { code: vip.data.number, listId: general.sk })).reason, 'already_checked_in', 'still inside on the hall list');
  t.equal((await scan(w.staff, { code: vip.data.number, listId: lounge.sk })).success, true, 'back into the lounge (re-entry as the event says)');
  occ = (await w.staff.get(`/events/${ev.id}/occupancy`)).body;
  t.match(occ, { hall: { currentOccupancy: 2 }, lounge: { currentOccupancy: 1 } });

  // A scan naming no list uses the event's own door, apart from the lists; a person is inside once.
  t.equal((await scan(w.staff, { code: ga.data.number, zone: 'hall' })).success, true, "the event's own door");
  t.equal((await w.staff.get(`/events/${ev.id}/checkin-stats`)).body.inside, 2, 'still two people inside');
  t.equal((await w.staff.post('/events/checkout', { code: ga.data.number })).body.success, true);
  t.equal((await w.staff.get(`/events/${ev.id}/checkin-stats`)).body.inside, 2, 'GA is still inside on the general list');
  t.equal((await w.staff.post('/events/checkout', { code: ga.data.number, listId: general.sk })).body.success, true);
  t.equal((await w.staff.get(`/events/${ev.id}/checkin-stats`)).body.inside, 1, 'now only VIP');

  const other = await w.staff.get(`/events/${ev.id}/checkin-stats?listId=${'a'.repeat(24)}`);
  t.equal(other.status, 404, 'a list of no event of this one');
});

t.test('checkin lists - a ticket of event B scanned at event A\'s list answers wrong_event', async (t) => {
  const a = await venue(w.staff, { name: 'Event A' });
  const b = await venue(w.staff, { name: 'Event B' });
  const door = await list(w.staff, a, { name: 'A door' });
  const tb = await makeTicket(w.staff, b, { ticketTypeId: b.types.GA });

  t.same(await scan(w.staff, { code: tb.data.number, listId: door.sk }), { success: false, reason: 'wrong_event', ticket: (await scan(w.staff, { code: tb.data.number, listId: door.sk })).ticket });
  t.equal((await w.staff.post('/events/tickets/validate', { code: tb.data.number, listId: door.sk })).body.reason, 'wrong_event');
  t.equal((await w.staff.post('/events/checkout', { ticketId: tb.sk, listId: door.sk })).body.reason, 'wrong_event');
  const batch = await w.staff.post('/events/checkin/batch', { scans: [{ code: tb.data.number, listId: door.sk }, { code: tb.data.number }] });
  t.same(batch.body.results.map((x: any) => x.reason ?? x.success), ['wrong_event', true], 'with no list the code still decides');
  t.equal((await w.staff.get(`/events/${a.id}/checkin-stats?listId=${door.sk}`)).body.byReason.wrong_event, 3, "logged at A's list");

  const mixed = await w.staff.post('/events/checkin', { code: tb.data.number, listId: door.sk, eventId: b.id });
  t.equal(mixed.status, 400, 'a list of another event than the one named is a 400');
  t.equal((await w.staff.post('/events/checkin', { code: tb.data.number, listId: 'b'.repeat(24) })).status, 404, 'an unknown list is a 404');
});

t.test('checkin lists - validity window and weekdays answer invalid_time', async (t) => {
  const ev = await venue(w.staff, { timezone: 'Pacific/Auckland' });
  const past = await list(w.staff, ev, { name: 'Yesterday', rules: { validUntil: '2026-07-01T17:59:59Z' } });
  const future = await list(w.staff, ev, { name: 'Tomorrow', rules: { validFrom: '2026-07-02T00:00:00Z' } });
  const now = await list(w.staff, ev, { name: 'Now', rules: { validFrom: '2026-07-01T00:00:00Z', validUntil: '2026-07-02T00:00:00Z' } });
  const thursday = await list(w.staff, ev, { name: 'Thursdays', rules: { weekdays: [4] } });
  const wednesday = await list(w.staff, ev, { name: 'Wednesdays', rules: { weekdays: [3] } });
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });

  t.same((await scan(w.staff, { code: tk.data.number, listId: past.sk })).reason, 'invalid_time', 'validUntil in the past');
  t.same((await scan(w.staff, { code: tk.data.number, listId: future.sk })).reason, 'invalid_time', 'validFrom in the future');
  t.same((await scan(w.staff, { code: tk.data.number, listId: wednesday.sk })).reason, 'invalid_time', 'Wednesday in UTC, already Thursday in Auckland');
  t.equal((await scan(w.staff, { code: tk.data.number, listId: thursday.sk })).success, true, "a Thursday in the event's time zone");
  t.equal((await scan(w.staff, { code: tk.data.number, listId: now.sk })).success, true, 'inside the window');
  const offline = await scan(w.staff, { code: tk.data.number, listId: future.sk, scannedAt: '2026-07-01T17:00:00Z' });
  t.same(offline.reason, 'invalid_time', "an offline scan is judged at its scannedAt");

  const bad = await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Backwards', rules: { validFrom: '2026-07-02T00:00:00Z', validUntil: '2026-07-01T00:00:00Z' } });
  t.equal(bad.status, 400, 'validUntil before validFrom');
});

t.test('checkin lists - maxEntries 2 with re-entry answers max_entries on the third entry', async (t) => {
  const ev = await venue(w.staff);
  const twice = await list(w.staff, ev, { name: 'Two visits', allowReentry: true, rules: { maxEntries: 2 } });
  const daily = await list(w.staff, ev, { name: 'Once a day', rules: { maxEntriesPerDay: 1 } });
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const out = () => w.staff.post('/events/checkout', { ticketId: tk.sk, listId: twice.sk }).then((r) => r.body.success);

  t.equal((await scan(w.staff, { code: tk.data.number, listId: twice.sk, zone: 'hall' })).success, true, 'first entry');
  t.equal(await out(), true);
  t.equal((await scan(w.staff, { code: tk.data.number, listId: twice.sk, zone: 'hall' })).success, true, 'second entry');
  t.equal(await out(), true);
  t.same((await scan(w.staff, { code: tk.data.number, listId: twice.sk, zone: 'hall' })).reason, 'max_entries', 'third entry');

  const dout = () => w.staff.post('/events/checkout', { ticketId: tk.sk, listId: daily.sk }).then((r) => r.body.success);
  const yesterday = new Date(clock.now() - 86_400_000).toISOString();
  t.equal((await scan(w.staff, { code: tk.data.number, listId: daily.sk, scannedAt: yesterday })).success, true, 'yesterday, uploaded offline');
  t.equal(await dout(), true);
  t.equal((await scan(w.staff, { code: tk.data.number, listId: daily.sk })).success, true, 'again today');
  t.equal(await dout(), true);
  t.same((await scan(w.staff, { code: tk.data.number, listId: daily.sk })).reason, 'max_entries', 'once a day');
  t.same((await scan(w.staff, { code: tk.data.number, listId: daily.sk, scannedAt: yesterday })).reason, 'max_entries', "yesterday's late upload counts for yesterday");
});

t.test('checkin lists - allowMultipleEntries and allowReentry as pretix has them', async (t) => {
  const ev = await venue(w.staff, { allowReentry: true });
  const multi = await list(w.staff, ev, { name: 'Wristband', allowMultipleEntries: true, zones: ['hall'] });
  const oneWay = await list(w.staff, ev, { name: 'One way', allowReentry: false });
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });

  t.equal((await scan(w.staff, { code: tk.data.number, listId: multi.sk })).success, true);
  t.equal((await scan(w.staff, { code: tk.data.number, listId: multi.sk })).success, true, 'in again while inside: another entry');
  const occ = (await w.staff.get(`/events/${ev.id}/occupancy?listId=${multi.sk}`)).body;
  t.match(occ.hall, { currentOccupancy: 1, totalEntranceScans: 2 }, 'one person inside, two entries');

  t.equal((await scan(w.staff, { code: tk.data.number, listId: oneWay.sk, zone: 'lounge' })).success, true);
  t.equal((await w.staff.post('/events/checkout', { ticketId: tk.sk, listId: oneWay.sk })).body.success, true);
  t.same((await scan(w.staff, { code: tk.data.number, listId: oneWay.sk, zone: 'lounge' })).reason, 'already_checked_in', "the list's re-entry is off");
  t.equal((await scan(w.staff, { code: tk.data.number, listId: multi.sk })).success, true, 'the other list is apart');
});

t.test('checkin lists - create, read, change, delete; bounds; other organisations', async (t) => {
  const ev = await venue(w.staff);
  const created = await w.staff.post(`/events/${ev.id}/checkin-lists`, {
    name: 'Hall',
    zones: ['hall'],
    exitAllAt: '23:30',
    rules: { weekdays: [5, 6, 5], maxEntries: 3 },
  });
  t.equal(created.status, 201);
  t.match(created.body.data, {
    event: ev.id,
    name: 'Hall',
    ticketTypeIds: null,
    zones: ['hall'],
    allowReentry: null,
    allowMultipleEntries: false,
    exitAllAt: '23:30',
    rules: { validFrom: null, validUntil: null, maxEntries: 3, maxEntriesPerDay: null, weekdays: [5, 6] },
  });
  const id = created.body.sk;
  t.same((await w.staff.get(`/events/checkin-lists/${id}`)).body, created.body);
  t.same((await w.staff.get(`/events/${ev.slug}/checkin-lists`)).body.data.map((x: any) => x.sk), [id], 'listed, the event named by slug');

  const put = await w.staff.put(`/events/checkin-lists/${id}`, { name: 'Main hall', zones: null, rules: {}, version: 1 });
  t.equal(put.status, 200);
  t.match(put.body.data, { name: 'Main hall', zones: null, exitAllAt: '23:30', rules: { maxEntries: null, weekdays: null } });
  t.equal((await w.staff.put(`/events/checkin-lists/${id}`, { name: 'X', version: 1 })).status, 409, 'a stale version');

  for (const [body, what] of [
    [{ name: '' }, 'an empty name'],
    [{ name: 'x'.repeat(121) }, 'a name too long'],
    [{ name: 'x', ticketTypeIds: ['c'.repeat(24)] }, 'a ticket type of no event'],
    [{ name: 'x', zones: ['garden'] }, 'a zone the event lacks'],
    [{ name: 'x', exitAllAt: '24:00' }, 'a time that is not HH:MM'],
    [{ name: 'x', rules: { weekdays: [0] } }, 'weekday 0'],
    [{ name: 'x', rules: { maxEntries: 0 } }, 'maxEntries 0'],
    [{ name: 'x', zones: Array.from({ length: 101 }, (_, i) => `z${i}`) }, '101 zones'],
    [{ name: 'x', surprise: true }, 'an unknown field'],
  ] as const) {
    t.equal((await w.staff.post(`/events/${ev.id}/checkin-lists`, body)).status, 400, what);
  }
  const foreignType = await venue(w.staff, { name: 'Else' });
  t.equal((await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'x', ticketTypeIds: [foreignType.types.GA] })).status, 400, "another event's ticket type");

  // Another organisation sees none of it.
  t.equal((await w.other.get(`/events/checkin-lists/${id}`)).status, 404);
  t.equal((await w.other.put(`/events/checkin-lists/${id}`, { name: 'Mine' })).status, 404);
  t.equal((await w.other.del(`/events/checkin-lists/${id}`)).status, 404);
  t.equal((await w.other.post('/events/checkin', { code: 'X', listId: id })).status, 404);
  t.equal((await w.customer.get(`/events/checkin-lists/${id}`)).status, 403, 'staff only');

  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  t.equal((await scan(w.staff, { code: tk.data.number, listId: id, zone: 'lounge' })).success, true, 'zones reset: every zone');
  t.equal((await w.staff.del(`/events/checkin-lists/${id}`)).status, 204);
  t.equal((await w.staff.get(`/events/checkin-lists/${id}`)).status, 404);
  t.equal((await w.staff.post('/events/checkin', { code: tk.data.number, listId: id })).status, 404, 'a deleted list takes no scans');
  const s = (await w.staff.get(`/events/${ev.id}/checkin-stats`)).body;
  t.same([s.successful, s.byList], [1, {}], "its scans stay in the event's figures");
});

t.test('checkin lists - an event has at most 50', async (t) => {
  const ev = await venue(w.staff);
  for (let i = 0; i < 50; i++) await list(w.staff, ev, { name: `Gate ${i}` });
  const r = await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'One too many' });
  t.equal(r.status, 409);
  t.match(r.body.message, /50 check-in lists/);
  t.equal((await w.staff.get(`/events/${ev.id}/checkin-lists?pageSize=100`)).body.total, 50);
});
