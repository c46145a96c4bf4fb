import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { signCode } from '../../actors/scanner/ticket-code.js';
import { startTestApp } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeEvent, makeTicket, type Client, type EventsWorld } from './setup.js';

// One server for the tests that need nothing special (each works on events of its own).
const shared = await eventsWorld(t);

const secretOf = (w: EventsWorld, ticketId: string) => w.app.deps.store.getKv<string>(w.org, 'ticket-secret', ticketId)!;
const stats = async (c: Client, ev: { id: string }) => (await c.get(`/events/${ev.id}/checkin-stats`)).body;

t.test('checkin - a ticket number matches as typed, upper-cased and lower-cased', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const upper = await makeTicket(w.staff, ev, { number: 'VIPX7KQ2' });
  const lower = await makeTicket(w.staff, ev, { number: 'lowcase9' });
  const mixed = await makeTicket(w.staff, ev, { number: 'MiXeD42' });

  let r = await w.staff.post('/events/checkin', { code: 'vipx7kq2' });
  t.equal(r.status, 200);
  t.same([r.body.success, r.body.ticket.sk], [true, upper.sk], 'typed in lower case, found upper-cased');
  r = await w.staff.post('/events/checkin', { code: 'LOWCASE9' });
  t.same([r.body.success, r.body.ticket.sk], [true, lower.sk], 'typed in upper case, found lower-cased');
  r = await w.staff.post('/events/checkin', { code: 'mixed42' });
  t.same(r.body, { success: false, reason: 'invalid_code' }, 'a mixed-case number matches only as typed');
  r = await w.staff.post('/events/checkin', { code: 'MiXeD42' });
  t.same([r.body.success, r.body.ticket.sk], [true, mixed.sk]);

  const dup = await w.staff.post(`/events/${ev.id}/tickets`, { ticketTypeId: ev.types.General, number: 'vipx7kq2' });
  t.equal(dup.status, 409, 'numbers are unique per tenant regardless of case');
  const other = await makeEvent(w.staff, { name: 'Other' });
  t.equal((await w.staff.post(`/events/${other.id}/tickets`, { ticketTypeId: other.types.General, number: 'LOWCASE9' })).status, 409, 'across events too');
});

t.test('checkin - a ticket imported through the record store scans by its number, by event id or slug', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const imported = async (number: string, event: string) => {
    const r = await w.staff.post('/repository/create', { datatype: 'ticket', isNew: true, data: { event, number, ticketTypeId: ev.types.General, status: 'valid', holderEmail: 'imp@example.com' } });
    t.equal(r.status, 201);
    return r.body;
  };
  const bySlug = await imported('IMP-SLUG-1', ev.slug);
  const byId = await imported('imp-id-2', ev.id);

  let r = await w.staff.post('/events/checkin', { code: 'imp-slug-1', eventId: ev.id });
  t.same([r.body.success, r.body.ticket?.sk], [true, bySlug.sk], 'naming its event by slug, typed in lower case');
  t.equal((await w.staff.post('/events/tickets/validate', { code: 'IMP-ID-2' })).body.valid, true, 'validate finds it too');
  r = await w.staff.post('/events/checkin', { code: 'IMP-ID-2' });
  t.same([r.body.success, r.body.ticket?.sk], [true, byId.sk], 'no eventId: routed to its event');
  t.match(await stats(w.staff, ev), { successful: 2 });

  // A new number through the record store: the new one scans, the old one names nothing.
  const moved = await w.staff.post(`/repository/update/ticket/${bySlug.sk}`, { data: { number: 'IMP-SLUG-9' }, version: (await w.staff.get(`/repository/get/ticket/${bySlug.sk}`)).body.version });
  t.equal(moved.status, 200);
  t.equal((await w.staff.post('/events/tickets/validate', { code: 'IMP-SLUG-1' })).body.reason, 'invalid_code');
  t.match((await w.staff.post('/events/tickets/validate', { code: 'IMP-SLUG-9' })).body, { valid: false, reason: 'already_checked_in', ticket: { sk: bySlug.sk } });
});

