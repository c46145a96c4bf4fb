// Card payment intents made with a node's gateway: the amount and currency drawn from the tab they
// pay, gateway failures turned into the error table, and a retry with the same idempotency key
// answering the first result (recorded by the storefront actor, the writer of that record).
import type { ActorRuntime } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { assertIdempotencyKey, findIdempotent, fingerprint, type IdempotentResult } from '../../core/idempotency.js';
import { currencyExponent, currencyOf, parseMoney, toMajor } from '../../core/money.js';
import { GatewayError, type PaymentGateway, type PaymentIntent } from '../../core/payments/gateway.js';
import type { Store } from '../../core/store/store.js';
import type { Clock } from '../../core/clock.js';
import { readOrder, SF_ORDER, totalsOf } from './order.js';
import type { StorefrontServices } from './services.js';
import { STOREFRONT_ACTOR, STOREFRONT_KEY, type StorefrontMessage } from './messages.js';

/** What making an intent needs of the node. */
export interface IntentParts {
  readonly store: Store;
  readonly clock: Clock;
  readonly runtime: Pick<ActorRuntime, 'ask'>;
  readonly storefront: StorefrontServices;
}

export interface IntentRequest {
  amount?: unknown;
  currency?: string;
  orderId?: string;
  description?: string;
  captureMethod?: 'automatic' | 'manual';
  idempotencyKey?: string;
}

/** The named gateway of this node; an unknown name is 404. */
export function gatewayOf(services: StorefrontServices, name: string): PaymentGateway {
  const g = services.gateways.get(name);
  if (!g) throw appError('ERR_NOT_FOUND', `payment processor ${name}`);
  return g;
}

/** Runs a gateway call, answering its failures from the error table (declined 402, invalid 400, else 503). */
export async function gatewayCall<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof GatewayError) {
      if (err.kind === 'declined') throw appError('ERR_PAYMENT_DECLINED', err.message);
      if (err.kind === 'invalid') throw appError('ERR_BAD_REQUEST', err.message);
      throw appError('ERR_UNAVAILABLE', `payment gateway unavailable: ${err.message}`);
    }
    throw err;
  }
}

export function intentView(i: PaymentIntent) {
  return {
    id: i.id,
    provider: i.provider,
    amount: toMajor(i.amount, currencyExponent(i.currency)),
    currency: i.currency,
    status: i.status,
    clientSecret: i.clientSecret,
    paymentMethodTypes: i.paymentMethodTypes,
    captureMethod: i.captureMethod,
    ...(i.metadata.orderId ? { orderId: i.metadata.orderId } : {}),
    createdAt: i.createdAt,
    ...(i.failureMessage ? { failureMessage: i.failureMessage } : {}),
  };
}
export type IntentView = ReturnType<typeof intentView>;

/**
 * An intent with `idempotencyKey`: a retry answers the first result (`status` as first answered),
 * even once the tab it paid is closed (the client that never heard the first answer retries after
 * paying), and retries arriving together make one intent. The answer is recorded after the gateway
 * made the intent; a crash in between is covered by the gateway itself, which is handed the same key.
 * The gateway call stays out of the storefront actor (its mailbox would wait on the processor); the
 * node's gate serializes retries per tenant and key, and the actor writes the answer.
 */
export async function createPaymentIntent(
  parts: IntentParts,
  tenant: string,
  processor: string,
  body: IntentRequest,
  methodTypes: string[],
  status: number,
): Promise<IdempotentResult<IntentView>> {
  const { store, clock, storefront: services } = parts;
  assertIdempotencyKey(body.idempotencyKey);
  const key = body.idempotencyKey;
  if (!key) return { status, body: await makeIntent(store, services, tenant, processor, body, methodTypes) };
  const print = fingerprint(`storefront.intent.${processor}.${methodTypes.join(',')}`, body);
  return services.intentGate.run(`${tenant}\u0000${key}`, async () => {
    const hit = findIdempotent<IntentView>(store, tenant, key, print, clock);
    if (hit) return hit;
    const out = { status, body: await makeIntent(store, services, tenant, processor, body, methodTypes) };
    const msg: StorefrontMessage = { type: 'record-intent', key, print, result: out };
    await parts.runtime.ask(tenant, STOREFRONT_ACTOR, STOREFRONT_KEY, msg);
    return out;
  });
}

async function makeIntent(store: Store, services: StorefrontServices, tenant: string, processor: string, body: IntentRequest, methodTypes: string[]): Promise<IntentView> {
  const gateway = gatewayOf(services, processor);
  const metadata: Record<string, string> = {};
  let currency = currencyOf(body.currency?.toUpperCase(), services.defaultCurrency);
  if (body.currency && currency !== body.currency.toUpperCase()) throw appError('ERR_VALIDATION', `body/currency "${body.currency}" is not an ISO 4217 code`);
  let due: number | undefined;
  if (body.orderId) {
    const rec = store.getRecord(tenant, SF_ORDER, body.orderId);
    if (!rec) throw appError('ERR_NOT_FOUND', `order ${body.orderId}`);
    const o = readOrder(rec, services.defaultCurrency);
    if (o.status !== 'open') throw appError('ERR_CONFLICT', `order ${body.orderId} is ${o.status}: nothing to pay`);
    if (body.currency && o.currency !== currency) throw appError('ERR_VALIDATION', `body/currency must be the order's (${o.currency})`);
    currency = o.currency;
    due = totalsOf(o).balanceDue;
    metadata.orderId = rec.sk;
    metadata.orderNumber = String(rec.data.orderNumber ?? '');
    metadata.businessLocationId = String(rec.data.businessLocationId ?? '');
  }
  const exponent = currencyExponent(currency);
  const amount = body.amount !== undefined ? parseMoney(body.amount, 'body/amount', exponent, { zero: false }) : due;
  if (amount === undefined) throw appError('ERR_VALIDATION', 'body/amount is required without body/orderId');
  if (amount === 0) throw appError('ERR_VALIDATION', 'nothing to pay: the order has no balance due');
  const intent = await gatewayCall(() =>
    gateway.createIntent({
      tenant,
      amount,
      currency,
      paymentMethodTypes: methodTypes,
      captureMethod: body.captureMethod ?? 'automatic',
      ...(body.description ? { description: body.description } : {}),
      metadata,
      ...(body.idempotencyKey ? { idempotencyKey: body.idempotencyKey } : {}),
    }),
  );
  return intentView(intent);
}
