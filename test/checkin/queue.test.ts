import t from 'tap';
import { askWorkflow, createTask } from '../../actors/workflow/index.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { createOrg, tokenFor } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { caller, outbox, seed, sharedApp, venue, type Caller } from '../reservations/world.js';

const shared = await sharedApp(t, { modules: ['checkin'] });

const MIN = 60_000;

async function walkIn(staff: Caller, body: Record<string, unknown>) {
  return staff.post('/checkin/walk-in', { businessLocationId: 'downtown', ...body });
}

t.test('walk-in - joins the queue; name, email or phone required', async (t) => {
  const v = await venue(t, { shared });
  const res = await walkIn(v.staff, { name: 'Dana', partySize: 2, notes: 'high chair' });
  t.equal(res.status, 201);
  t.match(res.body, {
    datatype: 'task',
    state: 'open',
    data: {
      workflowId: 'check-in',
      stageId: 'waiting',
      status: 'open',
      title: 'Dana',
      businessLocationId: 'downtown',
      customer: { name: 'Dana' },
      partySize: 2,
      notes: 'high chair',
      createdBy: 'staff-user-1',
    },
  });
  t.equal((await walkIn(v.staff, { email: 'e@example.com' })).status, 201, 'email alone is enough');
  t.equal((await walkIn(v.staff, { phone: '+49301234' })).status, 201, 'phone alone is enough');

  const none = await walkIn(v.staff, { partySize: 2 });
  t.equal(none.status, 400, 'spec Errors 7');
  t.same(none.body.message, ['at least one of body/name, body/email, body/phone is required']);
  t.equal((await walkIn(v.staff, { name: '  ', email: '' })).status, 400, 'blank values do not count');
  const badEmail = await walkIn(v.staff, { email: 'not-an-email' });
  t.equal(badEmail.status, 400);
  t.match(badEmail.body.message, /email/);
  const noLocation = await v.staff.post('/checkin/walk-in', { name: 'X' });
  t.equal(noLocation.status, 400);
  t.same(noLocation.body.message, ['body/businessLocationId is required']);
  const badParty = await walkIn(v.staff, { name: 'X', partySize: 0 });
  t.equal(badParty.status, 400);
  t.match(badParty.body.message, ['body/partySize must be >= 1']);
  const bySk = await walkIn(v.staff, { name: 'X', businessLocationId: v.location.sk });
  t.equal(bySk.status, 400, 'the location sk is not its slug');
  t.equal((await walkIn(v.staff, { name: 'X', businessLocationId: 'atlantis' })).status, 404);
});

