// Products, POS categories and the organisation's storefront settings.
import { Type } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { listPosCategories } from '../../../actors/storefront/catalog.js';
import { storefrontSettingsOf, type StorefrontSettings } from '../../../actors/storefront/settings.js';
import { STOREFRONT_ACTOR, STOREFRONT_KEY, type StorefrontMessage } from '../../../actors/storefront/tenant-actor.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import { ListOf, Paging, RecordSchema, Slug, TAG } from './common.js';
import { CATALOG_JOB, type CatalogRead } from '../../../actors/storefront/catalog-job.js';

const ADMIN_ROLES = ['Admin', 'ConfigAdmin'];

const SettingsSchema = Type.Object({
  posRequiresStaffToken: Type.Boolean({ description: 'When true, every storefront write (POST under /storefront) needs a staff token. Default false: the storefront is public, as the spec says' }),
});

export function catalogRoutes(_deps: AppDeps): RouteDef[] {
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
        'applies). `availableOnly` leaves the unavailable out; `q` matches the name (or the exact sku). Sorted by name.',
      query: Type.Object({
        businessLocationId: Type.Optional(Slug),
        categoryId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        q: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
        availableOnly: Type.Optional(Type.Boolean()),
        ...Paging,
      }),
      response: ListOf(RecordSchema),
      handler: (ctx) => ctx.deps.queries.run(ctx.tenant, CATALOG_JOB, { tenant: ctx.tenant, query: ctx.query, limits: ctx.deps.config.store } satisfies CatalogRead),
    }),

    route({
      method: 'GET',
      path: '/storefront/pos-categories',
      auth: 'none',
      tag: TAG,
      summary: 'Categories shown on the POS, in their sort order',
      description: 'Categories (`sf_category`) whose `showInPos` is not false; with `businessLocationId`, those of that location and those of every location.',
      query: Type.Object({ businessLocationId: Type.Optional(Slug), ...Paging }),
      response: ListOf(RecordSchema),
      handler: (ctx) => listPosCategories(ctx.deps.store, ctx.tenant, ctx.query, ctx.deps.config.store),
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
        return ctx.deps.runtime.ask<StoredRecord>(ctx.tenant, STOREFRONT_ACTOR, STOREFRONT_KEY, { type: 'create-category', data } satisfies StorefrontMessage);
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
      handler: (ctx) => storefrontSettingsOf(ctx.deps.store.getOrg(ctx.tenant)),
    }),

    route({
      method: 'PUT',
      path: '/storefront/settings',
      auth: 'customer',
      roles: ADMIN_ROLES,
      tag: TAG,
      summary: "Change the organisation's storefront settings (role Admin or ConfigAdmin)",
      description:
        'Partial. `posRequiresStaffToken` (default false) makes every storefront write need a staff token; while it is false, ' +
        'anyone who knows the orgid can open tabs, take payments, refund and print.',
      body: Type.Object({ posRequiresStaffToken: Type.Optional(Type.Boolean()) }, { additionalProperties: false, minProperties: 1 }),
      response: SettingsSchema,
      handler: (ctx) =>
        ctx.deps.runtime.ask<StorefrontSettings>(ctx.tenant, STOREFRONT_ACTOR, STOREFRONT_KEY, { type: 'update-settings', patch: ctx.body } satisfies StorefrontMessage),
    }),
  ];
}
