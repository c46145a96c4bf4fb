import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import {
  IDEMPOTENCY_TTL_MS,
  IdempotencyGate,
  assertIdempotencyKey,
  findIdempotent,
  fingerprint,
  IDEMPOTENCY_EXPIRY_NS,
  IDEMPOTENCY_NS,
  recordIdempotent,
  sweepIdempotency,
} from '../../core/idempotency.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';
import { countingKvReads } from '../helpers/kv-read-count.js';

const KEY = '7d3f1c2a-9b4e-4f6a-8c1d-2e3f4a5b6c7d';

t.test('idempotency - keys must be UUIDs', async (t) => {
  t.doesNotThrow(() => assertIdempotencyKey(undefined));
  t.doesNotThrow(() => assertIdempotencyKey(KEY));
  for (const bad of ['abc', 42, '', '7d3f1c2a9b4e4f6a8c1d2e3f4a5b6c7d']) {
    t.throws(() => assertIdempotencyKey(bad), { name: 'AppError', statusCode: 400 }, `refuses ${JSON.stringify(bad)}`);
  }
});

t.test('idempotency - fingerprints ignore key order and the key itself', async (t) => {
  t.equal(fingerprint('s', { a: 1, b: { c: 2, d: 3 } }), fingerprint('s', { b: { d: 3, c: 2 }, a: 1, idempotencyKey: KEY }));
  t.not(fingerprint('s', { a: 1 }), fingerprint('s', { a: 2 }));
  t.not(fingerprint('s1', { a: 1 }), fingerprint('s2', { a: 1 }), 'scoped by operation');
});

t.test('idempotency - replay within 24 h, 409 for another body, expiry', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const clock = new ManualClock();
  const print = fingerprint('create', { x: 1 });
  t.equal(findIdempotent(store, 'acme', KEY, print, clock), undefined, 'nothing recorded yet');
  const b = new WriteBatch().putKv('acme', 'effects', 'e1', { done: true });
  recordIdempotent(store, b, 'acme', KEY, print, { status: 201, body: { id: 'e1' } }, clock);
  await store.commit(b);
  t.same(findIdempotent(store, 'acme', KEY, print, clock), { status: 201, body: { id: 'e1' } });
  t.equal(findIdempotent(store, 'globex', KEY, print, clock), undefined, 'keys are per tenant');
  const err = (() => {
    try {
      findIdempotent(store, 'acme', KEY, fingerprint('create', { x: 2 }), clock);
    } catch (e) {
      return e as AppError;
    }
  })();
  t.equal(err?.statusCode, 409);
  clock.advance(IDEMPOTENCY_TTL_MS - 1);
  t.ok(findIdempotent(store, 'acme', KEY, print, clock), 'still there just before 24 h');
  clock.advance(1);
  t.equal(findIdempotent(store, 'acme', KEY, print, clock), undefined, 'gone after 24 h');
  const sweep = new WriteBatch();
  t.equal(sweepIdempotency(store, sweep, 'acme', clock.now(), 10), 1, 'the sweep finds it');
  await store.commit(sweep);
  t.same(store.listKv('acme', IDEMPOTENCY_NS), [], 'deleted');
});

t.test('idempotency - expired records go a page at a time as writes go on, read on the expiry index, not by reading every record', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const clock = new ManualClock();
  // Written before the expiry index existed: records alone.
  const legacy = new WriteBatch();
  for (let i = 0; i < 100; i++) legacy.putKv('acme', IDEMPOTENCY_NS, `legacy-${String(i).padStart(3, '0')}`, { fingerprint: 'p', status: 201, body: {}, expiresAt: clock.now() + IDEMPOTENCY_TTL_MS });
  await store.commit(legacy);
  const keys = Array.from({ length: 2_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
  for (let i = 0; i < keys.length; i += 500) {
    const b = new WriteBatch();
    for (const k of keys.slice(i, i + 500)) recordIdempotent(store, b, 'acme', k, 'p', { status: 201, body: { big: 'x'.repeat(200) } }, clock);
    await store.commit(b);
  }
  clock.advance(IDEMPOTENCY_TTL_MS + 1);
  // Every read of either namespace, counted in entries handed back.
  const { store: counted, read: readCount } = countingKvReads(store);
  const b = new WriteBatch();
  t.equal(sweepIdempotency(counted, b, 'acme', clock.now(), 32), 32, 'a page of 32 on the index (the writes walked the records from before it meanwhile)');
  t.ok(readCount() <= 64, `entries read: ${readCount()}`);
  await store.commit(b);
  // Writes go on, one a batch as an actor's are: each sixteenth sweeps a page, so expired records go faster than new ones come.
  let n = 0;
  const expired = () => store.listKv<{ expiresAt: number }>('acme', IDEMPOTENCY_NS).filter((e) => e.value.expiresAt <= clock.now()).length;
  while (expired() > 0 && n < 4_000) {
    for (let i = 0; i < 50; i++) {
      const w = new WriteBatch();
      recordIdempotent(store, w, 'acme', `11111111-0000-4000-8000-${String(n++).padStart(12, '0')}`, 'p', { status: 201, body: {} }, clock);
      await store.commit(w);
    }
  }
  const left = store.listKv<{ expiresAt: number }>('acme', IDEMPOTENCY_NS);
  t.ok(n <= 1_200, `2,068 expired records gone within ${n} writes (a page of 32 every 16 writes)`);
  t.equal(left.filter((e) => e.value.expiresAt <= clock.now()).length, 0, 'every expired record is gone, those from before the index too');
  t.equal(left.length, n, 'the new ones stay');
  t.equal(store.listKv('acme', IDEMPOTENCY_EXPIRY_NS).filter((e) => !e.key.startsWith('~')).length, left.length, 'one expiry key per record left');
});

t.test('IdempotencyGate - calls with one key run one after another', async (t) => {
  const gate = new IdempotencyGate();
  const order: string[] = [];
  let running = 0;
  let maxRunning = 0;
  await Promise.all(
    Array.from({ length: 10 }, (_, i) =>
      gate.run('k', async () => {
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 2));
        order.push(String(i));
        running--;
      }),
    ),
  );
  t.equal(maxRunning, 1);
  t.equal(order.length, 10);
  const other = await Promise.all([gate.run('a', async () => 1), gate.run('b', async () => 2)]);
  t.same(other, [1, 2]);
});