t.test('check-in routes - staff only, same org only', async (t) => {
  const v = await venue(t, { shared });
  const task = (await walkIn(v.staff, { name: 'Eve' })).body;
  const paths: Array<[string, string, unknown?]> = [
    ['POST', '/checkin/walk-in', { businessLocationId: 'downtown', name: 'X' }],
    ['POST', `/checkin/from-reservation/${task.sk}`, {}],
    ['POST', `/checkin/${task.sk}/assign`, { servicePointId: 'T1' }],
    ['POST', `/checkin/${task.sk}/leave`, {}],
    ['POST', `/checkin/${task.sk}/no-show`, {}],
    ['POST', `/checkin/${task.sk}/notify`, {}],
    ['POST', '/checkin/service-point/T1/clear', { finalStatus: 'dirty' }],
    ['GET', '/checkin/service-point'],
    ['GET', '/checkin/service-point/available'],
    ['GET', '/checkin/queue?businessLocationId=downtown'],
    ['GET', '/checkin/queue/summary?businessLocationId=downtown'],
    ['GET', '/checkin/queue/history'],
    ['GET', `/checkin/queue/position/${task.sk}`],
    ['GET', '/checkin/upcoming'],
    ['GET', '/checkin/reservations/today?businessLocationId=downtown'],
  ];
  await createOrg(v.app, `${v.org}-rival`);
  for (const [method, path, body] of paths) {
    const anon = await request(v.app.url, path, { method, body, headers: { orgid: v.org } });
    t.equal(anon.status, 401, `${method} ${path} without a token`);
    const customer = await request(v.app.url, path, {
      method,
      body,
      headers: { orgid: v.org, authorization: `Bearer ${tokenFor(v.app, { org: v.org, kind: 'customer', customerId: 'c1', sub: 'c1' })}` },
    });
    t.equal(customer.status, 403, `${method} ${path} with a customer token`);
    const wrongOrg = await (method === 'GET' ? v.staff.get(path, { orgid: `${v.org}-rival` }) : v.staff.post(path, body, { orgid: `${v.org}-rival` }));
    t.equal(wrongOrg.status, 403, `${method} ${path} with another org's token`);
  }
  const rival = caller(v.app, `${v.org}-rival`, { kind: 'staff', sub: 'rival-staff' });
  await seed(v.app, v.org, 'service_point', { name: 'T1', businessLocationId: 'downtown', status: 'available' });
  t.equal((await rival.get(`/checkin/queue/position/${task.sk}`)).status, 404, "another tenant's task does not exist");
  for (const op of ['leave', 'no-show', 'notify']) t.equal((await rival.post(`/checkin/${task.sk}/${op}`)).status, 404, `rival ${op}`);
  t.equal((await rival.post(`/checkin/${task.sk}/assign`, { servicePointId: 'T1' })).status, 404);
  t.equal((await rival.post('/checkin/service-point/T1/clear', { finalStatus: 'dirty' })).status, 404);
  t.equal((await rival.post(`/checkin/from-reservation/${task.sk}`, {})).status, 404);
  t.equal((await rival.post('/checkin/walk-in', { businessLocationId: 'downtown', name: 'X' })).status, 404, 'no such location there');
  t.equal((await rival.get('/checkin/queue?businessLocationId=downtown')).body.total, 0);
  t.match((await rival.get('/checkin/queue/summary?businessLocationId=downtown')).body, { waiting: 0, servicePoints: 0 });
  for (const path of ['/checkin/queue/history', '/checkin/upcoming', '/checkin/service-point', '/checkin/reservations/today?businessLocationId=downtown']) {
    t.equal((await rival.get(path)).body.total, 0, `rival ${path}`);
  }
  t.equal((await v.staff.get('/checkin/queue/summary')).status, 400, 'summary needs businessLocationId');
  t.equal((await v.staff.get('/checkin/service-point/available?page=0')).status, 400);
  t.equal((await v.staff.get(`/checkin/queue/position/${task.sk}`)).body.status, 'open', 'untouched');
});

t.test('queue - arrival order, summary and position with an estimate', async (t) => {
  const v = await venue(t, { shared });
  for (const name of ['T1', 'T2']) await seed(v.app, v.org, 'service_point', { name, businessLocationId: 'downtown', status: 'available' });
  const a = (await walkIn(v.staff, { name: 'A' })).body;
  v.clock.advance(5 * MIN);
  const b = (await walkIn(v.staff, { name: 'B' })).body;
  v.clock.advance(5 * MIN);
  const c = (await walkIn(v.staff, { name: 'C' })).body;
  v.clock.advance(2 * MIN);

  const q = await v.staff.get('/checkin/queue?businessLocationId=downtown');
  t.equal(q.status, 200);
  t.same(q.body.data.map((x: any) => [x.data.title, x.queuePosition]), [['A', 1], ['B', 2], ['C', 3]]);
  t.same([q.body.total, q.body.hasNext], [3, false]);

  const s = await v.staff.get('/checkin/queue/summary?businessLocationId=downtown');
  t.same(s.body, {
    businessLocationId: 'downtown',
    waiting: 3,
    serving: 0,
    averageWaitMinutes: 7, // 12, 7 and 2 minutes so far
    longestWaitMinutes: 12,
    averageServiceMinutes: 15,
    servicePoints: 2,
    availableServicePoints: 2,
  });

  const pc = await v.staff.get(`/checkin/queue/position/${c.sk}`);
  t.same(pc.body, { taskId: c.sk, businessLocationId: 'downtown', status: 'open', stageId: 'waiting', position: 3, ahead: 2, estimatedWaitMinutes: 15 });
  const pa = await v.staff.get(`/checkin/queue/position/${a.sk}`);
  t.match(pa.body, { position: 1, ahead: 0, estimatedWaitMinutes: 0 }, 'a free point: no wait');

  t.equal((await v.staff.post(`/checkin/${a.sk}/assign`, { servicePointId: 'T1' })).status, 200);
  t.equal((await v.staff.post(`/checkin/${b.sk}/assign`, { servicePointId: 'T2' })).status, 200);
  const q2 = await v.staff.get('/checkin/queue?businessLocationId=downtown');
  t.same(q2.body.data.map((x: any) => [x.data.title, x.data.stageId, x.queuePosition]), [
    ['A', 'serving', 0],
    ['B', 'serving', 0],
    ['C', 'waiting', 1],
  ]);
  const pc2 = await v.staff.get(`/checkin/queue/position/${c.sk}`);
  t.match(pc2.body, { position: 1, ahead: 0, estimatedWaitMinutes: 15 }, 'both points busy: one service time');
  const pa2 = await v.staff.get(`/checkin/queue/position/${a.sk}`);
  t.match(pa2.body, { stageId: 'serving', position: 0, ahead: 0 });
  const s2 = await v.staff.get('/checkin/queue/summary?businessLocationId=downtown');
  t.match(s2.body, { waiting: 1, serving: 2, longestWaitMinutes: 2, availableServicePoints: 0 });

  v.clock.advance(30 * MIN);
  t.equal((await v.staff.post('/checkin/service-point/T1/clear', { finalStatus: 'available' })).status, 200);
  const s3 = await v.staff.get('/checkin/queue/summary?businessLocationId=downtown');
  t.match(s3.body, { waiting: 1, serving: 1, averageServiceMinutes: 30 }, 'the average service time comes from served guests');

  t.equal((await v.staff.get('/checkin/queue/position/ffffffffffffffffffffffff')).status, 404);
  const kitchen = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen', title: 'Soup' });
  t.equal((await v.staff.get(`/checkin/queue/position/${kitchen.sk}`)).status, 404, 'a kitchen task is not in the check-in queue');
  t.equal((await v.staff.post(`/checkin/${kitchen.sk}/leave`)).status, 404);
  t.equal((await v.staff.get('/checkin/queue')).status, 400, 'businessLocationId is required');
});

