import t from 'tap';
import { seed, sharedApp, venue, type Venue } from '../reservations/world.js';

const shared = await sharedApp(t, { modules: ['checkin'] });

async function setup(t: Parameters<typeof venue>[0]) {
  const v = await venue(t, { shared });
  await seed(v.app, v.org, 'location', { name: 'uptown', timezone: 'Europe/Berlin' });
  const points: Record<string, string> = {};
  for (const [name, status, loc] of [
    ['Table 1', 'available', 'downtown'],
    ['Table 2', 'occupied', 'downtown'],
    ['Table 3', 'Reserved', 'downtown'],
    ['Table 4', 'dirty', 'downtown'],
    ['Patio', 'available', 'uptown'],
  ]) {
    points[name] = (await seed(v.app, v.org, 'service_point', { name, status, businessLocationId: loc })).sk;
  }
  const walk = async (name: string, loc = 'downtown') =>
    (await v.staff.post('/checkin/walk-in', { businessLocationId: loc, name })).body as { sk: string };
  return { ...v, points, walk };
}

function point(v: Venue, sk: string) {
  return v.app.deps.store.getRecord(v.org, 'service_point', sk)!;
}

t.test('assign - by name or id: the task is served there and the point becomes occupied', async (t) => {
  const v = await setup(t);
  const a = await v.walk('A');
  const res = await v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: 'Table 1' });
  t.equal(res.status, 200);
  t.match(res.body.task.data, {
    stageId: 'serving',
    status: 'open',
    servicePointId: v.points['Table 1'],
    servicePointName: 'Table 1',
    servedAt: new Date(v.clock.now()).toISOString(),
  });
  t.match(res.body.servicePoint, { sk: v.points['Table 1'], version: 2, data: { status: 'occupied', currentTaskId: a.sk } });
  const stored = point(v, v.points['Table 1']);
  t.equal(stored.version, 2, 'written back by its sk: one record, version + 1');
  t.equal(v.app.deps.store.count(v.org, 'service_point', { 'data.name': 'Table 1' }), 1, 'no copy was made');

  const b = await v.walk('B');
  const byId = await v.staff.post(`/checkin/${b.sk}/assign`, { servicePointId: v.points['Table 4'] });
  t.equal(byId.status, 200, 'a dirty point is neither occupied nor reserved: staff may seat there');
  t.equal(byId.body.servicePoint.data.name, 'Table 4');
  const c = await v.walk('C');
  t.equal((await v.staff.post(`/checkin/${c.sk}/assign`, { servicePointId: 'table 1' })).status, 409, 'names match without case, and it is taken');
});

t.test('assign - occupied and reserved points are refused with 409 and a message', async (t) => {
  const v = await setup(t);
  const a = await v.walk('A');
  const occ = await v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: 'Table 2' });
  t.equal(occ.status, 409);
  t.equal(occ.body.error, 'Conflict');
  t.match(occ.body.message, 'service point Table 2 is occupied');
  const res = await v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: v.points['Table 3'] });
  t.equal(res.status, 409);
  t.match(res.body.message, 'service point Table 3 is reserved');
  t.equal(point(v, v.points['Table 2']).version, 1, 'refused points are untouched');
  t.equal(point(v, v.points['Table 3']).data.status, 'Reserved');
  const task = v.app.deps.store.getRecord(v.org, 'task', a.sk)!;
  t.equal(task.data.stageId, 'waiting', 'the task still waits');
});

t.test('assign - two staff seating two guests at the same free point at once: exactly one succeeds', async (t) => {
  const v = await setup(t);
  const a = await v.walk('A');
  const b = await v.walk('B');
  const [ra, rb] = await Promise.all([
    v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: 'Table 1' }),
    v.staff.post(`/checkin/${b.sk}/assign`, { servicePointId: v.points['Table 1'] }),
  ]);
  t.same([ra.status, rb.status].sort(), [200, 409]);
  const winner = ra.status === 200 ? a : b;
  const loser = ra.status === 200 ? b : a;
  t.equal(point(v, v.points['Table 1']).data.currentTaskId, winner.sk);
  t.equal(v.app.deps.store.getRecord(v.org, 'task', loser.sk)!.data.stageId, 'waiting');

  // Many at once, through the HTTP edge: still one.
  const guests = await Promise.all(Array.from({ length: 12 }, (_, i) => v.walk(`G${i}`)));
  const replies = await Promise.all(guests.map((g) => v.staff.post(`/checkin/${g.sk}/assign`, { servicePointId: 'Table 4' })));
  t.equal(replies.filter((r) => r.status === 200).length, 1, 'one of twelve');
  t.equal(replies.filter((r) => r.status === 409).length, 11);
  const serving = v.app.deps.store.scan(v.org, 'task', { 'data.servicePointId': v.points['Table 4'], 'data.stageId': 'serving' });
  t.equal(serving.length, 1, 'one task is served there');
});

