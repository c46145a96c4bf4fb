import t from 'tap';
import { anonymous, diningDefinition, outbox, seed, sharedApp, venue } from '../reservations/world.js';

const shared = await sharedApp(t, { modules: ['checkin'] });

// T0: Friday 2026-03-20 08:00Z = 09:00 in Berlin. The 10:00 Berlin slot is 09:00Z.
const FRI_10 = '2026-03-20T09:00:00.000Z';

t.test('journey - book, see it coming, check in, seat, clear: over HTTP end to end', async (t) => {
  const v = await venue(t, { shared });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition({ reminder: { minutesBefore: 30 } }));

  // Staff set up the room.
  for (const name of ['Table 1', 'Table 2']) {
    const sp = await v.staff.post('/crm/reservations/service-point/create', { name, businessLocationId: 'downtown' });
    t.equal(sp.status, 201, `${name} created`);
  }

  // The customer looks at the slots and books.
  const slots = await anonymous(v.app, v.org).post('/crm/reservations/slots', {
    reservationDefinitionId: def.sk,
    serviceName: 'Table',
    serviceDate: '2026-03-20',
    partySize: 2,
  });
  const first = slots.body.slots[0];
  t.same([first.localTime, first.startTime, first.available], ['10:00', FRI_10, true]);
  const booked = await v.alice.post('/crm/reservations/create', {
    reservationDefinitionId: def.sk,
    service: 'Table',
    startTime: first.startTime,
    partySize: 2,
    customer: { name: 'Alice Example', email: 'alice@example.com' },
    phone: '+4915100000001',
  });
  t.equal(booked.status, 201);
  const booking = booked.body;
  t.equal(outbox(v.app, v.org, 'alice@example.com')[0].kind, 'reservation-confirmation');

  // The host sees it coming.
  const up = await v.staff.get('/checkin/upcoming?businessLocationId=downtown');
  t.same(up.body.data.map((r: any) => r.sk), [booking.sk]);
  const today = await v.staff.get('/checkin/reservations/today?businessLocationId=downtown');
  t.match(today.body, { date: '2026-03-20', timezone: 'Europe/Berlin', total: 1 });

  // She arrives at 09:55 and is checked in.
  v.clock.advance(55 * 60_000);
  const checkin = await v.staff.post(`/checkin/from-reservation/${booking.sk}`, { notes: 'birthday' });
  t.equal(checkin.status, 201);
  const task = checkin.body;
  t.match(task.data, {
    workflowId: 'check-in',
    stageId: 'waiting',
    reservationId: booking.sk,
    businessLocationId: 'downtown',
    partySize: 2,
    notes: 'birthday',
    customer: { name: 'Alice Example', email: 'alice@example.com' },
  });
  const stamped = await v.alice.get(`/crm/reservations/get/${booking.sk}`);
  t.match(stamped.body.data, { checkedInAt: '2026-03-20T08:55:00.000Z', checkInTaskId: task.sk, status: 'checked_in' });
  const jobs = v.app.deps.services.scheduler.pending(v.org);
  t.same(jobs.map((j) => j.kind), ['workflow.escalation'], "checked in: no reminder left, only the waiting stage's SLA timer");
  t.equal((await v.staff.get('/checkin/upcoming?businessLocationId=downtown')).body.total, 0, 'no longer upcoming');

  const dup = await v.staff.post(`/checkin/from-reservation/${booking.sk}`, {});
  t.equal(dup.status, 409, 'a live task exists for the booking');
  t.match(dup.body.message, task.sk);

  const q = await v.staff.get('/checkin/queue?businessLocationId=downtown');
  t.same(q.body.data.map((x: any) => [x.sk, x.queuePosition]), [[task.sk, 1]]);

  // Notified and seated.
  t.equal((await v.staff.post(`/checkin/${task.sk}/notify`)).body.data.notifications, 1);
  t.equal(outbox(v.app, v.org, '+4915100000001').length, 0, 'the booking phone is a form answer, not a contact of the task');
  v.clock.advance(5 * 60_000);
  const seated = await v.staff.post(`/checkin/${task.sk}/assign`, { servicePointId: 'Table 2' });
  t.equal(seated.status, 200);
  t.equal(seated.body.servicePoint.data.status, 'occupied');
  const avail = await v.staff.get('/checkin/service-point/available?businessLocationId=downtown');
  t.same(avail.body.data.map((p: any) => p.data.name), ['Table 1']);

  // Done: the table is cleared.
  v.clock.advance(50 * 60_000);
  const cleared = await v.staff.post(`/checkin/service-point/${seated.body.servicePoint.sk}/clear`, { finalStatus: 'dirty' });
  t.equal(cleared.status, 200);
  t.equal(cleared.body.servicePoint.data.status, 'dirty');
  t.match(cleared.body.completedTasks[0], { sk: task.sk, data: { status: 'completed', outcome: 'served' } });
  t.equal((await v.staff.get('/checkin/queue?businessLocationId=downtown')).body.total, 0);
  const hist = await v.staff.get('/checkin/queue/history?businessLocationId=downtown&date=2026-03-20');
  t.same(hist.body.data.map((x: any) => x.sk), [task.sk]);

  const waits = await v.staff.get('/workflow/analytics/check-in/wait-times');
  t.same(
    waits.body.stages.map((s: any) => [s.stageId, s.count, s.averageMinutes]),
    [
      ['waiting', 1, 5],
      ['serving', 1, 50],
    ],
  );
  const again = await v.staff.post(`/checkin/from-reservation/${booking.sk}`, {});
  t.equal(again.status, 201, 'with no live task left, the booking may be checked in again');
});