t.test('the wait estimate reads the last 50 served guests of a location, never every task it served', async (t) => {
  const v = await venue(t, { shared });
  const summary = async (slug: string) => (await v.staff.get(`/checkin/queue/summary?businessLocationId=${slug}`)).body.averageServiceMinutes;
  // Guests served before the sample was kept, written straight into the store: a few are
  // measured (20 minutes each), more than 1,000 are not read at all (the default, 15).
  const now = v.clock.now();
  const legacy = (slug: string, served: number) =>
    newRecord(v.org, 'task', { workflowId: 'check-in', businessLocationId: slug, status: 'completed', outcome: 'served', servedAt: new Date(served).toISOString(), finishedAt: new Date(served + 20 * MIN).toISOString() });
  const batch = new WriteBatch();
  for (let i = 0; i < 3; i++) batch.putRecord(legacy('midtown', now - (i + 1) * 60 * MIN));
  for (let i = 0; i < 1_001; i++) batch.putRecord(legacy('uptown', now - (i + 1) * 60 * MIN));
  await v.app.deps.store.commit(batch);
  t.equal(await summary('midtown'), 20, 'a few earlier guests are measured');
  t.equal(await summary('uptown'), 15, 'more than 1,000 are not read: the default');

  // Served through the workflow actor from now on: the first took 100 minutes, the next 50 ten.
  const serve = async (minutes: number) => {
    const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'check-in', businessLocationId: 'uptown', title: 'Guest' });
    await askWorkflow(v.app.deps.runtime, v.org, { type: 'set-fields', taskId: task.sk, fields: { servedAt: new Date(v.clock.now() - minutes * MIN).toISOString() } });
    await askWorkflow(v.app.deps.runtime, v.org, { type: 'complete', taskId: task.sk, outcome: 'served' });
  };
  await serve(100);
  t.equal(await summary('uptown'), 100, 'the first served guest replaces the default');
  for (let i = 0; i < 50; i++) await serve(10);
  t.equal(await summary('uptown'), 10, 'the 51st pushes the first out of the sample of 50');
  t.equal(await summary('midtown'), 20, 'another location keeps its own');
});

