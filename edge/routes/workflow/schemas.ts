// Response and query schemas shared by the reservation, check-in and workflow routes.
import { Type } from '@sinclair/typebox';
import { ListOf, RecordSchema } from '../../schemas.js';

export { FreeObject, ListOf, RecordSchema } from '../../schemas.js';

export const RecordList = ListOf(RecordSchema);

/** `page` (1-based) and `pageSize` (clamped to the configured maximum). */
export const Paging = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page (default 1)' })),
  pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000, description: 'Page size (default 20; larger values are clamped to the configured maximum, 200)' })),
};

export const IdParam = (name: string, description: string) =>
  Type.Object({ [name]: Type.String({ minLength: 1, maxLength: 64, description }) });

export const Slug = Type.String({
  minLength: 1,
  maxLength: 200,
  description: 'Location slug: `data.name` of the location record (sending its sk yields empty lists)',
});

export const ISODateTime = Type.String({ format: 'date-time', description: 'ISO 8601 date-time with a zone (Z or an offset)' });
export const ISODate = Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'Calendar date YYYY-MM-DD' });

/** The principal's id for audit fields. */
export function byOf(principal: { sub: string } | undefined): string {
  return principal?.sub ?? 'unknown';
}

/** A string from a fixed list; a bad value's error names the allowed ones. */
export function StringEnum<const T extends readonly string[]>(values: T, opts: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });
}
