// The live door view's stream over real HTTP: a snapshot at connect and within a second of a scan,
// a rush coalesced with its last scan shown, the per-minute tally rebuilt from the scan log after a
// restart, and who may open it.
import t from 'tap';
import { startTestApp, tempDir, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { openSse, type OpenSse } from '../helpers/sse.js';
import { eventsWorld, makeTicket, makeVenue, type Client } from './setup.js';

function scan(c: Client, ev: { id: string }, code: string, extra: Record<string, unknown> = {}) {
  return c.post('/events/checkin', { code, eventId: ev.id, zone: 'hall', checkpoint: 'Gate A', ...extra });
}

t.test('door view - the stream answers the door at once and again within a second of a scan', async (t) => {
  const w = await eventsWorld(t);
  const ev = await makeVenue(w.staff);
  const ticket = await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA });
  const auth = { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'staff-1' })}` };

  const sse = await openSse(w.app.url, `/events/${ev.id}/door/stream`, auth);
  t.teardown(() => sse.close());
  t.equal(sse.status, 200);
  t.match(sse.type, /^text\/event-stream/);
  const first = await sse.next((e) => e.event === 'door');
  t.match(first.data, {
    eventId: ev.id,
    eventName: 'Venue night',
    inside: 0,
    conflicts: 0,
    denials: {},
    devices: [],
    rate: { minutes: 60, checkpoints: [] },
  });
  t.same(
    first.data.zones.map((z: any) => [z.zoneId, z.inside, z.capacity]),
    [
      ['hall', 0, 500],
      ['lounge', 0, 50],
    ],
    'each zone against its capacity',
  );

  const sent = performance.now();
  t.equal((await scan(w.staff, ev, ticket.data.number, { deviceId: 'handheld-7' })).body.success, true);
  const moved = await sse.next((e) => e.event === 'door' && e.data.inside === 1, 1500);
  t.ok(moved.at - sent < 1000, `the scan shows ${Math.round(moved.at - sent)} ms after it was sent`);
  t.match(moved.data.zones.find((z: any) => z.zoneId === 'hall'), { inside: 1, capacity: 500, percentFull: 0.2 });
  t.equal(moved.data.admitted, 1);
  const gate = moved.data.rate.checkpoints.find((c: any) => c.checkpoint === 'Gate A');
  t.equal(gate.perMinute.length, 60, '60 one-minute buckets');
  t.equal(gate.perMinute[59], 1, 'the scan is in the current minute');
  t.match(moved.data.devices, [{ id: 'handheld-7', enrolled: false, entries: 1 }], 'a device id a scan named');

  // A rush: every scan is one more, the door is read a few times a second, and the last scan shows.
  const from = sse.events.length;
  const rushStart = performance.now();
  for (let i = 0; i < 20; i++) await scan(w.staff, ev, ticket.data.number);
  const answered = performance.now();
  const last = await sse.next((e) => e.event === 'door' && e.data.scans === 21, 1500, from);
  t.ok(last.at - answered < 1000, `the last scan of the rush shows ${Math.round(last.at - answered)} ms after its answer`);
  t.same(last.data.denials, { already_checked_in: 20 }, 'denials by reason');
  const took = (last.at - rushStart) / 1000;
  const frames = sse.events.slice(from).filter((e) => e.event === 'door').length;
  t.ok(frames <= Math.ceil(took * 5) + 1, `${frames} snapshots for 20 scans in ${took.toFixed(2)} s`);

  // A zone's new capacity shows too.
  const zonesFrom = sse.events.length;
  const put = await w.staff.put(`/events/${ev.id}`, { zones: [{ id: 'hall', name: 'Main hall', capacity: 800 }, { id: 'lounge', name: 'VIP lounge', capacity: 50 }] });
  t.equal(put.status, 200);
  const bigger = await sse.next((e) => e.event === 'door' && e.data.zones[0].capacity === 800, 1500, zonesFrom);
  t.match(bigger.data.zones[0], { zoneId: 'hall', inside: 1, capacity: 800 }, 'an event change is shown');

  // Once the rush's last read is out (a notice during a read asks for one more), nothing is sent.
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  for (let n = -1; n !== sse.events.length; ) {
    n = sse.events.length;
    await sleep(600);
  }
  const quiet = sse.events.length;
  await sleep(1000);
  t.equal(sse.events.length, quiet, 'no snapshot without a scan');
});

t.test('door view - the per-minute tally comes back from the scan log after a restart', async (t) => {
  const dataDir = tempDir(t);
  const w = await eventsWorld(t, { dataDir });
  const ev = await makeVenue(w.staff);
  const tickets: any[] = [];
  for (let i = 0; i < 4; i++) tickets.push(await makeTicket(w.staff, ev, { ticketTypeId: ev.types.GA }));
  const now = Date.now();
  const ago = (min: number) => new Date(now - min * 60_000).toISOString();
  // Offline scans: counted in the minute they were made; one over an hour old is out of the chart.
  const scans: Array<[number, string, number]> = [
    [0, 'Gate A', 5],
    [1, 'Gate A', 5],
    [2, 'Gate B', 30],
    [3, 'Gate B', 75],
  ];
  for (const [i, checkpoint, min] of scans) {
    const r = await scan(w.staff, ev, tickets[i].data.number, { checkpoint, scannedAt: ago(min), nonce: `n-${i}` });
    t.equal(r.body.success, true);
  }
  // A denied scan counts as a scan too.
  t.equal((await scan(w.staff, ev, tickets[0].data.number, { checkpoint: 'Gate B', scannedAt: ago(30), nonce: 'n-x' })).body.reason, 'already_checked_in');
  const auth = { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'staff-1' })}` };
  const read = async (base: string) => {
    const sse = await openSse(base, `/events/${ev.id}/door/stream`, auth);
    const e = await sse.next((x) => x.event === 'door');
    sse.close();
    return e.data;
  };
  const before = await read(w.app.url);
  await w.app.close();

  const app = await startTestApp(t, { dataDir, modules: ['events', 'records'] });
  const after = await read(app.url);
  t.same(after.rate.checkpoints, before.rate.checkpoints, 'the same chart after the restart');

  const first = Math.floor(Date.parse(after.rate.from) / 60_000);
  const slot = (min: number) => Math.floor((now - min * 60_000) / 60_000) - first;
  const byName = Object.fromEntries(after.rate.checkpoints.map((c: any) => [c.checkpoint, c]));
  t.same(Object.keys(byName).sort(), ['Gate A', 'Gate B']);
  t.equal(byName['Gate A'].total, 2);
  t.equal(byName['Gate A'].perMinute[slot(5)], 2, 'two scans at Gate A five minutes ago');
  t.equal(byName['Gate B'].total, 2, 'the scan 75 minutes ago is out of the hour');
  t.equal(byName['Gate B'].perMinute[slot(30)], 2, 'an admitted and a denied scan at Gate B half an hour ago');
  t.equal(after.inside, 4);
  t.same(after.denials, { already_checked_in: 1 });
  // And it keeps counting after the restart.
  const staff = client(app.url, auth);
  const sse = await openSse(app.url, `/events/${ev.id}/door/stream`, auth);
  t.teardown(() => sse.close());
  await sse.next((e) => e.event === 'door');
  await staff.post('/events/checkout', { code: tickets[0].data.number, eventId: ev.id, checkpoint: 'Gate A' });
  const out = await sse.next((e) => e.event === 'door' && e.data.inside === 3, 1500);
  t.equal(out.data.rate.checkpoints.find((c: any) => c.checkpoint === 'Gate A').total, 3, 'a check-out is a scan at its checkpoint');
});

