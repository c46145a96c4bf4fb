// The query planner on a real LMDB store: what it reads for a filter, and what choosing may cost.
import t from 'tap';
import { planFilter } from '../../core/store/find-plan.js';
import { PLAN_COUNT_BUDGET, PLAN_COUNT_CAP } from '../../core/store/lmdb-plan-run.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

const catalog = (multikey: boolean) => ({ paths: ['data.a', 'data.b'], multikey: () => multikey });

t.test('planFilter - narrows by every indexed conjunct, and by an $or only when every branch narrows', async (t) => {
  t.same(planFilter({ $and: [{ 'data.a': 'x' }] }, catalog(false)), { stage: 'IXSCAN', read: { path: 'data.a', values: ['x'] } });
  t.match(planFilter({ 'data.a': { $gte: 2, $lt: 9 }, 'data.c': 1 }, catalog(false)), {
    stage: 'IXSCAN',
    read: { path: 'data.a', range: { type: 'number', low: { key: 2, inclusive: true }, high: { key: 9, inclusive: false } } },
  });
  t.match(planFilter({ 'data.a': { $gte: 2, $lt: 9 } }, catalog(true)), { stage: 'AND', inputs: [{ read: { range: { low: {} } } }, { read: { range: { high: {} } } }] }, 'an array path keeps its bounds apart');
  t.match(planFilter({ $or: [{ 'data.a': 1 }, { $and: [{ 'data.b': { $in: ['p', 'q'] } }, { 'data.c': 2 }] }] }, catalog(false)), {
    stage: 'OR',
    inputs: [{ read: { path: 'data.a' } }, { read: { path: 'data.b', values: ['p', 'q'] } }],
  });
  t.equal(planFilter({ $or: [{ 'data.a': 1 }, { 'data.c': 2 }] }, catalog(false)), undefined);
  t.equal(planFilter({ 'data.a': { $in: [1, null] } }, catalog(false)), undefined, 'null matches a missing field');
  t.equal(planFilter({ 'data.a': { $gt: null } }, catalog(false)), undefined);
  t.equal(planFilter({ 'data.a': { x: 1 } }, catalog(false)), undefined, 'an object equality');
  t.match(planFilter({ 'data.a': { $gt: '\u{1F600}' } }, catalog(false)), { read: { range: { type: 'string' } } }, 'a bound past U+D800 reads every string');
});

t.test('PlanRunner - choosing among many reads counts a bounded number of keys', async (t) => {
  const store = new LmdbStore({ path: tempDir(t) });
  t.teardown(() => store.close());
  await store.declareIndex('item', 'data.a');
  await store.declareIndex('item', 'data.b');
  const batch = new WriteBatch();
  for (let i = 0; i < 3_000; i++) batch.putRecord(newRecord('acme', 'item', { a: 1, b: i }));
  await store.commit(batch);
  // Fifty `$and`s each of a read of 3,000 keys and one of one key.
  const filter = { $or: Array.from({ length: 50 }, (_, i) => ({ $and: [{ 'data.a': 1 }, { 'data.b': i * 7 }] })) };
  const explained = store.explain('acme', 'item', filter, { pageSize: 100 });
  t.equal(explained.total, 50);
  t.ok(explained.keysCounted <= PLAN_COUNT_BUDGET + PLAN_COUNT_CAP, `${explained.keysCounted} keys counted`);
  t.equal(explained.plan.stage, 'OR');
  t.ok(store.candidatesUpTo('acme', 'item', filter, 1_001) > 1_000, 'past the budget a plan counts as large (a worker runs it)');
  t.equal(store.candidatesUpTo('acme', 'item', { $or: filter.$or.slice(0, 5) }, 1_001), 5, 'within it, the small reads are chosen');
});
