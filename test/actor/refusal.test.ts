// One way to refuse (core/actor/runtime.ts): a handler throws an AppError from the table, and the
// runtime decides what that means for the actor's state. A refusal with nothing written keeps the
// state of a kind that declares refusalKeepsState (no reload); a refusal marked refuseAfterWrites
// commits what was recorded and answers the error behind that commit; any other throw drops the
// state, which is then loaded again from what was committed.
import t from 'tap';
import type { Bus } from '../../core/bus/bus.js';
import { ActorRuntime, refuseAfterWrites, type ActorKind } from '../../core/actor/runtime.js';
import { someServices } from '../../core/actor/services.js';
import { AppError, appError } from '../../core/errors.js';
import { tempDir } from '../helpers/app.js';
import { gatedStore } from '../helpers/gated-store.js';

/** `n` is persisted; `seen` lives in memory only, so a reload shows as `seen` starting over. */
interface Ledger {
  n: number;
  seen: number;
  touched: boolean;
}
type Msg =
  | { type: 'add'; by: number }
  | { type: 'get' }
  | { type: 'refuse' }
  | { type: 'refuse-touched' }
  | { type: 'refuse-after-writes'; by: number }
  | { type: 'refuse-unmarked-after-writes'; by: number }
  | { type: 'bug' };

function ledger(kind: string, refusalKeepsState: ActorKind<Ledger, Msg, unknown>['refusalKeepsState'], loads: { n: number }): ActorKind<Ledger, Msg, unknown> {
  return {
    kind,
    refusalKeepsState,
    activate(ctx) {
      loads.n++;
      return { n: ctx.store.getKv<number>(ctx.tenant, kind, ctx.key) ?? 0, seen: 0, touched: false };
    },
    receive(st, msg, ctx) {
      st.seen++;
      st.touched = false;
      const write = (by: number) => {
        st.n += by;
        ctx.batch.putKv(ctx.tenant, kind, ctx.key, st.n);
        ctx.publish(`${kind}.changed`, { n: st.n });
      };
      switch (msg.type) {
        case 'add':
          write(msg.by);
          return st.n;
        case 'get':
          return { n: st.n, seen: st.seen };
        case 'refuse':
          throw appError('ERR_CONFLICT', 'not now');
        case 'refuse-touched':
          st.touched = true;
          st.n = -1;
          throw appError('ERR_CONFLICT', 'not now');
        case 'refuse-after-writes':
          write(msg.by);
          throw refuseAfterWrites(appError('ERR_UNAVAILABLE', 'the gateway failed after the first refund'));
        case 'refuse-unmarked-after-writes':
          write(msg.by);
          throw appError('ERR_CONFLICT', 'changed my mind');
        case 'bug':
          st.n = -999;
          throw new Error('a bug');
      }
    },
  };
}

function setup(tt: Parameters<typeof tempDir>[0], keeps: ActorKind<Ledger, Msg, unknown>['refusalKeepsState']) {
  const { store, hold, release } = gatedStore(tt);
  const published: string[] = [];
  const bus = { publish: (subject: string) => void published.push(subject) } as unknown as Bus;
  const runtime = new ActorRuntime({ store, bus, services: someServices(), idleMs: 60_000 });
  const loads = { n: 0 };
  runtime.register(ledger('ledger', keeps, loads));
  tt.teardown(async () => {
    await runtime.close();
    await store.close();
  });
  const ask = <R = unknown>(msg: Msg) => runtime.ask<R>('acme', 'ledger', 'l1', msg);
  return { store, runtime, loads, published, hold, release, ask };
}

t.test('refusal - an AppError with no writes keeps the state in memory: no reload, answered behind earlier writes', async (t) => {
  const { ask, loads, published, hold, release } = setup(t, true);
  t.equal(await ask({ type: 'add', by: 5 }), 5);
  hold();
  let answered = false;
  const added = ask<number>({ type: 'add', by: 1 });
  const refused = ask({ type: 'refuse' }).catch((e: unknown) => e).finally(() => (answered = true));
  await new Promise((r) => setTimeout(r, 30));
  t.notOk(answered, 'the refusal waits for the earlier write still in flight');
  release();
  t.equal(await added, 6);
  const err = (await refused) as AppError;
  t.type(err, AppError);
  t.equal(err.code, 'ERR_CONFLICT');
  t.same(await ask({ type: 'get' }), { n: 6, seen: 4 }, 'the state in memory carried on through the refusal');
  t.equal(loads.n, 1, 'loaded once: the refusal did not drop the state');
  t.same(published, ['ledger.changed', 'ledger.changed'], 'a refusal publishes nothing');
});

