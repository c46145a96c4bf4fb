import t from 'tap';
import { ManualClock, systemClock } from '../../core/clock.js';
import { completeJob, scheduleJob, Scheduler, SCHEDULER_NS, type ScheduledJob } from '../../core/scheduler.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch, type Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

const TENANT = 'acme';

async function openStore(t: Parameters<typeof tempDir>[0], path = tempDir(t)): Promise<{ store: LmdbStore; path: string }> {
  const store = new LmdbStore({ path, mapSizeGiB: 1 });
  await store.commit(new WriteBatch().putOrg({ orgId: TENANT, displayName: TENANT, createdate: new Date(0).toISOString() }));
  return { store, path };
}

/** A store with one org, a manual clock at `start` and the store's scheduler, all closed in teardown. */
async function schedulerWorld(t: Parameters<typeof tempDir>[0], start: number) {
  const { store } = await openStore(t);
  const clock = new ManualClock(start);
  const s = new Scheduler({ store, clock });
  t.teardown(async () => {
    await s.stop();
    await store.close();
  });
  return { store, clock, s };
}

/** A handler that records the effect and completes the job in one batch, as actors do. */
function effectHandler(store: Store, seen: string[]) {
  return async (job: ScheduledJob) => {
    const batch = new WriteBatch();
    batch.putKv(job.tenant, 'effects', job.id, { firedFor: job.payload });
    completeJob({ store, tenant: job.tenant, batch }, job.id);
    await store.commit(batch);
    seen.push(job.id);
  };
}

async function schedule(
  scheduler: Scheduler,
  store: Store,
  clock: ManualClock,
  dueAt: number,
  payload: Record<string, unknown> = {},
  kind = 'test.kind',
) {
  const batch = new WriteBatch();
  const job = scheduleJob({ store, tenant: TENANT, batch, clock, services: { scheduler } }, kind, dueAt, payload);
  await store.commit(batch);
  return job;
}

t.test('Scheduler - a job fires once when due and is removed with its effect', async (t) => {
  const { store, clock, s } = await schedulerWorld(t, 1_000_000);
  const seen: string[] = [];
  s.register('test.kind', effectHandler(store, seen));
  s.start();
  const job = await schedule(s, store, clock, clock.now() + 60_000, { n: 1 });
  t.ok(s.pending(TENANT).some((j) => j.id === job.id), 'scheduleJob armed the scheduler of its writer');
  t.equal(s.pending(TENANT).length, 1);
  t.equal(await s.runDue(), 0, 'not due yet');
  clock.advance(59_999);
  t.equal(await s.runDue(), 0, 'still not due');
  clock.advance(1);
  t.equal(await s.runDue(), 1, 'due now');
  t.same(seen, [job.id]);
  t.same(store.getKv(TENANT, 'effects', job.id), { firedFor: { n: 1 } }, 'effect written');
  t.equal(store.getKv(TENANT, SCHEDULER_NS, job.id), undefined, 'job removed in the same batch');
  clock.advance(3_600_000);
  t.equal(await s.runDue(), 0, 'never again');
  t.same(seen, [job.id]);
});

t.test('Scheduler - concurrent runDue calls hand a job out once', async (t) => {
  const { store, clock, s } = await schedulerWorld(t, 5_000_000);
  let calls = 0;
  s.register('test.kind', async (job) => {
    calls++;
    await new Promise((r) => setTimeout(r, 20));
    const batch = new WriteBatch();
    completeJob({ store, tenant: job.tenant, batch }, job.id);
    await store.commit(batch);
  });
  s.start();
  await schedule(s, store, clock, clock.now() - 1);
  await Promise.all([s.runDue(), s.runDue(), s.runDue()]);
  t.equal(calls, 1);
});

t.test('Scheduler - a run that comes before the arming batch commits does not delay the job', async (t) => {
  const { store, clock, s } = await schedulerWorld(t, 7_000_000);
  const seen: string[] = [];
  s.register('test.kind', effectHandler(store, seen));
  s.start();
  // Armed in memory, batch not committed yet: a run now finds nothing stored and must leave it.
  const batch = new WriteBatch();
  const job = scheduleJob({ store, tenant: TENANT, batch, clock, services: { scheduler: s } }, 'test.kind', clock.now() - 1, {});
  t.equal(await s.runDue(), 0, 'not committed: nothing runs');
  await store.commit(batch);
  t.equal(await s.runDue(), 1, 'committed: it runs at once, the clock unmoved');
  t.same(seen, [job.id]);
  // One armed whose batch never commits is dropped once it is old.
  const lost = scheduleJob({ store, tenant: TENANT, batch: new WriteBatch(), clock, services: { scheduler: s } }, 'test.kind', clock.now(), {});
  t.equal(await s.runDue(), 0);
  clock.advance(30_001);
  t.equal(await s.runDue(), 0);
  t.notOk(s.pending(TENANT).some((j) => j.id === lost.id), 'never stored, so never pending');
  t.same(seen, [job.id]);
});

