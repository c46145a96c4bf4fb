// The door's write-behind (issue 19): a scan commits its log entry alone and the ticket record
// learns its door fields later. With the background materializer paused, every read path still
// answers a ticket as checked in right after its scan was acknowledged (the read barrier), and
// after kill -9 with the records behind, a restart has every acknowledged entry, once.
import t from 'tap';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { provenCustomerToken, startTestApp } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { crashNode } from './crash-node.js';
import { eventsWorld, makeEvent, makeTicket } from './setup.js';

const PAUSED = { door: { materializeMs: 0, materializeBatch: 500 } };

t.test('every read path shows a scanned ticket checked in while its record is behind', async (t) => {
  const w = await eventsWorld(t, { config: PAUSED });
  const { staff, app, org } = w;
  const ev = await makeEvent(staff);
  const me = client(app.url, { orgid: org, authorization: `Bearer ${await provenCustomerToken(app, org, 'door@example.com', 'cust-d')}` });
  const stored = (id: string) => app.deps.store.getRecord(org, 'ticket', id)!.data.status;
  const ids = (r: { body: any }): string[] => (r.body.data ?? []).map((x: any) => x.sk);

  // Each path reads a ticket scanned just before it, whose record the materializer has not written.
  const paths: Array<[string, (tk: any) => Promise<unknown>]> = [
    ['GET /events/tickets/:id', async (tk) => (await staff.get(`/events/tickets/${tk.sk}`)).body.data.status],
    ['GET /events/:id/tickets?status=checked_in', async (tk) => ids(await staff.get(`/events/${ev.id}/tickets?status=checked_in&pageSize=100`)).includes(tk.sk)],
    ['GET /repository/get/ticket/:id', async (tk) => (await staff.get(`/repository/get/ticket/${tk.sk}`)).body.data.status],
    ['POST /repository/find/ticket on data.status', async (tk) => ids(await staff.post('/repository/find/ticket', { query: { 'data.status': 'checked_in' }, options: { pageSize: 100 } })).includes(tk.sk)],
    ['POST /dynamic-query/find on data.status', async (tk) => ids(await staff.post('/dynamic-query/find', { datatype: 'ticket', filter: { 'data.status': 'checked_in', 'data.inside': true }, limit: 100 })).includes(tk.sk)],
    ["GET /client/events/tickets/mine (the attendee's tickets)", async (tk) => (await me.get('/client/events/tickets/mine')).body.data.find((x: any) => x.sk === tk.sk)?.data.status],
    ['GET /events/tickets/lookup/:eventId', async (tk) => (await staff.get(`/events/tickets/lookup/${ev.id}?q=${tk.data.number}`)).body.data[0]?.data.status],
  ];
  for (const [name, read] of paths) {
    const tk = await makeTicket(staff, ev, { holderEmail: 'door@example.com' });
    const scan = await staff.post('/events/checkin', { code: tk.data.number, zone: 'main' });
    t.same([scan.status, scan.body.success, scan.body.ticket.data.status], [200, true, 'checked_in'], `${name}: the scan is acknowledged`);
    t.equal(stored(tk.sk), 'valid', `${name}: the record is still behind`);
    const seen = await read(tk);
    t.ok(seen === 'checked_in' || seen === true, `${name}: checked in (${String(seen)})`);
    t.equal(stored(tk.sk), 'checked_in', `${name}: the read wrote it first`);
  }

  // A query over another datatype never waits for the door: the tickets behind stay behind.
  const other = await makeTicket(staff, ev);
  t.equal((await staff.post('/events/checkin', { code: other.data.number, zone: 'main' })).body.success, true);
  const found = await staff.post('/dynamic-query/find', { datatype: 'widget', filter: {}, limit: 10 });
  const summed = await staff.post('/dynamic-query/aggregate', { datatype: 'widget', pipeline: [{ $count: 'n' }] });
  t.same([found.status, summed.status], [200, 200], 'queries over another datatype answer');
  // Nor do the events routes that read no ticket record.
  const listed = await staff.get('/events');
  const one = await staff.get(`/events/${ev.id}`);
  const types = await staff.get(`/events/${ev.id}/ticket-types`);
  t.same([listed.status, one.status, types.status], [200, 200, 200], 'the events list, the event and its ticket types answer');
  t.equal(stored(other.sk), 'valid', 'and none of them wrote the tickets behind');
  const counted = await staff.post('/dynamic-query/aggregate', { datatype: 'ticket', pipeline: [{ $match: { 'data.status': 'checked_in', sk: other.sk } }, { $count: 'n' }] });
  t.same(counted.body.data, [{ n: 1 }], 'an aggregate over tickets waits for the door');
  t.equal(stored(other.sk), 'checked_in');

  // A ticket change at the scanner carries the fields still behind (a refund after entry keeps the entry's times).
  const tk = await makeTicket(staff, ev);
  await staff.post('/events/checkin', { code: tk.data.number, zone: 'vip' });
  const refunded = await staff.post(`/events/tickets/${tk.sk}/refund`, {});
  t.match(refunded.body.data, { status: 'refunded', inside: true, zone: 'vip', checkedInAt: String });
  t.match((await staff.get(`/repository/get/ticket/${tk.sk}`)).body.data, { status: 'refunded', checkedInAt: refunded.body.data.checkedInAt });

  // A read that arrives while a materializing step's commit is still in flight waits for it: the
  // scanner has already emptied its memory of the ticket, but the record does not have it yet.
  const late = await makeTicket(staff, ev);
  t.equal((await staff.post('/events/checkin', { code: late.data.number, zone: 'main' })).body.success, true);
  const store = app.deps.store;
  const commit = store.commit.bind(store);
  const held: Array<() => void> = [];
  store.commit = (b) => new Promise<void>((r) => held.push(r)).then(() => commit(b));
  t.teardown(() => void (store.commit = commit));
  const first = staff.get(`/events/tickets/${late.sk}`);
  while (held.length === 0) await new Promise((r) => setTimeout(r, 5));
  const second = staff.get(`/events/${ev.id}/tickets?status=checked_in&pageSize=100`);
  await new Promise((r) => setTimeout(r, 100));
  t.equal(stored(late.sk), 'valid', 'the step has not committed');
  store.commit = commit;
  for (const r of held.splice(0)) r();
  t.equal((await first).body.data.status, 'checked_in');
  t.ok(ids(await second).includes(late.sk), 'the read during the commit waited for it');
});

