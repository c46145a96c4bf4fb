import t from 'tap';
import {
  addDays,
  dayRange,
  isValidTimeZone,
  localDate,
  localDateTime,
  offsetMs,
  parseInstant,
  wallToUtc,
  weekday,
} from '../../core/timezone.js';
import { daySlots, parseDefinition, resolveService } from '../../actors/reservations/definition.js';
import { newRecord } from '../../core/store/record.js';

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const H = 3_600_000;

t.test('timezone - wall clock to UTC on ordinary days', async (t) => {
  t.equal(iso(wallToUtc('2026-03-28', '10:00', 'Europe/Berlin')), '2026-03-28T09:00:00.000Z', 'CET is +1');
  t.equal(iso(wallToUtc('2026-03-30', '10:00', 'Europe/Berlin')), '2026-03-30T08:00:00.000Z', 'CEST is +2');
  t.equal(iso(wallToUtc('2026-03-07', '09:00', 'America/New_York')), '2026-03-07T14:00:00.000Z', 'EST is -5');
  t.equal(iso(wallToUtc('2026-03-09', '09:00', 'America/New_York')), '2026-03-09T13:00:00.000Z', 'EDT is -4');
  t.equal(iso(wallToUtc('2026-06-01', '05:30', 'Asia/Kolkata')), '2026-06-01T00:00:00.000Z', 'half-hour offsets');
  t.equal(iso(wallToUtc('2026-06-01', '00:00', 'UTC')), '2026-06-01T00:00:00.000Z');
  t.equal(offsetMs(Date.UTC(2026, 6, 1), 'Europe/Berlin'), 2 * H);
});

t.test('timezone - Europe/Berlin spring forward (2026-03-29): 02:00-03:00 does not exist', async (t) => {
  t.equal(iso(wallToUtc('2026-03-29', '01:59', 'Europe/Berlin')), '2026-03-29T00:59:00.000Z', 'last CET minute');
  t.equal(iso(wallToUtc('2026-03-29', '03:00', 'Europe/Berlin')), '2026-03-29T01:00:00.000Z', 'first CEST minute');
  t.equal(wallToUtc('2026-03-29', '02:30', 'Europe/Berlin', { gap: 'skip' }), undefined, 'a gap time does not exist');
  t.equal(iso(wallToUtc('2026-03-29', '02:30', 'Europe/Berlin')), '2026-03-29T01:30:00.000Z', 'by default it moves forward (03:30 CEST)');
  t.equal(iso(wallToUtc('2026-03-29', '10:00', 'Europe/Berlin')), '2026-03-29T08:00:00.000Z', 'the same day after the change is +2');
  const [from, to] = dayRange('2026-03-29', 'Europe/Berlin');
  t.equal((to - from) / H, 23, 'the day has 23 hours');
  t.equal(iso(from), '2026-03-28T23:00:00.000Z');
});

t.test('timezone - Europe/Berlin fall back (2026-10-25): 02:00-03:00 happens twice', async (t) => {
  t.equal(iso(wallToUtc('2026-10-25', '02:30', 'Europe/Berlin')), '2026-10-25T00:30:00.000Z', 'earlier occurrence (CEST) by default');
  t.equal(iso(wallToUtc('2026-10-25', '02:30', 'Europe/Berlin', { fold: 'later' })), '2026-10-25T01:30:00.000Z', 'later occurrence (CET)');
  t.equal(localDateTime(Date.UTC(2026, 9, 25, 0, 30), 'Europe/Berlin'), '2026-10-25T02:30:00');
  t.equal(localDateTime(Date.UTC(2026, 9, 25, 1, 30), 'Europe/Berlin'), '2026-10-25T02:30:00', 'both instants read 02:30');
  const [from, to] = dayRange('2026-10-25', 'Europe/Berlin');
  t.equal((to - from) / H, 25, 'the day has 25 hours');
  t.equal(iso(wallToUtc('2026-10-25', '12:00', 'Europe/Berlin')), '2026-10-25T11:00:00.000Z', 'back to +1');
});

t.test('timezone - America/New_York spring forward (2026-03-08)', async (t) => {
  t.equal(wallToUtc('2026-03-08', '02:30', 'America/New_York', { gap: 'skip' }), undefined);
  t.equal(iso(wallToUtc('2026-03-08', '01:30', 'America/New_York')), '2026-03-08T06:30:00.000Z', 'EST before the change');
  t.equal(iso(wallToUtc('2026-03-08', '09:00', 'America/New_York')), '2026-03-08T13:00:00.000Z', 'EDT after it');
  const [from, to] = dayRange('2026-03-08', 'America/New_York');
  t.equal((to - from) / H, 23);
  t.equal(localDate(Date.UTC(2026, 2, 8, 4, 59), 'America/New_York'), '2026-03-07', 'UTC morning is still the day before');
});

