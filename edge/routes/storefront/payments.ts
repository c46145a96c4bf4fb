// Payment gateway routes (spec: the payment rows; `payproc` is the processor's name in the path).
// The processor is a configured gateway (`local`, `stripe`); another name is 404. A terminal intent
// is created for `card_present`; once the reader has taken the card, its id goes to settle as `ref`.
// The `local` gateway has a simulated reader: present-card is its test helper, so the whole flow
// (terminal intent, card, settle) runs without a processor account.
import { Type } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import type { PaymentGateway } from '../../../core/payments/gateway.js';
import { LocalGateway } from '../../../core/payments/local.js';
import { gatewayCall, gatewayOf as gatewayOfNode, intentView, type IntentRequest, type StorefrontApi } from '../../../actors/storefront/index.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { MoneyLike, PAY_TAG, servicesOf, Slug } from './common.js';
import { posRouteOf } from './access.js';

const Processor = Type.Object({ processor: Type.String({ minLength: 1, maxLength: 40, description: 'Payment processor: a configured gateway (local, stripe)' }) });

const IntentSchema = Type.Object({
  id: Type.String(),
  provider: Type.String(),
  amount: Type.Number({ description: 'Major units' }),
  currency: Type.String(),
  status: Type.String(),
  clientSecret: Type.Union([Type.String(), Type.Null()]),
  paymentMethodTypes: Type.Array(Type.String()),
  captureMethod: Type.String(),
  orderId: Type.Optional(Type.String()),
  createdAt: Type.String(),
  failureMessage: Type.Optional(Type.String({ description: 'Why the intent failed (a declined card)' })),
});

const IntentBody = Type.Object({
  amount: Type.Optional(MoneyLike('Amount in major units (default: the balance due of orderId)')),
  currency: Type.Optional(Type.String({ pattern: '^[A-Za-z]{3}$', description: "ISO 4217 (default: the order's, else the configured currency)" })),
  orderId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The tab this payment is for' })),
  description: Type.Optional(Type.String({ maxLength: 500 })),
  captureMethod: Type.Optional(Type.Unsafe<'automatic' | 'manual'>({ type: 'string', enum: ['automatic', 'manual'] })),
  idempotencyKey: Type.Optional(Type.String({ maxLength: 64, description: 'UUID: a retry makes one intent' })),
});

function gatewayOf(ctx: RequestContext, name: string): PaymentGateway {
  return gatewayOfNode(servicesOf(ctx.deps), name);
}

async function createIntent(sf: StorefrontApi, ctx: RequestContext, processor: string, body: IntentRequest, methodTypes: string[]) {
  const out = await sf.createIntent(ctx.tenant, processor, body, methodTypes, ctx.status);
  ctx.status = out.status;
  return out.body;
}