t.test('leave and no-show - finish a task with an outcome; illegal moves are 409', async (t) => {
  const v = await venue(t, { shared });
  await seed(v.app, v.org, 'service_point', { name: 'T1', businessLocationId: 'downtown', status: 'available' });
  const a = (await walkIn(v.staff, { name: 'A' })).body;
  const b = (await walkIn(v.staff, { name: 'B' })).body;
  const c = (await walkIn(v.staff, { name: 'C' })).body;

  const left = await v.staff.post(`/checkin/${a.sk}/leave`);
  t.equal(left.status, 200);
  t.match(left.body.data, { status: 'cancelled', outcome: 'left' });
  t.ok(left.body.data.finishedAt);
  const again = await v.staff.post(`/checkin/${a.sk}/leave`);
  t.equal(again.status, 409);
  t.match(again.body.message, /already cancelled/);
  t.equal((await v.staff.post(`/checkin/${a.sk}/no-show`)).status, 409);

  const ns = await v.staff.post(`/checkin/${b.sk}/no-show`);
  t.match(ns.body.data, { status: 'cancelled', outcome: 'no_show' });

  await v.staff.post(`/checkin/${c.sk}/assign`, { servicePointId: 'T1' });
  const servedNoShow = await v.staff.post(`/checkin/${c.sk}/no-show`);
  t.equal(servedNoShow.status, 409, 'a guest being served is no no-show');
  const servedLeave = await v.staff.post(`/checkin/${c.sk}/leave`);
  t.equal(servedLeave.status, 200);
  const point = (await v.staff.get('/checkin/service-point?businessLocationId=downtown')).body.data[0];
  t.equal(point.data.status, 'dirty', 'leaving a table leaves it to be cleaned');
  t.equal(point.data.currentTaskId, undefined);
  t.equal((await v.staff.get('/checkin/queue?businessLocationId=downtown')).body.total, 0);
  t.equal((await v.staff.post('/checkin/ffffffffffffffffffffffff/leave')).status, 404);
});

t.test('notify - a message through the outbox and notifiedAt on the task', async (t) => {
  const v = await venue(t, { shared });
  const byPhone = (await walkIn(v.staff, { name: 'Pia', phone: '+4915100000', email: 'pia@example.com' })).body;
  const byMail = (await walkIn(v.staff, { email: 'max@example.com' })).body;
  const nameOnly = (await walkIn(v.staff, { name: 'Nobody' })).body;

  const sms = await v.staff.post(`/checkin/${byPhone.sk}/notify`);
  t.equal(sms.status, 200);
  t.equal(sms.body.data.notifiedAt, new Date(v.clock.now()).toISOString());
  t.equal(sms.body.data.notifications, 1);
  const sent = outbox(v.app, v.org, '+4915100000');
  t.equal(sent.length, 1);
  t.match(sent[0], { channel: 'sms', kind: 'checkin-notify', payload: { taskId: byPhone.sk } });
  t.match(sent[0].body, /^Pia, we are ready for you/);

  const asked = await v.staff.post(`/checkin/${byPhone.sk}/notify`, { channel: 'email', message: 'Your table is ready.' });
  t.equal(asked.body.data.notifications, 2);
  t.match(outbox(v.app, v.org, 'pia@example.com')[0], { channel: 'email', body: 'Your table is ready.' });

  t.equal((await v.staff.post(`/checkin/${byMail.sk}/notify`)).status, 200);
  t.equal(outbox(v.app, v.org, 'max@example.com')[0].channel, 'email');
  const noAddress = await v.staff.post(`/checkin/${nameOnly.sk}/notify`);
  t.equal(noAddress.status, 409);
  t.match(noAddress.body.message, /no email address/);
  const smsNoPhone = await v.staff.post(`/checkin/${byMail.sk}/notify`, { channel: 'sms' });
  t.equal(smsNoPhone.status, 409);
  t.equal((await v.staff.post(`/checkin/${byMail.sk}/notify`, { channel: 'fax' })).status, 400);
  await v.staff.post(`/checkin/${byMail.sk}/leave`);
  t.equal((await v.staff.post(`/checkin/${byMail.sk}/notify`)).status, 409, 'a finished task');
  t.equal(outbox(v.app, v.org).length, 3, 'refused notifications sent nothing');
});

