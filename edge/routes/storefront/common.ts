// What the storefront routes share: schemas and this node's storefront services (who may call a
// route is access.ts).
import { Type, type TSchema } from '@sinclair/typebox';
import type { StorefrontServices } from '../../../actors/storefront/index.js';
import type { AppDeps } from '../../deps.js';
import type { RequestContext } from '../../route.js';

export const TAG = 'Storefront';
export const PAY_TAG = 'Storefront payments';

/**
 * Money or a quantity: a number or a numeric string. Deliberately untyped for the validator so a
 * bad value gets the storefront's own message ("body/amount must be a number or a numeric
 * string"), not three lines of schema alternatives.
 */
export function MoneyLike(description: string): TSchema {
  // `x-money` (ignored by the validator): the OpenAPI document types it as a number or a decimal string.
  return Type.Unsafe<number | string>({ 'x-money': true, description: `${description}. A number or a numeric string in plain decimal notation (12.5 or "12.50"); negative or non-numeric values are refused (400)` });
}

export const FreeObject = Type.Object({}, { additionalProperties: true });

export const RecordSchema = Type.Object(
  {
    pk: Type.String(),
    sk: Type.String(),
    datatype: Type.String(),
    version: Type.Integer(),
    state: Type.String(),
    createdate: Type.String(),
    modifydate: Type.String(),
    data: FreeObject,
  },
  { additionalProperties: true },
);

export function ListOf<T extends TSchema>(item: T) {
  return Type.Object({
    data: Type.Array(item),
    total: Type.Integer(),
    hasNext: Type.Boolean(),
    page: Type.Integer(),
    pageSize: Type.Integer(),
  });
}

export const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page (default 1)' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 20; clamped to the configured maximum, 200)' })),
};

export const Slug = Type.String({
  minLength: 1,
  maxLength: 200,
  description:
    'Location slug: `data.name` of the location record (sending its sk yields empty lists). A location is made with ' +
    '`POST /repository/create {"datatype":"location","data":{"name":"<slug>"},"isNew":true,"version":0}` (staff)',
});

export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 64, description: 'Order id (sk)' }) });

export const SettleResult = Type.Object({ order: RecordSchema, transaction: FreeObject }, { description: 'spec: Derived shapes → Settle result' });

/** Pages an in-memory list into the list envelope. */
export function page<T>(items: T[], p: number | undefined, size: number | undefined, max: number): { data: T[]; total: number; hasNext: boolean; page: number; pageSize: number } {
  const pageSize = Math.min(size ?? 20, max);
  const pageNo = p ?? 1;
  const offset = (pageNo - 1) * pageSize;
  const data = items.slice(offset, offset + pageSize);
  return { data, total: items.length, hasNext: offset + data.length < items.length, page: pageNo, pageSize };
}

/** This node's storefront services (the `storefront` port: gateways from config, default currency). */
export function servicesOf(deps: AppDeps): StorefrontServices {
  return deps.services.storefront;
}

export function byOf(ctx: RequestContext): string | undefined {
  return ctx.principal?.sub;
}