t.test('checkin - resolution order: dynamic QR, then static code, then credential code', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const b = await makeTicket(w.staff, ev, { holderEmail: 'bee@example.com' });
  await w.staff.get(`/events/tickets/${b.sk}/qr`);

  // A static code with the shape of a dynamic one, naming no ticket: found as a static code.
  const shaped = `${'a'.repeat(24)}:1700000000000:${'Z'.repeat(43)}`;
  const a = await makeTicket(w.staff, ev, { number: shaped });
  let r = await w.staff.post('/events/checkin', { code: shaped });
  t.same([r.body.success, r.body.ticket?.sk], [true, a.sk], 'the dynamic look-alike is found as a ticket number');

  // Shaped like a dynamic code of a real ticket with a wrong signature: the static code still wins.
  const tricky = `${b.sk}:1700000000000:${'Y'.repeat(43)}`;
  const c = await makeTicket(w.staff, ev, { number: tricky });
  r = await w.staff.post('/events/checkin', { code: tricky });
  t.same([r.body.success, r.body.ticket?.sk], [true, c.sk], 'a failed dynamic check falls through to the static code');

  // The same shape with no static ticket behind it answers the dynamic failure.
  r = await w.staff.post('/events/checkin', { code: `${b.sk}:1700000000000:${'X'.repeat(43)}` });
  t.same(r.body.reason, 'bad_signature');
  t.equal(r.body.ticket, undefined, 'a code that did not verify shows no ticket');

  // A genuine dynamic code resolves to its ticket.
  const qr = await w.staff.get(`/events/tickets/${b.sk}/qr`);
  t.match(qr.body.data.code, new RegExp(`^${b.sk}:\\d+:[A-Za-z0-9_-]{94}$`));
  r = await w.staff.post('/events/checkin', { code: qr.body.data.code });
  t.same([r.body.success, r.body.ticket.sk], [true, b.sk]);

  // A credential code comes last: bound by activation, it resolves to its ticket.
  const d = await makeTicket(w.staff, ev);
  t.equal((await w.staff.post(`/events/tickets/${d.sk}/activate`, { credentialCode: 'NFC-04A2-77' })).status, 200);
  r = await w.staff.post('/events/checkin', { code: 'NFC-04A2-77' });
  t.same([r.body.success, r.body.ticket.sk], [true, d.sk]);
});

t.test('checkin - every denial reason is a 200 with success false', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 18));
  const w = await eventsWorld(t, { clock });
  const ev = await makeEvent(w.staff, { codeWindowSeconds: 30, codeSkewSeconds: 60 });
  const other = await makeEvent(w.staff, { name: 'Other fest' });
  const deny = async (body: Record<string, unknown>, reason: string, msg: string) => {
    const r = await w.staff.post('/events/checkin', body);
    t.equal(r.status, 200, `${reason}: status 200`);
    t.same([r.body.success, r.body.reason], [false, reason], msg);
    return r.body;
  };

  await deny({ code: 'NO-SUCH-CODE' }, 'invalid_code', 'a code matching nothing');
  t.equal((await deny({ code: 'NO-SUCH-CODE', eventId: ev.id }, 'invalid_code', 'also with an event')).ticket, undefined);

  const signed = await makeTicket(w.staff, ev);
  await deny({ code: `${signed.sk}:${clock.now()}:${'A'.repeat(43)}` }, 'bad_signature', 'no secret minted yet');
  const qr = (await w.staff.get(`/events/tickets/${signed.sk}/qr`)).body.data.code as string;
  await deny({ code: qr.slice(0, -2) + (qr.endsWith('AA') ? 'BB' : 'AA') }, 'bad_signature', 'a tampered signature');
  await deny({ code: qr.replace(/:(\d+):/, (_, ts) => `:${Number(ts) + 1}:`) }, 'bad_signature', 'a tampered timestamp');
  await deny({ code: qr.slice(0, -10) }, 'bad_signature', 'a signature cut short');
  await deny({ code: `${'f'.repeat(24)}:${clock.now()}:short` }, 'invalid_code', 'dynamic in shape, naming no ticket');

  clock.advance(91_000);
  await deny({ code: qr }, 'expired_code', 'older than the window plus the skew tolerance');
  clock.advance(-91_000 - 61_000);
  await deny({ code: qr }, 'expired_code', 'further in the future than the skew tolerance');
  clock.advance(61_000 + 89_000);
  t.equal((await w.staff.post('/events/tickets/validate', { code: qr })).body.valid, true, 'inside window + skew it is good');
  clock.advance(-89_000);

  const elsewhere = await makeTicket(w.staff, other);
  await deny({ code: elsewhere.data.number, eventId: ev.id }, 'wrong_event', 'a ticket of another event');
  await deny({ code: elsewhere.data.number, eventId: ev.slug }, 'wrong_event', 'the event named by slug');

  const twice = await makeTicket(w.staff, ev);
  t.equal((await w.staff.post('/events/checkin', { code: twice.data.number })).body.success, true);
  await deny({ code: twice.data.number }, 'already_checked_in', 'inside now');

  const refunded = await makeTicket(w.staff, ev);
  t.equal((await w.staff.post(`/events/tickets/${refunded.sk}/refund`, {})).status, 200);
  await deny({ code: refunded.data.number }, 'refunded', 'a refunded ticket');

  const cancelled = await makeTicket(w.staff, ev);
  t.equal((await w.staff.del(`/events/tickets/${cancelled.sk}`)).status, 200);
  await deny({ code: cancelled.data.number }, 'cancelled', 'a cancelled ticket');

  const backstage = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.Backstage });
  await deny({ code: backstage.data.number }, 'not_active', 'a ticket that needs activation');
  await w.staff.post(`/events/tickets/${backstage.sk}/activate`, {});
  t.equal((await w.staff.post('/events/checkin', { code: backstage.data.number })).body.success, true, 'allowed once activated');

  const vip = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev), await makeTicket(w.staff, ev)];
  for (const v of vip.slice(0, 2)) t.equal((await w.staff.post('/events/checkin', { code: v.data.number, zone: 'vip' })).body.success, true);
  await deny({ code: vip[2].data.number, zone: 'vip' }, 'zone_full', 'the zone (capacity 2) is full');
  await w.staff.post('/events/checkout', { ticketId: vip[0].sk });
  t.equal((await w.staff.post('/events/checkin', { code: vip[2].data.number, zone: 'vip' })).body.success, true, 'room again after an exit');

  const r = await w.staff.post('/events/checkout', { code: vip[0].data.number });
  t.same([r.body.success, r.body.reason], [false, 'not_checked_in'], 'check-out of a ticket that is not inside');
});