t.test('history - finished tasks, newest first, by day in the location timezone or by instants', async (t) => {
  const v = await venue(t, { shared });
  // T0 is 09:00 Berlin on Friday 2026-03-20. Finish one on Friday, one on Saturday 00:30 Berlin
  // (= Friday 23:30Z: a UTC date filter would put it on Friday).
  const a = (await walkIn(v.staff, { name: 'A' })).body;
  await v.staff.post(`/checkin/${a.sk}/leave`);
  v.clock.set(Date.UTC(2026, 2, 20, 23, 30));
  const b = (await walkIn(v.staff, { name: 'B' })).body;
  await v.staff.post(`/checkin/${b.sk}/no-show`);
  const live = (await walkIn(v.staff, { name: 'C' })).body;

  const all = await v.staff.get('/checkin/queue/history?businessLocationId=downtown');
  t.same(all.body.data.map((x: any) => x.sk), [b.sk, a.sk], 'newest first, live tasks left out');
  const fri = await v.staff.get('/checkin/queue/history?businessLocationId=downtown&date=2026-03-20');
  t.same(fri.body.data.map((x: any) => x.sk), [a.sk], 'Friday in Berlin');
  const sat = await v.staff.get('/checkin/queue/history?businessLocationId=downtown&date=2026-03-21');
  t.same(sat.body.data.map((x: any) => x.sk), [b.sk], 'Saturday in Berlin');
  const range = await v.staff.get('/checkin/queue/history?from=2026-03-20T12:00:00Z&to=2026-03-21T00:00:00Z');
  t.same(range.body.data.map((x: any) => x.sk), [b.sk]);
  const paged = await v.staff.get('/checkin/queue/history?businessLocationId=downtown&pageSize=1&page=1');
  t.same([paged.body.total, paged.body.hasNext, paged.body.data.length], [2, true, 1]);
  t.equal((await v.staff.get('/checkin/queue/history?date=2026-13-01')).status, 400);
  t.equal((await v.staff.get('/checkin/queue/history?from=yesterday')).status, 400);
  t.ok(live.sk);
});

t.test('slug, not sk - an sk as businessLocationId yields empty lists, never an error (spec Errors 10)', async (t) => {
  const v = await venue(t, { shared });
  await seed(v.app, v.org, 'service_point', { name: 'T1', businessLocationId: 'downtown', status: 'available' });
  const task = (await walkIn(v.staff, { name: 'A' })).body;
  await walkIn(v.staff, { name: 'B' }).then((r) => v.staff.post(`/checkin/${r.body.sk}/leave`));
  const sk = v.location.sk;
  const empty = { data: [], total: 0, hasNext: false };
  for (const path of [
    `/checkin/queue?businessLocationId=${sk}`,
    `/checkin/queue/history?businessLocationId=${sk}`,
    `/checkin/service-point?businessLocationId=${sk}`,
    `/checkin/service-point/available?businessLocationId=${sk}`,
    `/checkin/upcoming?businessLocationId=${sk}`,
    `/checkin/reservations/today?businessLocationId=${sk}`,
    `/crm/reservations/service-point/get?businessLocationId=${sk}`,
    `/workflow/task?location=${sk}`,
  ]) {
    const res = await v.staff.get(path);
    t.equal(res.status, 200, path);
    t.match(res.body, empty, `${path} is empty`);
  }
  const s = await v.staff.get(`/checkin/queue/summary?businessLocationId=${sk}`);
  t.match(s.body, { waiting: 0, serving: 0, servicePoints: 0 });
  const bySlug = await v.staff.get('/checkin/queue?businessLocationId=downtown');
  t.same(bySlug.body.data.map((x: any) => x.sk), [task.sk], 'the slug finds them');
  t.equal((await v.staff.get('/checkin/service-point?businessLocationId=downtown')).body.total, 1);
});

t.test('service point lists - all, by status, and those ready to seat', async (t) => {
  const v = await venue(t, { shared });
  await seed(v.app, v.org, 'location', { name: 'uptown' });
  for (const [name, status, loc] of [
    ['T1', 'available', 'downtown'],
    ['T2', 'Occupied', 'downtown'],
    ['T3', 'reserved', 'downtown'],
    ['T4', 'dirty', 'downtown'],
    ['T5', 'clean', 'downtown'],
    ['U1', 'available', 'uptown'],
  ]) {
    await seed(v.app, v.org, 'service_point', { name, status, businessLocationId: loc });
  }
  const all = await v.staff.get('/checkin/service-point?businessLocationId=downtown');
  t.same(all.body.data.map((p: any) => p.data.name), ['T1', 'T2', 'T3', 'T4', 'T5']);
  const avail = await v.staff.get('/checkin/service-point/available?businessLocationId=downtown');
  t.same(avail.body.data.map((p: any) => p.data.name), ['T1', 'T5'], 'not occupied, reserved or dirty (any case)');
  const everywhere = await v.staff.get('/checkin/service-point/available');
  t.same(everywhere.body.data.map((p: any) => p.data.name), ['T1', 'T5', 'U1']);
  const reserved = await v.staff.get('/checkin/service-point?status=reserved');
  t.same(reserved.body.data.map((p: any) => p.data.name), ['T3']);
  t.equal((await v.staff.get('/checkin/service-point?pageSize=0')).status, 400);
});