t.test('from-reservation - the request location wins; cancelled, unknown and location-less bookings', async (t) => {
  const v = await venue(t, { shared });
  await seed(v.app, v.org, 'location', { name: 'uptown', timezone: 'Europe/Berlin' });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  const book = (startTime: string) =>
    v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, service: 'Bar', startTime, phone: '1' });
  const b1 = (await book(FRI_10)).body;
  const moved = await v.staff.post(`/checkin/from-reservation/${b1.sk}`, { businessLocationId: 'uptown', partySize: 3 });
  t.equal(moved.status, 201);
  t.match(moved.body.data, { businessLocationId: 'uptown', partySize: 3 }, "the request's location wins over the booking's");
  t.equal((await v.staff.get('/checkin/queue?businessLocationId=uptown')).body.total, 1);
  t.equal((await v.staff.get('/checkin/queue?businessLocationId=downtown')).body.total, 0);
  const elsewhere = await v.staff.post(`/checkin/from-reservation/${b1.sk}`, { businessLocationId: 'downtown' });
  t.equal(elsewhere.status, 409, 'a live task anywhere blocks a second one');

  const b2 = (await book('2026-03-20T10:00:00Z')).body;
  await v.alice.post('/crm/reservations/update', { id: b2.sk, status: 'cancelled' });
  const cancelled = await v.staff.post(`/checkin/from-reservation/${b2.sk}`, {});
  t.equal(cancelled.status, 409);
  t.match(cancelled.body.message, /cancelled/);
  t.equal((await v.staff.post('/checkin/from-reservation/ffffffffffffffffffffffff', {})).status, 404);
  t.equal((await v.staff.post(`/checkin/from-reservation/${b2.sk}`, { businessLocationId: v.location.sk })).status, 400, 'an sk is no slug');
  t.equal((await v.staff.post(`/checkin/from-reservation/${b2.sk}`, { partySize: -1 })).status, 400);

  const loose = await seed(v.app, v.org, 'reservation', {
    customerId: 'c0000000000000000000a11c',
    customer: { name: 'Old Booking' },
    startTime: '2026-03-20T11:00',
    status: 'confirmed',
  });
  const noLoc = await v.staff.post(`/checkin/from-reservation/${loose.sk}`, {});
  t.equal(noLoc.status, 400, 'nothing says where to queue it');
  t.match(noLoc.body.message, /businessLocationId is required/);
  const given = await v.staff.post(`/checkin/from-reservation/${loose.sk}`, { businessLocationId: 'downtown' });
  t.equal(given.status, 201, 'an older booking without a definition can still be checked in');
  t.match(v.app.deps.store.getRecord(v.org, 'reservation', loose.sk)!.data, { checkInTaskId: given.body.sk });
});

