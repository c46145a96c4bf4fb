// A batch of one append or one kv put (a door scan's log entry) is written in the turn's shared
// transaction without a child transaction of its own: it can only fail whole, and when it does it
// fails alone, never the other batches committed in the same turn. Each test runs on a flushed
// store (lmdb-js's asynchronous transactions) and an unflushed one (a cluster node's tenant
// environment: one transaction on the loop's thread a turn, lmdb-sync-commits.ts).
import t from 'tap';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

for (const unflushed of [false, true]) {
  const kind = unflushed ? 'unflushed' : 'flushed';

  t.test(`${kind}: one-write batches land, and a failing one fails alone in its turn`, async (t) => {
    const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1, maxRecordBytes: 4096, unflushed });
    t.teardown(() => store.close());
    const rec = newRecord('acme', 'thing', { a: 1 });
    // All committed in one event turn, so lmdb-js writes them in one transaction.
    const results = await Promise.allSettled([
      store.commit(new WriteBatch().append('acme', 'scan:e1', 1, { n: 1 })),
      store.commit(new WriteBatch().putKv('acme', 'ns', 'k'.repeat(3000), { v: 1 })),
      store.commit(new WriteBatch().append('acme', 'scan:e1', 2, { big: 'x'.repeat(10_000) })),
      store.commit(new WriteBatch().putRecord(rec, 0)),
      store.commit(new WriteBatch().putKv('acme', 'ns', 'k1', { v: 2 })),
      store.commit(new WriteBatch().append('acme', 'scan:e1', 3, { n: 3 })),
    ]);
    t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    t.match((results[2] as PromiseRejectedResult).reason, { code: 'ERR_RECORD_TOO_LARGE' });
    t.same(store.readLog('acme', 'scan:e1').map((e) => e.seq), [1, 3], 'the oversized entry was not written, its neighbours were');
    t.equal(store.getRecord('acme', 'thing', rec.sk)?.version, 1);
    t.same(store.getKv('acme', 'ns', 'k1'), { v: 2 });
    t.same(store.listKv('acme', 'ns').map((e) => e.key), ['k1']);
  });

  t.test(`${kind}: a few appends and kv writes of plain data share the turn transaction, and still land all or nothing`, async (t) => {
    const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1, maxRecordBytes: 4096, unflushed });
    t.teardown(() => store.close());
    const throwing = {
      get x(): number {
        throw new Error('not encodable');
      },
    };
    const results = await Promise.allSettled([
      // A door scan with its webhook event: lands whole.
      store.commit(new WriteBatch().append('acme', 'scan:e1', 1, { n: 1 }).putKv('acme', 'webhook_event', 'ev1', { body: '{}' }).putKv('acme', 'webhook_lane', 'l1', 1)),
      // Its last write too large: nothing of it lands (checked before the first write).
      store.commit(new WriteBatch().append('acme', 'scan:e1', 2, { n: 2 }).putKv('acme', 'webhook_event', 'ev2', { body: 'x'.repeat(10_000) })),
      // A value the encoder cannot take: its own child transaction, rolled back whole.
      store.commit(new WriteBatch().append('acme', 'scan:e1', 3, { n: 3 }).putKv('acme', 'webhook_event', 'ev3', throwing)),
      // Too long a key in the second write: nothing of it lands.
      store.commit(new WriteBatch().putKv('acme', 'webhook_lane', 'l4', 1).putKv('acme', 'webhook_lane', 'k'.repeat(3000), 1)),
      store.commit(new WriteBatch().append('acme', 'scan:e1', 5, { n: 5 }).deleteKv('acme', 'webhook_lane', 'l1')),
    ]);
    t.same(results.map((r) => r.status), ['fulfilled', 'rejected', 'rejected', 'rejected', 'fulfilled']);
    t.match((results[1] as PromiseRejectedResult).reason, { code: 'ERR_RECORD_TOO_LARGE' });
    t.same(store.readLog('acme', 'scan:e1').map((e) => e.seq), [1, 5], 'only the batches that landed whole');
    t.same(store.listKv('acme', 'webhook_event').map((e) => e.key), ['ev1']);
    t.same(store.listKv('acme', 'webhook_lane'), [], 'l4 never landed, l1 deleted');
  });
}
