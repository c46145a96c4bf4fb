import t from 'tap';
import { createOrg, tokenFor } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { anonymous, caller, diningDefinition, outbox, seed, sharedApp, venue, type Caller } from './world.js';

const shared = await sharedApp(t, { modules: ['reservations', 'records'] });

// T0 is Friday 2026-03-20 09:00 in Berlin (CET, +1). Saturday 10:00 Berlin = 09:00Z.
const SAT_10 = '2026-03-21T09:00:00.000Z';
const SAT_11 = '2026-03-21T10:00:00.000Z';
const SAT_12 = '2026-03-21T11:00:00.000Z';

async function setup(t: Parameters<typeof venue>[0]) {
  const v = await venue(t, { shared });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  const book = (who: Caller, extra: Record<string, unknown> = {}) =>
    who.post('/crm/reservations/create', {
      reservationDefinitionId: def.sk,
      service: 'Table',
      startTime: SAT_10,
      customer: { name: 'Alice Example' },
      phone: '+4930123456',
      ...extra,
    });
  return { ...v, def, book };
}

t.test('definitions - public with orgid, services resolved, tenant-scoped', async (t) => {
  const v = await setup(t);
  const plain = await seed(v.app, v.org, 'reservation_definition', { name: 'Haircut', timezone: 'America/New_York', capacity: 2 });
  const res = await anonymous(v.app, v.org).get('/crm/reservations/definitions');
  t.equal(res.status, 200);
  t.equal(res.body.total, 2);
  const haircut = res.body.data.find((d: any) => d.sk === plain.sk);
  t.same(haircut.data.services, [{ name: 'Haircut', durationMinutes: 30, capacity: 2, implicit: true }], 'implicit service named after it');
  t.equal(haircut.data.timezone, 'America/New_York');
  const dining = res.body.data.find((d: any) => d.sk === v.def.sk);
  t.same(dining.data.services.map((s: any) => s.name), ['Table', 'Bar']);

  const noOrg = await request(v.app.url, '/crm/reservations/definitions');
  t.equal(noOrg.status, 400, 'orgid is required');
  await createOrg(v.app, `${v.org}-other`);
  const other = await anonymous(v.app, `${v.org}-other`).get('/crm/reservations/definitions');
  t.same(other.body, { data: [], total: 0, hasNext: false, page: 1, pageSize: 20 }, 'another tenant sees none of them');
});

t.test('slots - the day in the definition timezone, with remaining capacity, past slots left out', async (t) => {
  const v = await setup(t);
  const pub = anonymous(v.app, v.org);
  const sat = await pub.post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk, serviceName: 'Table', serviceDate: '2026-03-21' });
  t.equal(sat.status, 200);
  t.equal(sat.body.timezone, 'Europe/Berlin');
  t.equal(sat.body.slots.length, 12, '10:00 to 21:00');
  t.same(sat.body.slots[0], { startTime: SAT_10, endTime: SAT_11, localTime: '10:00', capacity: 4, remaining: 4, available: true });
  t.equal(sat.body.slots[11].localTime, '21:00');

  const byId = await pub.post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk, serviceName: 'svc-bar', serviceDate: '2026-03-21' });
  t.equal(byId.body.service.name, 'Bar', 'a service id works as serviceName');
  t.equal(byId.body.slots[0].endTime, '2026-03-21T09:30:00.000Z', 'the Bar lasts 30 minutes');

  v.clock.advance(3.5 * 3_600_000); // 12:30 Berlin
  const today = await pub.post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk, serviceName: 'Table', serviceDate: '2026-03-20' });
  t.same(today.body.slots.map((s: any) => s.localTime).slice(0, 2), ['13:00', '14:00'], 'slots that have started are left out');

  const r1 = await v.book(v.alice, { partySize: 3 });
  t.equal(r1.status, 201);
  const after = await pub.post('/crm/reservations/slots', {
    reservationDefinitionId: v.def.sk,
    serviceName: 'Table',
    serviceDate: '2026-03-21',
    partySize: 2,
  });
  t.same(after.body.slots[0], { startTime: SAT_10, endTime: SAT_11, localTime: '10:00', capacity: 4, remaining: 1, available: false });
  t.equal(after.body.slots[1].remaining, 4);
});

