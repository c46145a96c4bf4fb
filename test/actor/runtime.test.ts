import t from 'tap';
import { ActorRuntime, type ActorKind } from '../../core/actor/runtime.js';
import { someServices } from '../../core/actor/services.js';
import { AppError, appError } from '../../core/errors.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch, type Store } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

interface CounterState {
  n: number;
  log: number[];
  busy: boolean;
}
type CounterMsg =
  | { type: 'add'; by: number; id?: number; journal?: boolean; record?: boolean }
  | { type: 'get' }
  | { type: 'slow-add'; by: number }
  | { type: 'fail-after-mutating' }
  | { type: 'reject' };

/** A counter persisted in kv; checks that no two messages ever run interleaved. */
const counter: ActorKind<CounterState, CounterMsg, unknown> = {
  kind: 'counter',
  activate(ctx) {
    const saved = ctx.store.getKv<{ n: number; log: number[] }>(ctx.tenant, 'counter', ctx.key);
    return { n: saved?.n ?? 0, log: saved?.log ?? [], busy: false };
  },
  async receive(state, msg, ctx) {
    if (state.busy) throw new Error('interleaved!');
    state.busy = true;
    try {
      switch (msg.type) {
        case 'add':
          state.n += msg.by;
          if (msg.id !== undefined) state.log.push(msg.id);
          if (msg.journal) ctx.batch.journal();
          // A record write makes a batch marked journal() commit as a transaction after all.
          if (msg.record) ctx.batch.putRecord(newRecord(ctx.tenant, 'note', { n: state.n }), 0);
          ctx.batch.putKv(ctx.tenant, 'counter', ctx.key, { n: state.n, log: state.log });
          ctx.publish(`counter.${ctx.key}`, { n: state.n });
          return state.n;
        case 'slow-add':
          await new Promise((r) => setTimeout(r, 5));
          state.n += msg.by;
          ctx.batch.putKv(ctx.tenant, 'counter', ctx.key, { n: state.n, log: state.log });
          return state.n;
        case 'get':
          return state.n;
        case 'fail-after-mutating':
          state.n = -999;
          throw new Error('boom');
        case 'reject':
          throw appError('ERR_CONFLICT', 'not now');
      }
    } finally {
      state.busy = false;
    }
  },
};

function setup(tt: Parameters<typeof tempDir>[0], opts: { idleMs?: number; store?: Store } = {}) {
  const store = opts.store ?? new LmdbStore({ path: tempDir(tt), mapSizeGiB: 1 });
  const runtime = new ActorRuntime({ store, services: someServices(), idleMs: opts.idleMs ?? 60_000 });
  runtime.register(counter);
  tt.teardown(async () => {
    await runtime.close();
    await store.close();
  });
  return { store, runtime };
}

t.test('ActorRuntime - messages are processed one at a time (async handlers never interleave)', async (t) => {
  const { runtime } = setup(t);
  const replies = await Promise.all(
    Array.from({ length: 200 }, () => runtime.ask<number>('acme', 'counter', 'c1', { type: 'slow-add', by: 1 })),
  );
  t.same(replies, Array.from({ length: 200 }, (_, i) => i + 1), 'each reply saw every earlier message and no later one');
});

t.test('ActorRuntime - 10,000 concurrent asks to one actor are applied exactly once each', async (t) => {
  const { runtime, store } = setup(t);
  const N = 10_000;
  const replies = await Promise.all(
    Array.from({ length: N }, (_, i) => runtime.ask<number>('acme', 'counter', 'hot', { type: 'add', by: 1, id: i })),
  );
  t.equal(new Set(replies).size, N, 'every reply is distinct');
  t.equal(Math.max(...replies), N);
  const saved = store.getKv<{ n: number; log: number[] }>('acme', 'counter', 'hot')!;
  t.equal(saved.n, N, 'the committed state counts every message once');
  t.equal(new Set(saved.log).size, N);
  t.ok(runtime.counters.activations === 1, 'one activation served them all');
});