t.test('checkin - re-entry after check-out, on and off', async (t) => {
  const w = shared;
  const open = await makeEvent(w.staff, { name: 'Open doors' });
  const closed = await makeEvent(w.staff, { name: 'One way', allowReentry: false });
  for (const [ev, again] of [
    [open, true],
    [closed, false],
  ] as const) {
    const tk = await makeTicket(w.staff, ev);
    t.equal((await w.staff.post('/events/checkin', { code: tk.data.number, zone: 'main' })).body.success, true);
    const out = await w.staff.post('/events/checkout', { code: tk.data.number });
    t.equal(out.body.success, true);
    t.equal(out.body.ticket.data.status, 'checked_in', 'status stays checked_in after a check-out');
    t.equal(out.body.ticket.data.inside, false);
    const back = await w.staff.post('/events/checkin', { code: tk.data.number, zone: 'main' });
    if (again) t.same([back.body.success, back.body.ticket.data.status], [true, 'checked_in'], 're-entry allowed');
    else t.same([back.body.success, back.body.reason], [false, 'already_checked_in'], 're-entry refused');
    const s = await stats(w.staff, ev);
    t.equal(s.uniqueAttendees, 1, 'one attendee however often they enter');
    t.equal(s.total, 2, 'two check-in scans');
    t.equal(s.successful, again ? 2 : 1);
  }
});

