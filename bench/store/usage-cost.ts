// What counting storage usage costs a commit (issue 29): commits per second of the store's hottest
// batches (a door scan's one log append, a chat message's append, a record create and an update)
// on a real LMDB, 64 in flight as the actor runtime keeps them. Run it on this build and on one
// before usage was counted, alternately, and compare:
//   npx tsx bench/store/usage-cost.ts [commits per kind, default 20000] [rounds, default 3] [flush|commit]
// `commit` durability (resolve once committed, flushed after) leaves out most of the disk's time,
// which is the same with and without counting and varies most on a shared machine.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import type { StoredRecord } from '../../core/store/record.js';

const N = Number(process.argv[2] ?? 20_000);
const ROUNDS = Number(process.argv[3] ?? 3);
const DURABILITY = (process.argv[4] ?? 'commit') as 'flush' | 'commit';
const IN_FLIGHT = 64;

const scan = (seq: number) => ({ t: 'scan', ticket: `T${seq}`, at: 1_700_000_000_000 + seq, device: 'door-1', ok: true, zone: 'main' });
const record = (sk: string, version: number, text: string): StoredRecord =>
  ({ pk: 'org1', sk, datatype: 'note', version, state: 'active', createdate: '2024-01-01T00:00:00.000Z', modifydate: '2024-01-01T00:00:00.000Z', data: { text } }) as StoredRecord;

async function rate(make: (i: number) => WriteBatch, store: LmdbStore): Promise<number> {
  const start = process.hrtime.bigint();
  for (let i = 0; i < N; i += IN_FLIGHT) {
    const wave: Promise<void>[] = [];
    for (let j = i; j < Math.min(N, i + IN_FLIGHT); j++) wave.push(store.commit(make(j)));
    await Promise.all(wave);
  }
  return N / (Number(process.hrtime.bigint() - start) / 1e9);
}

/**
 * CPU microseconds one batch's writes take inside a transaction (the part counting adds
 * to; the commit's disk time is the same either way), `N` batches in one transaction.
 */
function applyMicros(make: (i: number) => WriteBatch, store: LmdbStore): number {
  const s = store as unknown as { root: { transactionSync(fn: () => void): void }; apply(b: WriteBatch, m: undefined): unknown };
  const batches = Array.from({ length: N }, (_, i) => make(i));
  let us = 0;
  s.root.transactionSync(() => {
    // CPU time, not wall time: on a shared machine the wall clock mostly measures the neighbours.
    const start = process.cpuUsage();
    for (const b of batches) s.apply(b, undefined);
    const used = process.cpuUsage(start);
    us = used.user + used.system;
  });
  return us / N;
}

const micros: Record<string, number[]> = { append: [], create: [], update: [] };
for (let round = 0; round < ROUNDS; round++) {
  const dir = mkdtempSync(join(tmpdir(), 'usage-cost-'));
  const store = new LmdbStore({ path: dir, durability: DURABILITY });
  applyMicros((i) => new WriteBatch().append('org1', 'scan:warm', i + 1, scan(i)), store);
  micros.append.push(applyMicros((i) => new WriteBatch().append('org1', 'scan:ev', i + 1, scan(i)), store));
  micros.create.push(applyMicros((i) => new WriteBatch().putRecord(record(i.toString(16).padStart(24, '0'), 1, 'hello ' + i), 0), store));
  micros.update.push(applyMicros((i) => new WriteBatch().putRecord(record(i.toString(16).padStart(24, '0'), 2, 'hello again ' + i), 1), store));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}

const results: Record<string, number[]> = { append: [], create: [], update: [] };
for (let round = 0; round < ROUNDS; round++) {
  const dir = mkdtempSync(join(tmpdir(), 'usage-cost-'));
  const store = new LmdbStore({ path: dir, durability: DURABILITY });
  let seq = 0;
  await rate(() => new WriteBatch().append('org1', 'scan:warm', ++seq, scan(seq)), store);
  results.append.push(await rate((i) => new WriteBatch().append('org1', 'scan:ev', i + 1, scan(i)), store));
  results.create.push(await rate((i) => new WriteBatch().putRecord(record(i.toString(16).padStart(24, '0'), 1, 'hello ' + i), 0), store));
  results.update.push(await rate((i) => new WriteBatch().putRecord(record(i.toString(16).padStart(24, '0'), 2, 'hello again ' + i), 1), store));
  await store.close();
  rmSync(dir, { recursive: true, force: true });
}
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
// The fastest round: the one the other sessions on a shared machine disturbed least.
for (const [k, xs] of Object.entries(micros)) console.log(`${k}: ${Math.min(...xs).toFixed(2)} CPU µs of writes per batch in a transaction (rounds: ${xs.map((x) => x.toFixed(2)).join(', ')})`);
for (const [k, xs] of Object.entries(results)) console.log(`${k}: ${Math.round(median(xs))} commits/s (rounds: ${xs.map(Math.round).join(', ')})`);
