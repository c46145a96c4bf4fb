// Print jobs and sent receipts leave through the outbox: the storefront actor stores each in a
// write of its own (nothing else changes with it), and the dispatcher hands it to the provider
// after commit.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { OutboxEntry, OutboxMessage } from '../../core/outbox.js';
import { STOREFRONT_ACTOR, STOREFRONT_KEY, type StorefrontMessage } from './messages.js';

export function queueReceipt(runtime: Pick<ActorRuntime, 'ask'>, tenant: string, msg: OutboxMessage): Promise<OutboxEntry> {
  const ask: StorefrontMessage = { type: 'queue-receipt', msg };
  return runtime.ask<OutboxEntry>(tenant, STOREFRONT_ACTOR, STOREFRONT_KEY, ask);
}