t.test('Scheduler - armTenant arms jobs another node stored (a cluster takeover)', async (t) => {
  const { store, clock, s } = await schedulerWorld(t, 11_000_000);
  const seen: string[] = [];
  s.register('test.kind', effectHandler(store, seen));
  s.start();
  // Written as the previous owner's commit arrives here: in the store, never armed on this node.
  const job: ScheduledJob = { id: 'job-from-elsewhere', tenant: TENANT, kind: 'test.kind', dueAt: clock.now() - 1, payload: {}, createdAt: clock.now() - 5_000 };
  await store.commit(new WriteBatch().putKv(TENANT, SCHEDULER_NS, job.id, job));
  t.equal(await s.runDue(), 0, 'not armed here yet');
  t.equal(s.armTenant(TENANT), 1);
  t.equal(s.armTenant(TENANT), 0, 'arming twice adds nothing');
  t.equal(await s.runDue(), 1, 'armed: it fires');
  t.same(seen, [job.id]);
});

t.test('Scheduler - a failed job stays stored and is retried with back-off', async (t) => {
  const { store, clock, s } = await schedulerWorld(t, 9_000_000);
  let fail = true;
  const seen: string[] = [];
  const ok = effectHandler(store, seen);
  s.register('test.kind', async (job) => {
    if (fail) throw new Error('actor unavailable');
    await ok(job);
  });
  s.start();
  const job = await schedule(s, store, clock, clock.now());
  t.equal(await s.runDue(), 0, 'the failing run does not count');
  t.ok(store.getKv(TENANT, SCHEDULER_NS, job.id), 'still stored');
  fail = false;
  t.equal(await s.runDue(), 0, 'not retried before the back-off');
  clock.advance(5_000);
  t.equal(await s.runDue(), 1, 'retried after it');
  t.same(seen, [job.id]);
});

t.test('Scheduler - jobs survive a restart and fire on the new scheduler', async (t) => {
  const path = tempDir(t);
  const clock = new ManualClock(20_000_000);
  {
    const { store } = await openStore(t, path);
    const s = new Scheduler({ store, clock });
    s.start();
    await schedule(s, store, clock, clock.now() + 3_600_000, { which: 'later' });
    await schedule(s, store, clock, clock.now() + 60_000, { which: 'soon' });
    await s.stop();
    await store.close();
  }
  clock.advance(2 * 3_600_000);
  const { store } = await openStore(t, path);
  const s = new Scheduler({ store, clock });
  t.teardown(async () => {
    await s.stop();
    await store.close();
  });
  const seen: string[] = [];
  s.start();
  t.equal(s.pending(TENANT).length, 2, 'both loaded from the store');
  t.equal(await s.runDue(), 0, 'no handler registered yet: nothing runs');
  s.register('test.kind', effectHandler(store, seen));
  t.equal(await s.runDue(), 2);
  t.equal(store.listKv(TENANT, SCHEDULER_NS).length, 0);
  t.equal(store.listKv(TENANT, 'effects').length, 2);
});

t.test('Scheduler - the armed timer fires by itself', async (t) => {
  const { store } = await openStore(t);
  const s = new Scheduler({ store, clock: systemClock });
  t.teardown(async () => {
    await s.stop();
    await store.close();
  });
  const fired = new Promise<ScheduledJob>((resolve) => {
    s.register('test.kind', async (job) => {
      const batch = new WriteBatch();
      completeJob({ store, tenant: job.tenant, batch }, job.id);
      await store.commit(batch);
      resolve(job);
    });
  });
  s.start();
  const batch = new WriteBatch();
  const job = scheduleJob({ store, tenant: TENANT, batch, services: { scheduler: s } }, 'test.kind', Date.now() + 30, { x: 1 });
  await store.commit(batch);
  // The scheduler's timer is unref'd (it never holds a process open): keep this test's loop alive.
  const keepAlive = setInterval(() => undefined, 1000);
  const got = await fired.finally(() => clearInterval(keepAlive));
  t.equal(got.id, job.id);
});

t.test('Scheduler - a cancelled job never fires', async (t) => {
  const { store, clock, s } = await schedulerWorld(t, 30_000_000);
  const seen: string[] = [];
  s.register('test.kind', effectHandler(store, seen));
  s.start();
  const job = await schedule(s, store, clock, clock.now() + 1000);
  const batch = new WriteBatch();
  completeJob({ store, tenant: TENANT, batch }, job.id);
  await store.commit(batch);
  clock.advance(10_000);
  t.equal(await s.runDue(), 0);
  t.same(seen, []);
});

t.test('Scheduler - a job whose completing batch fails stays armed and runs again', async (t) => {
  const { store, clock, s } = await schedulerWorld(t, 40_000_000);
  let attempt = 0;
  s.register('test.kind', async (job) => {
    attempt++;
    const batch = new WriteBatch();
    completeJob({ store, tenant: job.tenant, batch }, job.id);
    // The first effect collides with a concurrent writer: the whole batch, completion included, fails.
    batch.putKv(job.tenant, 'effects', job.id, attempt);
    if (attempt === 1) batch.putRecord({ pk: TENANT, sk: 'x', datatype: 'thing', version: 1, state: 'new', createdate: '', modifydate: '', data: {} }, 7);
    await store.commit(batch);
  });
  s.start();
  const job = await schedule(s, store, clock, clock.now() + 1000);
  clock.advance(1000);
  t.equal(await s.runDue(), 0, 'the first run failed');
  t.same(s.pending(TENANT).map((j) => j.id), [job.id], 'still pending');
  clock.advance(5_000);
  t.equal(await s.runDue(), 1);
  t.equal(store.getKv(TENANT, 'effects', job.id), 2);
  t.same(s.pending(TENANT), []);
});