t.test('slots - validation', async (t) => {
  const v = await setup(t);
  const pub = anonymous(v.app, v.org);
  const missing = await pub.post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk });
  t.equal(missing.status, 400);
  t.match(missing.body.message, ['body/serviceDate is required']);
  const badDate = await pub.post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk, serviceName: 'Table', serviceDate: '2026-02-30' });
  t.equal(badDate.status, 400);
  t.match(badDate.body.message, /serviceDate/);
  const unknown = await pub.post('/crm/reservations/slots', { reservationDefinitionId: '0123456789abcdef01234567', serviceDate: '2026-03-21' });
  t.equal(unknown.status, 404);
  const badService = await pub.post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk, serviceName: 'Sauna', serviceDate: '2026-03-21' });
  t.equal(badService.status, 400);
  t.match(badService.body.message, /invalid service "Sauna"/);
  const ambiguous = await pub.post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk, serviceDate: '2026-03-21' });
  t.equal(ambiguous.status, 400, 'two services: serviceName is needed');
  t.match(ambiguous.body.message, /service is required/);
});

t.test('create - stores a UTC instant, a confirmation number, queues the confirmation, arms the reminder', async (t) => {
  const v = await setup(t);
  const res = await v.book(v.alice, { notes: 'window seat', allergies: 'none' });
  t.equal(res.status, 201);
  const r = res.body;
  t.equal(r.datatype, 'reservation');
  t.equal(r.data.startTime, SAT_10);
  t.equal(r.data.endTime, SAT_11);
  t.equal(r.data.customerId, 'c0000000000000000000a11c', "the caller's customerId");
  t.same(r.data.customer, { name: 'Alice Example', email: 'alice@example.com' }, "email defaults to the caller's");
  t.equal(r.data.service, 'Table');
  t.equal(r.data.serviceId, 'svc-table');
  t.equal(r.data.reservationDefinitionId, v.def.sk);
  t.equal(r.data.status, 'confirmed');
  t.equal(r.data.businessLocationId, 'downtown', "the definition's location");
  t.equal(r.data.localStartTime, '10:00');
  t.same(r.data.answers, { phone: '+4930123456', allergies: 'none' }, 'flat extra fields are form answers');
  t.match(r.data.confirmationNumber, /^R-[A-Z2-9]{8}$/);
  t.not(r.data.confirmationNumber, r.sk, 'the confirmation number is not the sk');

  const mail = outbox(v.app, v.org, 'alice@example.com');
  t.equal(mail.length, 1);
  t.equal(mail[0].kind, 'reservation-confirmation');
  t.match(mail[0].body, r.data.confirmationNumber);
  t.match(mail[0].body, '2026-03-21 at 10:00 (Europe/Berlin)', 'the message speaks local time');

  const jobs = v.app.deps.services.scheduler.pending(v.org);
  t.equal(jobs.length, 1);
  t.equal(jobs[0].kind, 'reservation.reminder');
  t.equal(new Date(jobs[0].dueAt).toISOString(), '2026-03-21T07:00:00.000Z', 'two hours before');
  t.equal(r.data.reminderJobId, jobs[0].id);

  const second = await v.book(v.alice, { startTime: SAT_11 });
  t.not(second.body.data.confirmationNumber, r.data.confirmationNumber, 'numbers are unique');
});