t.test('door view - staff only, and bounded per organisation', async (t) => {
  const w = await eventsWorld(t, { config: { door: { viewStreamsPerOrg: 1 } } as any });
  const ev = await makeVenue(w.staff);
  const path = `/events/${ev.id}/door/stream`;
  const none = await openSse(w.app.url, path, { orgid: w.org });
  t.equal(none.status, 401, 'no token');
  const customer = await openSse(w.app.url, path, {
    orgid: w.org,
    authorization: `Bearer ${tokenFor(w.app, { org: w.org, kind: 'customer', sub: 'cust-1', customerId: 'cust-1' })}`,
  });
  t.equal(customer.status, 403, 'a customer');
  const viewer = await openSse(w.app.url, path, { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, roles: ['Viewer'] })}` });
  t.equal(viewer.status, 403, 'staff without the User role');
  const globex = await openSse(w.app.url, path, { orgid: 'globex', authorization: `Bearer ${tokenFor(w.app, { org: 'globex', sub: 'staff-9' })}` });
  t.equal(globex.status, 404, "another organisation's staff do not see the event");

  const auth = { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'staff-1' })}` };
  const one = await openSse(w.app.url, path, auth);
  t.equal(one.status, 200);
  await one.next((e) => e.event === 'door');
  const two = await openSse(w.app.url, path, auth);
  t.equal(two.status, 429, 'one view per organisation here (DOOR_VIEW_STREAMS_PER_ORG=1)');
  t.match(two.body, { statusCode: 429, message: /DOOR_VIEW_STREAMS_PER_ORG/ });
  const other = await openSse(w.app.url, `/events/${(await makeVenue(w.other)).id}/door/stream`, {
    orgid: 'globex',
    authorization: `Bearer ${tokenFor(w.app, { org: 'globex', sub: 'staff-9' })}`,
  });
  t.equal(other.status, 200, "another organisation's bound is its own");
  other.close();
  one.close();
  // The place is given back when the viewer leaves.
  let again: OpenSse | undefined;
  for (let i = 0; i < 50 && again?.status !== 200; i++) {
    await new Promise((r) => setTimeout(r, 20));
    again = await openSse(w.app.url, path, auth);
  }
  t.equal(again?.status, 200, 'a closed view frees its place');
  again?.close();

  const page = await client(w.app.url).get(`/events/${ev.id}/door`);
  t.equal(page.status, 200, 'the page needs no credentials: it holds no data');
  t.match(page.headers['content-type'], /text\/html/);
  t.notMatch(page.text, /Venue night/, 'nothing of the event is in it');
});
