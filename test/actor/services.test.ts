import t from 'tap';
import { ActorRuntime, type ActorKind } from '../../core/actor/runtime.js';
import { someServices, type NodeServices } from '../../core/actor/services.js';
import { LocalOutbox } from '../../core/outbox.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { tempDir } from '../helpers/app.js';

/** Says which outbox its context carries, at activation and per message. */
const probe: ActorKind<{ activatedWith: NodeServices }, 'which' | 'missing', unknown> = {
  kind: 'probe',
  activate: (ctx) => ({ activatedWith: ctx.services }),
  receive(state, msg, ctx) {
    if (msg === 'missing') return (ctx.services as unknown as Record<string, unknown>).payments;
    return { activation: state.activatedWith.outbox, message: ctx.services.outbox };
  },
};

function runtimeWith(tt: Parameters<typeof tempDir>[0], services: ReturnType<typeof someServices>) {
  const store = new LmdbStore({ path: tempDir(tt), mapSizeGiB: 1 });
  const runtime = new ActorRuntime({ store, services });
  runtime.register(probe);
  tt.teardown(async () => {
    await runtime.close();
    await store.close();
  });
  return { store, runtime };
}

t.test('ActorRuntime services - each runtime hands its own ports to its actors, at activation and per message', async (t) => {
  const dir = new LmdbStore({ path: tempDir(t), mapSizeGiB: 1 });
  t.teardown(() => dir.close());
  const a = new LocalOutbox(dir);
  const b = new LocalOutbox(dir);
  const one = runtimeWith(t, someServices({ outbox: a }));
  const two = runtimeWith(t, someServices({ outbox: b }));
  const fromOne = await one.runtime.ask<{ activation: unknown; message: unknown }>('t1', 'probe', 'k', 'which');
  const fromTwo = await two.runtime.ask<{ activation: unknown; message: unknown }>('t1', 'probe', 'k', 'which');
  t.equal(fromOne.activation, a);
  t.equal(fromOne.message, a);
  t.equal(fromTwo.activation, b);
  t.equal(fromTwo.message, b);
});

t.test('ActorRuntime services - a port a bare runtime was not given throws, naming it, instead of a default', async (t) => {
  const { runtime } = runtimeWith(t, someServices());
  await t.rejects(runtime.ask('t1', 'probe', 'k', 'missing'), /the port payments was not provided/);
  await t.rejects(runtime.ask('t1', 'probe', 'k2', 'which'), /the port outbox was not provided/);
});
