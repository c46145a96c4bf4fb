import t from 'tap';
import { createTask, createTaskDetailed, getTask, type TaskRecord } from '../../actors/workflow/index.js';
import { createOrg } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { caller, seed, sharedApp, venue } from '../reservations/world.js';

const shared = await sharedApp(t, { modules: ['checkin'] });

const MIN = 60_000;

t.test('definitions - built-in check-in and kitchen, tenant overrides and own workflows', async (t) => {
  const v = await venue(t, { shared });
  const res = await v.staff.get('/workflow/definition');
  t.equal(res.status, 200);
  t.same(
    res.body.data.map((d: any) => [d.id, d.builtIn, d.stages.map((s: any) => [s.id, s.slaMinutes ?? null])]),
    [
      ['check-in', true, [['waiting', 15], ['serving', null]]],
      ['kitchen', true, [['queued', 5], ['preparing', 15], ['ready', 10]]],
    ],
  );
  await seed(v.app, v.org, 'workflow_definition', {
    id: 'kitchen',
    name: 'Line',
    stages: [{ id: 'queued', name: 'Ticket in', slaMinutes: 3 }, { id: 'ready', name: 'Pass', slaMinutes: null }, { id: 'bogus', name: 'x' }],
  });
  await seed(v.app, v.org, 'workflow_definition', { id: 'repairs', name: 'Repairs', stages: [{ id: 'triage', slaMinutes: 60 }, { id: 'fixing' }] });
  await seed(v.app, v.org, 'workflow_definition', { id: 'broken', stages: [] });
  const after = await v.staff.get('/workflow/definition');
  const kitchen = after.body.data.find((d: any) => d.id === 'kitchen');
  t.same(kitchen.stages, [
    { id: 'queued', name: 'Ticket in', slaMinutes: 3 },
    { id: 'preparing', name: 'Preparing', slaMinutes: 15 },
    { id: 'ready', name: 'Pass' },
  ], 'names and SLAs change, stage ids stay');
  t.equal(kitchen.name, 'Line');
  t.same(after.body.data.find((d: any) => d.id === 'repairs').stages, [{ id: 'triage', name: 'triage', slaMinutes: 60 }, { id: 'fixing', name: 'fixing' }]);
  t.notOk(after.body.data.find((d: any) => d.id === 'broken'), 'a workflow without stages is ignored');
  const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'repairs', title: 'Fridge' });
  t.equal(task.data.stageId, 'triage');
});

t.test('createTask - the typed client for other areas: kitchen lines, uniqueKey, validation', async (t) => {
  const v = await venue(t, { shared });
  const rt = v.app.deps.runtime;
  const line = { workflowId: 'kitchen', title: '2 x Margherita', orderId: 'o1', lineId: 'l1', uniqueKey: 'order:o1:line:l1', payload: { qty: 2 } };
  const first = await createTaskDetailed(rt, v.org, line);
  t.equal(first.created, true);
  t.match(first.task, { datatype: 'task', state: 'open', data: { workflowId: 'kitchen', stageId: 'queued', orderId: 'o1', lineId: 'l1', payload: { qty: 2 } } });
  const again = await createTaskDetailed(rt, v.org, line);
  t.same([again.created, again.task.sk], [false, first.task.sk], 'firing the same line again: the same live task');
  const both = await Promise.all([createTask(rt, v.org, { ...line, uniqueKey: 'k2' }), createTask(rt, v.org, { ...line, uniqueKey: 'k2' })]);
  t.equal(both[0].sk, both[1].sk, 'even at the same moment');
  await v.staff.post(`/workflow/task/${first.task.sk}/complete`);
  const refired = await createTaskDetailed(rt, v.org, line);
  t.equal(refired.created, true, 'a finished task frees its key');
  t.same((await getTask(rt, v.org, first.task.sk)).data.status, 'completed');
  const err = (p: Promise<unknown>) => p.then(() => 0, (e: { statusCode: number }) => e.statusCode);
  t.equal(await err(createTask(rt, v.org, { workflowId: 'laundry' })), 400, 'unknown workflow');
  t.equal(await err(createTask(rt, v.org, { workflowId: 'kitchen', stageId: 'plating' })), 400, 'unknown stage');
  t.equal(await err(createTask(rt, v.org, { workflowId: 'kitchen', partySize: 0 })), 400);
  t.equal(await err(getTask(rt, v.org, 'ffffffffffffffffffffffff')), 404);
});

