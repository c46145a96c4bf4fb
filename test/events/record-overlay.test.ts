import t from 'tap';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { newRecord, nextVersion } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { RecordOverlay } from '../../actors/scanner/record-overlay.js';
import { tempDir } from '../helpers/app.js';

t.test('RecordOverlay - reads see writes still in flight, and forget them once they landed', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const overlay = new RecordOverlay(store, 'acme');

  const b1 = new WriteBatch();
  const v1 = newRecord('acme', 'ticket', { n: 1 });
  overlay.put(b1, v1, 0);
  t.equal(store.getRecord('acme', 'ticket', v1.sk), undefined, 'not in the store yet');
  t.same(overlay.get('ticket', v1.sk), v1, 'but this actor reads it');
  const v2 = nextVersion(v1, { data: { n: 2 } });
  overlay.put(b1, v2, 1);
  t.same(b1.ops.map((o) => (o.op === 'putRecord' ? o.ifVersion : null)), [0, undefined], 'only the first write of a record in a batch is checked');
  await store.commit(b1);
  t.equal(overlay.get('ticket', v1.sk)!.data.n, 2);
  t.equal(overlay.size, 0, 'a landed write is dropped on read');

  // A write the batch never committed (a conflict) stays newer than the store until reactivation.
  const b2 = new WriteBatch();
  overlay.put(b2, nextVersion(v2, { data: { n: 3 } }), 2);
  t.equal(overlay.get('ticket', v1.sk)!.data.n, 3);
  overlay.delete(b2, v2);
  t.equal(overlay.size, 0, 'a delete is not pending');
});

t.test('RecordOverlay - sweeps in write order, by log mark or by reading back', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const overlay = new RecordOverlay(store, 'acme', () => store.lastLogSeq('acme', 'scan:e'));

  // 600 untagged writes committed, then 600 tagged ones not yet: the sweep clears the first run.
  const landed = new WriteBatch();
  for (let i = 0; i < 600; i++) overlay.put(landed, newRecord('acme', 'ticket', { i }), 0);
  t.equal(overlay.size, 600, 'sweeps while nothing has landed keep everything');
  const before = overlay.size;
  await store.commit(landed);
  const flying = new WriteBatch();
  for (let i = 0; i < 600; i++) {
    flying.append('acme', 'scan:e', i + 1, { i });
    overlay.put(flying, newRecord('acme', 'ticket', { i: 1000 + i }), 0, i + 1);
  }
  t.ok(overlay.size < before + 600, 'the landed run was dropped');
  await store.commit(flying);
  for (let i = 0; i < 600; i++) overlay.put(new WriteBatch(), newRecord('acme', 'ticket', { i: 5000 + i }), 0, 10_000 + i);
  t.ok(overlay.size <= 600, `tagged writes under the log's last sequence are dropped without reading them (${overlay.size} left)`);
});