t.test('ActorRuntime - actors are isolated by tenant, kind and key', async (t) => {
  const { runtime } = setup(t);
  await runtime.ask('acme', 'counter', 'a', { type: 'add', by: 5 });
  await runtime.ask('other', 'counter', 'a', { type: 'add', by: 7 });
  t.equal(await runtime.ask('acme', 'counter', 'a', { type: 'get' }), 5);
  t.equal(await runtime.ask('other', 'counter', 'a', { type: 'get' }), 7);
  t.equal(await runtime.ask('acme', 'counter', 'b', { type: 'get' }), 0);
  await t.rejects(runtime.ask('acme', 'nope', 'a', {}), /unknown actor kind/);
});

t.test('ActorRuntime - passivated when idle, re-activated with the same state', async (t) => {
  const { runtime } = setup(t, { idleMs: 30 });
  await runtime.ask('acme', 'counter', 'p', { type: 'add', by: 3 });
  t.ok(runtime.isLive('acme', 'counter', 'p'));
  // At least the idle time, then however long a loaded machine takes to run the timer.
  await new Promise((r) => setTimeout(r, 60));
  for (let waited = 0; runtime.isLive('acme', 'counter', 'p') && waited < 3000; waited += 10) await new Promise((r) => setTimeout(r, 10));
  t.notOk(runtime.isLive('acme', 'counter', 'p'), 'passivated after the idle time');
  t.equal(runtime.counters.passivations, 1);
  t.equal(await runtime.ask('acme', 'counter', 'p', { type: 'get' }), 3, 'state reloaded from the store');
  t.equal(runtime.counters.activations, 2);
});

t.test('ActorRuntime - a handler that throws leaves the state as it was and answers the error', async (t) => {
  const { runtime } = setup(t);
  await runtime.ask('acme', 'counter', 'f', { type: 'add', by: 10 });
  const pending = [
    runtime.ask('acme', 'counter', 'f', { type: 'add', by: 1 }),
    runtime.ask('acme', 'counter', 'f', { type: 'fail-after-mutating' }),
    runtime.ask('acme', 'counter', 'f', { type: 'get' }),
  ];
  const [a, b, c] = await Promise.allSettled(pending);
  t.same(a, { status: 'fulfilled', value: 11 });
  t.equal(b.status, 'rejected');
  t.match((b as PromiseRejectedResult).reason.message, /boom/);
  t.same(c, { status: 'fulfilled', value: 11 }, 'the half-made change was dropped, earlier writes kept');
  const err = (await runtime.ask('acme', 'counter', 'f', { type: 'reject' }).catch((e) => e)) as AppError;
  t.type(err, AppError);
  t.equal(err.statusCode, 409);
  t.equal(await runtime.ask('acme', 'counter', 'f', { type: 'add', by: 1 }), 12, 'the actor keeps serving');
});

/** A store whose commits wait until the test lets them go. */
function gatedStore(inner: Store) {
  const gates: Array<() => void> = [];
  const store: Store = Object.create(inner);
  store.commit = async (b: WriteBatch) => {
    await new Promise<void>((r) => gates.push(r));
    return inner.commit(b);
  };
  return { store, open: () => gates.splice(0).forEach((g) => g()), waiting: () => gates.length };
}