t.test('assign - refusals: already served, finished, unknown point, another location, bad body', async (t) => {
  const v = await setup(t);
  const a = await v.walk('A');
  await v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: 'Table 1' });
  const twice = await v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: 'Table 4' });
  t.equal(twice.status, 409);
  t.match(twice.body.message, 'already being served at Table 1');
  const b = await v.walk('B');
  await v.staff.post(`/checkin/${b.sk}/leave`);
  const finished = await v.staff.post(`/checkin/${b.sk}/assign`, { servicePointId: 'Table 4' });
  t.equal(finished.status, 409);
  t.equal(point(v, v.points['Table 4']).version, 1, 'a refused assign leaves the point alone');
  const c = await v.walk('C');
  t.equal((await v.staff.post(`/checkin/${c.sk}/assign`, { servicePointId: 'Table 99' })).status, 404);
  const far = await v.staff.post(`/checkin/${c.sk}/assign`, { servicePointId: 'Patio' });
  t.equal(far.status, 404, 'a point of another location is not one of this queue');
  const missing = await v.staff.post(`/checkin/${c.sk}/assign`, {});
  t.equal(missing.status, 400);
  t.same(missing.body.message, ['body/servicePointId is required']);
  t.equal((await v.staff.post('/checkin/ffffffffffffffffffffffff/assign', { servicePointId: 'Table 1' })).status, 404);
  // Finished meanwhile through the workflow routes: assign refuses and the point stays free.
  const d = await v.walk('D');
  t.equal((await v.staff.post(`/workflow/task/${d.sk}/cancel`)).status, 200);
  t.equal((await v.staff.post(`/checkin/${d.sk}/assign`, { servicePointId: 'Table 4' })).status, 409);
  t.equal(point(v, v.points['Table 4']).data.status, 'dirty');
});

t.test('clear - the point takes finalStatus and the task served there completes', async (t) => {
  const v = await setup(t);
  const a = await v.walk('A');
  await v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: 'Table 1' });
  const bad = await v.staff.post(`/checkin/service-point/${v.points['Table 1']}/clear`, { finalStatus: 'occupied' });
  t.equal(bad.status, 400);
  t.same(bad.body.message, ['body/finalStatus must be one of: dirty, available']);
  t.equal((await v.staff.post(`/checkin/service-point/${v.points['Table 1']}/clear`, {})).status, 400);

  v.clock.advance(40 * 60_000);
  const res = await v.staff.post(`/checkin/service-point/${v.points['Table 1']}/clear`, { finalStatus: 'dirty' });
  t.equal(res.status, 200);
  t.match(res.body.servicePoint, { sk: v.points['Table 1'], data: { status: 'dirty' } });
  t.equal(res.body.servicePoint.data.currentTaskId, undefined);
  t.equal(res.body.completedTasks.length, 1);
  t.match(res.body.completedTasks[0], { sk: a.sk, data: { status: 'completed', outcome: 'served' } });

  const again = await v.staff.post('/checkin/service-point/Table 1/clear', { finalStatus: 'available' });
  t.equal(again.status, 200, 'by name; nobody was served there any more');
  t.same([again.body.servicePoint.data.status, again.body.completedTasks], ['available', []]);
  t.equal((await v.staff.post('/checkin/service-point/Table 99/clear', { finalStatus: 'dirty' })).status, 404);

  await seed(v.app, v.org, 'service_point', { name: 'Table 1', status: 'available', businessLocationId: 'uptown' });
  const ambiguous = await v.staff.post('/checkin/service-point/Table 1/clear', { finalStatus: 'dirty' });
  t.equal(ambiguous.status, 409, 'a name used at two locations needs the id or the location');
  const narrowed = await v.staff.post('/checkin/service-point/Table 1/clear', { finalStatus: 'dirty', businessLocationId: 'uptown' });
  t.equal(narrowed.status, 200);
  t.equal(narrowed.body.servicePoint.data.businessLocationId, 'uptown');
});