t.test('timezone - instants from clients and older records', async (t) => {
  t.equal(iso(parseInstant('2026-03-29T10:00:00Z', 'Europe/Berlin')), '2026-03-29T10:00:00.000Z', 'Z is taken as is');
  t.equal(iso(parseInstant('2026-03-29T10:00:00+02:00', 'UTC')), '2026-03-29T08:00:00.000Z', 'an offset is taken as is');
  t.equal(iso(parseInstant('2026-03-29T10:00', 'Europe/Berlin')), '2026-03-29T08:00:00.000Z', 'zone-less: wall clock in the zone');
  t.equal(iso(parseInstant('2026-03-28 10:00:00', 'Europe/Berlin')), '2026-03-28T09:00:00.000Z', 'space separator, CET');
  t.equal(parseInstant('2026-03-29', 'UTC'), undefined, 'a date alone is not an instant');
  t.equal(parseInstant('tomorrow', 'UTC'), undefined);
  t.equal(parseInstant('2026-03-29T25:00', 'UTC'), undefined);
  t.equal(parseInstant(42, 'UTC'), undefined);
});

t.test('timezone - calendar helpers and zone names', async (t) => {
  t.equal(addDays('2026-03-31', 1), '2026-04-01');
  t.equal(addDays('2026-03-01', -1), '2026-02-28');
  t.equal(weekday('2026-03-29'), 0, 'a Sunday');
  t.ok(isValidTimeZone('Europe/Berlin'));
  t.notOk(isValidTimeZone('Mars/Olympus'));
  t.notOk(isValidTimeZone(''));
  t.throws(() => addDays('2026-02-30', 1), RangeError);
});

t.test('slots - a definition open across the Berlin spring-forward gap', async (t) => {
  const def = parseDefinition(
    newRecord('acme', 'reservation_definition', {
      name: 'Night club',
      timezone: 'Europe/Berlin',
      slotMinutes: 60,
      openingHours: { sat: [{ open: '22:00', close: '06:00' }], sun: { open: '00:00', close: '06:00' } },
      capacity: 10,
    }),
  );
  const svc = resolveService(def, undefined);
  t.equal(svc.name, 'Night club', 'the implicit service is named after the definition');
  const sunday = daySlots(def, svc, '2026-03-29').map((s) => [s.localTime, iso(s.start)]);
  t.same(
    sunday,
    [
      ['00:00', '2026-03-28T23:00:00.000Z'],
      ['01:00', '2026-03-29T00:00:00.000Z'],
      ['03:00', '2026-03-29T01:00:00.000Z'],
      ['04:00', '2026-03-29T02:00:00.000Z'],
      ['05:00', '2026-03-29T03:00:00.000Z'],
    ],
    'the 02:00 slot does not exist; the others are one real hour apart',
  );
  const saturday = daySlots(def, svc, '2026-03-28').map((s) => s.localTime);
  t.same(saturday, ['22:00', '23:00', '00:00', '01:00', '03:00', '04:00', '05:00'], 'hours past midnight belong to the opening day');
});

t.test('slots - the Berlin fall-back repeat yields each wall-clock slot once', async (t) => {
  const def = parseDefinition(
    newRecord('acme', 'reservation_definition', {
      name: 'Late',
      timezone: 'Europe/Berlin',
      slotMinutes: 60,
      openingHours: [{ open: '00:00', close: '05:00' }, [], [], [], [], [], []],
    }),
  );
  const slots = daySlots(def, def.services[0], '2026-10-25');
  t.same(
    slots.map((s) => [s.localTime, iso(s.start)]),
    [
      ['00:00', '2026-10-24T22:00:00.000Z'],
      ['01:00', '2026-10-24T23:00:00.000Z'],
      ['02:00', '2026-10-25T00:00:00.000Z'],
      ['03:00', '2026-10-25T02:00:00.000Z'],
      ['04:00', '2026-10-25T03:00:00.000Z'],
    ],
  );
  t.equal(daySlots(def, def.services[0], '2026-10-26').length, 0, 'a Monday: closed');
});
