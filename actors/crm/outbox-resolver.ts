// Actors are registered once per node but defined once per process; an actor that sends mail
// finds its node's outbox through the store it runs on (tests run several nodes in one process).
import type { OutboxProvider } from '../../core/outbox.js';
import type { Store } from '../../core/store/store.js';

export type OutboxResolver = (store: Store) => OutboxProvider;

/** A resolver plus the binding each node makes when it starts. */
export function outboxRegistry(): { resolve: OutboxResolver; bind(store: Store, outbox: OutboxProvider): void } {
  const byStore = new WeakMap<Store, OutboxProvider>();
  return {
    resolve(store) {
      const o = byStore.get(store);
      if (!o) throw new Error('no outbox is bound to this store');
      return o;
    },
    bind(store, outbox) {
      byStore.set(store, outbox);
    },
  };
}
