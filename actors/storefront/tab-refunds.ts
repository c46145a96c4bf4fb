// Refunds of a tab's payments, spread over them newest first, through their gateways.
import { refuseAfterWrites } from '../../core/actor/runtime.js';
import { AppError, appError, fromWire, toWire, type WireError } from '../../core/errors.js';
import { fingerprint } from '../../core/idempotency.js';
import { newId } from '../../core/ids.js';
import { parseMoney, sum } from '../../core/money.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import type { RefundInput, SettleReply } from './messages.js';
import { type Allocation, type Transaction, transactionData } from './order.js';
import { gatewayAppError, gatewayError, gatewayNamed, MAX_PAYMENTS } from './tab-payments.js';
import { type Ctx, label, loadOrder, money, remember, replay, save } from './tab-state.js';

export async function refund(c: Ctx, orderId: string, input: RefundInput, by: string | undefined): Promise<SettleReply> {
  const print = fingerprint(`storefront.refund:${orderId}`, input);
  const seen = replay(c, input.idempotencyKey, print);
  if (seen !== undefined) {
    // A refund that stopped part-way answers its retries as it answered first (what it refunded
    // is recorded): refunding again is a new request, with a new key.
    const failure = (seen as { failure?: WireError }).failure;
    if (failure !== undefined) throw fromWire(failure);
    return seen as SettleReply;
  }
  const o = loadOrder(c, orderId);
  if (o.payments.length >= MAX_PAYMENTS) throw appError('ERR_CONFLICT', `order ${label(o)} has reached ${MAX_PAYMENTS} transactions`);
  const e = o.exponent;
  const paid = o.payments.filter((p) => p.type === 'payment');
  let allocations: Array<{ tx?: Transaction; amount: number }>;
  let amount: number;
  if (input.transactionId) {
    const tx = paid.find((p) => p.id === input.transactionId);
    if (!tx) throw appError('ERR_VALIDATION', `body/transactionId: order ${label(o)} has no payment ${input.transactionId}`);
    const left = tx.applied - tx.refunded;
    amount = input.amount === undefined ? left : parseMoney(input.amount, 'body/amount', e, { zero: false });
    if (left <= 0) throw appError('ERR_VALIDATION', `payment ${tx.id} has been refunded in full`);
    if (amount > left) throw appError('ERR_VALIDATION', `a refund of ${money(o, amount)} is more than the ${money(o, left)} left of payment ${tx.id}`);
    allocations = [{ tx, amount }];
  } else {
    const left = o.amountPaid - o.amountRefunded;
    if (left <= 0) throw appError('ERR_VALIDATION', `nothing to refund: order ${label(o)} has no payment left to refund`);
    amount = input.amount === undefined ? left : parseMoney(input.amount, 'body/amount', e, { zero: false });
    if (amount > left) throw appError('ERR_VALIDATION', `a refund of ${money(o, amount)} is more than the ${money(o, left)} paid (and not yet refunded) on order ${label(o)}`);
    // Newest payment first; what no recorded payment covers (an imported amountPaid) is recorded alone.
    allocations = [];
    let rest = amount;
    for (const tx of [...paid].reverse()) {
      const take = Math.min(rest, tx.applied - tx.refunded);
      if (take > 0) {
        allocations.push({ tx, amount: take });
        rest -= take;
      }
      if (rest === 0) break;
    }
    if (rest > 0) allocations.push({ amount: rest });
  }
  const done: Allocation[] = [];
  let failure: unknown;
  for (const a of allocations) {
    const entry: Allocation = { transactionId: a.tx?.id ?? '', amount: a.amount };
    if (a.tx?.gateway && a.tx.ref) {
      try {
        const gateway = gatewayNamed(c, a.tx.gateway, 'the payment\'s gateway');
        const r = await gateway.refund({
          tenant: c.actor.tenant,
          intentId: a.tx.ref,
          amount: a.amount,
          currency: o.currency,
          ...(input.reason ? { reason: input.reason } : {}),
          ...(input.idempotencyKey ? { idempotencyKey: `${input.idempotencyKey}:${a.tx.id}` } : {}),
        });
        entry.gatewayRefundId = r.id;
      } catch (err) {
        // Nothing refunded yet: a plain refusal. Otherwise the payments refunded so far are
        // recorded below (their money has moved) and the answer still says what failed.
        if (done.length === 0) gatewayError(err);
        failure = err;
        break;
      }
    }
    done.push(entry);
  }
  const refunded = allocations.slice(0, done.length);
  if (failure !== undefined) amount = sum(refunded.map((a) => a.amount));
  for (const a of refunded) if (a.tx) a.tx.refunded += a.amount;
  const methods = [...new Set(refunded.map((a) => a.tx?.method ?? 'other'))];
  const tx: Transaction = {
    id: newId(c.now),
    type: 'refund',
    method: methods.length === 1 ? methods[0] : 'mixed',
    amount,
    applied: 0,
    change: 0,
    tip: 0,
    refunded: 0,
    allocations: done,
    ...(input.reason?.trim() ? { reason: input.reason.trim() } : {}),
    at: c.iso,
    ...(by ? { by } : {}),
    status: 'succeeded',
  };
  o.payments.push(tx);
  o.amountRefunded += amount;
  const order = save(c, o);
  queueEvent(c.actor.services.webhooks, c.actor.batch, c.actor.tenant, 'order.refunded', order, c.now);
  if (failure !== undefined) {
    const note = `; ${money(o, amount)} was refunded to the first ${done.length} payment(s) and is recorded on order ${label(o)}: refund the rest with a new request`;
    const mapped = gatewayAppError(failure, note);
    const err = mapped instanceof AppError ? mapped : appError('ERR_UNAVAILABLE', `payment gateway failed${note}`);
    remember(c, input.idempotencyKey, print, { failure: toWire(err) });
    // Money moved at the gateways: what was refunded is committed, and the caller hears what failed.
    throw refuseAfterWrites(err);
  }
  const reply: SettleReply = { order, transaction: transactionData(tx, e) };
  remember(c, input.idempotencyKey, print, reply);
  return reply;
}
