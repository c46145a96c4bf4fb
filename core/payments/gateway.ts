// Card payments go through this small interface (DESIGN: External providers). Two implementations:
// `local` (core/payments/local.ts) simulates intents offline and says so in the log, and `stripe`
// (core/payments/stripe.ts) uses the official SDK when keys are configured. Amounts are integer
// minor units; currencies are ISO 4217 codes in upper case.

export type IntentStatus =
  | 'requires_payment_method'
  | 'requires_confirmation'
  | 'requires_action'
  | 'processing'
  | 'requires_capture'
  | 'canceled'
  | 'succeeded'
  | 'failed';

export interface PaymentIntent {
  id: string;
  provider: string;
  /** Minor units. */
  amount: number;
  currency: string;
  status: IntentStatus;
  /** Handed to the client SDK (card entry or a terminal reader) to complete the payment. */
  clientSecret: string | null;
  paymentMethodTypes: string[];
  captureMethod: 'automatic' | 'manual';
  metadata: Record<string, string>;
  createdAt: string;
  /** Set when the gateway says why it failed. */
  failureMessage?: string;
}

export interface CreateIntentInput {
  tenant: string;
  amount: number;
  currency: string;
  /** Default `['card']`; terminal intents use `['card_present']`. */
  paymentMethodTypes?: string[];
  captureMethod?: 'automatic' | 'manual';
  description?: string;
  metadata?: Record<string, string>;
  /** Passed to the gateway so a retried create makes one intent. */
  idempotencyKey?: string;
}

export interface GatewayRefund {
  id: string;
  provider: string;
  intentId: string;
  amount: number;
  currency: string;
  status: string;
  createdAt: string;
}

export interface RefundInput {
  tenant: string;
  intentId: string;
  amount: number;
  currency: string;
  reason?: string;
  idempotencyKey?: string;
}

export interface TerminalLocation {
  id: string;
  provider: string;
  businessLocationId: string;
  displayName: string;
  /** false when an existing location was found. */
  created: boolean;
}

export interface TerminalLocationInput {
  businessLocationId: string;
  displayName: string;
  address?: { line1?: string; line2?: string; city?: string; state?: string; postalCode?: string; country?: string };
}

export interface PaymentGateway {
  /** The processor's name: the path segment of `/storefront/:processor/...`. */
  readonly name: string;
  /** What a client SDK needs to talk to the processor (null for `local`). */
  readonly publishableKey: string | null;
  createIntent(input: CreateIntentInput): Promise<PaymentIntent>;
  /** The intent, or undefined when this gateway has no such intent for the tenant. */
  getIntent(tenant: string, id: string): Promise<PaymentIntent | undefined>;
  /** Captures an authorised (`requires_capture`) intent; returns it as it now stands. */
  capture(tenant: string, id: string): Promise<PaymentIntent>;
  refund(input: RefundInput): Promise<GatewayRefund>;
  /** A short-lived secret a terminal SDK uses to connect to its reader. */
  connectionToken(tenant: string, input: { terminalLocationId?: string }): Promise<{ secret: string; location: string | null }>;
  /** The processor's terminal location for a business location, created on first call. */
  ensureTerminalLocation(tenant: string, input: TerminalLocationInput): Promise<TerminalLocation>;
}

/** A failure the processor reported (declined card, invalid request); mapped to 402 or 400 by callers. */
export class GatewayError extends Error {
  override name = 'GatewayError';
  constructor(
    message: string,
    readonly kind: 'declined' | 'invalid' | 'unavailable',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The configured gateways, by name. */
export class PaymentGateways {
  private readonly byName = new Map<string, PaymentGateway>();

  constructor(
    gateways: PaymentGateway[],
    readonly defaultProcessor: string,
  ) {
    for (const g of gateways) this.byName.set(g.name, g);
    if (!this.byName.has(defaultProcessor)) throw new Error(`the default payment processor "${defaultProcessor}" is not configured`);
  }

  get(name: string): PaymentGateway | undefined {
    return this.byName.get(name);
  }

  list(): PaymentGateway[] {
    return [...this.byName.values()];
  }
}