t.test('task moves - advance, complete, cancel, move-to; illegal moves are 409', async (t) => {
  const v = await venue(t, { shared });
  const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen', title: 'Soup' });
  const url = (op: string) => `/workflow/task/${task.sk}/${op}`;
  v.clock.advance(2 * MIN);
  const a1 = await v.staff.post(url('advance'));
  t.equal(a1.status, 200);
  t.equal(a1.body.data.stageId, 'preparing');
  t.same(a1.body.data.stageHistory.map((h: any) => [h.stageId, h.leftAt ?? null]), [
    ['queued', '2026-03-20T08:02:00.000Z'],
    ['preparing', null],
  ]);
  t.equal((await v.staff.post(url('advance'))).body.data.stageId, 'ready');
  const last = await v.staff.post(url('advance'));
  t.equal(last.status, 409);
  t.match(last.body.message, /last stage/);
  const moved = await v.staff.post(url('move-to/queued'));
  t.equal(moved.body.data.stageId, 'queued', 'move-to may go back');
  const same = await v.staff.post(url('move-to/queued'));
  t.equal(same.body.version, moved.body.version, 'moving to the current stage changes nothing');
  const unknown = await v.staff.post(url('move-to/plating'));
  t.equal(unknown.status, 400);
  t.match(unknown.body.message, /unknown stage "plating"/);
  const done = await v.staff.post(url('complete'));
  t.match(done.body, { state: 'completed', data: { status: 'completed', outcome: 'completed' } });
  for (const op of ['advance', 'complete', 'cancel', 'move-to/ready', 'escalate-now']) {
    const r = await v.staff.post(url(op));
    t.equal(r.status, 409, `${op} on a completed task`);
    t.match(r.body.message, /already completed/);
  }
  t.equal((await v.staff.post(url('snooze'), { minutes: 5 })).status, 409);
  t.equal((await v.staff.post(url('reassign'), { assignee: 'x' })).status, 409);
  const other = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen' });
  const cancelled = await v.staff.post(`/workflow/task/${other.sk}/cancel`);
  t.match(cancelled.body.data, { status: 'cancelled', outcome: 'cancelled' });
  t.equal((await v.staff.post(`/workflow/task/${other.sk}/complete`)).status, 409);
  t.equal((await v.staff.post('/workflow/task/ffffffffffffffffffffffff/advance')).status, 404);
});

t.test('task notes, reassign, snooze and escalate-now', async (t) => {
  const v = await venue(t, { shared });
  const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen', title: 'Steak' });
  const url = (op: string) => `/workflow/task/${task.sk}/${op}`;
  await v.staff.post(url('note'), { comment: 'medium rare' });
  const n2 = await v.staff.post(url('note'), { comment: 'no salt' });
  t.same(n2.body.data.comments.map((c: any) => [c.comment, c.by]), [['medium rare', 'staff-user-1'], ['no salt', 'staff-user-1']]);
  const noComment = await v.staff.post(url('note'), {});
  t.equal(noComment.status, 400);
  t.same(noComment.body.message, ['body/comment is required']);
  t.equal((await v.staff.post(url('note'), { comment: '' })).status, 400);

  t.equal((await v.staff.post(url('reassign'), { assignee: 'chef-anna' })).body.data.assignee, 'chef-anna');
  const unassigned = await v.staff.post(url('reassign'), { assignee: null });
  t.equal(unassigned.body.data.assignee, undefined);
  t.equal((await v.staff.post(url('reassign'), {})).status, 400);

  const both = await v.staff.post(url('snooze'), { minutes: 5, until: '2026-03-20T09:00:00Z' });
  t.equal(both.status, 400);
  t.equal((await v.staff.post(url('snooze'), {})).status, 400);
  t.equal((await v.staff.post(url('snooze'), { until: '2026-03-20T07:00:00Z' })).status, 400, 'in the past');
  t.equal((await v.staff.post(url('snooze'), { minutes: 0 })).status, 400);
  t.equal((await v.staff.post(url('snooze'), { until: 'later' })).status, 400);
  const snoozed = await v.staff.post(url('snooze'), { minutes: 20 });
  t.equal(snoozed.body.data.snoozedUntil, '2026-03-20T08:20:00.000Z');
  const until = await v.staff.post(url('snooze'), { until: '2026-03-20T10:00:00+01:00' });
  t.equal(until.body.data.snoozedUntil, '2026-03-20T09:00:00.000Z', 'a later snooze replaces the first');

  const esc = await v.staff.post(url('escalate-now'));
  t.equal(esc.status, 200);
  t.match(esc.body.data, { escalationLevel: 1, escalations: [{ stageId: 'queued', reason: 'manual', by: 'staff-user-1' }] });
  t.equal(esc.body.data.escalationJobId, null, "the stage's SLA escalation is dropped");
  t.equal((await v.staff.post(url('escalate-now'))).body.data.escalationLevel, 2);
  await v.staff.post(url('complete'));
  t.equal((await v.staff.post(url('note'), { comment: 'sent back' })).status, 200, 'notes on finished tasks are history');
});