t.test('checkout - rules', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const other = await makeEvent(w.staff, { name: 'Elsewhere' });
  const tk = await makeTicket(w.staff, ev);

  let r = await w.staff.post('/events/checkout', { ticketId: tk.sk });
  t.same([r.body.success, r.body.reason, r.body.ticket.sk], [false, 'not_checked_in', tk.sk], 'must be inside');
  r = await w.staff.post('/events/checkout', {});
  t.equal(r.status, 400);
  t.match(r.body.message, /body\/code or body\/ticketId is required/);
  r = await w.staff.post('/events/checkout', { ticketId: 'zz' });
  t.equal(r.status, 400, 'ticketId must be an id');
  r = await w.staff.post('/events/checkout', { ticketId: 'a'.repeat(24), eventId: ev.id });
  t.same([r.body.success, r.body.reason], [false, 'invalid_code'], 'an unknown ticket id');

  await w.staff.post('/events/checkin', { code: tk.data.number, zone: 'main' });
  r = await w.staff.post('/events/checkout', { code: tk.data.number, eventId: other.id });
  t.same([r.body.success, r.body.reason], [false, 'wrong_event']);
  let occ = (await w.staff.get(`/events/${ev.id}/occupancy`)).body;
  t.equal(occ.main.currentOccupancy, 1);
  r = await w.staff.post('/events/checkout', { ticketId: tk.sk, zone: 'main' });
  t.equal(r.body.success, true, 'by ticket id');
  occ = (await w.staff.get(`/events/${ev.id}/occupancy`)).body;
  t.equal(occ.main.currentOccupancy, 0, 'the exit is counted in the zone the ticket was in');
  r = await w.staff.post('/events/checkout', { ticketId: tk.sk });
  t.same([r.body.success, r.body.reason], [false, 'not_checked_in'], 'not twice');
  const s = await stats(w.staff, ev);
  // The wrong_event scan went to the other event's log; the 400s are not scans.
  t.same(s.checkouts, { total: 4, successful: 1, denied: 3 });
});

t.test('checkin - 50 concurrent scans of one code: exactly one success', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const results = await Promise.all(Array.from({ length: 50 }, () => w.staff.post('/events/checkin', { code: tk.data.number, zone: 'main' })));
  t.ok(results.every((r) => r.status === 200));
  t.equal(results.filter((r) => r.body.success).length, 1, 'one success');
  t.equal(results.filter((r) => r.body.reason === 'already_checked_in').length, 49, 'the rest already inside');
  const s = await stats(w.staff, ev);
  t.same([s.total, s.successful, s.denied, s.uniqueAttendees], [50, 1, 49, 1]);
  t.equal((await w.staff.get(`/events/${ev.id}/occupancy`)).body.main.currentOccupancy, 1);
  const stored = w.app.deps.store.getRecord(w.org, 'ticket', tk.sk)!;
  t.equal(stored.data.status, 'checked_in');
  t.equal(stored.version, 2, 'written once');
});

t.test('checkin - a repeated nonce answers the original result and counts once', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const first = await w.staff.post('/events/checkin', { code: tk.data.number, nonce: 'dev1-0001' });
  t.equal(first.body.success, true);
  const again = await w.staff.post('/events/checkin', { code: tk.data.number, nonce: 'dev1-0001' });
  t.same([again.body.success, again.body.reason, again.body.ticket.sk], [true, undefined, tk.sk], 'the original success, not already_checked_in');
  const bad1 = await w.staff.post('/events/checkin', { code: 'garbage', nonce: 'dev1-0002', eventId: ev.id });
  const bad2 = await w.staff.post('/events/checkin', { code: 'garbage', nonce: 'dev1-0002', eventId: ev.id });
  t.same([bad1.body, bad2.body], [{ success: false, reason: 'invalid_code' }, { success: false, reason: 'invalid_code' }]);
  const fresh = await w.staff.post('/events/checkin', { code: tk.data.number, nonce: 'dev1-0003' });
  t.equal(fresh.body.reason, 'already_checked_in', 'a new nonce is a new scan');
  const batch = await w.staff.post('/events/checkin/batch', {
    scans: [
      { code: tk.data.number, nonce: 'dev1-0001' },
      { code: 'garbage', nonce: 'dev1-0004', eventId: ev.slug },
      { code: 'garbage', nonce: 'dev1-0004', eventId: ev.slug },
    ],
  });
  t.same(
    batch.body.results.map((r: any) => [r.success, r.reason]),
    [
      [true, undefined],
      [false, 'invalid_code'],
      [false, 'invalid_code'],
    ],
  );
  const s = await stats(w.staff, ev);
  t.same([s.total, s.successful, s.denied], [4, 1, 3], 'each nonce counted once');
});

