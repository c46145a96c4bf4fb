import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { crashNode } from './crash-node.js';

t.test('checkin - every scan acknowledged before a SIGKILL is checked in and counted after restart', async (t) => {
  const { dataDir, child, headers, staff } = await crashNode(t);
  const ev = (await staff.post('/events', { name: 'Crash Fest', zones: [{ id: 'main', name: 'Main' }], ticketTypes: [{ title: 'GA' }] })).body;
  const comp = await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: 400, holderEmail: 'crowd@example.com' }] });
  t.equal(comp.status, 201);
  const numbers: string[] = comp.body.tickets.map((x: any) => x.data.number);

  // 24 gates scan distinct tickets as fast as they can; the kill lands while scans are in flight.
  const acked: string[] = [];
  let next = 0;
  let dead = false;
  const gate = async () => {
    while (!dead && next < numbers.length) {
      const code = numbers[next++];
      try {
        const r = await staff.post('/events/checkin', { code, zone: 'main', eventId: ev.sk });
        if (r.status === 200 && r.body.success) acked.push(r.body.ticket.sk);
      } catch {
        return; // the connection died with the server
      }
    }
  };
  const gates = Array.from({ length: 24 }, gate);
  while (acked.length < 150) await new Promise((r) => setTimeout(r, 2));
  await child.kill9();
  dead = true;
  await Promise.all(gates);
  t.equal(child.proc.signalCode, 'SIGKILL', 'killed, not stopped');
  t.ok(acked.length >= 150, `${acked.length} scans acknowledged before the kill`);

  const app = await startTestApp(t, { modules: ['events'], dataDir });
  const after = client(app.url, headers);
  const missing = acked.filter((id) => app.deps.store.getRecord('acme', 'ticket', id)?.data.status !== 'checked_in');
  t.same(missing, [], 'every acknowledged check-in is checked_in');
  const stats = (await after.get(`/events/${ev.sk}/checkin-stats`)).body;
  const checkedIn = app.deps.store.scan('acme', 'ticket', { 'data.status': 'checked_in' }).length;
  t.ok(stats.successful >= acked.length, `counted: ${stats.successful} successful ≥ ${acked.length} acknowledged`);
  t.equal(stats.successful, checkedIn, 'the scan log and the ticket records agree');
  t.equal(stats.uniqueAttendees, checkedIn);
  t.equal((await after.get(`/events/${ev.sk}/occupancy`)).body.main.currentOccupancy, checkedIn);
  const again = await after.post('/events/checkin', { code: comp.body.tickets.find((x: any) => x.sk === acked[0]).data.number, eventId: ev.sk });
  t.equal(again.body.reason, 'already_checked_in', 'and the door still knows they are inside');
});
