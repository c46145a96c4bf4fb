import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { anonymous, outbox, seed, sharedApp, venue } from './world.js';

const shared = await sharedApp(t, { modules: ['reservations', 'checkin'] });

const daily = (windows: Array<{ open: string; close: string }>) =>
  Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, windows]));

async function slots(v: Awaited<ReturnType<typeof venue>>, defId: string, serviceDate: string) {
  const res = await anonymous(v.app, v.org).post('/crm/reservations/slots', { reservationDefinitionId: defId, serviceDate });
  return res.body.slots.map((s: any) => [s.localTime, s.startTime]);
}

t.test('DST - Europe/Berlin 2026-03-29: the skipped hour has no slot, later slots are CEST', async (t) => {
  const v = await venue(t, { shared });
  const def = await seed(v.app, v.org, 'reservation_definition', {
    name: 'Club',
    timezone: 'Europe/Berlin',
    slotMinutes: 60,
    capacity: 2,
    openingHours: daily([{ open: '00:00', close: '06:00' }, { open: '10:00', close: '12:00' }]),
    reminder: { minutesBefore: 1440 },
  });
  t.same(await slots(v, def.sk, '2026-03-29'), [
    ['00:00', '2026-03-28T23:00:00.000Z'],
    ['01:00', '2026-03-29T00:00:00.000Z'],
    ['03:00', '2026-03-29T01:00:00.000Z'],
    ['04:00', '2026-03-29T02:00:00.000Z'],
    ['05:00', '2026-03-29T03:00:00.000Z'],
    ['10:00', '2026-03-29T08:00:00.000Z'],
    ['11:00', '2026-03-29T09:00:00.000Z'],
  ]);
  t.same((await slots(v, def.sk, '2026-03-28')).slice(-2), [
    ['10:00', '2026-03-28T09:00:00.000Z'],
    ['11:00', '2026-03-28T10:00:00.000Z'],
  ], 'the day before is still CET');

  const book = (startTime: string) =>
    v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, startTime, customer: { name: 'Alice' } });
  const wall = await book('2026-03-29T03:00');
  t.equal(wall.status, 201, 'a zone-less wall-clock start is read in Berlin');
  t.equal(wall.body.data.startTime, '2026-03-29T01:00:00.000Z');
  t.equal(wall.body.data.localStartTime, '03:00');
  t.equal((await book('2026-03-29T01:00:00Z')).status, 201, 'the same slot as an instant');
  t.equal((await book('2026-03-29T03:00:00+02:00')).status, 409, 'and with an offset: full (capacity 2)');
  const gap = await book('2026-03-29T02:30');
  t.equal(gap.status, 400, '02:30 does not exist that night');
  t.match(gap.body.message, /not a slot/);

  const morning = await book('2026-03-29T10:00');
  t.equal(morning.body.data.startTime, '2026-03-29T08:00:00.000Z');
  const job = v.app.deps.services.scheduler.pending(v.org).find((j) => j.payload.reservationId === morning.body.sk)!;
  t.equal(new Date(job.dueAt).toISOString(), '2026-03-28T08:00:00.000Z', 'the reminder is 24 real hours before (09:00 CET the day before)');
  t.match(outbox(v.app, v.org, 'alice@example.com').at(-1)!.body, 'on 2026-03-29 at 10:00 (Europe/Berlin)');
});

t.test('DST - Europe/Berlin 2026-10-25: the repeated hour gives each wall-clock slot once', async (t) => {
  const v = await venue(t, { shared });
  const def = await seed(v.app, v.org, 'reservation_definition', {
    name: 'Club',
    timezone: 'Europe/Berlin',
    slotMinutes: 60,
    openingHours: daily([{ open: '00:00', close: '05:00' }]),
  });
  t.same(await slots(v, def.sk, '2026-10-25'), [
    ['00:00', '2026-10-24T22:00:00.000Z'],
    ['01:00', '2026-10-24T23:00:00.000Z'],
    ['02:00', '2026-10-25T00:00:00.000Z'],
    ['03:00', '2026-10-25T02:00:00.000Z'],
    ['04:00', '2026-10-25T03:00:00.000Z'],
  ]);
  const first = await v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, startTime: '2026-10-25T02:00', customer: { name: 'A' } });
  t.equal(first.body.data.startTime, '2026-10-25T00:00:00.000Z', 'a zone-less 02:00 is its first occurrence (CEST)');
  const second = await v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, startTime: '2026-10-25T01:00:00Z', customer: { name: 'A' } });
  t.equal(second.status, 400, 'the second 02:00 (CET) is no slot');
  t.same((await slots(v, def.sk, '2026-10-26')).slice(0, 1), [['00:00', '2026-10-25T23:00:00.000Z']], 'the day after is CET');
});

t.test('DST - America/New_York 2026-03-08: 09:00 moves from 14:00Z to 13:00Z; today is 23 hours', async (t) => {
  const v = await venue(t, { shared, clock: new ManualClock(Date.UTC(2026, 2, 1, 12)), slug: 'nyc', timezone: 'America/New_York' });
  const shop = await seed(v.app, v.org, 'reservation_definition', {
    name: 'Barber',
    timezone: 'America/New_York',
    businessLocationId: 'nyc',
    slotMinutes: 60,
    openingHours: daily([{ open: '09:00', close: '17:00' }]),
  });
  const sat = await slots(v, shop.sk, '2026-03-07');
  const sun = await slots(v, shop.sk, '2026-03-08');
  t.same([sat.length, sat[0]], [8, ['09:00', '2026-03-07T14:00:00.000Z']]);
  t.same([sun.length, sun[0]], [8, ['09:00', '2026-03-08T13:00:00.000Z']]);
  const cut = await v.alice.post('/crm/reservations/create', { reservationDefinitionId: shop.sk, startTime: '2026-03-08T09:00', customer: { name: 'A' } });
  t.equal(cut.body.data.startTime, '2026-03-08T13:00:00.000Z');
  t.match(outbox(v.app, v.org, 'alice@example.com')[0].body, 'on 2026-03-08 at 09:00 (America/New_York)');

  // A definition open around the clock: bookings at both ends of the short day.
  const allDay = await seed(v.app, v.org, 'reservation_definition', { name: 'Hotline', timezone: 'America/New_York', businessLocationId: 'nyc', capacity: 5 });
  const mk = (startTime: string) => v.alice.post('/crm/reservations/create', { reservationDefinitionId: allDay.sk, startTime, customer: { name: 'A' } });
  const early = (await mk('2026-03-08T00:30')).body; // 05:30Z (EST)
  const late = (await mk('2026-03-08T23:30')).body; // 03:30Z on the 9th (EDT)
  const next = (await mk('2026-03-09T00:30')).body; // 04:30Z on the 9th
  t.same([early.data.startTime, late.data.startTime, next.data.startTime], [
    '2026-03-08T05:30:00.000Z',
    '2026-03-09T03:30:00.000Z',
    '2026-03-09T04:30:00.000Z',
  ]);
  const today = await v.staff.get('/checkin/reservations/today?businessLocationId=nyc&date=2026-03-08');
  t.match(today.body, { date: '2026-03-08', timezone: 'America/New_York' });
  t.same(today.body.data.map((r: any) => r.sk), [early.sk, cut.body.sk, late.sk], 'the New York day, not the UTC one');
});