t.test('kill -9 with the records behind: the restart writes every acknowledged entry, and none enters twice', async (t) => {
  const { dataDir, child, headers, staff } = await crashNode(t, { doorPaused: true });
  const ev = (await staff.post('/events', { name: 'Behind Fest', zones: [{ id: 'main', name: 'Main' }], ticketTypes: [{ title: 'GA' }] })).body;
  const comp = await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: 60, holderEmail: 'crowd@example.com' }] });
  const tickets: Array<{ sk: string; data: { number: string } }> = comp.body.tickets;
  const acked: string[] = [];
  await Promise.all(
    Array.from({ length: 6 }, async (_, g) => {
      for (let i = g; i < 50; i += 6) {
        const r = await staff.post('/events/checkin', { code: tickets[i].data.number, zone: 'main', eventId: ev.sk });
        if (r.body.success) acked.push(r.body.ticket.sk);
      }
    }),
  );
  await child.kill9();
  t.equal(acked.length, 50, 'every scan acknowledged before the kill');

  // What the kill left: the log has the entries, the records do not.
  const raw = new LmdbStore({ path: dataDir });
  const behind = acked.filter((id) => raw.getRecord('acme', 'ticket', id)?.data.status === 'valid').length;
  await raw.close();
  t.equal(behind, 50, 'no record was materialized before the kill');

  const app = await startTestApp(t, { modules: ['events', 'records'], dataDir, config: PAUSED });
  const after = client(app.url, headers);
  t.same(acked.filter((id) => app.deps.store.getRecord('acme', 'ticket', id)?.data.status !== 'checked_in'), [], 'the start wrote every acknowledged entry');
  const listed = await after.get(`/events/${ev.sk}/tickets?status=checked_in&pageSize=100`);
  t.equal(listed.body.total, 50);
  const s = (await after.get(`/events/${ev.sk}/checkin-stats`)).body;
  t.same([s.successful, s.uniqueAttendees, s.inside], [50, 50, 50]);
  const again = await after.post('/events/checkin', { code: tickets[0].data.number, eventId: ev.sk });
  t.equal(again.body.reason, 'already_checked_in', 'no ticket enters twice');
  const fresh = await after.post('/events/checkin', { code: tickets[55].data.number, eventId: ev.sk });
  t.equal(fresh.body.success, true, 'the door goes on');
});
