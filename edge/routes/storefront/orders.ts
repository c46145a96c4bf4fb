// Order routes: read an order, its payments, the caller's own order by number, add lines, fire.
import { Type } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import { type ItemInput, type StorefrontApi } from '../../../actors/storefront/index.js';
import { presentOrder } from '../../../actors/storefront/index.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import {
  byOf,
  FreeObject,
  IdParam,
  ListOf,
  MoneyLike,
  page,
  Paging,
  RecordSchema,
  servicesOf,
  TAG,
} from './common.js';
import { posRouteOf } from './access.js';

const MAX_ITEMS = 100;

const Modifier = Type.Union([
  Type.String({ minLength: 1, maxLength: 100 }),
  Type.Object({ name: Type.String({ minLength: 1, maxLength: 100 }), price: Type.Optional(MoneyLike('Added to the unit price')) }),
]);

const Item = Type.Object({
  productId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'An sf_product id; its name, price and tax rate apply unless given' })),
  name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Required with unitPrice for an item without a product' })),
  quantity: Type.Optional(MoneyLike('Quantity, greater than 0, at most 3 decimals (required)')),
  unitPrice: Type.Optional(MoneyLike('Price of one unit (default: the product price at this location, else the product price)')),
  modifiers: Type.Optional(Type.Array(Modifier, { maxItems: 50 })),
  notes: Type.Optional(Type.String({ maxLength: 500 })),
});

const ItemsBody = Type.Union(
  [Type.Array(Item, { minItems: 1, maxItems: MAX_ITEMS }), Type.Object({ items: Type.Array(Item, { minItems: 1, maxItems: MAX_ITEMS }) })],
  { description: 'The lines: a JSON array, or `{items: [...]}`' },
);

function itemsOf(body: unknown): ItemInput[] {
  const items = (Array.isArray(body) ? body : (body as { items: unknown[] }).items) as Array<Record<string, unknown>>;
  items.forEach((it, i) => {
    if (it.quantity === undefined || it.quantity === null) throw appError('ERR_VALIDATION', `body/items/${i}/quantity is required`);
  });
  return items as unknown as ItemInput[];
}

export function orderRoutes(deps: AppDeps, sf: StorefrontApi): RouteDef[] {
  const posRoute = posRouteOf(sf);
  const currency = () => servicesOf(deps).defaultCurrency;
  const max = deps.config.store.maxPageSize;
  return [
    posRoute(
      route({
        method: 'GET',
        path: '/storefront/order/:id',
        auth: 'none',
        tag: TAG,
        summary: 'An order (tab) with every amount computed',
        description:
          'Money is answered as numbers in major units of `data.currency`; each line carries its `subtotal`, `tax`, `total`, and ' +
          'its `taskId` once fired. A record written elsewhere with string amounts, no line ids or only a `subtotal` reads too.',
        params: IdParam,
        response: RecordSchema,
        errors: [404],
        handler: (ctx) => sf.order(ctx.tenant, ctx.params.id),
      }),
    ),

    posRoute(
      route({
        method: 'GET',
        path: '/storefront/order/:id/payments',
        auth: 'none',
        tag: TAG,
        summary: "An order's payments and refunds, oldest first",
        params: IdParam,
        query: Type.Object({ ...Paging }),
        response: ListOf(FreeObject),
        errors: [404],
        handler: (ctx) => {
          const payments = sf.order(ctx.tenant, ctx.params.id).data.payments as unknown[];
          return page(payments, ctx.query.page, ctx.query.pageSize, max);
        },
      }),
    ),

    route({
      method: 'GET',
      path: '/storefront/order/get/me/:orderNumber',
      auth: 'customer',
      tag: TAG,
      summary: "The caller's own order by its order number (another's: 404)",
      params: Type.Object({ orderNumber: Type.String({ minLength: 1, maxLength: 20, pattern: '^[0-9]+$' }) }),
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => {
        const p = ctx.principal!;
        const who = p.customerId ?? p.sub;
        return sf.ownOrder(ctx.tenant, who, ctx.params.orderNumber);
      },
    }),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/order/:id/items',
        auth: 'none',
        tag: TAG,
        summary: 'Add lines to an open tab',
        description:
          'Each line is `{productId, quantity, unitPrice?, modifiers?, notes?}` (or `{name, quantity, unitPrice}` without a product). ' +
          'Quantities and prices are numbers or numeric strings; computed in integer minor units, so 0.1 + 0.2 is 0.3. The unit ' +
          'price defaults to the price at this location (`bm_location_product`), else the product price; the tax rate (a ' +
          'percentage) is the product\'s, else the location\'s `taxRate`, fixed on the line when it is added. Subtotal, tax and total ' +
          'are recomputed. A closed tab is 409.',
        params: IdParam,
        body: ItemsBody,
        response: RecordSchema,
        errors: [404, 409],
        handler: async (ctx) => {
          const items = itemsOf(ctx.body);
          const rec = await sf.tabs.addItems(ctx.tenant, ctx.params.id, items, byOf(ctx));
          return presentOrder(rec, currency());
        },
      }),
    ),

    posRoute(
      route({
        method: 'POST',
        path: '/storefront/order/:id/fire',
        auth: 'none',
        tag: TAG,
        summary: 'Send the lines not yet fired to the kitchen (idempotent)',
        description:
          'spec: States and transitions → order line. The lines without a `taskId` become one `kitchen` workflow task, and each ' +
          'of them then carries its `taskId`; lines that already have one are left out, so firing again adds nothing ' +
          '(`fired: 0`, `task: null`).',
        params: IdParam,
        response: Type.Object({ order: RecordSchema, task: Type.Union([RecordSchema, Type.Null()]), fired: Type.Integer() }),
        errors: [404, 409],
        handler: async (ctx) => {
          const reply = await sf.tabs.fire(ctx.tenant, ctx.params.id, byOf(ctx));
          return { order: presentOrder(reply.order, currency()), task: reply.task, fired: reply.fired };
        },
      }),
    ),
  ];
}
