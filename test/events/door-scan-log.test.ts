// The scan log, readable (issue 31): GET /events/:id/scans pages the log in its key order with a
// cursor, filters what it reads, and bounds what one request reads; checkin-stats counts entries
// per checkpoint and device.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { eventsWorld, makeEvent } from './setup.js';

const T0 = Date.UTC(2026, 6, 1, 18);
const clock = new ManualClock(T0);
const w = await eventsWorld(t, { clock });

t.test('scan log - pages through 10,000 scans in log order, with filters, a cursor and since', async (t) => {
  const ev = await makeEvent(w.staff, { name: 'Log night', zones: [{ id: 'hall', name: 'Hall' }], ticketTypes: [{ title: 'GA' }] });
  const list = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Hall', zones: ['hall'] })).body;
  const comp = await w.staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.types.GA, quantity: 100, holderEmail: 'x@example.com' }] });
  const codes: string[] = comp.body.tickets.map((x: any) => x.data.number);

  // 20 uploads of 500: the first lets the 100 tickets in on the list; the rest are codes matching
  // no ticket, each at one of 4 checkpoints and 5 devices. Each upload 30 s after the last (tokens live 15 minutes).
  for (let b = 0; b < 20; b++) {
    const scans = Array.from({ length: 500 }, (_, k) => {
      const i = b * 500 + k;
      if (b === 0 && k < 100) return { code: codes[k], listId: list.sk, checkpoint: 'vip-gate', deviceId: 'dev-v' };
      return { code: `nope-${i}`, eventId: ev.id, zone: 'hall', checkpoint: `gate-${i % 4}`, deviceId: `dev-${i % 5}` };
    });
    const r = await w.staff.post('/events/checkin/batch', { scans });
    t.equal(r.status, 200);
    clock.advance(30_000);
  }

  const pageAll = async (q: string) => {
    const out: any[] = [];
    let after = '';
    let requests = 0;
    for (;;) {
      const r = await w.staff.get(`/events/${ev.id}/scans?${q}${after}`);
      if (r.status !== 200) throw new Error(r.text);
      requests++;
      out.push(...r.body.data);
      if (r.body.next === null) return { out, requests };
      after = `&after=${r.body.next}`;
    }
  };

  const all = await pageAll('limit=500');
  t.equal(all.out.length, 10_000, 'every scan');
  t.equal(all.requests, 20, '20 pages of 500');
  const seqs = all.out.map((x) => Number(x.id.split('-')[1]));
  t.ok(seqs.every((s, i) => s === i + 1), 'in log order, each once');
  t.match(all.out[0], { kind: 'in', success: true, listId: list.sk, checkpoint: 'vip-gate', deviceId: 'dev-v', by: 'staff-1', offline: false, annulled: false });
  t.match(all.out[9_999], { kind: 'in', success: false, reason: 'invalid_code', ticketId: null, zone: 'hall', listId: null });

  const ok = await pageAll('success=true&limit=30');
  t.equal(ok.out.length, 100, 'the successful ones');
  t.ok(ok.out.every((x) => x.success && x.listId === list.sk));
  // Past the hundredth, the rest of the log holds none: the reads are bounded, each request
  // examining at most 5,000 scans, and the cursor carries on.
  t.ok(ok.requests >= 5, `${ok.requests} requests`);

  const dev3 = await pageAll('deviceId=dev-3&checkpoint=gate-1&limit=500');
  const expected = Array.from({ length: 10_000 }, (_, i) => i).filter((i) => i >= 100 && i % 5 === 3 && i % 4 === 1).length;
  t.equal(dev3.out.length, expected, 'device and checkpoint together');
  t.ok(dev3.out.every((x) => x.deviceId === 'dev-3' && x.checkpoint === 'gate-1'));

  const listed = await pageAll(`listId=${list.sk}&reason=invalid_code`);
  t.equal(listed.out.length, 0, 'filters combine');

  const since = new Date(T0 + 10 * 30_000).toISOString();
  const late = await pageAll(`since=${since}&limit=500&zone=hall`);
  t.equal(late.out.length, 5_000, 'received since the eleventh upload');
  t.equal(late.out[0].id, `${ev.id}-5001`);
  t.equal(late.requests, 10, 'since starts at its place in the log, not at its start');

  const deep = await w.staff.get(`/events/${ev.id}/scans?after=9990`);
  t.same([deep.body.data.length, deep.body.next], [10, null], 'a page deep in the log');

  const stats = (await w.staff.get(`/events/${ev.id}/checkin-stats`)).body;
  t.same(stats.byCheckpoint, { 'vip-gate': 100 }, 'successful entries per checkpoint');
  t.same(stats.byDevice, { 'dev-v': 100 }, 'and per device');
  t.same((await w.staff.get(`/events/${ev.id}/checkin-stats?listId=${list.sk}`)).body.byDevice, { 'dev-v': 100 }, 'a list has its own');

  t.equal((await w.staff.get(`/events/${ev.id}/scans?limit=501`)).status, 400, 'at most 500 a page');
  t.equal((await w.staff.get(`/events/${ev.id}/scans?after=x`)).status, 400, 'a cursor is what the route answered');
  t.equal((await w.customer.get(`/events/${ev.id}/scans`)).status, 403, 'staff only');
  t.equal((await w.other.get(`/events/${ev.id}/scans`)).status, 404, "another organisation's event is not found");
});

t.test('checkin stats - byCheckpoint and byDevice count successful entries, net of annulments', async (t) => {
  const ev = await makeEvent(w.staff, { name: 'Gates', zones: [{ id: 'hall', name: 'Hall' }], ticketTypes: [{ title: 'GA' }] });
  const comp = await w.staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.types.GA, quantity: 3, holderEmail: 'x@example.com' }] });
  const [a, b, c] = comp.body.tickets.map((x: any) => x.data.number);
  const at = { eventId: ev.id, zone: 'hall' };
  await w.staff.post('/events/checkin', { ...at, code: a, checkpoint: 'north', deviceId: 'd1' });
  await w.staff.post('/events/checkin', { ...at, code: b, checkpoint: 'north', deviceId: 'd2' });
  await w.staff.post('/events/checkin', { ...at, code: c, checkpoint: 'south' });
  await w.staff.post('/events/checkin', { ...at, code: a, checkpoint: 'south', deviceId: 'd1' });
  await w.staff.post('/events/checkout', { ...at, code: a, checkpoint: 'south', deviceId: 'd1' });
  let s = (await w.staff.get(`/events/${ev.id}/checkin-stats`)).body;
  t.same([s.byCheckpoint, s.byDevice], [{ north: 2, south: 1 }, { d1: 1, d2: 1 }], 'refusals and check-outs are not entries; no device, no key');
  const first = (await w.staff.get(`/events/${ev.id}/scans?limit=1`)).body.data[0];
  await w.staff.post('/events/checkin/annul', { scanId: first.id });
  s = (await w.staff.get(`/events/${ev.id}/checkin-stats`)).body;
  t.same([s.byCheckpoint, s.byDevice], [{ north: 1, south: 1 }, { d2: 1 }], 'an annulled entry leaves both');
});
