// A check-in list's exitAllAt (issue 31) is a durable timer of the tenant: when its owner goes away
// before the time, the node that takes the tenant over arms it (core/cluster/node.ts: takeOver →
// scheduler.armTenant) and empties the list at its local time. Two nodes in this process on a real
// nats-server, one injected clock.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import type { RunningApp } from '../../edge/app.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { startNatsServer } from '../helpers/nats-server.js';

// 2026-07-01 18:00 UTC is 20:00 in Berlin: the list's 03:00 is 01:00 UTC on 2 July.
const T0 = Date.UTC(2026, 6, 1, 18);
const DUE = Date.UTC(2026, 6, 2, 1);
const ORG = 'acme';

async function eventually<T>(what: string, check: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const until = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > until) throw new Error(`not within ${ms} ms: ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

t.test('exitAllAt - the node that takes the tenant over empties the list at its time', async (t) => {
  const nats = await startNatsServer();
  t.teardown(() => nats.stop());
  const clock = new ManualClock(T0);
  const cluster = { prefix: `x${Math.random().toString(36).slice(2, 8)}`, leaseTtlMs: 3000 };
  const start = (nodeId: string) => startTestApp(t, { clock, modules: ['events', 'records'], config: { natsUrl: nats.url, nodeId, cluster } });
  const nodes: RunningApp[] = [await start('exit-a'), await start('exit-b')];
  await createOrg(nodes[0], ORG);
  const staffOf = (app: RunningApp) => client(app.url, { orgid: ORG, authorization: `Bearer ${tokenFor(app, { org: ORG, sub: 'staff-1' })}` });
  await eventually('both nodes know the organisation', async () => (nodes.every((n) => n.deps.store.getOrg(ORG)) ? true : undefined));

  const staff = staffOf(nodes[0]);
  const ev = await eventually('the event is created', async () => {
    const r = await staff.post('/events', { name: 'Late night', timezone: 'Europe/Berlin', zones: [{ id: 'lounge', name: 'Lounge' }], ticketTypes: [{ title: 'GA' }] });
    return r.status === 201 ? r.body : undefined;
  });
  const list = (await staff.post(`/events/${ev.sk}/checkin-lists`, { name: 'Lounge', zones: ['lounge'], exitAllAt: '03:00' })).body;
  const comp = await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: 2, holderEmail: 'x@example.com' }] });
  for (const tk of comp.body.tickets) t.equal((await staff.post('/events/checkin', { code: tk.data.number, listId: list.sk })).body.success, true);

  const owner = nodes.findIndex((n) => n.cluster!.ownedTenants().includes(ORG));
  t.not(owner, -1, 'one node owns the tenant');
  const survivor = nodes[1 - owner];
  t.same(survivor.cluster!.ownedTenants(), [], 'the other does not (yet)');
  // The owner leaves before 03:00; the night passes.
  await nodes[owner].close();
  clock.set(DUE + 60_000);

  // A request to the survivor makes it the owner; the timer the old owner stored fires there.
  const later = staffOf(survivor);
  const stats = await eventually('the lounge list is emptied on the new owner', async () => {
    const r = await later.get(`/events/${ev.sk}/checkin-stats?listId=${list.sk}`);
    return r.status === 200 && r.body.byList[list.sk]?.inside === 0 ? r.body : undefined;
  });
  t.ok(survivor.cluster!.ownedTenants().includes(ORG), 'the survivor owns the tenant now');
  t.match(stats.byList[list.sk], { inside: 0, checkouts: { successful: 2 } }, 'both checked out');
  const outs = (await later.get(`/events/${ev.sk}/scans?listId=${list.sk}`)).body.data.filter((s: any) => s.kind === 'out');
  t.same(
    outs.map((s: any) => s.by),
    ['system', 'system'],
    'logged as check-outs by system',
  );
});
