// The query pool's turns (issue 29, item 3): a tenant that keeps running into the budget goes
// behind a tenant whose queries are quick, whatever their order of arrival; a started spare takes
// over at once from a worker the budget ended; a full queue sheds the heaviest tenant's newest job
// rather than refuse a light tenant's.
import t, { type Test } from 'tap';
import { RECORDS_QUERY_JOB } from '../../actors/records/reads.js';
import { QueryPool, type QueryPoolOptions } from '../../core/query/pool.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

const TIMEOUT_MS = 300;
/** Runs for seconds: always stopped by the budget. */
const SLOW = [
  { $project: { x: { $map: { input: { $range: [0, 2000] }, as: 'i', in: { $size: { $map: { input: { $range: [0, 2000] }, in: { $add: ['$$i', '$$this'] } } } } } } } },
];

async function poolFor(t: Test, opts: Partial<QueryPoolOptions>): Promise<QueryPool> {
  const path = tempDir(t);
  const store = new LmdbStore({ path, mapSizeGiB: 1 });
  await store.commit(new WriteBatch().putRecord(newRecord('heavy', 'product', { name: 'x' })).putRecord(newRecord('light', 'product', { name: 'y' })));
  const pool = new QueryPool({
    workers: 1,
    timeoutMs: TIMEOUT_MS,
    heapMb: 128,
    queueMax: 100,
    tenantQueueMax: 100,
    init: {
      store: { path, mapSizeGiB: 1, limits: { defaultPageSize: 20, maxPageSize: 200 } },
      limits: { maxRange: 10_000, maxArray: 100_000, maxString: 1_000_000, maxRegexLength: 1_000, maxStageDocuments: 100_000 },
      maxResultBytes: 1 << 20,
    },
    preload: [RECORDS_QUERY_JOB],
    ...opts,
  });
  t.teardown(async () => {
    await pool.close();
    await store.close();
  });
  await pool.whenWarm();
  return pool;
}

const slow = (pool: QueryPool) => pool.run('heavy', RECORDS_QUERY_JOB, { op: 'aggregate', tenant: 'heavy', datatype: 'product', pipeline: SLOW });
const quick = (pool: QueryPool) => pool.run<number>('light', RECORDS_QUERY_JOB, { op: 'count', tenant: 'light', datatype: 'product' });
const settled = (p: Promise<unknown>) => p.then(
  () => 'answered',
  (err: { code?: string }) => err.code ?? 'failed',
);

t.test('query pool - a tenant that ran into the budget goes behind a quick tenant that asked later', async (t) => {
  const pool = await poolFor(t, { workers: 1, spares: 1 });
  t.equal(await quick(pool), 1, 'the light tenant has answered before');
  const order: string[] = [];
  const heavy = Array.from({ length: 4 }, (_, i) => settled(slow(pool)).then((s) => (order.push(`heavy ${i}`), s)));
  await new Promise((r) => setTimeout(r, 50));
  const light = quick(pool).then((n) => (order.push('light'), n));
  t.equal(await light, 1);
  t.same(await Promise.all(heavy), Array(4).fill('ERR_QUERY_BUDGET'), 'every heavy job is stopped by the budget');
  t.same(order.slice(0, 2), ['heavy 0', 'light'], `the light find runs next after the heavy job running (${order.join(', ')})`);
  t.ok(pool.isSlow('heavy') && !pool.isSlow('light'), 'the heavy tenant is marked slow');
  t.ok(pool.usedMs('heavy') > pool.usedMs('light'), 'and charged the worker time it used');
});

t.test('query pool - a started spare takes the next job at once when the budget ends a worker', async (t) => {
  const pool = await poolFor(t, { workers: 1, spares: 1 });
  const stopped = settled(slow(pool));
  await new Promise((r) => setTimeout(r, 50));
  let readyWhenAnswered = -1;
  const light = quick(pool).then((n) => ((readyWhenAnswered = pool.readyWorkers), n));
  t.equal(await stopped, 'ERR_QUERY_BUDGET');
  t.equal(await light, 1);
  t.equal(readyWhenAnswered, 1, 'the light job answered on the spare while the ended worker\'s replacement was still starting');
  const until = Date.now() + 30_000;
  while (pool.readyWorkers < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
  t.equal(pool.readyWorkers, 2, 'and the replacement starts: a spare again');
});

t.test('query pool - a full queue sheds the newest job of the tenant that used the most, not a light tenant\'s', async (t) => {
  const pool = await poolFor(t, { workers: 1, spares: 0, queueMax: 3 });
  t.equal(await quick(pool), 1);
  const heavy = Array.from({ length: 4 }, () => settled(slow(pool)));
  // The first runs, three wait: the queue is full.
  await new Promise((r) => setTimeout(r, 50));
  const light = settled(quick(pool));
  t.equal(await light, 'answered', 'the light tenant\'s job is admitted');
  t.same(await Promise.all(heavy), ['ERR_QUERY_BUDGET', 'ERR_QUERY_BUDGET', 'ERR_QUERY_BUDGET', 'ERR_UNAVAILABLE'], "the heavy tenant's newest job was shed with 503");
});