export function paymentRoutes(sf: StorefrontApi): RouteDef[] {
  const posRoute = posRouteOf(sf);
  return [
    route({
      method: 'GET',
      path: '/storefront/payment-gateways',
      auth: 'none',
      tag: PAY_TAG,
      summary: 'The configured payment gateways with their publishable keys',
      description:
        '`provider` is the name used in `/storefront/:processor/...` and as settle\'s `gateway`; `local` has no publishable key. ' +
        '**Access.** Open in both storefront modes: publishable keys only, never a secret.',
      response: Type.Array(Type.Object({ provider: Type.String(), publishableKey: Type.Union([Type.String(), Type.Null()]), default: Type.Boolean() })),
      handler: (ctx) => {
        const gw = servicesOf(ctx.deps).gateways;
        return gw.list().map((g) => ({ provider: g.name, publishableKey: g.publishableKey, default: g.name === gw.defaultProcessor }));
      },
    }),

    route({
      method: 'POST',
      path: '/storefront/:processor/intent',
      auth: 'none',
      tag: PAY_TAG,
      summary: 'Create a card payment intent',
      description:
        'With `orderId` the amount defaults to the balance due and the currency is the order\'s. The client completes the intent ' +
        'with its `clientSecret`; then settle the tab with the intent id as `ref`. An unknown processor is 404. **Access.** Open in ' +
        'both storefront modes, so a guest can pay from their own device: an intent moves no money until the card is confirmed ' +
        "with the processor, and the answer carries no one's personal data; settling the tab with it follows the settle route's access.",
      params: Processor,
      body: IntentBody,
      status: 201,
      response: IntentSchema,
      errors: [402, 404, 409, 503],
      handler: (ctx) => createIntent(sf, ctx, ctx.params.processor, ctx.body, ['card']),
    }),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/:processor/terminal/intent',
        auth: 'none',
        tag: PAY_TAG,
        summary: 'Create a card-present intent for a terminal reader',
        description:
          "Created with `payment_method_types: ['card_present']`. The reader collects the card; the intent id then goes to settle as " +
          '`ref` (an intent left `requires_capture` is captured by settle). The `local` processor simulates the reader: ' +
          '`POST /storefront/local/terminal/intent/:id/present-card` makes it take a card.',
        params: Processor,
        body: IntentBody,
        status: 201,
        response: IntentSchema,
        errors: [402, 404, 409, 503],
        handler: (ctx) => createIntent(sf, ctx, ctx.params.processor, ctx.body, ['card_present']),
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/:processor/terminal/intent/:id/present-card',
        auth: 'none',
        tag: PAY_TAG,
        summary: 'Present a card to the simulated reader (local gateway only)',
        description:
          "A test helper, as processors offer for their test mode: the `local` gateway's simulated reader takes a card for a " +
          'terminal (`card_present`) intent, so terminal intent → present card → settle (`ref` = the intent id) runs offline, ' +
          'with no processor account. `outcome` `approved` (default) makes the intent `succeeded` (`requires_capture` for a ' +
          'manual-capture intent, which settle captures); `declined` makes it `failed`, and a card can be presented again. ' +
          'Nothing is charged. Another configured processor is a 400 (use its own test tools), an unknown one or an unknown ' +
          'intent a 404, an intent that is not a terminal intent a 400, one already paid or canceled a 409. The local gateway ' +
          'never charges a card: leave it out of `PAYMENT_GATEWAYS` where real payments are taken.',
        params: Type.Object({ ...Processor.properties, id: Type.String({ minLength: 1, maxLength: 100, description: 'The terminal intent id (`pi_local_…`)' }) }),
        body: Type.Object(
          { outcome: Type.Optional(Type.Unsafe<'approved' | 'declined'>({ type: 'string', enum: ['approved', 'declined'], description: 'What the card does (default `approved`)' })) },
          { additionalProperties: false },
        ),
        response: IntentSchema,
        errors: [400, 404, 409],
        handler: async (ctx) => {
          const g = gatewayOf(ctx, ctx.params.processor);
          if (!(g instanceof LocalGateway)) {
            throw appError('ERR_VALIDATION', `present-card simulates a reader of the local gateway; processor ${g.name} takes real cards (use its own test tools)`);
          }
          const intent = await g.getIntent(ctx.tenant, ctx.params.id);
          if (!intent) throw appError('ERR_NOT_FOUND', `payment intent ${ctx.params.id} of processor local`);
          if (!intent.paymentMethodTypes.includes('card_present')) {
            throw appError('ERR_VALIDATION', `payment intent ${intent.id} is not a terminal intent (card_present); create one with POST /storefront/local/terminal/intent`);
          }
          if (intent.status !== 'requires_payment_method' && intent.status !== 'failed') {
            throw appError('ERR_CONFLICT', `payment intent ${intent.id} is ${intent.status}: it takes no card now`);
          }
          const declined = ctx.body.outcome === 'declined';
          return intentView(await gatewayCall(() => g.simulate(ctx.tenant, intent.id, declined ? 'failed' : 'succeeded', 'card declined (simulated reader)')));
        },
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/:processor/terminal/connection-token',
        auth: 'none',
        tag: PAY_TAG,
        summary: 'A connection token for a terminal SDK',
        params: Processor,
        body: Type.Object({ terminalLocationId: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }),
        response: Type.Object({ secret: Type.String(), location: Type.Union([Type.String(), Type.Null()]) }),
        errors: [404, 503],
        handler: (ctx) => {
          const g = gatewayOf(ctx, ctx.params.processor);
          return gatewayCall(() => g.connectionToken(ctx.tenant, { ...(ctx.body.terminalLocationId ? { terminalLocationId: ctx.body.terminalLocationId } : {}) }));
        },
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/:processor/terminal/location/ensure',
        auth: 'none',
        tag: PAY_TAG,
        summary: "The processor's terminal location for a business location (created on first call)",
        description:
          'Idempotent: the location is created once per business location and remembered. The display name defaults to the ' +
          "location's `displayName` (else its slug); the address to its `address` object (needs a `country`).",
        params: Processor,
        body: Type.Object({
          businessLocationId: Slug,
          displayName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        }),
        response: Type.Object({ id: Type.String(), provider: Type.String(), businessLocationId: Type.String(), displayName: Type.String(), created: Type.Boolean() }),
        errors: [404, 503],
        handler: (ctx) => {
          const g = gatewayOf(ctx, ctx.params.processor);
          const loc = sf.requireLocation(ctx.tenant, ctx.body.businessLocationId);
          const addr = loc.data.address && typeof loc.data.address === 'object' ? (loc.data.address as Record<string, unknown>) : undefined;
          const str = (v: unknown) => (typeof v === 'string' && v ? v : undefined);
          const displayName = ctx.body.displayName ?? str(loc.data.displayName) ?? str(loc.data.title) ?? ctx.body.businessLocationId;
          return gatewayCall(() =>
            g.ensureTerminalLocation(ctx.tenant, {
              businessLocationId: ctx.body.businessLocationId,
              displayName,
              ...(addr && str(addr.country)
                ? { address: { country: str(addr.country), line1: str(addr.line1), line2: str(addr.line2), city: str(addr.city), state: str(addr.state), postalCode: str(addr.postalCode) } }
                : {}),
            }),
          );
        },
      }),
    ),
  ];
}
