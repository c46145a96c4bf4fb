// The `local` payment gateway: intents simulated offline, kept in the tenant's key-value space so
// they survive a restart. Nothing is charged. An intent stays `requires_payment_method` until
// `simulate` marks it (the stand-in for a card tapped on a reader, for tests and local
// development; over HTTP, `POST /storefront/local/terminal/intent/:id/present-card`); a refund is
// recorded and always succeeds. It says so in the log at start-up and
// never pretends to be a real processor.
import { randomBytes } from 'node:crypto';
import type { Clock } from '../clock.js';
import { newId } from '../ids.js';
import type { Logger } from '../log.js';
import { WriteBatch, type Store } from '../store/store.js';
import {
  GatewayError,
  type CreateIntentInput,
  type GatewayRefund,
  type PaymentGateway,
  type PaymentIntent,
  type RefundInput,
  type TerminalLocation,
  type TerminalLocationInput,
} from './gateway.js';

const NS = 'payments.local';

interface StoredIntent extends PaymentIntent {
  refunded: number;
}

export class LocalGateway implements PaymentGateway {
  readonly name = 'local';
  readonly publishableKey = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    logger?: Logger,
  ) {
    logger?.info('payment gateway "local" is enabled: intents are simulated offline and no card is ever charged');
  }

  private iso(): string {
    return new Date(this.clock.now()).toISOString();
  }

  private read(tenant: string, id: string): StoredIntent | undefined {
    return this.store.getKv<StoredIntent>(tenant, NS, `intent:${id}`);
  }

  private async write(tenant: string, intent: StoredIntent): Promise<void> {
    await this.store.commit(new WriteBatch().putKv(tenant, NS, `intent:${intent.id}`, intent));
  }

  private view(i: StoredIntent): PaymentIntent {
    const { refunded: _refunded, ...out } = i;
    return { ...out, metadata: { ...out.metadata }, paymentMethodTypes: [...out.paymentMethodTypes] };
  }

  async createIntent(input: CreateIntentInput): Promise<PaymentIntent> {
    if (input.idempotencyKey) {
      const seen = this.store.getKv<string>(input.tenant, NS, `idem:${input.idempotencyKey}`);
      const hit = seen ? this.read(input.tenant, seen) : undefined;
      if (hit) return this.view(hit);
    }
    const id = `pi_local_${newId(this.clock.now())}`;
    const intent: StoredIntent = {
      id,
      provider: this.name,
      amount: input.amount,
      currency: input.currency,
      status: 'requires_payment_method',
      clientSecret: `${id}_secret_${randomBytes(12).toString('hex')}`,
      paymentMethodTypes: input.paymentMethodTypes?.length ? [...input.paymentMethodTypes] : ['card'],
      captureMethod: input.captureMethod ?? 'automatic',
      metadata: { ...input.metadata },
      createdAt: this.iso(),
      refunded: 0,
    };
    const batch = new WriteBatch().putKv(input.tenant, NS, `intent:${id}`, intent);
    if (input.idempotencyKey) batch.putKv(input.tenant, NS, `idem:${input.idempotencyKey}`, id);
    await this.store.commit(batch);
    return this.view(intent);
  }

  async getIntent(tenant: string, id: string): Promise<PaymentIntent | undefined> {
    const i = this.read(tenant, id);
    return i ? this.view(i) : undefined;
  }

  async capture(tenant: string, id: string): Promise<PaymentIntent> {
    const i = this.read(tenant, id);
    if (!i) throw new GatewayError(`no such payment intent: ${id}`, 'invalid');
    if (i.status !== 'requires_capture') return this.view(i);
    const next = { ...i, status: 'succeeded' as const };
    await this.write(tenant, next);
    return this.view(next);
  }

  /**
   * Test and development only: what a card reader would do. `succeeded` completes the intent
   * (or leaves it `requires_capture` for a manual-capture intent), `failed` declines it.
   */
  async simulate(tenant: string, id: string, outcome: 'succeeded' | 'failed', failureMessage = 'card declined (simulated)'): Promise<PaymentIntent> {
    const i = this.read(tenant, id);
    if (!i) throw new GatewayError(`no such payment intent: ${id}`, 'invalid');
    if (i.status === 'succeeded' || i.status === 'canceled') throw new GatewayError(`payment intent ${id} is already ${i.status}`, 'invalid');
    const next: StoredIntent =
      outcome === 'failed'
        ? { ...i, status: 'failed', failureMessage }
        : { ...i, status: i.captureMethod === 'manual' ? 'requires_capture' : 'succeeded' };
    if (outcome === 'succeeded') delete next.failureMessage;
    await this.write(tenant, next);
    return this.view(next);
  }

  async refund(input: RefundInput): Promise<GatewayRefund> {
    const i = this.read(input.tenant, input.intentId);
    if (!i) throw new GatewayError(`no such payment intent: ${input.intentId}`, 'invalid');
    if (i.status !== 'succeeded') throw new GatewayError(`payment intent ${i.id} is ${i.status}: nothing to refund`, 'invalid');
    if (i.refunded + input.amount > i.amount) throw new GatewayError(`refund exceeds what intent ${i.id} captured`, 'invalid');
    await this.write(input.tenant, { ...i, refunded: i.refunded + input.amount });
    return {
      id: `re_local_${newId(this.clock.now())}`,
      provider: this.name,
      intentId: i.id,
      amount: input.amount,
      currency: input.currency,
      status: 'succeeded',
      createdAt: this.iso(),
    };
  }

  async connectionToken(_tenant: string, input: { terminalLocationId?: string }): Promise<{ secret: string; location: string | null }> {
    return { secret: `pst_local_${randomBytes(16).toString('hex')}`, location: input.terminalLocationId ?? null };
  }

  async ensureTerminalLocation(tenant: string, input: TerminalLocationInput): Promise<TerminalLocation> {
    const key = `location:${input.businessLocationId}`;
    const seen = this.store.getKv<Omit<TerminalLocation, 'created'>>(tenant, NS, key);
    if (seen) return { ...seen, created: false };
    const loc = { id: `tml_local_${newId(this.clock.now())}`, provider: this.name, businessLocationId: input.businessLocationId, displayName: input.displayName };
    await this.store.commit(new WriteBatch().putKv(tenant, NS, key, loc));
    return { ...loc, created: true };
  }
}
