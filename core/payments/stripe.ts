// The `stripe` payment gateway, through the official SDK. Enabled when a secret key is configured
// (STRIPE_SECRET_KEY). Every intent carries the tenant in its metadata, and an intent of another
// tenant reads as unknown, so one organisation can never settle a tab with another's payment.
// Terminal locations are created once per business location and remembered in the tenant's
// key-value space. `apiBase` points the SDK at another endpoint (stripe-mock, a recording stub);
// the tests never reach the network.
import Stripe from 'stripe';
import type { Clock } from '../clock.js';
import { IdempotencyGate } from '../idempotency.js';
import type { Logger } from '../log.js';
import { WriteBatch, type Store } from '../store/store.js';
import {
  GatewayError,
  type CreateIntentInput,
  type GatewayRefund,
  type IntentStatus,
  type PaymentGateway,
  type PaymentIntent,
  type RefundInput,
  type TerminalLocation,
  type TerminalLocationInput,
} from './gateway.js';

const NS = 'payments.stripe';

export interface StripeGatewayConfig {
  secretKey: string;
  publishableKey: string | null;
  /** e.g. `http://127.0.0.1:12111` for stripe-mock; null for Stripe itself. */
  apiBase?: string | null;
  timeoutMs?: number;
}

function sdkOptions(cfg: StripeGatewayConfig): ConstructorParameters<typeof Stripe>[1] {
  const opts: NonNullable<ConstructorParameters<typeof Stripe>[1]> = {
    maxNetworkRetries: 2,
    timeout: cfg.timeoutMs ?? 20_000,
    telemetry: false,
    appInfo: { name: 'business-platform-api' },
  };
  if (cfg.apiBase) {
    const u = new URL(cfg.apiBase);
    opts.host = u.hostname;
    opts.port = u.port || (u.protocol === 'http:' ? 80 : 443);
    opts.protocol = u.protocol === 'http:' ? 'http' : 'https';
  }
  return opts;
}

const STATUSES: ReadonlySet<string> = new Set([
  'requires_payment_method',
  'requires_confirmation',
  'requires_action',
  'processing',
  'requires_capture',
  'canceled',
  'succeeded',
]);

function mapError(err: unknown): GatewayError {
  const e = err as { type?: string; message?: string };
  const message = `stripe: ${e?.message ?? String(err)}`;
  if (e?.type === 'StripeCardError') return new GatewayError(message, 'declined', { cause: err });
  if (e?.type === 'StripeInvalidRequestError') return new GatewayError(message, 'invalid', { cause: err });
  return new GatewayError(message, 'unavailable', { cause: err });
}

export class StripeGateway implements PaymentGateway {
  readonly name = 'stripe';
  readonly publishableKey: string | null;
  private readonly client: Stripe;
  private readonly gate = new IdempotencyGate();

  constructor(
    cfg: StripeGatewayConfig,
    private readonly store: Store,
    private readonly clock: Clock,
    logger?: Logger,
  ) {
    this.publishableKey = cfg.publishableKey;
    this.client = new Stripe(cfg.secretKey, sdkOptions(cfg));
    logger?.info({ apiBase: cfg.apiBase ?? 'api.stripe.com' }, 'payment gateway "stripe" is enabled');
  }

  private map(tenant: string, pi: Stripe.PaymentIntent): PaymentIntent | undefined {
    if (pi.metadata?.tenant !== tenant) return undefined;
    const status = (STATUSES.has(pi.status) ? pi.status : 'processing') as IntentStatus;
    const out: PaymentIntent = {
      id: pi.id,
      provider: this.name,
      amount: pi.amount,
      currency: pi.currency.toUpperCase(),
      status,
      clientSecret: pi.client_secret ?? null,
      paymentMethodTypes: [...(pi.allowed_payment_method_types ?? pi.payment_method_types ?? [])],
      captureMethod: pi.capture_method === 'manual' ? 'manual' : 'automatic',
      metadata: { ...(pi.metadata ?? {}) },
      createdAt: new Date((pi.created ?? Math.floor(this.clock.now() / 1000)) * 1000).toISOString(),
    };
    if (pi.last_payment_error?.message) out.failureMessage = pi.last_payment_error.message;
    return out;
  }

