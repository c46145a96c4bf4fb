import t from 'tap';
import { createTask, getTask } from '../../actors/workflow/index.js';
import { ManualClock } from '../../core/clock.js';
import { sharedApp, T0, venue } from '../reservations/world.js';

// Subtests that do not restart share one app (a fresh org each); they leave no job pending, so the
// counts runDue returns stay theirs.
const shared = await sharedApp(t, { modules: ['workflow'] });

const MIN = 60_000;

/** Waits (bounded) until `check` holds, keeping the loop alive: the scheduler's timers are unref'd. */
async function eventually<T>(check: () => T | undefined | false, ms = 5000): Promise<T | undefined> {
  const until = Date.now() + ms;
  for (;;) {
    const v = check();
    if (v) return v;
    if (Date.now() > until) return undefined;
    await new Promise((r) => setTimeout(r, 20));
  }
}

t.test('escalation - fires once when the stage SLA runs out', async (t) => {
  const v = await venue(t, { shared });
  const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen', title: 'Soup' });
  const s = v.app.deps.services.scheduler;
  t.same(s.pending(v.org).map((j) => [j.kind, j.payload.taskId]), [['workflow.escalation', task.sk]]);
  v.clock.advance(4 * MIN);
  t.equal(await s.runDue(), 0);
  v.clock.advance(1 * MIN);
  t.equal(await s.runDue(), 1);
  const after = await getTask(v.app.deps.runtime, v.org, task.sk);
  t.match(after.data, { escalationLevel: 1, escalationJobId: null, escalations: [{ stageId: 'queued', reason: 'sla', overdueMinutes: 0 }] });
  v.clock.advance(60 * MIN);
  t.equal(await s.runDue(), 0, 'never twice');
  t.equal((await getTask(v.app.deps.runtime, v.org, task.sk)).data.escalations.length, 1);
});

t.test('escalation - leaving the stage in time disarms it; the next stage arms its own', async (t) => {
  const v = await venue(t, { shared });
  const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen' });
  v.clock.advance(3 * MIN);
  await v.staff.post(`/workflow/task/${task.sk}/advance`);
  const s = v.app.deps.services.scheduler;
  const jobs = s.pending(v.org);
  t.same(jobs.map((j) => [j.payload.stageId, new Date(j.dueAt).toISOString()]), [['preparing', '2026-03-20T08:18:00.000Z']]);
  v.clock.advance(10 * MIN);
  t.equal(await s.runDue(), 0, 'the queued SLA never fires');
  await v.staff.post(`/workflow/task/${task.sk}/complete`);
  t.same(s.pending(v.org), [], 'a finished task has no timers');
  v.clock.advance(60 * MIN);
  t.equal(await s.runDue(), 0);
  t.equal((await getTask(v.app.deps.runtime, v.org, task.sk)).data.escalations.length, 0);
});

t.test('escalation - fires after a restart, by itself, on a clock past its due time', async (t) => {
  const clock = new ManualClock(T0);
  const first = await venue(t, { modules: ['workflow'], clock });
  const task = await createTask(first.app.deps.runtime, first.org, { workflowId: 'kitchen', title: 'Risotto' });
  await first.app.close();

  clock.advance(12 * MIN);
  const second = await venue(t, { modules: ['workflow'], clock, dataDir: first.dataDir });
  const escalated = await eventually(() => {
    const rec = second.app.deps.store.getRecord(second.org, 'task', task.sk);
    return rec && (rec.data.escalations as unknown[]).length > 0 ? rec : undefined;
  });
  t.ok(escalated, 'the timer armed at start-up fired without help');
  t.match(escalated?.data, { escalationLevel: 1, escalations: [{ reason: 'sla', stageId: 'queued', overdueMinutes: 7 }] });
  t.same(second.app.deps.store.listKv(second.org, 'scheduler'), [], 'the job is gone with its effect');
  await second.app.close();

  const third = await venue(t, { modules: ['workflow'], clock, dataDir: first.dataDir });
  t.equal(await third.app.deps.services.scheduler.runDue(), 0, 'nothing left to fire after another restart');
  t.equal(third.app.deps.store.getRecord(third.org, 'task', task.sk)!.data.escalationLevel, 1);
});

t.test('snooze - the wake-up timer fires after a restart', async (t) => {
  const clock = new ManualClock(T0);
  const first = await venue(t, { modules: ['workflow'], clock });
  const task = await createTask(first.app.deps.runtime, first.org, { workflowId: 'check-in', title: 'Guest', businessLocationId: 'downtown' });
  const snoozed = await first.staff.post(`/workflow/task/${task.sk}/snooze`, { minutes: 30 });
  t.equal(snoozed.body.data.snoozedUntil, '2026-03-20T08:30:00.000Z');
  t.equal((await first.staff.get('/workflow/task?status=snoozed')).body.total, 1);
  await first.app.close();

  clock.advance(31 * MIN);
  const second = await venue(t, { modules: ['workflow'], clock, dataDir: first.dataDir });
  const woke = await eventually(() => {
    const rec = second.app.deps.store.getRecord(second.org, 'task', task.sk);
    return rec?.data.wokeAt ? rec : undefined;
  });
  t.ok(woke, 'woken by the timer');
  t.equal(woke?.data.snoozedUntil, null);
  t.equal((await second.staff.get('/workflow/task?status=snoozed')).body.total, 0);
  // The waiting stage's 15-minute SLA passed during the snooze: it fires at the snooze's end.
  const esc = await eventually(() => {
    const rec = second.app.deps.store.getRecord(second.org, 'task', task.sk);
    return rec && (rec.data.escalations as unknown[]).length > 0 ? rec : undefined;
  });
  t.match(esc?.data.escalations, [{ reason: 'sla', stageId: 'waiting' }]);
});

t.test('snooze - defers the SLA escalation to its end', async (t) => {
  const v = await venue(t, { shared });
  const task = await createTask(v.app.deps.runtime, v.org, { workflowId: 'kitchen' });
  await v.staff.post(`/workflow/task/${task.sk}/snooze`, { minutes: 20 });
  const s = v.app.deps.services.scheduler;
  v.clock.advance(6 * MIN);
  t.equal(await s.runDue(), 1, 'the SLA job ran');
  let rec = await getTask(v.app.deps.runtime, v.org, task.sk);
  t.equal(rec.data.escalations.length, 0, 'but snoozed: no escalation yet');
  t.ok(rec.data.escalationJobId, 'it re-armed for the end of the snooze');
  t.equal(new Date(s.pending(v.org).find((j) => j.kind === 'workflow.escalation')!.dueAt).toISOString(), '2026-03-20T08:20:00.000Z');
  v.clock.advance(14 * MIN);
  t.equal(await s.runDue(), 2, 'wake-up and escalation');
  rec = await getTask(v.app.deps.runtime, v.org, task.sk);
  t.match(rec.data, { snoozedUntil: null, escalationLevel: 1, escalations: [{ reason: 'sla', overdueMinutes: 15 }] });
  t.same(s.pending(v.org), []);
});
