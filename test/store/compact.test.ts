import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { compactInPlace } from '../../core/store/compact.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { createLogger } from '../../core/log.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { runFixture } from '../helpers/child.js';

const holder = new URL('../fixtures/store-holder.ts', import.meta.url).pathname;

/** Ids in a scattered order, so every batch lands all over the trees (as tickets do). */
const id = (i: number) => ((i * 2654435761) % 2 ** 32).toString(16).padStart(8, '0') + i.toString(16).padStart(16, '0');

/** A store bulk writes left with a free list: 6,000 records in 1,500-record batches, then all rewritten. */
async function bulkWritten(dir: string): Promise<{ digest: string; kv: unknown; log: unknown[]; free: number }> {
  const store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  await store.declareIndex('order', 'data.customer');
  await store.commit(new WriteBatch().putOrg({ orgId: 'acme', displayName: 'Acme', createdate: '2026-01-01T00:00:00.000Z' }).putKv('acme', 'ns', 'k', { n: 1 }));
  const recs: StoredRecord[] = [];
  for (let i = 0; i < 6000; i++) recs.push(newRecord('acme', 'order', { customer: `c${i % 50}`, total: i, note: 'x'.repeat(120) }, { sk: id(i), now: 0 }));
  for (let i = 0; i < recs.length; i += 1500) {
    const b = new WriteBatch();
    for (const r of recs.slice(i, i + 1500)) b.putRecord(r, 0);
    await store.commit(b);
  }
  for (let i = 0; i < recs.length; i += 1500) {
    const b = new WriteBatch();
    for (const r of recs.slice(i, i + 1500)) b.putRecord(nextVersion(r, { data: { ...r.data, total: -r.data.total! } }, 1), r.version);
    await store.commit(b);
  }
  const b = new WriteBatch();
  for (let s = 1; s <= 100; s++) b.append('acme', 'scan:e1', s, { s });
  await store.commit(b);
  const out = { digest: store.digest(), kv: store.getKv('acme', 'ns', 'k'), log: store.readLog('acme', 'scan:e1'), free: store.freePages() };
  await store.close();
  return out;
}

t.test('compactInPlace - the same data, no free list, and large batches still commit', async (t) => {
  const dir = tempDir(t);
  const before = await bulkWritten(dir);
  const r = await compactInPlace(dir);
  t.ok(r.freePagesBefore > 500, `the bulk writes left a free list (${r.freePagesBefore} pages)`);
  t.equal(before.free, r.freePagesBefore, 'the store reports the same count (/metrics: store_free_pages)');
  t.ok(r.freePagesAfter < 20, `next to none after (${r.freePagesAfter})`);
  t.ok(r.pagesAfter < r.pagesBefore, `the file shrank from ${r.pagesBefore} to ${r.pagesAfter} pages`);
  t.equal(r.entries.records, 6000);
  t.ok(existsSync(r.kept) && statSync(r.kept).size > 0, 'the old file is kept beside');
  t.notOk(existsSync(`${dir}.compacting`), 'no copy is left behind');
  await t.rejects(compactInPlace(dir), /before-compact is still there/, 'a second run does not overwrite the kept file');

  const store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  t.teardown(() => store.close());
  t.ok(store.freePages() < 20, 'the compacted store reports next to no free pages');
  t.equal(store.digest(), before.digest, 'every record, index entry, log entry and organisation is the same');
  t.same(store.getKv('acme', 'ns', 'k'), before.kv);
  t.same(store.readLog('acme', 'scan:e1'), before.log);
  t.equal(store.count('acme', 'order', { 'data.customer': 'c7' }), 120, 'indexed queries answer as before');
  // A store made by lmdb-js's compacting backup aborted the process on this (see compact.ts).
  for (let round = 0; round < 3; round++) {
    const b = new WriteBatch();
    for (let i = round * 500; i < round * 500 + 500; i++) {
      const cur = store.getRecord('acme', 'order', id(i))!;
      b.putRecord(nextVersion(cur, { data: { ...cur.data, paid: true } }, 2), cur.version);
    }
    await store.commit(b);
  }
  t.equal(store.getRecord('acme', 'order', id(1499))?.data.paid, true, 'three 500-record batches committed');
  // New records, written after compaction, land and are found.
  await store.commit(new WriteBatch().putRecord(newRecord('acme', 'order', { customer: 'c7' }, { sk: 'ffffffffffffffffffffffff', now: 3 }), 0));
  t.equal(store.count('acme', 'order', { 'data.customer': 'c7' }), 121);
});

t.test('compactInPlace - refuses a store another process has open, and changes nothing', async (t) => {
  const dir = tempDir(t);
  await bulkWritten(dir);
  const size = statSync(join(dir, 'data.mdb')).size;
  const child = runFixture(holder, [dir]);
  t.teardown(() => child.kill9());
  await child.waitFor((lines) => lines.includes('open'));
  await t.rejects(compactInPlace(dir), /open in process \d+: stop the server first/);
  t.equal(statSync(join(dir, 'data.mdb')).size, size, 'the store file is untouched');
  t.notOk(existsSync(join(dir, 'data.mdb.before-compact')));
  t.notOk(existsSync(`${dir}.compacting`));
});

t.test('compactInPlace - a directory without a store is an error', async (t) => {
  const dir = tempDir(t);
  await t.rejects(compactInPlace(dir), /no store at/);
});

t.test('startApp - warns at start when the store has a large free list, and not once it is compacted', async (t) => {
  const dir = tempDir(t);
  await bulkWritten(dir);
  const start = async () => {
    const lines: string[] = [];
    const app = await startTestApp(t, { modules: [], dataDir: dir, logger: createLogger('warn', { write: (s: string) => void lines.push(s) }) });
    await app.close();
    return lines.map((l) => JSON.parse(l) as { msg: string; freePages?: number });
  };
  const warned = (await start()).filter((l) => l.msg.includes('npm run compact'));
  t.equal(warned.length, 1, 'one warning naming the command');
  t.ok((warned[0]?.freePages ?? 0) > 500, `with the free pages (${warned[0]?.freePages})`);
  await compactInPlace(dir);
  t.same((await start()).filter((l) => l.msg.includes('npm run compact')), [], 'none after compaction');
});
