// The runtime's path for handlers that answer synchronously (the door scanner's): no promise or
// await per message, yet the same rules as for async handlers: one message at a time, replies in
// order and only once their writes (and every earlier one) have committed, a throw rebuilds the
// state from the store; and the idle timer, armed once and left alone by later messages, still
// passivates an actor only after its idle time without a message.
import t from 'tap';
import { ActorRuntime, type ActorKind } from '../../core/actor/runtime.js';
import { someServices } from '../../core/actor/services.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { tempDir } from '../helpers/app.js';
import { gatedStore } from '../helpers/gated-store.js';

type Msg = { type: 'add'; by: number } | { type: 'get' } | { type: 'boom' };

const counter: ActorKind<{ n: number }, Msg, number> = {
  kind: 'sync-counter',
  activate: (ctx) => ({ n: ctx.store.getKv<number>(ctx.tenant, 'sync-counter', ctx.key) ?? 0 }),
  receive(st, msg, ctx) {
    if (msg.type === 'get') return st.n;
    st.n += msg.type === 'add' ? msg.by : 1000;
    ctx.batch.putKv(ctx.tenant, 'sync-counter', ctx.key, st.n);
    if (msg.type === 'boom') throw new Error('boom after mutating');
    return st.n;
  },
};

t.test('sync handlers: replies in order, each after its commit; a throw rebuilds from the store', async (t) => {
  const { store, hold, release } = gatedStore(t);
  const runtime = new ActorRuntime({ store, services: someServices(), idleMs: 60_000 });
  runtime.register(counter);
  t.teardown(async () => {
    await runtime.close();
    await store.close();
  });
  hold();
  const answered: number[] = [];
  const asks = [1, 2, 3].map((by) => runtime.ask<number>('acme', 'sync-counter', 'a', { type: 'add', by }).then((n) => (answered.push(n), n)));
  await new Promise((r) => setTimeout(r, 30));
  t.same(answered, [], 'no reply before its commit landed');
  release();
  t.same(await Promise.all(asks), [1, 3, 6]);
  t.same(answered, [1, 3, 6], 'released in order');
  await t.rejects(runtime.ask('acme', 'sync-counter', 'a', { type: 'boom' }), /boom/);
  t.equal(await runtime.ask('acme', 'sync-counter', 'a', { type: 'get' }), 6, 'the throw left the state as committed');
});

t.test('the idle timer counts from the last message, not the first', async (t) => {
  const store = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  const runtime = new ActorRuntime({ store, services: someServices(), idleMs: 400 });
  runtime.register(counter);
  t.teardown(async () => {
    await runtime.close();
    await store.close();
  });
  await runtime.ask('acme', 'sync-counter', 'b', { type: 'add', by: 1 });
  await new Promise((r) => setTimeout(r, 250));
  await runtime.ask('acme', 'sync-counter', 'b', { type: 'add', by: 1 });
  await new Promise((r) => setTimeout(r, 250));
  t.ok(runtime.isLive('acme', 'sync-counter', 'b'), 'used 250 ms ago: still live although its first timer has fired');
  for (let i = 0; i < 100 && runtime.isLive('acme', 'sync-counter', 'b'); i++) await new Promise((r) => setTimeout(r, 50));
  t.notOk(runtime.isLive('acme', 'sync-counter', 'b'), 'passivated once idle for its idle time');
  t.equal(runtime.counters.passivations, 1);
});
