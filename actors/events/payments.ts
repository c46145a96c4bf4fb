// Card payments for ticket purchases go through this small interface (DESIGN: External
// providers). The default, `local`, works offline: it approves every charge except the test token
// `tok_decline`, and keeps nothing itself: the purchase records the payment in its `event_order`
// record, in the same batch as the tickets. A real gateway (the storefront's Stripe adapter)
// implements the same two calls.
import { newId } from '../../core/ids.js';
import type { Clock } from '../../core/clock.js';
import { systemClock } from '../../core/clock.js';
import type { Payment } from '../event-records/index.js';

export type { Payment };

export interface ChargeRequest {
  tenant: string;
  /** Integer minor units (cents). */
  amount: number;
  currency: string;
  description: string;
  /** Passed to the gateway so a retried charge is not taken twice. */
  idempotencyKey?: string;
  method?: string;
  /** A card token from the client SDK; `tok_decline` is declined by the local provider. */
  token?: string;
  customerEmail?: string;
}

export interface Refund {
  id: string;
  provider: string;
  paymentId: string;
  amount: number;
  currency: string;
  createdAt: string;
}

export class PaymentDeclinedError extends Error {
  override name = 'PaymentDeclinedError';
}

export interface PaymentsProvider {
  readonly name: string;
  /** Takes the money or throws PaymentDeclinedError. */
  charge(req: ChargeRequest): Promise<Payment>;
  refund(req: { tenant: string; paymentId: string; amount: number; currency: string; idempotencyKey?: string }): Promise<Refund>;
}

export class LocalPayments implements PaymentsProvider {
  readonly name = 'local';
  private readonly charges = new Map<string, Payment>();

  constructor(private readonly clock: Clock = systemClock) {}

  async charge(req: ChargeRequest): Promise<Payment> {
    if (req.token === 'tok_decline') throw new PaymentDeclinedError('the card was declined (local test token tok_decline)');
    const key = req.idempotencyKey ? `${req.tenant}\u0000${req.idempotencyKey}` : undefined;
    const seen = key ? this.charges.get(key) : undefined;
    if (seen) return seen;
    const payment: Payment = {
      id: `pay_local_${newId(this.clock.now())}`,
      provider: this.name,
      status: 'succeeded',
      amount: req.amount,
      currency: req.currency,
      method: req.method ?? 'card',
      createdAt: new Date(this.clock.now()).toISOString(),
    };
    if (key) {
      if (this.charges.size > 10_000) this.charges.clear();
      this.charges.set(key, payment);
    }
    return payment;
  }

  async refund(req: { tenant: string; paymentId: string; amount: number; currency: string }): Promise<Refund> {
    return {
      id: `re_local_${newId(this.clock.now())}`,
      provider: this.name,
      paymentId: req.paymentId,
      amount: req.amount,
      currency: req.currency,
      createdAt: new Date(this.clock.now()).toISOString(),
    };
  }
}
