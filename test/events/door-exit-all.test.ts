// A check-in list's exitAllAt (issue 31): every day at that local time, whoever is inside on the
// list is checked out, by `system`. A durable timer: it fires after a restart past its time.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { startTestApp, tempDir, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeEvent } from './setup.js';

// 2026-07-01 18:00 UTC is 20:00 in Berlin (UTC+2): the list's 03:00 is 01:00 UTC on 2 July.
const T0 = Date.UTC(2026, 6, 1, 18);
const DUE = Date.UTC(2026, 6, 2, 1);

async function eventually<T>(check: () => Promise<T | undefined>, ms = 5000): Promise<T | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined || Date.now() > until) return v;
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('exitAllAt - at its local time the list is emptied, by system, and the timer is armed for the next day, across a restart', async (t) => {
  const clock = new ManualClock(T0);
  const dataDir = tempDir(t);
  const w = await eventsWorld(t, { clock, dataDir });
  const ev = await makeEvent(w.staff, {
    name: 'Late night',
    timezone: 'Europe/Berlin',
    zones: [{ id: 'hall', name: 'Hall' }, { id: 'lounge', name: 'Lounge' }],
    ticketTypes: [{ title: 'GA' }],
  });
  const lounge = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Lounge', zones: ['lounge'], exitAllAt: '03:00' })).body;
  const hall = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Hall', zones: ['hall'] })).body;
  const comp = await w.staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.types.GA, quantity: 3, holderEmail: 'x@example.com' }] });
  const [a, b, c] = comp.body.tickets.map((x: any) => x.data.number);
  for (const code of [a, b, c]) t.equal((await w.staff.post('/events/checkin', { code, listId: lounge.sk })).body.success, true);
  t.equal((await w.staff.post('/events/checkout', { code: c, listId: lounge.sk })).body.success, true);
  t.equal((await w.staff.post('/events/checkin', { code: a, listId: hall.sk })).body.success, true);

  const scheduler = w.app.deps.services.scheduler;
  t.same(scheduler.pending(w.org).map((j) => [j.kind, j.dueAt]), [['checkin-list.exit-all', DUE]], "one timer, at 03:00 Berlin");
  clock.set(DUE - 60_000);
  t.equal(await scheduler.runDue(), 0, 'a minute early');
  await w.app.close();

  // Down over the night: the timer fires when the node is back.
  clock.set(DUE + 3_600_000);
  const app = await startTestApp(t, { clock, dataDir });
  // A token signed on the moved clock.
  const signed = () => client(app.url, { orgid: w.org, authorization: `Bearer ${tokenFor(app, { org: w.org, sub: 'staff-1' })}` });
  const staff = signed();
  const stats = await eventually(async () => {
    const s = (await staff.get(`/events/${ev.id}/checkin-stats`)).body;
    return s.byList[lounge.sk].inside === 0 ? s : undefined;
  });
  t.ok(stats, 'the lounge list emptied itself');
  t.match(stats?.byList[lounge.sk], { inside: 0, checkouts: { successful: 3 } });
  t.match(stats?.byList[hall.sk], { inside: 1 }, 'another list keeps who is inside on it');
  t.equal(stats?.inside, 1);
  const outs = (await staff.get(`/events/${ev.id}/scans?listId=${lounge.sk}&by=x`)).status;
  t.equal(outs, 400, 'an unknown filter is refused');
  const log = (await staff.get(`/events/${ev.id}/scans?listId=${lounge.sk}`)).body.data;
  t.same(
    log.filter((x: any) => x.by === 'system').map((x: any) => [x.kind, x.success, x.zone]),
    [['out', true, 'lounge'], ['out', true, 'lounge']],
    'logged as check-outs by system',
  );
  t.equal((await staff.post('/events/checkin', { code: b, listId: lounge.sk })).body.success, true, 'and may enter again');
  const s2 = app.deps.services.scheduler;
  t.same(s2.pending(w.org).map((j) => j.dueAt), [DUE + 86_400_000], 'armed for 03:00 the next day');

  await staff.put(`/events/checkin-lists/${lounge.sk}`, { exitAllAt: null });
  t.same(s2.pending(w.org), [], 'unset: no timer');
  clock.set(DUE + 86_400_000);
  t.equal(await s2.runDue(), 0);
  t.match((await signed().get(`/events/${ev.id}/checkin-stats`)).body.byList[lounge.sk], { inside: 1 }, 'nobody is checked out any more');
});