t.test('create - refusals: not new, invalid service, required answers, not a slot, past, full', async (t) => {
  const v = await setup(t);
  const wrapped = await v.alice.post('/crm/reservations/create', {
    datatype: 'reservation',
    data: { reservationDefinitionId: v.def.sk, service: 'Table', startTime: SAT_10 },
    isNew: true,
    version: 0,
  });
  t.equal(wrapped.status, 400);
  t.match(wrapped.body.message, /not new/);

  const invalid = await v.book(v.alice, { service: 'Sauna' });
  t.equal(invalid.status, 400);
  t.match(invalid.body.message, /invalid service/);

  const noPhone = await v.book(v.alice, { phone: undefined });
  t.equal(noPhone.status, 400);
  t.same(noPhone.body.message, ['body/phone is required (phone)'], 'the missing answer is named');

  const missing = await v.alice.post('/crm/reservations/create', { service: 'Table' });
  t.equal(missing.status, 400);
  t.same(missing.body.message, ['body/reservationDefinitionId is required', 'body/startTime is required']);

  const offGrid = await v.book(v.alice, { startTime: '2026-03-21T09:30:00Z' });
  t.equal(offGrid.status, 400);
  t.match(offGrid.body.message, /not a slot/);

  const closed = await v.book(v.alice, { startTime: '2026-03-21T22:00:00Z' });
  t.equal(closed.status, 400, 'after closing time');

  const past = await v.book(v.alice, { startTime: '2026-03-19T09:00:00Z' });
  t.equal(past.status, 400);
  t.match(past.body.message, /in the past/);

  const badTime = await v.book(v.alice, { startTime: 'soon' });
  t.equal(badTime.status, 400);

  const tooMany = await v.book(v.alice, { partySize: 5 });
  t.equal(tooMany.status, 400, 'a party larger than the service capacity');

  const typed = await v.book(v.alice, { partySize: 'two' });
  t.equal(typed.status, 400);
  t.match(typed.body.message, [/partySize/]);

  t.equal((await v.book(v.alice, { partySize: 3 })).status, 201);
  const full = await v.book(v.bob, { partySize: 2, customer: { name: 'Bob' } });
  t.equal(full.status, 409);
  t.match(full.body.message, /full: 1 place\(s\) left, party of 2/);
  t.equal((await v.book(v.bob, { partySize: 1, customer: { name: 'Bob' } })).status, 201, 'the last place');
  const overlap = await v.book(v.bob, { startTime: SAT_10, customer: { name: 'Bob' } });
  t.equal(overlap.status, 409);

  const noDef = await v.book(v.alice, { reservationDefinitionId: 'ffffffffffffffffffffffff' });
  t.equal(noDef.status, 404);
  t.equal(outbox(v.app, v.org).length, 2, 'only the two bookings sent confirmations');
});

t.test('create - who may book for whom', async (t) => {
  const v = await setup(t);
  const forOther = await v.book(v.alice, { customerId: 'c0000000000000000000b0b0' });
  t.equal(forOther.status, 403, 'a customer books for herself');
  const staffFor = await v.book(v.staff, { customerId: 'c0000000000000000000b0b0', customer: { name: 'Bob', email: 'bob@example.com' } });
  t.equal(staffFor.status, 201);
  t.equal(staffFor.body.data.customerId, 'c0000000000000000000b0b0', 'staff may book for a customer');
  const bobs = await v.bob.get('/crm/reservations/get');
  t.equal(bobs.body.total, 1, 'it is listed as his');
});

t.test('create - auth and tenant isolation', async (t) => {
  const v = await setup(t);
  const body = { reservationDefinitionId: v.def.sk, service: 'Table', startTime: SAT_10, phone: '1' };
  const none = await request(v.app.url, '/crm/reservations/create', { method: 'POST', body, headers: { orgid: v.org } });
  t.equal(none.status, 401);
  const appToken = tokenFor(v.app, { org: v.org, kind: 'app', sub: 'app-1', roles: [] });
  const appOnly = await request(v.app.url, '/crm/reservations/create', {
    method: 'POST',
    body,
    headers: { orgid: v.org, authorization: `Bearer ${appToken}` },
  });
  t.equal(appOnly.status, 403, 'an application token alone does not act for a customer');
  await createOrg(v.app, `${v.org}-other`);
  const wrongOrg = await v.alice.post('/crm/reservations/create', body, { orgid: `${v.org}-other` });
  t.equal(wrongOrg.status, 403, 'a token of acme with orgid other');
  const otherCustomer = caller(v.app, `${v.org}-other`, { kind: 'customer', customerId: 'c0000000000000000000a11c', email: 'alice@example.com' });
  const crossTenant = await otherCustomer.post('/crm/reservations/create', body);
  t.equal(crossTenant.status, 404, "another tenant's definition does not exist here");

  const mine = await v.book(v.alice);
  const read = await otherCustomer.get(`/crm/reservations/get/${mine.body.sk}`);
  t.equal(read.status, 404, 'same customer id in another tenant: not found');
  t.equal((await otherCustomer.get('/crm/reservations/get')).body.total, 0);
});

