// POS tab routes (spec: Endpoints → Storefront: POS tabs and orders): open, list, settle, refund,
// split and service points. Every write is one call of the storefront API's tabs (a message to the
// tabs actor of the order's location); lists of open tabs come from that actor's memory, closed
// tabs from the store.
import { Type } from '@sinclair/typebox';
import type { Principal } from '../../../core/auth/tokens.js';
import { appError } from '../../../core/errors.js';
import { assertIdempotencyKey } from '../../../core/idempotency.js';
import type { ServicePointsApi } from '../../../actors/service-points/index.js';
import { type RefundInput, type SettleInput, type SettleReply, type StorefrontApi } from '../../../actors/storefront/index.js';
import { presentOrder } from '../../../actors/storefront/index.js';
import type { AppDeps } from '../../deps.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import {
  byOf,
  IdParam,
  ListOf,
  MoneyLike,
  page,
  Paging,
  RecordSchema,
  servicesOf,
  SettleResult,
  Slug,
  TAG,
} from './common.js';
import { customerOf, isStaff, posRouteOf } from './access.js';

const Customer = Type.Object({
  name: Type.Optional(Type.String({ maxLength: 200 })),
  email: Type.Optional(Type.String({ maxLength: 254 })),
  phone: Type.Optional(Type.String({ maxLength: 40 })),
  customerId: Type.Optional(Type.String({ maxLength: 64 })),
});

const IdempotencyKey = Type.Optional(Type.String({ maxLength: 64, description: 'UUID: a retry with the same key answers the first result without repeating it (24 h)' }));

/**
 * Whose order a new tab is. A customer token (its own, or relayed by an application) makes it that
 * customer's, whatever the body says; staff may name the customer in `customer.customerId`. From an
 * application token alone or an anonymous caller a customer id in the body is ignored (the order is
 * nobody's): who a caller acts for comes from a credential, never from a typed id.
 */
function ownerOf(p: Principal | undefined, named: string | undefined): string | undefined {
  return customerOf(p) ?? (isStaff(p) && named?.trim() ? named.trim() : undefined);
}

/** `YYYY-MM-DD` (start of that UTC day) or an ISO date-time; `endOfDay` moves a bare date to the next day. */
function instant(v: string | undefined, field: string, endOfDay: boolean): string | undefined {
  if (v === undefined) return undefined;
  const dateOnly = /^\d{4}-\d{2}-\d{2}$/.test(v);
  const ms = Date.parse(dateOnly ? `${v}T00:00:00Z` : v);
  if (!Number.isFinite(ms)) throw appError('ERR_VALIDATION', `query/${field} must be a date (YYYY-MM-DD) or an ISO 8601 date-time`);
  return new Date(dateOnly && endOfDay ? ms + 86_400_000 : ms).toISOString();
}