t.test('ActorRuntime - replies are released only after their writes commit (output gate)', async (t) => {
  const inner = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  const gated = gatedStore(inner);
  const { runtime } = setup(t, { store: gated.store });
  let addReplied = false;
  let getReplied = false;
  const add = runtime.ask('acme', 'counter', 'g', { type: 'add', by: 1 }).then((v) => {
    addReplied = true;
    t.equal(inner.getKv<{ n: number }>('acme', 'counter', 'g')?.n, 1, 'the write is in the store when the reply arrives');
    return v;
  });
  // A read that saw the uncommitted change must not answer before that change is durable either.
  const get = runtime.ask('acme', 'counter', 'g', { type: 'get' }).then((v) => {
    getReplied = true;
    return v;
  });
  await new Promise((r) => setTimeout(r, 50));
  t.equal(gated.waiting(), 1, 'the commit is held');
  t.notOk(addReplied, 'no reply before the commit');
  t.notOk(getReplied, 'a later read waits for the earlier write too');
  gated.open();
  t.equal(await add, 1);
  t.equal(await get, 1);
});

for (const first of [{ journal: false }, { journal: true, record: true }]) {
  t.test(`ActorRuntime - a journaled write is issued only after the actor's earlier transaction landed (${first.journal ? 'marked journal() but holding a record' : 'a plain transaction'})`, async (t) => {
    const dir = tempDir(t);
    const inner = new LmdbStore({ path: dir, mapSizeGiB: 1 });
    await inner.openJournal({ dir: dir + '/journal', sync: 'commit', intervalMs: 3_600_000 });
    const issued: string[] = [];
    const gates: Array<() => void> = [];
    const store: Store = Object.create(inner);
    store.commit = async (b: WriteBatch) => {
      if (!b.viaJournal) await new Promise<void>((r) => gates.push(r));
      issued.push(b.viaJournal ? 'journal' : 'transaction');
      return inner.commit(b);
    };
    const { runtime } = setup(t, { store });
    const one = runtime.ask('acme', 'counter', 'j', { type: 'add', by: 1, ...first });
    const two = runtime.ask('acme', 'counter', 'j', { type: 'add', by: 2, journal: true });
    const three = runtime.ask('acme', 'counter', 'j', { type: 'add', by: 4, journal: true });
    await new Promise((r) => setTimeout(r, 50));
    t.same(issued, [], 'the journaled writes wait while the earlier transaction is held (a crash keeps none or the first)');
    gates.splice(0).forEach((g) => g());
    t.same(await Promise.all([one, two, three]), [1, 3, 7]);
    t.same(issued, ['transaction', 'journal', 'journal'], 'issued in order, the later journaled one behind the held one');
    t.equal(inner.getKv<{ n: number }>('acme', 'counter', 'j')?.n, 7);
  });
}

t.test('ActorRuntime - a failed commit rejects the reply and the actor reloads committed state', async (t) => {
  const inner = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  let failNext = false;
  const store: Store = Object.create(inner);
  store.commit = (b) => (failNext ? ((failNext = false), Promise.reject(new Error('disk full'))) : inner.commit(b));
  const { runtime } = setup(t, { store });
  await runtime.ask('acme', 'counter', 'd', { type: 'add', by: 2 });
  failNext = true;
  await t.rejects(runtime.ask('acme', 'counter', 'd', { type: 'add', by: 100 }), /disk full/);
  t.equal(await runtime.ask('acme', 'counter', 'd', { type: 'get' }), 2, 'memory matches the store again');
});

t.test('ActorRuntime - close drains mailboxes and refuses new work', async (t) => {
  const { runtime, store } = setup(t);
  const many = Array.from({ length: 500 }, () => runtime.ask('acme', 'counter', 'z', { type: 'add', by: 1 }));
  await runtime.close();
  await Promise.all(many);
  t.equal(store.getKv<{ n: number }>('acme', 'counter', 'z')!.n, 500);
  const err = (await runtime.ask('acme', 'counter', 'z', { type: 'get' }).catch((e) => e)) as AppError;
  t.equal(err.statusCode, 503);
});