t.test('task list - filters and paging', async (t) => {
  const v = await venue(t, { shared });
  const rt = v.app.deps.runtime;
  const k1 = await createTask(rt, v.org, { workflowId: 'kitchen', businessLocationId: 'downtown', assignee: 'anna' });
  v.clock.advance(MIN);
  const k2 = await createTask(rt, v.org, { workflowId: 'kitchen', businessLocationId: 'uptown' });
  v.clock.advance(MIN);
  const c1 = (await v.staff.post('/checkin/walk-in', { businessLocationId: 'downtown', name: 'Guest' })).body as TaskRecord;
  await v.staff.post(`/workflow/task/${k2.sk}/advance`);
  await v.staff.post(`/workflow/task/${k1.sk}/snooze`, { minutes: 10 });
  const ids = async (q: string) => (await v.staff.get(`/workflow/task${q}`)).body.data.map((x: any) => x.sk);
  t.same(await ids(''), [k1.sk, k2.sk, c1.sk], 'oldest first');
  t.same(await ids('?sortType=desc'), [c1.sk, k2.sk, k1.sk]);
  t.same(await ids('?workflow=kitchen'), [k1.sk, k2.sk]);
  t.same(await ids('?workflow=kitchen&stage=preparing'), [k2.sk]);
  t.same(await ids('?location=downtown'), [k1.sk, c1.sk]);
  t.same(await ids('?assignee=anna'), [k1.sk]);
  t.same(await ids('?status=snoozed'), [k1.sk]);
  await v.staff.post(`/workflow/task/${k2.sk}/complete`);
  t.same(await ids('?status=completed'), [k2.sk]);
  t.same(await ids('?status=open'), [k1.sk, c1.sk]);
  const page = await v.staff.get('/workflow/task?pageSize=2&page=2');
  t.same([page.body.total, page.body.page, page.body.hasNext, page.body.data.length], [3, 2, false, 1]);
  const bad = await v.staff.get('/workflow/task?status=sleeping');
  t.equal(bad.status, 400);
  t.match(bad.body.message, ['query/status must be one of: open, completed, cancelled, snoozed']);
});

t.test('analytics - wait times per stage: count, average, p50, p90', async (t) => {
  const v = await venue(t, { shared });
  const rt = v.app.deps.runtime;
  // Queued for 1, 2, 3, ... 10 minutes, then prepared for 5 minutes each.
  const tasks = [];
  for (let i = 1; i <= 10; i++) tasks.push(await createTask(rt, v.org, { workflowId: 'kitchen', title: `t${i}` }));
  for (let i = 1; i <= 10; i++) {
    v.clock.advance(MIN);
    await v.staff.post(`/workflow/task/${tasks[i - 1].sk}/advance`);
  }
  v.clock.advance(5 * MIN);
  await v.staff.post(`/workflow/task/${tasks[9].sk}/advance`);
  const res = await v.staff.get('/workflow/analytics/kitchen/wait-times');
  t.equal(res.status, 200);
  t.same(res.body, {
    workflowId: 'kitchen',
    from: null,
    to: null,
    stages: [
      { stageId: 'queued', name: 'Queued', count: 10, averageMinutes: 5.5, p50Minutes: 5, p90Minutes: 9 },
      { stageId: 'preparing', name: 'Preparing', count: 1, averageMinutes: 5, p50Minutes: 5, p90Minutes: 5 },
      { stageId: 'ready', name: 'Ready to serve', count: 0, averageMinutes: null, p50Minutes: null, p90Minutes: null },
    ],
  });
  const windowed = await v.staff.get('/workflow/analytics/kitchen/wait-times?from=2026-03-20T08:06:00Z&to=2026-03-20T08:08:00Z');
  t.same(windowed.body.stages[0].count, 2, 'visits that ended in [from, to)');
  t.equal((await v.staff.get('/workflow/analytics/laundry/wait-times')).status, 404);
  t.equal((await v.staff.get('/workflow/analytics/kitchen/wait-times?from=monday')).status, 400);
});