export function tabRoutes(deps: AppDeps, sf: StorefrontApi, points: ServicePointsApi): RouteDef[] {
  const posRoute = posRouteOf(sf);
  const currency = () => servicesOf(deps).defaultCurrency;
  const max = deps.config.store.maxPageSize;
  /** A settle or a refund, answered `{order, transaction}`. */
  const moneyMove = async <I extends SettleInput | RefundInput>(
    ctx: RequestContext<{ id: string }, unknown, I>,
    move: (tenant: string, orderId: string, input: I, by: string | undefined) => Promise<SettleReply>,
  ) => {
    assertIdempotencyKey(ctx.body.idempotencyKey);
    const reply = await move(ctx.tenant, ctx.params.id, ctx.body, byOf(ctx));
    return { order: presentOrder(reply.order, currency()), transaction: reply.transaction };
  };
  return [
    posRoute(
      route({
        method: 'POST',
        path: '/storefront/pos/tab',
        auth: 'none',
        tag: TAG,
        summary: 'Open a tab (or answer the open one at that service point or with that label)',
        description:
          'Opens an `sf_order` with status `open` and the next order number of the organisation (201). With `servicePointId` (id ' +
          'or name) a point that already has an open tab answers that tab (200) instead of a second one, and a new tab marks the ' +
          'point `occupied`; without one, an open tab with the same `tabLabel` (compared without case) is answered. ' +
          '`businessLocationId` is the location slug (its sk is refused with 400); a token, when sent, stamps `openedBy`. The order ' +
          "belongs to a customer (its `customerId`, what `/client-data/orders` and `/storefront/order/get/me` match) only through a " +
          "credential: a customer token (alone, or in `x-client-authorization` beside an application token) makes it that customer's; " +
          'a staff token may name the customer in `customer.customerId`; from an application token alone or without a token ' +
          "`customer.customerId` is ignored and the order is nobody's (the name, email and phone are kept as the guest's contact). The location must exist (404 otherwise): it is a record of datatype " +
          '`location` whose `data.name` is the slug, made once by staff with `POST /repository/create ' +
          '{"datatype":"location","data":{"name":"main-bar","displayName":"Main bar","currency":"USD","taxRate":8.5},"isNew":true,"version":0}` ' +
          '(`currency` and `taxRate`, in percent, are optional: the configured currency and 0 apply without them).',
        body: Type.Object({
          businessLocationId: Slug,
          tabLabel: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Display label (default: the point name, else #<orderNumber>)' })),
          servicePointId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'Service point id or name at this location' })),
          customer: Type.Optional(Customer),
        }),
        status: 201,
        response: RecordSchema,
        errors: [404, 409],
        handler: async (ctx) => {
          const p = ctx.principal;
          const { customerId: named, ...contact } = ctx.body.customer ?? {};
          const reply = await sf.tabs.open(ctx.tenant, ctx.body.businessLocationId, {
            tabLabel: ctx.body.tabLabel,
            servicePointId: ctx.body.servicePointId,
            ...(ctx.body.customer ? { customer: contact } : {}),
            customerId: ownerOf(p, named),
            by: p?.sub,
          });
          if (!reply.created) ctx.status = 200;
          return presentOrder(reply.order, currency());
        },
      }),
    ),

    posRoute(
      route({
        method: 'GET',
        path: '/storefront/pos/tabs',
        auth: 'none',
        tag: TAG,
        summary: "A location's open tabs, oldest first",
        description: 'From the tabs actor of the location (its memory, not a scan). A location sk instead of its slug yields an empty list (spec: Errors 10).',
        query: Type.Object({ businessLocationId: Slug, ...Paging }),
        response: ListOf(RecordSchema),
        handler: async (ctx) => {
          const open = await sf.tabs.listOpen(ctx.tenant, ctx.query.businessLocationId);
          return page(open, ctx.query.page, ctx.query.pageSize, max);
        },
      }),
    ),

    posRoute(
      route({
        method: 'GET',
        path: '/storefront/pos/tabs/closed',
        auth: 'none',
        tag: TAG,
        summary: "A location's closed tabs, most recently closed first",
        description:
          '`from` and `to` bound `closedAt` (`from` inclusive, `to` exclusive; a bare date `to` includes that whole UTC day). Paged.',
        query: Type.Object({
          businessLocationId: Slug,
          from: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD or ISO date-time' })),
          to: Type.Optional(Type.String({ maxLength: 40, description: 'YYYY-MM-DD or ISO date-time' })),
          ...Paging,
        }),
        response: ListOf(RecordSchema),
        handler: (ctx) => {
          const from = instant(ctx.query.from, 'from', false);
          const to = instant(ctx.query.to, 'to', true);
          if (from && to && from >= to) throw appError('ERR_VALIDATION', 'query/from must be before query/to');
          return sf.closedTabs(ctx.tenant, ctx.query.businessLocationId, { from, to }, { page: ctx.query.page, pageSize: ctx.query.pageSize });
        },
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/pos/tab/:id/settle',
        auth: 'none',
        tag: TAG,
        summary: 'Take a payment on a tab; the tab closes when it is paid in full',
        description:
          'Payments accumulate in `amountPaid`; when it reaches the total (subtotal + tax + tip) the tab closes (`status: closed`, ' +
          '`closedAt`) and its service point becomes `dirty`. `method` defaults to `cash` (to `card` with a `ref`); only cash may ' +
          'exceed the balance due, the rest is recorded as change (`transaction.change`, `order.changeDue`). `tip` adds to the ' +
          "total first. A `ref` names a payment intent of `gateway` (default: the default processor) that has succeeded, in the order's " +
          'currency and for exactly `amount`; anything else is 400, and an intent already applied is 409. Settling a closed tab is ' +
          '409. Two settles racing on one tab are applied one after the other. `idempotencyKey` (UUID) makes a retry answer the first result.',
        params: IdParam,
        body: Type.Object({
          amount: MoneyLike('Amount tendered, in major units of the order currency'),
          tip: Type.Optional(MoneyLike('Tip added to the total before this payment')),
          method: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'cash (default), card, or your own word' })),
          gateway: Type.Optional(Type.String({ minLength: 1, maxLength: 40, description: 'Payment gateway of `ref` (default: the default processor)' })),
          ref: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Payment intent id (e.g. from /storefront/:processor/terminal/intent)' })),
          idempotencyKey: IdempotencyKey,
        }),
        response: SettleResult,
        errors: [402, 404, 409],
        handler: (ctx) => moneyMove(ctx, sf.tabs.settle),
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/pos/tab/:id/refund',
        auth: 'none',
        tag: TAG,
        summary: 'Refund a payment (all or part); never more than was paid',
        description:
          'Without `transactionId` the refund is taken from the newest payments first; with it, from that payment only. Without ' +
          '`amount`, everything still refundable. A refund above what was paid and not yet refunded is 400. Card payments made ' +
          'through a gateway are refunded there. Answers `{order, transaction}` (the refund, with its allocations).',
        params: IdParam,
        body: Type.Object({
          amount: Type.Optional(MoneyLike('Amount to refund (default: all that is refundable)')),
          transactionId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
          reason: Type.Optional(Type.String({ maxLength: 500 })),
          idempotencyKey: IdempotencyKey,
        }),
        response: SettleResult,
        errors: [402, 404, 409],
        handler: (ctx) => moneyMove(ctx, sf.tabs.refund),
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/pos/tab/:id/split',
        auth: 'none',
        tag: TAG,
        summary: 'Split a tab: move lines to a new tab, or divide it into equal parts',
        description:
          '`{itemIds}` (line ids) moves those lines to one new open tab; the rest stay. `{parts: n}` makes n new open tabs that ' +
          'share subtotal, tax and tip (each divided in minor units, the remainder cents on the first), and the original becomes ' +
          '`split`; the sums equal the original exactly. Only an unpaid open tab can be split (409 otherwise). Answers ' +
          '`{order, orders}`: the original and the new tabs.',
        params: IdParam,
        body: Type.Object({
          itemIds: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { minItems: 1, maxItems: 500, uniqueItems: true })),
          parts: Type.Optional(Type.Integer({ minimum: 2, maximum: 50 })),
        }),
        response: Type.Object({ order: RecordSchema, orders: Type.Array(RecordSchema) }),
        errors: [404, 409],
        handler: async (ctx) => {
          if ((ctx.body.itemIds === undefined) === (ctx.body.parts === undefined)) throw appError('ERR_VALIDATION', 'send either body/itemIds or body/parts');
          const reply = await sf.tabs.split(ctx.tenant, ctx.params.id, { itemIds: ctx.body.itemIds, parts: ctx.body.parts }, byOf(ctx));
          return { order: presentOrder(reply.order, currency()), orders: reply.orders.map((r) => presentOrder(r, currency())) };
        },
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/pos/tab/:id/assign-service-point',
        auth: 'none',
        tag: TAG,
        summary: 'Move an open tab to a service point',
        description:
          'The new point (id or name at the tab\'s location) becomes `occupied`; the one it leaves becomes `dirty` unless another ' +
          'open tab is still there. A point that already has another open tab is 409.',
        params: IdParam,
        body: Type.Object({ servicePointId: Type.String({ minLength: 1, maxLength: 100 }) }),
        response: RecordSchema,
        errors: [404, 409],
        handler: async (ctx) => {
          const rec = await sf.tabs.assignPoint(ctx.tenant, ctx.params.id, ctx.body.servicePointId, byOf(ctx));
          return presentOrder(rec, currency());
        },
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/pos/tab/:id/release-service-point',
        auth: 'none',
        tag: TAG,
        summary: 'Detach a tab from its service point',
        description: 'The point gets `status` (default `dirty`) unless another open tab is still there. A tab without a point is 409.',
        params: IdParam,
        body: Type.Object({ status: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })) }),
        response: RecordSchema,
        errors: [404, 409],
        handler: async (ctx) => {
          const rec = await sf.tabs.releasePoint(ctx.tenant, ctx.params.id, ctx.body.status, byOf(ctx));
          return presentOrder(rec, currency());
        },
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/service-point/:id/status',
        auth: 'none',
        tag: TAG,
        summary: "Write a service point's status (a free string)",
        description:
          'spec: Fields known per kind → service_point: the status is free (`dirty`, `available`, `out-of-order`, ...). `:id` is the ' +
          "point's sk, or its name with `businessLocationId` to say where. Written through the location's service-points actor.",
        params: Type.Object({ id: Type.String({ minLength: 1, maxLength: 100, description: 'Service point id or name' }) }),
        body: Type.Object({ status: Type.String({ minLength: 1, maxLength: 40 }), businessLocationId: Type.Optional(Slug) }),
        response: RecordSchema,
        errors: [404, 409],
        handler: (ctx) =>
          points.setStatus(ctx.tenant, {
            servicePointId: ctx.params.id,
            status: ctx.body.status,
            ...(ctx.body.businessLocationId ? { businessLocationId: ctx.body.businessLocationId } : {}),
          }),
      }),
    ),
  ];
}

