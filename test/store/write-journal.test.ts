// The store's write journal (core/store/write-journal.ts): journaled batches are acknowledged
// before their LMDB transaction, read at once, moved into LMDB behind, replayed after kill -9, and
// never overtake a later ordinary write of the same key.
import { appendFileSync, copyFileSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import { journalHolds, MAX_PENDING_OPS, WriteJournal, type JournalOp } from '../../core/store/write-journal.js';
import { tempDir } from '../helpers/app.js';
import { runFixture } from '../helpers/child.js';

const fixture = new URL('../fixtures/journal-writer.ts', import.meta.url).pathname;
const journalFiles = (dir: string) => readdirSync(join(dir, 'journal')).filter((f) => f.endsWith('.journal'));

/** A store with a journal that moves nothing into LMDB by itself (tests call drain). */
async function openStore(dir: string, maxRecordBytes?: number): Promise<LmdbStore> {
  const store = new LmdbStore({ path: dir, mapSizeGiB: 1, maxRecordBytes });
  await store.openJournal({ dir: join(dir, 'journal'), sync: 'commit', intervalMs: 3_600_000 });
  return store;
}

t.test('journaled writes: read at once, in LMDB after the move, a later ordinary write of the same key lands last', async (t) => {
  const dir = tempDir(t);
  const store = await openStore(dir);
  t.teardown(() => store.close());
  await store.commit(new WriteBatch().append('acme', 'chat', 1, { n: 1 }).putKv('acme', 'marks', 'gone', { seq: 0 }).putKv('acme', 'marks', 'b', { seq: 0 }));
  await store.commit(
    new WriteBatch()
      .journal()
      .append('acme', 'chat', 2, { n: 2 })
      .append('acme', 'chat', 3, { n: 3 })
      .putKv('acme', 'marks', 'a', { seq: 3 })
      .putKv('acme', 'marks', 'b', { seq: 3 })
      .deleteKv('acme', 'marks', 'gone'),
  );
  // What reads see: the journal over LMDB.
  t.same(
    store.readLog('acme', 'chat').map((e) => e.seq),
    [1, 2, 3],
  );
  t.same(
    store.readLog('acme', 'chat', 2, 1).map((e) => e.entry),
    [{ n: 2 }],
    'from and limit count journaled entries too',
  );
  t.equal(store.lastLogSeq('acme', 'chat'), 3);
  t.same(store.getKv('acme', 'marks', 'b'), { seq: 3 });
  t.equal(store.getKv('acme', 'marks', 'gone'), undefined, 'a journaled delete hides the stored value');
  t.same(
    store.listKv('acme', 'marks').map((e) => [e.key, e.value]),
    [
      ['a', { seq: 3 }],
      ['b', { seq: 3 }],
    ],
  );
  t.equal(store.readLog('other', 'chat').length, 0, 'another tenant sees nothing of it');
  // LMDB itself (a store without the journal on the same files) has none of it yet.
  const raw = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  t.equal(raw.lastLogSeq('acme', 'chat'), 1, 'not yet in LMDB: acknowledged from the journal');
  t.equal(journalFiles(dir).length, 1);

  // An ordinary write of a journaled key waits for the journal's move, so it is the last word.
  await store.commit(new WriteBatch().putKv('acme', 'marks', 'a', { seq: 99 }));
  raw.resetReadTxn();
  t.same(raw.getKv('acme', 'marks', 'a'), { seq: 99 }, 'the later ordinary write is what LMDB keeps');
  t.same(store.getKv('acme', 'marks', 'a'), { seq: 99 });
  t.equal(raw.lastLogSeq('acme', 'chat'), 3, 'the journaled writes moved into LMDB first');
  t.equal(raw.getKv('acme', 'marks', 'gone'), undefined);
  t.notOk(journalFiles(dir).includes('1.journal'), 'a journal file is deleted once its writes are in LMDB');
});

t.test('a start that journals nothing (CHAT_DURABILITY=store) still replays what an earlier run journaled', async (t) => {
  const earlier = tempDir(t);
  const store = await openStore(earlier);
  await store.commit(new WriteBatch().journal().append('acme', 'chat', 1, { n: 1 }).putKv('acme', 'marks', 'a', { seq: 1 }));
  // The files as a kill would leave them, in another data directory.
  const dir = tempDir(t);
  mkdirSync(join(dir, 'journal'));
  for (const f of journalFiles(earlier)) copyFileSync(join(earlier, 'journal', f), join(dir, 'journal', f));
  await store.close();
  t.ok(journalHolds(join(dir, 'journal')));
  const later = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  t.teardown(() => later.close());
  t.equal(await later.replayJournal(join(dir, 'journal')), 2, 'both writes replayed');
  t.same(later.readLog('acme', 'chat'), [{ seq: 1, entry: { n: 1 } }]);
  t.same(later.getKv('acme', 'marks', 'a'), { seq: 1 });
  t.notOk(journalHolds(join(dir, 'journal')), 'nothing left to replay');
  await later.commit(new WriteBatch().journal().append('acme', 'chat', 2, { n: 2 }));
  t.same(journalFiles(dir), [], 'no journal kept: a journaled batch commits as a transaction');
  t.equal(later.lastLogSeq('acme', 'chat'), 2);
});

t.test('a journaled value over MAX_RECORD_BYTES is refused before it is acknowledged', async (t) => {
  const dir = tempDir(t);
  const store = await openStore(dir, 1024);
  t.teardown(() => store.close());
  await t.rejects(store.commit(new WriteBatch().journal().append('acme', 'chat', 1, { text: 'x'.repeat(2000) })), { code: 'ERR_RECORD_TOO_LARGE' });
  t.equal(store.lastLogSeq('acme', 'chat'), 0);
});

t.test('a store that refuses the moves: the journal holds at most MAX_PENDING_OPS writes, then answers 503 until they move', async (t) => {
  let refuse = true;
  let moved = 0;
  const { journal } = await WriteJournal.open({
    dir: tempDir(t),
    sync: 'commit',
    intervalMs: 3_600_000,
    materialize: async (ops) => {
      if (refuse) throw new Error('disk full');
      moved += ops.length;
    },
  });
  t.teardown(() => journal.close());
  await journal.append(Array.from({ length: MAX_PENDING_OPS }, (_, i): JournalOp => ['a', 'acme', 'chat', i + 1, { i }]));
  t.equal(await journal.materialize(), false, 'the store refused the move');
  const next: JournalOp[] = [['a', 'acme', 'chat', MAX_PENDING_OPS + 1, {}]];
  await t.rejects(journal.append(next), { code: 'ERR_UNAVAILABLE' });
  t.equal(journal.lastSeq('acme', 'chat'), MAX_PENDING_OPS, 'what was acknowledged is still read');
  refuse = false;
  t.equal(await journal.materialize(), true);
  t.equal(moved, MAX_PENDING_OPS, 'every held write moved, once');
  await journal.append(next);
  t.equal(journal.lastSeq('acme', 'chat'), MAX_PENDING_OPS + 1, 'accepted again');
});

for (const [sync, intervalMs] of [
  ['commit', '3600000'],
  ['flush', '20'],
] as const) {
  t.test(`kill -9 (journal ${sync}, moved every ${intervalMs} ms): every acknowledged write is there after reopening`, async (t) => {
    const dir = tempDir(t);
    const child = runFixture(fixture, [dir, sync, intervalMs]);
    await child.waitFor((lines) => lines.length >= 3000);
    await child.kill9();
    t.equal(child.proc.signalCode, 'SIGKILL');
    const acked = child.lines.filter((l) => l.startsWith('ack ')).map((l) => Number(l.slice(4)));
    if (sync === 'commit') t.ok(journalFiles(dir).length > 0, 'the kill left writes in the journal');
    // What a crash mid-write leaves: a torn frame at the end of the last file.
    const last = journalFiles(dir).sort((a, b) => parseInt(a) - parseInt(b)).at(-1);
    if (last) appendFileSync(join(dir, 'journal', last), Buffer.from([200, 0, 0, 0, 1, 2, 3, 4, 5]));
    const left = journalFiles(dir);
    const store = await openStore(dir);
    t.teardown(() => store.close());
    const stored = new Set(store.readLog('acme', 'chat').map((e) => e.seq));
    t.same(
      acked.filter((n) => !stored.has(n)),
      [],
      `all ${acked.length} acknowledged writes are in the store`,
    );
    t.same(
      journalFiles(dir).filter((f) => left.includes(f)),
      [],
      'replayed into LMDB at open, the files the kill left are gone',
    );
    const raw = new LmdbStore({ path: dir, mapSizeGiB: 1 });
    t.ok(raw.lastLogSeq('acme', 'chat') >= Math.max(...acked), 'in LMDB itself, not only in memory');
  });
}