t.test('refusal - refusalKeepsState as a function: kept when it says so, dropped when memory was touched', async (t) => {
  const { ask, loads } = setup(t, (st) => !st.touched);
  await ask({ type: 'add', by: 2 });
  await t.rejects(ask({ type: 'refuse' }), { code: 'ERR_CONFLICT' });
  t.same(await ask({ type: 'get' }), { n: 2, seen: 3 }, 'untouched: kept');
  t.equal(loads.n, 1);
  await t.rejects(ask({ type: 'refuse-touched' }), { code: 'ERR_CONFLICT' });
  t.same(await ask({ type: 'get' }), { n: 2, seen: 1 }, 'touched: loaded again from the store, the change in memory gone');
  t.equal(loads.n, 2);
});

t.test('refusal - refuseAfterWrites commits what was recorded and answers the error once it has landed', async (t) => {
  const { store, ask, loads, published, hold, release } = setup(t, true);
  await ask({ type: 'add', by: 5 });
  hold();
  let answered = false;
  const refused = ask({ type: 'refuse-after-writes', by: 3 }).catch((e: unknown) => e).finally(() => (answered = true));
  await new Promise((r) => setTimeout(r, 30));
  t.notOk(answered, 'no answer before the writes commit');
  release();
  const err = (await refused) as AppError;
  t.type(err, AppError);
  t.equal(err.code, 'ERR_UNAVAILABLE');
  t.equal(err.statusCode, 503);
  t.notOk('keepWrites' in err, 'the mark is cleared before the caller sees the error');
  t.equal(store.getKv<number>('acme', 'ledger', 'l1'), 8, 'the recorded change is committed');
  t.same(await ask({ type: 'get' }), { n: 8, seen: 3 }, 'the state kept what was recorded');
  t.equal(loads.n, 1, 'no reload');
  t.same(published, ['ledger.changed', 'ledger.changed'], 'what was recorded is published');
});

t.test('refusal - a mark does not travel: an actor rethrowing another actor\'s refuseAfterWrites error drops its own writes', async (t) => {
  const { store, runtime } = setup(t, true);
  const relay: ActorKind<{ n: number }, 'go', unknown> = {
    kind: 'relay',
    activate: () => ({ n: 0 }),
    async receive(st, _msg, ctx) {
      st.n++;
      ctx.batch.putKv(ctx.tenant, 'relay', ctx.key, st.n);
      await ctx.ask('ledger', 'l1', { type: 'refuse-after-writes', by: 1 });
      return st.n;
    },
  };
  runtime.register(relay);
  await t.rejects(runtime.ask('acme', 'relay', 'r', 'go'), { code: 'ERR_UNAVAILABLE' });
  t.equal(store.getKv('acme', 'ledger', 'l1'), 1, 'the ledger kept its recorded write');
  t.equal(store.getKv('acme', 'relay', 'r'), undefined, 'the relay\'s own write was not committed');
});

t.test('refusal - anything else drops the state: a bug, or an unmarked AppError with writes queued', async (t) => {
  const { store, ask, loads, published } = setup(t, true);
  await ask({ type: 'add', by: 5 });
  await t.rejects(ask({ type: 'bug' }), /a bug/);
  t.same(await ask({ type: 'get' }), { n: 5, seen: 1 }, 'a bug: the state was loaded again from the store');
  t.equal(loads.n, 2);
  await t.rejects(ask({ type: 'refuse-unmarked-after-writes', by: 3 }), { code: 'ERR_CONFLICT' });
  t.equal(store.getKv<number>('acme', 'ledger', 'l1'), 5, 'its writes were not committed');
  t.same(await ask({ type: 'get' }), { n: 5, seen: 1 }, 'and the state was loaded again');
  t.equal(loads.n, 3);
  t.same(published, ['ledger.changed'], 'a failed message publishes nothing');
});

t.test('refusal - a kind that does not declare refusalKeepsState is rebuilt after a refusal (as before)', async (t) => {
  const { ask, loads } = setup(t, undefined);
  await ask({ type: 'add', by: 4 });
  await t.rejects(ask({ type: 'refuse' }), { code: 'ERR_CONFLICT' });
  t.same(await ask({ type: 'get' }), { n: 4, seen: 1 }, 'loaded again');
  t.equal(loads.n, 2);
});