t.test('ActorRuntime - readsOwnWrites: each message sees in the store what the earlier ones wrote', async (t) => {
  // A kind that keeps nothing in memory: it counts the kv entries it wrote, reading the store.
  const def = (readsOwnWrites: boolean): ActorKind<null, { key: string }, number> => ({
    kind: readsOwnWrites ? 'reader' : 'pipelined',
    readsOwnWrites,
    activate: () => null,
    receive(_s, msg, ctx) {
      const ns = `notes-${readsOwnWrites}`;
      const seen = ctx.store.listKv(ctx.tenant, ns).length;
      ctx.batch.putKv(ctx.tenant, ns, msg.key, 1);
      return seen;
    },
  });
  const { runtime } = setup(t);
  runtime.register(def(true));
  runtime.register(def(false));
  const asks = (kind: string) => Promise.all(Array.from({ length: 20 }, (_, i) => runtime.ask<number>('t', kind, 'k', { key: `n${i}` })));
  t.same(await asks('reader'), Array.from({ length: 20 }, (_, i) => i), 'the nth message sees the n writes before it');
  // Without the option the next message runs while earlier writes are in flight (pipelined).
  const pipelined = await asks('pipelined');
  t.ok(pipelined.some((seen, i) => seen < i), `pipelined messages read before earlier writes landed (${pipelined.join(',')})`);
});

t.test('ActorRuntime - readsOwnWrites: a message queued behind a failed commit runs on state activated again', async (t) => {
  let activations = 0;
  const def: ActorKind<{ n: number }, 'conflict' | 'get', number> = {
    kind: 'careful',
    readsOwnWrites: true,
    activate: () => {
      activations++;
      return { n: 0 };
    },
    receive(state, msg, ctx) {
      state.n++;
      // A write whose version check fails at commit: the runtime drops the state.
      if (msg === 'conflict') ctx.batch.putKv(ctx.tenant, 'c', 'k', 1).putRecord({ pk: ctx.tenant, sk: 'r1', datatype: 'thing', version: 6, state: 'new', createdate: '', modifydate: '', data: {} }, 5);
      return state.n;
    },
  };
  const { runtime } = setup(t);
  runtime.register(def);
  const failed = runtime.ask('t', 'careful', 'k', 'conflict');
  const next = runtime.ask<number>('t', 'careful', 'k', 'get');
  await t.rejects(failed, { code: 'ERR_VERSION_CONFLICT' });
  t.equal(await next, 1, 'fresh state: the failed message left nothing behind');
  t.equal(activations, 2, 'activated again before the next message');
});

t.test('ActorRuntime - a refused commit fails its own message only: pipelined messages whose writes landed answer success', async (t) => {
  // A value the store refuses at commit time (lmdb-js encodes inside the transaction; a cyclic
  // object cannot be encoded), sent among pipelined messages that all land in the same event turn.
  const def: ActorKind<{ n: number }, { key: string; poison?: boolean }, number> = {
    kind: 'pipe',
    activate: (ctx) => ({ n: ctx.store.listKv(ctx.tenant, 'pipe').length }),
    receive(state, msg, ctx) {
      state.n++;
      let value: unknown = { n: state.n };
      if (msg.poison) {
        const cyclic: Record<string, unknown> = {};
        cyclic.self = cyclic;
        value = cyclic;
      }
      ctx.batch.putKv(ctx.tenant, 'pipe', msg.key, value);
      return state.n;
    },
  };
  const { runtime, store } = setup(t);
  runtime.register(def);
  const asks = Array.from({ length: 40 }, (_, i) => runtime.ask<number>('t', 'pipe', 'k', { key: `m${i}`, poison: i === 7 }));
  const settled = await Promise.allSettled(asks);
  const failed = settled.flatMap((s, i) => (s.status === 'rejected' ? [i] : []));
  t.same(failed, [7], 'only the poisoned message fails');
  const stored = store.listKv('t', 'pipe').map((e) => e.key);
  t.equal(stored.length, 39, 'every other message is stored');
  t.notOk(stored.includes('m7'), 'the refused write is not');
  t.equal(await runtime.ask('t', 'pipe', 'k', { key: 'after' }), 40, 'memory matches what committed');
});
