// What this area's actors need beyond the Store and Clock of their context: the outbox provider
// of the node they run on. Actor kinds are plain objects shared by every node in a process (tests
// start several), so each node binds its provider to its own Store instance at start-up and
// an actor finds it through `ctx.store`. Unbound (an actor driven by a bare runtime in a unit
// test), messages are recorded by the local outbox in the same store.
import type { Clock } from '../../core/clock.js';
import { LocalOutbox, type OutboxProvider } from '../../core/outbox.js';
import type { Store } from '../../core/store/store.js';

const outboxes = new WeakMap<Store, OutboxProvider>();

export function bindOutbox(store: Store, outbox: OutboxProvider): void {
  outboxes.set(store, outbox);
}

export function outboxOf(store: Store, clock: Clock): OutboxProvider {
  let o = outboxes.get(store);
  if (!o) {
    o = new LocalOutbox(store, clock);
    outboxes.set(store, o);
  }
  return o;
}
