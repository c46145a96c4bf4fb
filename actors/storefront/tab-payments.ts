// Payments on a tab: the named gateway, a card payment verified against its intent, and settling.
import { appError } from '../../core/errors.js';
import { fingerprint } from '../../core/idempotency.js';
import { newId } from '../../core/ids.js';
import { parseMoney } from '../../core/money.js';
import { GatewayError, type PaymentGateway, type PaymentIntent } from '../../core/payments/gateway.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import type { SettleInput, SettleReply } from './messages.js';
import { CLOSED, type Order, totalsOf, type Transaction, transactionData } from './order.js';
import { askStorefront, assertOpen, type Ctx, freePoint, label, loadOrder, money, remember, replay, save } from './tab-state.js';

export const MAX_PAYMENTS = 500;

/** A gateway's failure as our error (`note` appended to its message); anything else as it is. */
export function gatewayAppError(err: unknown, note = ''): unknown {
  if (err instanceof GatewayError) {
    if (err.kind === 'declined') return appError('ERR_PAYMENT_DECLINED', err.message + note);
    if (err.kind === 'invalid') return appError('ERR_BAD_REQUEST', err.message + note);
    return appError('ERR_UNAVAILABLE', `payment gateway unavailable: ${err.message}${note}`);
  }
  return err;
}

export function gatewayError(err: unknown): never {
  throw gatewayAppError(err);
}


export function gatewayNamed(c: Ctx, name: string, field: string): PaymentGateway {
  const g = c.services.gateways.get(name);
  if (!g) {
    const names = c.services.gateways.list().map((x) => x.name).join(', ');
    throw appError('ERR_VALIDATION', `${field} "${name}" is not a configured payment gateway (configured: ${names})`);
  }
  return g;
}

export async function verifyIntent(c: Ctx, o: Order, gateway: PaymentGateway, ref: string, amount: number): Promise<PaymentIntent> {
  let intent: PaymentIntent | undefined;
  try {
    intent = await gateway.getIntent(c.actor.tenant, ref);
  } catch (err) {
    gatewayError(err);
  }
  if (!intent) throw appError('ERR_VALIDATION', `body/ref "${ref}" is not a payment intent of gateway ${gateway.name}`);
  if (intent.status !== 'succeeded' && intent.status !== 'requires_capture') {
    throw appError('ERR_VALIDATION', `payment intent ${ref} has not succeeded (status: ${intent.status}${intent.failureMessage ? `, ${intent.failureMessage}` : ''})`);
  }
  if (intent.currency !== o.currency) throw appError('ERR_VALIDATION', `payment intent ${ref} is in ${intent.currency}, the order in ${o.currency}`);
  if (intent.amount !== amount) {
    throw appError('ERR_VALIDATION', `body/amount ${money(o, amount)} does not match payment intent ${ref} (${money(o, intent.amount)})`);
  }
  if (o.payments.some((p) => p.type === 'payment' && p.ref === ref && p.gateway === gateway.name)) {
    throw appError('ERR_CONFLICT', `payment ${ref} is already recorded on order ${label(o)}`);
  }
  return intent;
}

export async function settle(c: Ctx, orderId: string, input: SettleInput, by: string | undefined): Promise<SettleReply> {
  const print = fingerprint(`storefront.settle:${orderId}`, input);
  const seen = replay(c, input.idempotencyKey, print);
  if (seen !== undefined) return seen as SettleReply;
  const o = loadOrder(c, orderId);
  assertOpen(o, 'settle');
  if (o.payments.length >= MAX_PAYMENTS) throw appError('ERR_CONFLICT', `order ${label(o)} has reached ${MAX_PAYMENTS} transactions`);
  const e = o.exponent;
  const amount = parseMoney(input.amount, 'body/amount', e);
  const tip = input.tip === undefined ? 0 : parseMoney(input.tip, 'body/tip', e);
  const ref = input.ref?.trim() || undefined;
  const method = (input.method?.trim() || (ref ? 'card' : 'cash')).toLowerCase();
  const gatewayName = input.gateway?.trim() || (ref ? c.services.gateways.defaultProcessor : undefined);
  const gateway = gatewayName ? gatewayNamed(c, gatewayName, 'body/gateway') : undefined;
  if (ref && method === 'cash') throw appError('ERR_VALIDATION', 'a cash payment takes no ref: ref names a card payment intent');

  o.tip += tip;
  const before = totalsOf(o);
  const due = before.total - before.netPaid;
  if (amount === 0 && due > 0) throw appError('ERR_VALIDATION', 'body/amount must be greater than 0');
  if (amount > due && method !== 'cash') {
    throw appError('ERR_VALIDATION', `body/amount ${money(o, amount)} is more than the balance due ${money(o, Math.max(0, due))}; only cash can be overpaid (change is given)`);
  }
  if (ref && gateway) {
    const intent = await verifyIntent(c, o, gateway, ref, amount);
    await askStorefront(c, { type: 'claim-ref', gateway: gateway.name, ref, orderId: o.rec.sk });
    if (intent.status === 'requires_capture') {
      try {
        const captured = await gateway.capture(c.actor.tenant, ref);
        if (captured.status !== 'succeeded') throw appError('ERR_VALIDATION', `payment intent ${ref} could not be captured (status: ${captured.status})`);
      } catch (err) {
        gatewayError(err);
      }
    }
  }

  const applied = Math.max(0, Math.min(amount, due));
  const tx: Transaction = {
    id: newId(c.now),
    type: 'payment',
    method,
    ...(gateway ? { gateway: gateway.name } : {}),
    ...(ref ? { ref } : {}),
    amount,
    applied,
    change: amount - applied,
    tip,
    refunded: 0,
    at: c.iso,
    ...(by ? { by } : {}),
    status: 'succeeded',
  };
  o.payments.push(tx);
  o.amountPaid += applied;
  o.changeDue += tx.change;
  const after = totalsOf(o);
  const closes = after.netPaid >= after.total;
  const fields: Record<string, unknown> = {};
  if (closes) {
    o.status = CLOSED;
    fields.closedAt = c.iso;
    if (by) fields.closedBy = by;
  }
  const order = save(c, o, fields);
  if (closes) queueEvent(c.actor.services.webhooks, c.actor.batch, c.actor.tenant, 'order.settled', order, c.now);
  // spec (issue): when a tab closes its service point becomes `dirty`.
  if (closes) await freePoint(c, o, 'dirty');
  const reply: SettleReply = { order, transaction: transactionData(tx, e) };
  remember(c, input.idempotencyKey, print, reply);
  return reply;
}
