// Undoing a scan (issue 31): an annulment is a log entry of its own, and from then on the scan
// counts as never made, in the door's state, its figures and the ticket's record.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeTicket, makeVenue, type Client, type EventSetup } from './setup.js';

const clock = new ManualClock(Date.UTC(2026, 6, 1, 18));
const w = await eventsWorld(t, { clock });
const bearer = (sub: string, roles: string[]) => ({ orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub, roles })}` });
const colleague = client(w.app.url, bearer('staff-2', ['User']));

const venue = makeVenue;

const scan = (c: Client, body: Record<string, unknown>, kind = 'checkin') => c.post(`/events/${kind}`, body).then((r) => r.body);
const stats = (ev: EventSetup, q = '') => w.staff.get(`/events/${ev.id}/checkin-stats${q}`).then((r) => r.body);
const scans = (ev: EventSetup, q = '') => w.staff.get(`/events/${ev.id}/scans${q}`).then((r) => r.body.data as any[]);

t.test('annul - an annulled entry lets the ticket in again and drops out of stats, occupancy and list tallies', async (t) => {
  const ev = await venue(w.staff);
  const list = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Hall', zones: ['hall'], rules: { maxEntries: 1 } })).body;
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const code = tk.data.number;

  t.equal((await scan(w.staff, { code, listId: list.sk, checkpoint: 'north', deviceId: 'gate-1' })).success, true);
  t.equal((await scan(w.staff, { code, listId: list.sk })).reason, 'already_checked_in');
  let s = await stats(ev);
  t.match(s, { total: 2, successful: 1, uniqueAttendees: 1, inside: 1, byCheckpoint: { north: 1 }, byDevice: { 'gate-1': 1 } });
  t.match(s.byList[list.sk], { successful: 1, uniqueAttendees: 1, inside: 1 });

  const [entry] = await scans(ev, '?success=true');
  t.match(entry, { kind: 'in', ticketId: tk.sk, success: true, listId: list.sk, checkpoint: 'north', deviceId: 'gate-1', by: 'staff-1', annulled: false });
  const r = await w.staff.post('/events/checkin/annul', { scanId: entry.id });
  t.equal(r.status, 200, r.text);
  t.match(r.body, { scan: { id: entry.id, annulled: true }, annulment: { kind: 'annul', annuls: entry.id, by: 'staff-1', ticketId: tk.sk } });
  const again = await w.staff.post('/events/checkin/annul', { scanId: entry.id });
  t.same([again.status, again.body], [200, r.body], 'annulling twice answers the same');

  s = await stats(ev);
  t.match(s, { total: 1, successful: 0, denied: 1, uniqueAttendees: 0, inside: 0, byCheckpoint: {}, byDevice: {} }, 'the entry counts nowhere');
  t.same(s.byCheckpoint, {});
  t.match(s.byList[list.sk], { total: 1, successful: 0, uniqueAttendees: 0, inside: 0 });
  t.match((await w.staff.get(`/events/${ev.id}/occupancy`)).body.hall, { currentOccupancy: 0, totalEntranceScans: 0 });
  const rec = (await w.staff.get(`/events/tickets/${tk.sk}`)).body;
  t.same([rec.data.status, rec.data.inside, rec.data.checkedInAt ?? null], ['valid', false, null], 'the ticket is valid again, never checked in');
  t.same((await scans(ev)).map((x) => [x.kind, x.success, x.annulled]), [['in', true, true], ['in', false, false], ['annul', true, false]], 'the log keeps all three');

  const back = await scan(w.staff, { code, listId: list.sk });
  t.equal(back.success, true, 'the ticket enters again: maxEntries 1 no longer counts the annulled entry');
  t.match(await stats(ev), { successful: 1, uniqueAttendees: 1, inside: 1 });

  t.equal((await w.staff.post('/events/checkin/annul', { scanId: `${ev.id}-2` })).status, 409, 'a refused scan: nothing to annul');
  t.equal((await w.staff.post('/events/checkin/annul', { scanId: `${ev.id}-3` })).status, 409, 'an annulment cannot be annulled');
  const unknown = await w.staff.post('/events/checkin/annul', { scanId: `${ev.id}-999` });
  t.same([unknown.status, unknown.body.error], [404, 'Not Found'], 'an unknown scan');
  t.equal((await w.staff.post('/events/checkin/annul', { nonce: 'nope', eventId: ev.id })).status, 404, 'an unknown nonce');
  t.equal((await w.staff.post('/events/checkin/annul', { nonce: 'nope' })).status, 400, 'a nonce names its event');
  t.equal((await w.other.post('/events/checkin/annul', { scanId: entry.id })).status, 404, "another organisation's scan is not found");
});

t.test('annul - by nonce, on an event without re-entry: the ticket may enter again', async (t) => {
  const ev = await venue(w.staff, { allowReentry: false });
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const code = tk.data.number;
  t.equal((await scan(w.staff, { code, eventId: ev.id, zone: 'hall', nonce: 'n-1' })).success, true);
  t.equal((await scan(w.staff, { code, eventId: ev.id, zone: 'hall' }, 'checkout')).success, true);
  t.equal((await scan(w.staff, { code, eventId: ev.id, zone: 'hall' })).reason, 'already_checked_in', 'used: no re-entry');
  const r = await w.staff.post('/events/checkin/annul', { nonce: 'n-1', eventId: ev.slug });
  t.equal(r.status, 200, r.text);
  t.match(r.body.scan, { nonce: 'n-1', annulled: true });
  t.equal((await scan(w.staff, { code, eventId: ev.id, zone: 'hall' })).success, true, 'as if it never entered');
  t.match(await stats(ev), { successful: 1, uniqueAttendees: 1, inside: 1, checkouts: { successful: 1 } });
  t.match((await w.staff.get(`/events/${ev.id}/occupancy`)).body.hall, { currentOccupancy: 1 });
});

t.test('annul - an entry the ticket has left and re-entered since: the later scans stand', async (t) => {
  const ev = await venue(w.staff, { allowReentry: true });
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const code = tk.data.number;
  const at = { code, eventId: ev.id };
  t.equal((await scan(w.staff, { ...at, zone: 'hall' })).success, true);
  t.equal((await scan(w.staff, at, 'checkout')).success, true);
  t.equal((await scan(w.staff, { ...at, zone: 'lounge' })).success, true);
  const [first, out, second] = await scans(ev);
  const occ = async () => {
    const o = (await w.staff.get(`/events/${ev.id}/occupancy`)).body;
    return [o.hall.currentOccupancy, o.lounge.currentOccupancy];
  };

  t.equal((await w.staff.post('/events/checkin/annul', { scanId: first.id })).status, 200);
  t.match(await stats(ev), { total: 1, successful: 1, uniqueAttendees: 1, inside: 1, checkouts: { successful: 1 } }, 'the first entry is gone, the ticket is still inside');
  t.same(await occ(), [0, 1], 'inside the lounge, by the scans that stand');
  t.match((await w.staff.get(`/events/tickets/${tk.sk}`)).body.data, { status: 'checked_in', inside: true, zone: 'lounge' });

  t.equal((await w.staff.post('/events/checkin/annul', { scanId: second.id })).status, 200);
  t.match(await stats(ev), { successful: 0, uniqueAttendees: 0, inside: 0 }, 'no entry stands');
  t.same(await occ(), [0, 0]);
  t.match((await w.staff.get(`/events/tickets/${tk.sk}`)).body.data, { status: 'valid', inside: false });

  t.equal((await w.staff.post('/events/checkin/annul', { scanId: out.id })).status, 200, 'the check-out too');
  t.same(await occ(), [0, 0], 'a check-out of an annulled entry puts nobody back inside');
  t.match(await stats(ev), { inside: 0, checkouts: { total: 0, successful: 0 } });
  t.equal((await scan(w.staff, { ...at, zone: 'hall' })).success, true, 'a fresh entry');
  t.same(await occ(), [1, 0]);
});

t.test('annul - an annulled check-out puts the ticket back inside', async (t) => {
  const ev = await venue(w.staff);
  const list = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Lounge', zones: ['lounge'] })).body;
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.VIP });
  const at = { code: tk.data.number, listId: list.sk };
  t.equal((await scan(w.staff, at)).success, true);
  t.equal((await scan(w.staff, at, 'checkout')).success, true);
  const out = (await scans(ev, '?success=true')).find((x) => x.kind === 'out');
  t.equal((await w.staff.post('/events/checkin/annul', { scanId: out.id })).status, 200);
  t.equal((await scan(w.staff, at)).reason, 'already_checked_in', 'inside on the list again');
  t.match((await stats(ev)).byList[list.sk], { inside: 1, checkouts: { successful: 0 } });
  t.match((await w.staff.get(`/events/${ev.id}/occupancy?listId=${list.sk}`)).body.lounge, { currentOccupancy: 1 });
  t.match((await w.staff.get(`/events/tickets/${tk.sk}`)).body.data, { inside: true, zone: 'lounge', status: 'checked_in' });
});

t.test('annul - on a list with multiple entries, an annulled move puts the ticket back where it was', async (t) => {
  const ev = await venue(w.staff);
  const list = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Anywhere', allowMultipleEntries: true })).body;
  const tk = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const at = { code: tk.data.number, listId: list.sk };
  t.equal((await scan(w.staff, { ...at, zone: 'hall' })).success, true);
  t.equal((await scan(w.staff, { ...at, zone: 'lounge' })).success, true, 'moves to the lounge');
  const [hall, lounge] = await scans(ev);
  const occ = async () => {
    const o = (await w.staff.get(`/events/${ev.id}/occupancy?listId=${list.sk}`)).body;
    return [o.hall.currentOccupancy, o.lounge.currentOccupancy];
  };
  t.same(await occ(), [0, 1]);
  t.equal((await w.staff.post('/events/checkin/annul', { scanId: lounge.id })).status, 200);
  t.same(await occ(), [1, 0], 'back in the hall');
  t.match((await w.staff.get(`/events/tickets/${tk.sk}`)).body.data, { inside: true, zone: 'hall', status: 'checked_in' });
  t.equal((await w.staff.post('/events/checkin/annul', { scanId: hall.id })).status, 200);
  t.same(await occ(), [0, 0], 'and out, with no entry left');
  t.match((await stats(ev)).byList[list.sk], { successful: 0, uniqueAttendees: 0, inside: 0 });
});

// Last: it moves the clock past the tokens of the tests above.
t.test('annul - the maker within DOOR_ANNUL_WINDOW_S, an Admin at any time, nobody else', async (t) => {
  const ev = await venue(w.staff);
  const a = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const b = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  await scan(w.staff, { code: a.data.number, eventId: ev.id, zone: 'hall' });
  await scan(w.staff, { code: b.data.number, eventId: ev.id, zone: 'hall' });
  const [sa, sb] = await scans(ev);
  const other = await colleague.post('/events/checkin/annul', { scanId: sa.id });
  t.same([other.status, other.body.error], [403, 'Forbidden'], 'another user may not');
  // Tokens live 15 minutes too: fresh ones, signed on the moved clock.
  const as = (sub: string, roles = ['User']) => client(w.app.url, bearer(sub, roles));
  clock.advance(900_000);
  t.equal((await as('staff-1').post('/events/checkin/annul', { scanId: sa.id })).status, 200, 'the maker, 900 s on: within the window');
  clock.advance(1_000);
  const late = await as('staff-1').post('/events/checkin/annul', { scanId: sb.id });
  t.same([late.status, late.body.error], [403, 'Forbidden'], 'the maker after the window');
  t.match(late.body.message, /DOOR_ANNUL_WINDOW_S/);
  const byAdmin = await as('admin-1', ['User', 'Admin']).post('/events/checkin/annul', { scanId: sb.id });
  t.equal(byAdmin.status, 200, 'an Admin may');
  t.equal(byAdmin.body.annulment.by, 'admin-1');
  t.match((await as('staff-1').get(`/events/${ev.id}/checkin-stats`)).body, { successful: 0, uniqueAttendees: 0, inside: 0 });
});