  async createIntent(input: CreateIntentInput): Promise<PaymentIntent> {
    try {
      const pi = await this.client.paymentIntents.create(
        {
          amount: input.amount,
          currency: input.currency.toLowerCase(),
          // The SDK's pinned API version (2026-10-28) names the create parameter
          // allowed_payment_method_types; the intent still reports payment_method_types.
          allowed_payment_method_types: input.paymentMethodTypes?.length ? input.paymentMethodTypes : ['card'],
          capture_method: input.captureMethod ?? 'automatic',
          ...(input.description ? { description: input.description } : {}),
          metadata: { ...input.metadata, tenant: input.tenant },
        },
        input.idempotencyKey ? { idempotencyKey: `${input.tenant}:${input.idempotencyKey}` } : undefined,
      );
      return this.map(input.tenant, pi)!;
    } catch (err) {
      throw mapError(err);
    }
  }

  async getIntent(tenant: string, id: string): Promise<PaymentIntent | undefined> {
    if (!/^pi_[A-Za-z0-9_]+$/.test(id)) return undefined;
    try {
      return this.map(tenant, await this.client.paymentIntents.retrieve(id));
    } catch (err) {
      if ((err as { code?: string }).code === 'resource_missing') return undefined;
      throw mapError(err);
    }
  }

  async capture(tenant: string, id: string): Promise<PaymentIntent> {
    try {
      const pi = this.map(tenant, await this.client.paymentIntents.capture(id));
      if (!pi) throw new GatewayError(`no such payment intent: ${id}`, 'invalid');
      return pi;
    } catch (err) {
      throw err instanceof GatewayError ? err : mapError(err);
    }
  }

  async refund(input: RefundInput): Promise<GatewayRefund> {
    try {
      const r = await this.client.refunds.create(
        {
          payment_intent: input.intentId,
          amount: input.amount,
          metadata: { tenant: input.tenant, ...(input.reason ? { reason: input.reason.slice(0, 500) } : {}) },
        },
        input.idempotencyKey ? { idempotencyKey: `${input.tenant}:${input.idempotencyKey}` } : undefined,
      );
      return {
        id: r.id,
        provider: this.name,
        intentId: input.intentId,
        amount: r.amount,
        currency: r.currency.toUpperCase(),
        status: r.status ?? 'pending',
        createdAt: new Date(r.created * 1000).toISOString(),
      };
    } catch (err) {
      throw mapError(err);
    }
  }

  async connectionToken(_tenant: string, input: { terminalLocationId?: string }): Promise<{ secret: string; location: string | null }> {
    try {
      const t = await this.client.terminal.connectionTokens.create(input.terminalLocationId ? { location: input.terminalLocationId } : {});
      return { secret: t.secret, location: t.location ?? input.terminalLocationId ?? null };
    } catch (err) {
      throw mapError(err);
    }
  }

  ensureTerminalLocation(tenant: string, input: TerminalLocationInput): Promise<TerminalLocation> {
    const key = `location:${input.businessLocationId}`;
    // One create per business location even when two devices ask at once.
    return this.gate.run(`${tenant}\u0000${key}`, async () => {
      const seen = this.store.getKv<Omit<TerminalLocation, 'created'>>(tenant, NS, key);
      if (seen) return { ...seen, created: false };
      const a = input.address;
      try {
        const loc = await this.client.terminal.locations.create(
          {
            display_name: input.displayName,
            ...(a?.country
              ? {
                  address: {
                    country: a.country,
                    ...(a.line1 ? { line1: a.line1 } : {}),
                    ...(a.line2 ? { line2: a.line2 } : {}),
                    ...(a.city ? { city: a.city } : {}),
                    ...(a.state ? { state: a.state } : {}),
                    ...(a.postalCode ? { postal_code: a.postalCode } : {}),
                  },
                }
              : {}),
            metadata: { tenant, businessLocationId: input.businessLocationId },
          },
          { idempotencyKey: `${tenant}:terminal-location:${input.businessLocationId}` },
        );
        const out = { id: loc.id, provider: this.name, businessLocationId: input.businessLocationId, displayName: loc.display_name ?? input.displayName };
        await this.store.commit(new WriteBatch().putKv(tenant, NS, key, out));
        return { ...out, created: true };
      } catch (err) {
        throw err instanceof GatewayError ? err : mapError(err);
      }
    });
  }
}