t.test('checkin - scannedAt sets the hour; the future beyond the skew is refused', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 6, 1, 20, 30));
  const w = await eventsWorld(t, { clock });
  const ev = await makeEvent(w.staff, { codeSkewSeconds: 60 });
  const [a, b] = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev)];
  t.equal((await w.staff.post('/events/checkin', { code: a.data.number, scannedAt: '2026-07-01T18:05:00Z' })).body.success, true);
  t.equal((await w.staff.post('/events/checkin', { code: b.data.number })).body.success, true);
  const s = await stats(w.staff, ev);
  t.same(s.byHour, {
    '2026-07-01T18:00:00.000Z': { total: 1, successful: 1, denied: 0 },
    '2026-07-01T20:00:00.000Z': { total: 1, successful: 1, denied: 0 },
  });
  const stored = w.app.deps.store.getRecord(w.org, 'ticket', a.sk)!;
  t.equal(stored.data.checkedInAt, '2026-07-01T18:05:00.000Z', 'the ticket shows when it really entered');
  let r = await w.staff.post('/events/checkin', { code: a.data.number, scannedAt: '2026-07-01T20:32:00Z' });
  t.equal(r.status, 400);
  t.match(r.body.message, /body\/scannedAt/);
  r = await w.staff.post('/events/checkin', { code: a.data.number, scannedAt: 'yesterday' });
  t.equal(r.status, 400);
  t.match(r.body.message, /scannedAt/);
});

t.test('checkin-stats and occupancy - figures after a scripted sequence', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const [t1, t2, t3, t4] = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev), await makeTicket(w.staff, ev), await makeTicket(w.staff, ev)];
  const script: Array<[string, Record<string, unknown>, boolean]> = [
    ['/events/checkin', { code: t1.data.number, zone: 'main' }, true],
    ['/events/checkin', { code: t2.data.number, zone: 'main' }, true],
    ['/events/checkin', { code: t3.data.number }, true], // no zone: counted under `unknown`
    ['/events/checkin', { code: t1.data.number, zone: 'main' }, false], // already inside
    ['/events/checkin', { code: 'BOGUS-1', zone: 'vip', eventId: ev.id }, false],
    ['/events/checkin', { code: t4.data.number, zone: 'vip' }, true],
    ['/events/checkout', { code: t2.data.number, zone: 'main' }, true],
    ['/events/checkout', { ticketId: t3.sk }, true], // leaves `unknown`
    ['/events/checkin', { code: 'BOGUS-2', eventId: ev.id }, false], // no zone, denied
  ];
  for (const [path, body, ok] of script) t.equal((await w.staff.post(path, body)).body.success, ok, `${path} ${JSON.stringify(body)}`);

  const s = await stats(w.staff, ev);
  t.same(
    { total: s.total, successful: s.successful, denied: s.denied, uniqueAttendees: s.uniqueAttendees, inside: s.inside },
    { total: 7, successful: 4, denied: 3, uniqueAttendees: 4, inside: 2 },
  );
  t.same(s.byZone, {
    main: { total: 3, successful: 2, denied: 1 },
    unknown: { total: 2, successful: 1, denied: 1 },
    vip: { total: 2, successful: 1, denied: 1 },
  });
  t.same(s.byReason, { already_checked_in: 1, invalid_code: 2 });
  t.same(s.checkouts, { total: 2, successful: 2, denied: 0 });
  t.equal(Object.values(s.byHour).reduce((n: number, h: any) => n + h.total, 0), 7);

  const occ = (await w.staff.get(`/events/${ev.slug}/occupancy`)).body;
  t.same(Object.keys(occ).sort(), ['main', 'vip'], 'keyed by the event zones; unknown is absent');
  t.same(occ.main, {
    zoneId: 'main',
    zoneName: 'Main hall',
    capacity: 100,
    currentOccupancy: 1,
    availableCapacity: 99,
    percentFull: 1,
    totalEntranceScans: 2,
    totalEligibilityScans: 3,
  });
  t.same(occ.vip, {
    zoneId: 'vip',
    zoneName: 'VIP lounge',
    capacity: 2,
    currentOccupancy: 1,
    availableCapacity: 1,
    percentFull: 50,
    totalEntranceScans: 1,
    totalEligibilityScans: 2,
  });
});