t.test('get - own bookings only; another customer gets 404', async (t) => {
  const v = await setup(t);
  const a2 = await v.book(v.alice, { startTime: SAT_12 });
  const a1 = await v.book(v.alice, { startTime: SAT_10 });
  const list = await v.alice.get('/crm/reservations/get');
  t.equal(list.status, 200);
  t.same(list.body.data.map((r: any) => r.sk), [a1.body.sk, a2.body.sk], 'soonest first');
  t.equal((await v.bob.get('/crm/reservations/get')).body.total, 0);
  const one = await v.alice.get(`/crm/reservations/get/${a1.body.sk}`);
  t.equal(one.status, 200);
  t.equal(one.body.data.confirmationNumber, a1.body.data.confirmationNumber);
  const stolen = await v.bob.get(`/crm/reservations/get/${a1.body.sk}`);
  t.equal(stolen.status, 404);
  t.equal(stolen.body.error, 'Not Found');
  t.equal((await v.alice.get('/crm/reservations/get/ffffffffffffffffffffffff')).status, 404);
  const paged = await v.alice.get('/crm/reservations/get?page=2&pageSize=1');
  t.same([paged.body.total, paged.body.hasNext, paged.body.data[0].sk], [2, false, a2.body.sk]);
  t.equal((await v.alice.get('/crm/reservations/get?pageSize=abc')).status, 400);
});

t.test('update - reschedule re-checks capacity, cancel frees the place, stale versions and strangers refused', async (t) => {
  const v = await setup(t);
  const mine = (await v.book(v.alice)).body;
  await v.book(v.bob, { startTime: SAT_11, partySize: 4, customer: { name: 'Bob' } });

  const full = await v.alice.post('/crm/reservations/update', { id: mine.sk, startTime: SAT_11 });
  t.equal(full.status, 409, '11:00 is full');
  const moved = await v.alice.post('/crm/reservations/update', { id: mine.sk, startTime: SAT_12, version: mine.version });
  t.equal(moved.status, 200);
  t.equal(moved.body.data.startTime, SAT_12);
  t.equal(moved.body.data.endTime, '2026-03-21T12:00:00.000Z');
  t.equal(moved.body.version, mine.version + 1);
  t.not(moved.body.data.reminderJobId, mine.data.reminderJobId, 'the reminder was re-armed');
  const jobs = v.app.deps.services.scheduler.pending(v.org).filter((j) => j.payload.reservationId === mine.sk);
  t.same(jobs.map((j) => j.id), [moved.body.data.reminderJobId], 'the old reminder was cancelled');
  t.equal(outbox(v.app, v.org, 'alice@example.com').at(-1)!.kind, 'reservation-updated');

  const stale = await v.alice.post('/crm/reservations/update', { id: mine.sk, notes: 'x', version: mine.version });
  t.equal(stale.status, 409, 'stale version');
  const stranger = await v.bob.post('/crm/reservations/update', { id: mine.sk, notes: 'mine now' });
  t.equal(stranger.status, 404);
  const wrapped = await v.alice.post('/crm/reservations/update', { id: mine.sk, data: { notes: 'x' } });
  t.equal(wrapped.status, 400);
  const noId = await v.alice.post('/crm/reservations/update', { notes: 'x' });
  t.equal(noId.status, 400);
  t.same(noId.body.message, ['body/id is required']);
  const badStatus = await v.alice.post('/crm/reservations/update', { id: mine.sk, status: 'confirmed' });
  t.equal(badStatus.status, 400);
  const badService = await v.alice.post('/crm/reservations/update', { id: mine.sk, service: 'Sauna' });
  t.equal(badService.status, 400);
  t.match(badService.body.message, /invalid service/);

  const cancelled = await v.alice.post('/crm/reservations/update', { id: mine.sk, status: 'cancelled' });
  t.equal(cancelled.status, 200);
  t.equal(cancelled.body.data.status, 'cancelled');
  t.equal(v.app.deps.services.scheduler.pending(v.org).filter((j) => j.payload.reservationId === mine.sk).length, 0, 'no reminder left');
  const again = await v.alice.post('/crm/reservations/update', { id: mine.sk, startTime: SAT_10 });
  t.equal(again.status, 409, 'a cancelled booking cannot change');
  t.equal((await v.book(v.bob, { startTime: SAT_12, partySize: 4, customer: { name: 'Bob' } })).status, 201, 'the place was freed');
});

