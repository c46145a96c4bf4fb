import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import {
  IDEMPOTENCY_TTL_MS,
  IdempotencyGate,
  assertIdempotencyKey,
  expiredIdempotencyKeys,
  findIdempotent,
  fingerprint,
  recordIdempotent,
} from '../../core/idempotency.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

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
  recordIdempotent(b, 'acme', KEY, print, { status: 201, body: { id: 'e1' } }, clock);
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
  t.same(expiredIdempotencyKeys(store, 'acme', clock), [KEY]);
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
