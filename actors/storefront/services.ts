// What the storefront's actors need beyond their context's Store and Clock: the node's payment
// gateways, default currency and logger, and the gate that serializes retries of one payment
// intent. It is the node's `storefront` port (core/actor/services.ts): edge/app.ts builds it once
// per node from the configuration, an actor reads it as `ctx.services.storefront` and a route as
// `deps.services.storefront`. There is no default: a runtime without it fails naming the port.
import { IdempotencyGate } from '../../core/idempotency.js';
import type { Logger } from '../../core/log.js';
import type { PaymentGateways } from '../../core/payments/index.js';

export interface StorefrontServices {
  gateways: PaymentGateways;
  defaultCurrency: string;
  logger?: Logger;
  /** Serializes retries of one payment intent (same tenant and idempotency key) on this node. */
  intentGate: IdempotencyGate;
}

declare module '../../core/actor/services.js' {
  interface NodeServices {
    /** The storefront's payment gateways, default currency and intent gate (actors/storefront/services.ts). */
    readonly storefront: StorefrontServices;
  }
}

export function createStorefrontServices(gateways: PaymentGateways, defaultCurrency: string, logger?: Logger): StorefrontServices {
  return { gateways, defaultCurrency, ...(logger ? { logger } : {}), intentGate: new IdempotencyGate() };
}
