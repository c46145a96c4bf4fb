// Products, POS categories and the organisation's storefront settings.
import { Type } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import type { StorefrontApi } from '../../../actors/storefront/index.js';
import { route, type RouteDef } from '../../route.js';
import { ListOf, Paging, RecordSchema, Slug, TAG } from './common.js';

const ADMIN_ROLES = ['Admin', 'ConfigAdmin'];

const SettingsSchema = Type.Object({
  posRequiresStaffToken: Type.Boolean({
    description:
      'True (closed; where an organisation created by sign-up starts): every tab, order, payment, receipt, service-point status and ' +
      "terminal route, reads included, needs a staff or an application token. False (open, the spec's mode; sign-up with " +
      '`openStorefront: true`, and organisations created before this default): anyone who knows the orgid',
  }),
});

export function catalogRoutes(sf: StorefrontApi): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/storefront/products',
      auth: 'none',
      tag: TAG,
      summary: 'Products (`sf_product`), with availability at a location',
      description:
        'With `businessLocationId` each product carries `availability {businessLocationId, available, price?, stock?, configured}` ' +
        'from its `bm_location_product` record at that location (`configured: false`: none, so the product\'s own `data.available` ' +
        'applies). `availableOnly` leaves the unavailable out; `q` matches the name (or the exact sku). Sorted by name. **Access.** Open in ' +
        'both storefront modes (the catalogue).',
      query: Type.Object({
        businessLocationId: Type.Optional(Slug),
        categoryId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        q: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        availableOnly: Type.Optional(Type.Boolean()),
        ...Paging,
      }),
      response: ListOf(RecordSchema),
      handler: (ctx) => sf.products(ctx.tenant, ctx.query, ctx.deps.config.store),
    }),

    route({
      method: 'GET',
      path: '/storefront/pos-categories',
      auth: 'none',
      tag: TAG,
      summary: 'Categories shown on the POS, in their sort order',
      description:
        'Categories (`sf_category`) whose `showInPos` is not false; with `businessLocationId`, those of that location and those of every location. ' +
        '**Access.** Open in both storefront modes (the catalogue).',
      query: Type.Object({ businessLocationId: Type.Optional(Slug), ...Paging }),
      response: ListOf(RecordSchema),
      handler: (ctx) => sf.categories(ctx.tenant, ctx.query, ctx.deps.config.store),
    }),

    route({
      method: 'POST',
      path: '/storefront/categories',
      auth: 'customer',
      roles: ADMIN_ROLES,
      tag: TAG,
      summary: 'Create a category (role Admin or ConfigAdmin)',
      description: 'The only role-gated storefront route (spec). A name already used (without case, at the same location or for every location) is 409.',
      body: Type.Object({
        name: Type.String({ minLength: 1, maxLength: 100 }),
        description: Type.Optional(Type.String({ maxLength: 1000 })),
        sortOrder: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
        parentId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        color: Type.Optional(Type.String({ maxLength: 40 })),
        showInPos: Type.Optional(Type.Boolean({ description: 'Default true' })),
        businessLocationId: Type.Optional(Slug),
      }),
      status: 201,
      response: RecordSchema,
      errors: [409],
      handler: (ctx) => {
        const data: Record<string, unknown> = { ...ctx.body, name: ctx.body.name.trim(), showInPos: ctx.body.showInPos ?? true };
        if (!data.name) throw appError('ERR_VALIDATION', 'body/name must not be blank');
        if (ctx.principal) data.createdBy = ctx.principal.sub;
        return sf.createCategory(ctx.tenant, data);
      },
    }),

    route({
      method: 'GET',
      path: '/storefront/settings',
      auth: 'customer',
      roles: ADMIN_ROLES,
      tag: TAG,
      summary: "The organisation's storefront settings (role Admin or ConfigAdmin)",
      response: SettingsSchema,
      handler: (ctx) => sf.settings(ctx.tenant),
    }),

    route({
      method: 'PUT',
      path: '/storefront/settings',
      auth: 'customer',
      roles: ADMIN_ROLES,
      tag: TAG,
      summary: "Change the organisation's storefront settings (role Admin or ConfigAdmin)",
      description:
        'Partial. `posRequiresStaffToken` true closes the storefront: every tab, order, payment, receipt, print, send, ' +
        'service-point status and terminal route, reads included, needs a staff or an application token (401 without a token, 403 ' +
        'with a customer token alone); the catalogue, `/storefront/payment-gateways` and card intents (`/storefront/:processor/intent`) ' +
        "stay open. False is the spec's open mode: anyone who knows the orgid can open tabs, take payments, refund and print. An " +
        'organisation created by sign-up starts closed unless it signed up with `openStorefront: true`; one created before that ' +
        'default starts open. In both modes an order answered to anyone but staff or its own customer leaves out the guest\'s ' +
        'email, phone, address and customer id, and only staff send a receipt to an address not already on the order.',
      body: Type.Object({ posRequiresStaffToken: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1 }),
      response: SettingsSchema,
      handler: (ctx) => sf.updateSettings(ctx.tenant, ctx.body),
    }),
  ];
}
