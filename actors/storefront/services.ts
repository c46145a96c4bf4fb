// What the storefront's actors need beyond their context's Store and Clock: the node's payment
// gateways, default currency and logger. Actor kinds are plain objects shared by every node in a
// process (tests start several), so each node binds its services to its own Store at start-up
// (edge/modules/storefront.ts) and an actor finds them through `ctx.store`. Unbound (an actor
// driven by a bare runtime), the offline `local` gateway and USD apply.
import type { Clock } from '../../core/clock.js';
import { IdempotencyGate } from '../../core/idempotency.js';
import type { Logger } from '../../core/log.js';
import { LocalGateway, PaymentGateways } from '../../core/payments/index.js';
import type { Store } from '../../core/store/store.js';

export interface StorefrontServices {
  gateways: PaymentGateways;
  defaultCurrency: string;
  logger?: Logger;
  /** Serializes retries of one payment intent (same tenant and idempotency key) on this node. */
  intentGate: IdempotencyGate;
}

const bound = new WeakMap<Store, StorefrontServices>();

export function bindStorefront(store: Store, services: StorefrontServices): void {
  bound.set(store, services);
}

export function storefrontServicesOf(store: Store, clock: Clock): StorefrontServices {
  let s = bound.get(store);
  if (!s) {
    s = { gateways: new PaymentGateways([new LocalGateway(store, clock)], 'local'), defaultCurrency: 'USD', intentGate: new IdempotencyGate() };
    bound.set(store, s);
  }
  return s;
}