t.test('send-reminder - sends now through the outbox; cancelled and strangers refused', async (t) => {
  const v = await setup(t);
  const mine = (await v.book(v.alice)).body;
  const res = await v.alice.post(`/crm/reservations/send-reminder/${mine.sk}`);
  t.equal(res.status, 200);
  t.match(res.body, { sent: true, reservationId: mine.sk, channel: 'email', to: 'alice@example.com' });
  const reminders = outbox(v.app, v.org, 'alice@example.com').filter((m) => m.kind === 'reservation-reminder');
  t.equal(reminders.length, 1);
  t.equal(reminders[0].id, res.body.messageId);
  t.equal((await v.bob.post(`/crm/reservations/send-reminder/${mine.sk}`)).status, 404);
  await v.alice.post('/crm/reservations/update', { id: mine.sk, status: 'cancelled' });
  t.equal((await v.alice.post(`/crm/reservations/send-reminder/${mine.sk}`)).status, 409);
});

t.test('create - an idempotency key replays the first booking', async (t) => {
  const v = await setup(t);
  const key = '5b7c2c1e-8d4f-4a57-9a0e-4c3b2a1f0e9d';
  const first = await v.book(v.alice, { idempotencyKey: key });
  const retry = await v.book(v.alice, { idempotencyKey: key });
  t.equal(first.status, 201);
  t.equal(retry.status, 201);
  t.equal(retry.body.sk, first.body.sk, 'one booking');
  t.equal((await v.alice.get('/crm/reservations/get')).body.total, 1);
  const other = await v.book(v.alice, { idempotencyKey: key, startTime: SAT_11 });
  t.equal(other.status, 409, 'same key, different body');
  const bad = await v.book(v.alice, { idempotencyKey: 'nope' });
  t.equal(bad.status, 400);
});

t.test('older records - a zone-less wall-clock time is read in the definition timezone', async (t) => {
  const v = await setup(t);
  const old = await seed(v.app, v.org, 'reservation', {
    customerId: 'c0000000000000000000a11c',
    customer: { name: 'Alice', email: 'alice@example.com' },
    reservationDefinitionId: v.def.sk,
    service: 'Table',
    startTime: '2026-03-21T12:00:00',
    endTime: '2026-03-21T13:00:00',
    partySize: 4,
    status: 'confirmed',
    confirmationNumber: 'OLD-1',
  });
  const read = await v.alice.get(`/crm/reservations/get/${old.sk}`);
  t.equal(read.body.data.startTime, '2026-03-21T11:00:00.000Z', '12:00 in Berlin (CET)');
  t.equal(read.body.data.endTime, '2026-03-21T12:00:00.000Z');
  t.equal(v.app.deps.store.getRecord(v.org, 'reservation', old.sk)!.data.startTime, '2026-03-21T12:00:00', 'the record is left as stored');
  const slots = await anonymous(v.app, v.org).post('/crm/reservations/slots', {
    reservationDefinitionId: v.def.sk,
    serviceName: 'Table',
    serviceDate: '2026-03-21',
  });
  t.equal(slots.body.slots.find((s: any) => s.localTime === '12:00').remaining, 0, 'it takes the 12:00 Berlin slot');
  t.equal(slots.body.slots.find((s: any) => s.localTime === '13:00').remaining, 4);
  const clash = await v.book(v.bob, { startTime: '2026-03-21T11:00:00Z', customer: { name: 'Bob' } });
  t.equal(clash.status, 409);
  const zoneless = await v.book(v.bob, { startTime: '2026-03-21T14:00', customer: { name: 'Bob' } });
  t.equal(zoneless.status, 201, 'a client may send wall-clock time too');
  t.equal(zoneless.body.data.startTime, '2026-03-21T13:00:00.000Z', 'stored as a UTC instant');
});

