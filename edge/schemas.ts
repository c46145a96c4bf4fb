// Response schemas every feature area shares: the record envelope and the list envelope (spec:
// Resources → Record envelope, List envelope).
import { Type, type TProperties, type TSchema } from '@sinclair/typebox';

/** Free-form data: every field of it is sent. */
export const FreeObject = Type.Object({}, { additionalProperties: true });

/**
 * The record envelope around a datatype's data. Fields a partial update put at the root, and the
 * `extra` ones a route adds (a queue position, say), are sent too.
 */
export function recordOf(data: TSchema = FreeObject, extra: TProperties = {}) {
  return Type.Object(
    {
      pk: Type.String({ description: 'Tenant id' }),
      sk: Type.String({ description: 'Record id' }),
      datatype: Type.String(),
      version: Type.Integer({ description: 'Optimistic-concurrency counter' }),
      state: Type.String(),
      createdate: Type.String({ format: 'date-time' }),
      modifydate: Type.String({ format: 'date-time' }),
      data,
      ...extra,
    },
    { additionalProperties: true },
  );
}

/** A stored record with free-form data. */
export const RecordSchema = recordOf();

/** The list envelope around `item`, with any extra top-level fields. */
export function ListOf<T extends TSchema>(item: T, extra: TProperties = {}) {
  return Type.Object({
    data: Type.Array(item),
    total: Type.Integer({ description: 'Exact count of matches' }),
    hasNext: Type.Boolean(),
    page: Type.Integer({ description: '1-based' }),
    pageSize: Type.Integer(),
    next: Type.Optional(
      Type.String({ description: 'When the listing pages by index and has more: the cursor of the next page, to send back as `after`' }),
    ),
    ...extra,
  });
}

/** The query field of a listing that pages by cursor (ListOf's `next`). */
export const AfterCursor = {
  after: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 512,
      description: 'The `next` of the previous page: the page after it, stable under writes between pages (wins over `page`, which the answer then echoes)',
    }),
  ),
};