t.test('checkin - the door state is rebuilt from the scan log after a restart', async (t) => {
  const dataDir = (await import('../helpers/app.js')).tempDir(t);
  const w = await eventsWorld(t, { dataDir });
  const ev = await makeEvent(w.staff);
  const [a, b] = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev)];
  await w.staff.post('/events/checkin', { code: a.data.number, zone: 'vip', nonce: 'n-1' });
  await w.staff.post('/events/checkin', { code: b.data.number, zone: 'main' });
  await w.staff.post('/events/checkout', { code: b.data.number });
  await w.staff.post('/events/checkin', { code: 'nothing', zone: 'main' });
  const before = [await stats(w.staff, ev), (await w.staff.get(`/events/${ev.id}/occupancy`)).body];
  await w.app.close();

  const app2 = await startTestApp(t, { modules: ['events', 'records'], dataDir });
  const staff = client(app2.url, w.staff === undefined ? {} : { orgid: w.org, authorization: `Bearer ${app2.deps.tokens.signAccess({ sub: 's', org: w.org, roles: ['User'], kind: 'staff' })}` });
  t.same([await stats(staff, ev), (await staff.get(`/events/${ev.id}/occupancy`)).body], before, 'same figures');
  t.equal((await staff.post('/events/checkin', { code: a.data.number, zone: 'vip' })).body.reason, 'already_checked_in', 'still inside');
  t.equal((await staff.post('/events/checkin', { code: a.data.number, zone: 'vip', nonce: 'n-1' })).body.success, true, 'nonces survive');
  t.equal((await staff.post('/events/checkin', { code: b.data.number, zone: 'main' })).body.success, true, 'left, so may re-enter');
});

t.test('checkin/batch - results in order, across events, up to 500', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const ev2 = await makeEvent(w.staff, { name: 'Second' });
  const [a, b] = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev2)];
  const r = await w.staff.post('/events/checkin/batch', {
    scans: [
      { code: a.data.number, zone: 'main', nonce: 'o-1', scannedAt: new Date(Date.now() - 60_000).toISOString() },
      { code: b.data.number },
      { code: a.data.number, zone: 'main' },
      { code: 'nope' },
      { ticketId: a.sk, direction: 'out', nonce: 'o-2' },
      { code: b.data.number, eventId: ev.id },
    ],
  });
  t.equal(r.status, 200);
  t.same(
    r.body.results.map((x: any) => [x.success, x.reason ?? null]),
    [
      [true, null],
      [true, null],
      [false, 'already_checked_in'],
      [false, 'invalid_code'],
      [true, null],
      [false, 'wrong_event'],
    ],
  );
  t.same([(await stats(w.staff, ev)).total, (await stats(w.staff, ev2)).total], [3, 1]);
  const unmatched = w.app.deps.store.readLog<any>(w.org, 'scan:_unmatched').at(-1)!.entry;
  t.match(unmatched, { code: 'nope', kind: 'in', ok: false, reason: 'invalid_code', by: 'staff-1' }, 'the unmatched scan is logged too');

  let bad = await w.staff.post('/events/checkin/batch', { scans: [{ code: 'x' }, { zone: 'main' }] });
  t.equal(bad.status, 400);
  t.match(bad.body.message, /body\/scans\/1\/code is required/);
  bad = await w.staff.post('/events/checkin/batch', { scans: Array.from({ length: 501 }, () => ({ code: 'x' })) });
  t.equal(bad.status, 400);
  t.match(JSON.stringify(bad.body.message), /body\/scans/);
  bad = await w.staff.post('/events/checkin/batch', { scans: [] });
  t.equal(bad.status, 400);
  const full = await w.staff.post('/events/checkin/batch', { scans: Array.from({ length: 500 }, (_, i) => ({ code: `x-${i}`, eventId: ev.id })) });
  t.equal(full.body.results.length, 500, '500 scans are taken');
});

t.test('validate - same rules, no change of state', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  let r = await w.staff.post('/events/tickets/validate', { code: tk.data.number.toLowerCase() });
  t.same([r.status, r.body.valid, r.body.ticket.sk], [200, true, tk.sk]);
  r = await w.staff.post('/events/tickets/validate', { code: tk.data.number, zone: 'main' });
  t.equal(r.body.valid, true, 'twice: nothing changed');
  t.equal((await stats(w.staff, ev)).total, 0, 'nothing logged');
  t.equal(w.app.deps.store.getRecord(w.org, 'ticket', tk.sk)!.version, 1);
  await w.staff.post('/events/checkin', { code: tk.data.number });
  r = await w.staff.post('/events/tickets/validate', { code: tk.data.number });
  t.same([r.body.valid, r.body.reason], [false, 'already_checked_in']);
  r = await w.staff.post('/events/tickets/validate', { code: 'nope' });
  t.same(r.body, { valid: false, reason: 'invalid_code' });
  r = await w.staff.post('/events/tickets/validate', { code: tk.data.number, eventId: 'no-such-event' });
  t.equal(r.status, 404);
  r = await w.staff.post('/events/tickets/validate', {});
  t.equal(r.status, 400);
  t.match(r.body.message, /body\/code is required/);
});