t.test('from-reservation - concurrent check-ins of one booking at two locations: one task', async (t) => {
  const v = await venue(t, { shared });
  await seed(v.app, v.org, 'location', { name: 'uptown' });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  const b = (
    await v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, service: 'Table', startTime: FRI_10, phone: '1' })
  ).body;
  const replies = await Promise.all([
    v.staff.post(`/checkin/from-reservation/${b.sk}`, { businessLocationId: 'downtown' }),
    v.staff.post(`/checkin/from-reservation/${b.sk}`, { businessLocationId: 'uptown' }),
    v.staff.post(`/checkin/from-reservation/${b.sk}`, {}),
  ]);
  t.same(replies.map((r) => r.status).sort(), [201, 409, 409]);
  const live = v.app.deps.store.scan(v.org, 'task', { 'data.reservationId': b.sk, 'data.status': 'open' });
  t.equal(live.length, 1);
  t.equal(v.app.deps.store.getRecord(v.org, 'reservation', b.sk)!.data.checkInTaskId, live[0].sk);
});

t.test('upcoming and today - in the location timezone, checked-in and cancelled left out', async (t) => {
  const v = await venue(t, { shared });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  const mk = (startTime: string) =>
    v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, service: 'Table', startTime, phone: '1' }).then((r) => r.body);
  const soon = await mk(FRI_10); // in 1 h
  const later = await mk('2026-03-20T12:00:00Z'); // in 4 h
  const lateNight = await mk('2026-03-20T20:00:00Z'); // 21:00 Berlin, still Friday there
  const tomorrow = await mk('2026-03-21T09:00:00Z');
  const cancelled = await mk('2026-03-20T10:00:00Z');
  await v.alice.post('/crm/reservations/update', { id: cancelled.sk, status: 'cancelled' });

  const up = await v.staff.get('/checkin/upcoming?businessLocationId=downtown');
  t.same(up.body.data.map((r: any) => r.sk), [soon.sk], 'the next two hours');
  const up5 = await v.staff.get('/checkin/upcoming?businessLocationId=downtown&hours=5');
  t.same(up5.body.data.map((r: any) => r.sk), [soon.sk, later.sk]);
  v.clock.advance(80 * 60_000); // 20 minutes after the 10:00 booking
  const late = await v.staff.get('/checkin/upcoming?businessLocationId=downtown');
  t.same(late.body.data.map((r: any) => r.sk), [soon.sk], 'a late arrival still shows');
  const strict = await v.staff.get('/checkin/upcoming?businessLocationId=downtown&lateMinutes=0&hours=1');
  t.same(strict.body.data, []);
  t.equal((await v.staff.get('/checkin/upcoming?hours=0')).status, 400);

  const today = await v.staff.get('/checkin/reservations/today?businessLocationId=downtown');
  t.same(today.body.data.map((r: any) => r.sk), [soon.sk, later.sk, lateNight.sk]);
  const withCancelled = await v.staff.get('/checkin/reservations/today?businessLocationId=downtown&includeCancelled=true');
  t.equal(withCancelled.body.total, 4);
  const sat = await v.staff.get('/checkin/reservations/today?businessLocationId=downtown&date=2026-03-21');
  t.same(sat.body.data.map((r: any) => r.sk), [tomorrow.sk]);
  t.equal((await v.staff.get('/checkin/reservations/today')).status, 400, 'businessLocationId is required');
  t.equal((await v.staff.get('/checkin/reservations/today?businessLocationId=downtown&date=2026-02-31')).status, 400);

  // 23:30Z Friday is 00:30 Saturday in Berlin: "today" is Saturday there.
  v.clock.set(Date.UTC(2026, 2, 20, 23, 30));
  const midnight = await v.staff.get('/checkin/reservations/today?businessLocationId=downtown');
  t.match(midnight.body, { date: '2026-03-21', timezone: 'Europe/Berlin' });
  t.same(midnight.body.data.map((r: any) => r.sk), [tomorrow.sk]);
});
