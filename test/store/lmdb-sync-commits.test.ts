// Commits of an unflushed environment on the loop's thread (core/store/lmdb-sync-commits.ts), on a
// real LMDB environment: a turn's batches in one transaction, in the order they came; a child
// batch that throws rolled back alone; a long queue committed in transactions of at most 512
// batches with the loop getting turns between them; and flush() committing what is queued at once.
import t from 'tap';
import { open, type RootDatabase } from 'lmdb';
import { SyncCommits } from '../../core/store/lmdb-sync-commits.js';
import { tempDir } from '../helpers/app.js';

function env(t: Parameters<typeof tempDir>[0]): RootDatabase {
  const root = open({ path: tempDir(t), noSync: true, compression: false });
  t.teardown(() => root.close());
  return root;
}

const lastTxn = (root: RootDatabase) => (root.getStats() as { lastTxnId: number }).lastTxnId;

t.test('SyncCommits - the batches of one turn commit in one transaction, in order; a child that throws is rolled back alone', async (t) => {
  const root = env(t);
  const commits = new SyncCommits(root);
  const before = lastTxn(root);
  const order: number[] = [];
  const results = await Promise.allSettled([
    commits.add(() => {
      order.push(1);
      void root.put('a', 1);
      return 'one';
    }, false),
    commits.add(() => {
      order.push(2);
      void root.put('b', 2);
      throw new Error('half-way');
    }, true),
    commits.add(() => {
      order.push(3);
      void root.put('a', 3);
      return 'three';
    }, false),
  ]);
  t.same(order, [1, 2, 3], 'run in the order queued');
  t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'fulfilled']);
  t.same((results[0] as PromiseFulfilledResult<string>).value, 'one', 'each resolves what it returned');
  t.equal(lastTxn(root) - before, 1, 'one transaction');
  t.equal(root.get('a'), 3, 'the later write of a key lands last');
  t.equal(root.get('b'), undefined, 'the throwing child wrote nothing');
});

t.test('SyncCommits - a long queue commits 512 batches a transaction, and the loop gets a turn between them', async (t) => {
  const root = env(t);
  const commits = new SyncCommits(root);
  const before = lastTxn(root);
  let turns = 0;
  const ticker = setInterval(() => turns++, 0);
  const seen: number[] = [];
  const all = Array.from({ length: 1300 }, (_, i) =>
    commits.add(() => {
      seen.push(turns);
      void root.put(['k', i], i);
    }, false),
  );
  await Promise.all(all);
  clearInterval(ticker);
  t.equal(lastTxn(root) - before, 3, '1,300 batches in three transactions');
  t.equal(root.get(['k', 1299]), 1299);
  t.ok(seen[1299] > seen[0], `timers ran between the transactions (${seen[0]} then ${seen[1299]})`);
});

t.test('SyncCommits - flush() commits what is queued before it returns', async (t) => {
  const root = env(t);
  const commits = new SyncCommits(root);
  const done = commits.add(() => root.put('x', 1), false);
  t.equal(root.get('x'), undefined, 'queued, not yet committed');
  commits.flush();
  t.equal(root.get('x'), 1, 'committed by flush');
  await done;
});