t.test('checkin - request errors: bad body, unknown zone or event', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  let r = await w.staff.post('/events/checkin', {});
  t.equal(r.status, 400);
  t.match(r.body.message, /body\/code is required/);
  r = await w.staff.post('/events/checkin', { code: tk.data.number, zone: 'balcony' });
  t.equal(r.status, 400);
  t.match(r.body.message, /body\/zone "balcony" is not a zone/);
  r = await w.staff.post('/events/checkin', { code: tk.data.number, eventId: 'no-such-event' });
  t.equal(r.status, 404);
  r = await w.staff.post('/events/checkin', { code: tk.data.number, extra: 1 });
  t.equal(r.status, 400);
  t.match(r.body.message, /body\/extra is not allowed/);
  t.equal((await w.staff.get('/events/no-such-event/checkin-stats')).status, 404);
  t.equal((await w.staff.get('/events/no-such-event/occupancy')).status, 404);
});

t.test('scanning routes - auth and tenant isolation', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const calls: Array<[string, string, unknown]> = [
    ['POST', '/events/checkin', { code: tk.data.number }],
    ['POST', '/events/checkout', { code: tk.data.number }],
    ['POST', '/events/checkin/batch', { scans: [{ code: tk.data.number }] }],
    ['POST', '/events/tickets/validate', { code: tk.data.number }],
    ['GET', `/events/${ev.id}/checkin-stats`, undefined],
    ['GET', `/events/${ev.id}/occupancy`, undefined],
  ];
  const send = (c: Client, m: string, p: string, b: unknown) => (m === 'GET' ? c.get(p) : c.post(p, b));
  for (const [m, p, b] of calls) {
    t.equal((await send(w.anon, m, p, b)).status, 401, `${m} ${p} without a token`);
    t.equal((await send(w.customer, m, p, b)).status, 403, `${m} ${p} with a customer token`);
    t.equal((await send(w.noRole, m, p, b)).status, 403, `${m} ${p} without the User role`);
  }
  // Another tenant's staff sees nothing of this one: codes match nothing, the event does not exist.
  t.same((await w.other.post('/events/checkin', { code: tk.data.number })).body, { success: false, reason: 'invalid_code' });
  t.equal((await w.other.post('/events/checkin', { code: tk.data.number, eventId: ev.id })).status, 404);
  t.equal((await w.other.get(`/events/${ev.id}/checkin-stats`)).status, 404);
  t.equal((await w.other.get(`/events/${ev.id}/occupancy`)).status, 404);
  t.same((await w.other.post('/events/tickets/validate', { code: tk.data.number })).body, { valid: false, reason: 'invalid_code' });
  t.equal((await stats(w.staff, ev)).total, 0, 'nothing reached this tenant');
  const cross = await w.other.post('/events/checkin', { code: tk.data.number }, { orgid: w.org });
  t.equal(cross.status, 403, 'a token of another organisation on this orgid');
});

t.test('checkin - a dynamic code signed with the stored secret checks the event window', async (t) => {
  const w = shared;
  const ev = await makeEvent(w.staff, { codeWindowSeconds: 10, codeSkewSeconds: 5 });
  const tk = await makeTicket(w.staff, ev);
  const fresh = (await w.staff.get(`/events/tickets/${tk.sk}/qr`)).body.data.code;
  const secret = secretOf(w, tk.sk);
  t.ok(secret, 'a secret was minted');
  const v = async (ageMs: number) => (await w.staff.post('/events/tickets/validate', { code: signCode(secret, tk.sk, Date.now() - ageMs) })).body;
  t.equal((await v(13_000)).valid, true, '13 s old: within 10 s + 5 s');
  t.equal((await v(17_000)).reason, 'expired_code', '17 s old: outside');
  t.equal((await v(-8_000)).reason, 'expired_code', '8 s ahead: beyond the 5 s skew');
  const again = (await w.staff.get(`/events/tickets/${tk.sk}/qr`)).body.data.code;
  t.not(again, fresh);
  t.equal((await w.staff.post('/events/tickets/validate', { code: fresh })).body.valid, true, 'a refresh does not invalidate a code still in the window');
  t.equal(secretOf(w, tk.sk), secret, 'the secret is minted once');
});