t.test('operators - every booking through POST /repository/find/reservation (the own list is per customer)', async (t) => {
  const v = await setup(t);
  const a = (await v.book(v.alice)).body;
  const b = (await v.book(v.bob, { startTime: SAT_11, customer: { name: 'Bob' } })).body;
  const all = await v.staff.post('/repository/find/reservation', {
    query: { 'data.reservationDefinitionId': v.def.sk },
    options: { sort: 'data.startTime', sortType: 'asc' },
  });
  t.equal(all.status, 200);
  t.same(all.body.data.map((r: any) => r.sk), [a.sk, b.sk]);
  t.same(all.body.data.map((r: any) => r.data.customerId), ['c0000000000000000000a11c', 'c0000000000000000000b0b0']);
  const byNumber = await v.staff.post('/repository/find/reservation', { query: { 'data.confirmationNumber': b.data.confirmationNumber } });
  t.same(byNumber.body.data.map((r: any) => r.sk), [b.sk], 'found by confirmation number');
  t.equal((await v.alice.post('/repository/find/reservation', { query: {} })).status, 403, 'not for customers');
  t.equal((await v.alice.get('/crm/reservations/get')).body.total, 1, 'the customer list stays her own');
});

t.test('customer routes - 401 without a token, 400 on bad input, invisible across tenants', async (t) => {
  const v = await setup(t);
  const mine = (await v.book(v.alice)).body;
  for (const [method, path, body] of [
    ['GET', '/crm/reservations/get'],
    ['GET', `/crm/reservations/get/${mine.sk}`],
    ['POST', '/crm/reservations/update', { id: mine.sk, notes: 'x' }],
    ['POST', `/crm/reservations/send-reminder/${mine.sk}`, {}],
  ] as Array<[string, string, unknown?]>) {
    const res = await request(v.app.url, path, { method, body, headers: { orgid: v.org } });
    t.equal(res.status, 401, `${method} ${path} without a token`);
  }
  t.equal((await anonymous(v.app, v.org).get('/crm/reservations/definitions?page=0')).status, 400);
  const badParty = await v.alice.post('/crm/reservations/update', { id: mine.sk, partySize: 0 });
  t.equal(badParty.status, 400);
  t.match(badParty.body.message, ['body/partySize must be >= 1']);

  const rivalOrg = `${v.org}-rival`;
  await createOrg(v.app, rivalOrg);
  const rivalAlice = caller(v.app, rivalOrg, { kind: 'customer', customerId: 'c0000000000000000000a11c', email: 'alice@example.com' });
  t.equal((await rivalAlice.post('/crm/reservations/update', { id: mine.sk, status: 'cancelled' })).status, 404);
  t.equal((await rivalAlice.post(`/crm/reservations/send-reminder/${mine.sk}`)).status, 404);
  const slots = await anonymous(v.app, rivalOrg).post('/crm/reservations/slots', { reservationDefinitionId: v.def.sk, serviceDate: '2026-03-21' });
  t.equal(slots.status, 404, "another tenant's definition");
  t.equal((await v.alice.get(`/crm/reservations/get/${mine.sk}`)).body.data.status, 'confirmed', 'untouched');
});
