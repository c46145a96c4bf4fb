// Schema pieces shared by the CRM, phone and social route tables: the record envelope, the list
// envelope, paging parameters, and paging of an in-memory list into the list envelope.
import { Type, type TObject, type TProperties } from '@sinclair/typebox';
import type { ListResult } from '../../../core/store/record.js';
import { pageItems } from '../../../core/store/query.js';
import type { AppDeps } from '../../deps.js';

export { ListOf, recordOf as RecordOf } from '../../schemas.js';

/** Free-form object data with some documented fields. */
export function DataOf(props: TProperties): TObject {
  return Type.Object(props, { additionalProperties: true });
}

export const PageProps = {
  page: Type.Optional(Type.Integer({ minimum: 1, description: '1-based page (default 1)' })),
  pageSize: Type.Optional(
    Type.Integer({ minimum: 1, description: 'Items per page (default 20; larger values are clamped to the maximum, 200)' }),
  ),
};

export const SinceUntilProps = {
  since: Type.Optional(Type.String({ format: 'date-time', description: 'Only items at or after this instant' })),
  until: Type.Optional(Type.String({ format: 'date-time', description: 'Only items before this instant' })),
};

export const Email = Type.String({ format: 'email', maxLength: 254 });
export const Id = Type.String({ pattern: '^[0-9a-f]{24}$', description: '24-character hexadecimal record id' });

/** Pages an already filtered and ordered list into the list envelope. */
export function pageOf<T>(deps: AppDeps, items: readonly T[], q: { page?: number; pageSize?: number }, extra: object = {}): ListResult<T> & Record<string, unknown> {
  return { ...pageItems(items, q.page, q.pageSize, deps.config.store), ...extra };
}

/** A string that is one of `values`: validation names the allowed values (a union would not). */
export function Enum<const T extends readonly string[]>(values: T, opts: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });
}
