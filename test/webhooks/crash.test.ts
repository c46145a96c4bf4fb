// kill -9 between the commit of a scan and the delivery of its event: after a restart every
// committed check-in is delivered, under one webhook-id, and nothing else is.
import t from 'tap';
import { TokenService } from '../../core/auth/tokens.js';
import { startTestApp, tempDir, TEST_JWT_SECRET } from '../helpers/app.js';
import { runFixture } from '../helpers/child.js';
import { client } from '../helpers/http.js';
import { receiver, sleep, testWebhookConfig, verify } from './receiver.js';

const fixture = new URL('./crash-server.ts', import.meta.url).pathname;

t.test('webhooks - kill -9 between commit and delivery: after restart each committed check-in is delivered, one event per write', async (t) => {
  const rx = await receiver(t, () => 'hang');
  const dataDir = tempDir(t);
  // Attempts hang until the kill: every event is committed and none is recorded delivered.
  const child = runFixture(fixture, [dataDir, JSON.stringify(testWebhookConfig({ timeoutMs: 60_000 }))]);
  t.teardown(() => child.kill9());
  await child.waitFor((lines) => lines.some((l) => l.startsWith('ready ')));
  const url = child.lines.find((l) => l.startsWith('ready '))!.slice(6);
  const tokens = new TokenService(TEST_JWT_SECRET, { accessTtlSeconds: 600, refreshTtlSeconds: 600, cacheSize: 0 });
  const headers = { orgid: 'acme', authorization: `Bearer ${tokens.signAccess({ sub: 'admin-1', org: 'acme', roles: ['Admin', 'User'], kind: 'staff' })}` };
  const staff = client(url, headers);
  const ep = (await staff.post('/webhooks/endpoints', { url: rx.url, events: ['ticket.checked_in'] })).body;
  t.match(ep.secret, /^whsec_/);
  const ev = (await staff.post('/events', { name: 'Crash Fest', zones: [{ id: 'main', name: 'Main' }], ticketTypes: [{ title: 'GA' }] })).body;
  const comp = await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: 200, holderEmail: 'crowd@example.com' }] });
  const numbers: string[] = comp.body.tickets.map((x: any) => x.data.number);

  const acked: string[] = [];
  let next = 0;
  let dead = false;
  const gate = async () => {
    while (!dead && next < numbers.length) {
      try {
        const r = await staff.post('/events/checkin', { code: numbers[next++], zone: 'main', eventId: ev.sk });
        if (r.status === 200 && r.body.success) acked.push(r.body.ticket.sk);
      } catch {
        return;
      }
    }
  };
  const gates = Array.from({ length: 8 }, gate);
  while (acked.length < 60) await sleep(2);
  await child.kill9();
  dead = true;
  await Promise.all(gates);
  t.ok(rx.got.length > 0, `${rx.got.length} attempts were in flight at the kill`);

  rx.answer = () => 200;
  const app = await startTestApp(t, { modules: ['events', 'webhooks'], dataDir, config: testWebhookConfig() });
  const committed = app.deps.store.readLog<any>('acme', `scan:${ev.sk}`).filter((e) => e.entry.ok).map((e) => e.entry.ticketId as string);
  t.ok(committed.length >= acked.length, `${committed.length} check-ins committed, ${acked.length} acknowledged`);
  const byTicket = new Map<string, Set<string>>();
  const deadline = Date.now() + 20_000;
  for (;;) {
    byTicket.clear();
    for (const g of rx.got) {
      const p = verify(ep.secret, g) as any;
      if (!byTicket.has(p.data.ticket.sk)) byTicket.set(p.data.ticket.sk, new Set());
      byTicket.get(p.data.ticket.sk)!.add(p.id);
    }
    if (byTicket.size >= committed.length || Date.now() > deadline) break;
    await sleep(50);
  }
  await sleep(300);
  t.same([...byTicket.keys()].sort(), [...new Set(committed)].sort(), 'an event for every committed check-in, and for nothing else');
  t.ok(acked.every((id) => byTicket.has(id)), 'every acknowledged check-in among them');
  t.same([...byTicket.values()].filter((ids) => ids.size !== 1), [], 'one webhook-id per check-in, resends included');
});