t.test('escalation views - breached and upcoming from stage SLAs; a snooze defers', async (t) => {
  const v = await venue(t, { shared });
  const rt = v.app.deps.runtime;
  const soup = await createTask(rt, v.org, { workflowId: 'kitchen', title: 'Soup' }); // queued: 5 min SLA
  const guest = (await v.staff.post('/checkin/walk-in', { businessLocationId: 'downtown', name: 'G' })).body; // waiting: 15
  const up = await v.staff.get('/workflow/escalation/upcoming');
  t.same(up.body.data.map((e: any) => [e.taskId, e.stageId, e.overdueMinutes]), [
    [soup.sk, 'queued', -5],
    [guest.sk, 'waiting', -15],
  ]);
  t.equal(up.body.data[0].dueAt, '2026-03-20T08:05:00.000Z');
  t.same((await v.staff.get('/workflow/escalation/upcoming?withinMinutes=10')).body.data.map((e: any) => e.taskId), [soup.sk]);
  t.same((await v.staff.get('/workflow/escalation/breached')).body.data, []);

  v.clock.advance(6 * MIN);
  const br = await v.staff.get('/workflow/escalation/breached');
  t.same(br.body.data.map((e: any) => [e.taskId, e.overdueMinutes]), [[soup.sk, 1]]);
  t.match(br.body.data[0], { workflowId: 'kitchen', stageName: 'Queued', slaMinutes: 5, task: { sk: soup.sk } });
  t.same((await v.staff.get('/workflow/escalation/breached?workflow=check-in')).body.data, []);
  t.same((await v.staff.get('/workflow/escalation/upcoming?location=downtown')).body.data.map((e: any) => e.taskId), [guest.sk]);

  await v.staff.post(`/workflow/task/${soup.sk}/snooze`, { minutes: 30 });
  t.same((await v.staff.get('/workflow/escalation/breached')).body.data, [], 'snoozed: not breached until it ends');
  const later = await v.staff.get('/workflow/escalation/upcoming?withinMinutes=60');
  t.equal(later.body.data.find((e: any) => e.taskId === soup.sk).dueAt, '2026-03-20T08:36:00.000Z');
  await v.staff.post(`/workflow/task/${soup.sk}/advance`);
  const prep = (await v.staff.get('/workflow/escalation/upcoming?withinMinutes=60')).body.data.find((e: any) => e.taskId === soup.sk);
  t.same([prep.stageId, prep.dueAt], ['preparing', '2026-03-20T08:36:00.000Z'], 'the new stage has its own SLA, still snoozed');
  t.equal((await v.staff.get('/workflow/escalation/upcoming?withinMinutes=0')).status, 400);
  t.equal((await v.staff.get('/workflow/escalation/breached?pageSize=0')).status, 400);
  t.equal((await v.staff.get('/workflow/escalation/breached?pageSize=1&page=1')).body.pageSize, 1);
});

t.test('workflow routes - staff only, tenant-isolated', async (t) => {
  const v = await venue(t, { shared });
  const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen' });
  await createOrg(v.app, `${v.org}-rival`);
  const rival = caller(v.app, `${v.org}-rival`, { kind: 'staff', sub: 'rival-staff' });
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/workflow/definition'],
    ['GET', '/workflow/task'],
    ['POST', `/workflow/task/${task.sk}/advance`, {}],
    ['POST', `/workflow/task/${task.sk}/complete`, {}],
    ['POST', `/workflow/task/${task.sk}/cancel`, {}],
    ['POST', `/workflow/task/${task.sk}/move-to/ready`, {}],
    ['POST', `/workflow/task/${task.sk}/note`, { comment: 'x' }],
    ['POST', `/workflow/task/${task.sk}/snooze`, { minutes: 5 }],
    ['POST', `/workflow/task/${task.sk}/escalate-now`, {}],
    ['POST', `/workflow/task/${task.sk}/reassign`, { assignee: 'x' }],
    ['GET', '/workflow/analytics/kitchen/wait-times'],
    ['GET', '/workflow/escalation/breached'],
    ['GET', '/workflow/escalation/upcoming'],
  ];
  for (const [method, path, body] of routes) {
    t.equal((await request(v.app.url, path, { method, body, headers: { orgid: v.org } })).status, 401, `${path} without a token`);
    const asCustomer = method === 'GET' ? await v.alice.get(path) : await v.alice.post(path, body);
    t.equal(asCustomer.status, 403, `${path} with a customer token`);
    const crossed = method === 'GET' ? await v.staff.get(path, { orgid: `${v.org}-rival` }) : await v.staff.post(path, body, { orgid: `${v.org}-rival` });
    t.equal(crossed.status, 403, `${path} with another org's token`);
    if (method === 'POST') t.equal((await rival.post(path, body)).status, 404, `${path}: another tenant's task does not exist`);
  }
  t.equal((await rival.get('/workflow/task')).body.total, 0);
  const mine = await v.staff.get(`/workflow/task?workflow=kitchen`);
  t.match(mine.body.data[0], { sk: task.sk, version: 1 }, 'untouched by the rival');
});
