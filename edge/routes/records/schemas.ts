// Schemas shared by the record store's routes: the record envelope and the list envelope
// (spec: Resources → Record envelope, List envelope), and the path parameters.
import { Type } from '@sinclair/typebox';
import { AfterCursor, ListOf, RecordSchema } from '../../schemas.js';

/** Datatype names as used with the store: `sf_order`, `bm_location_product`, ... */
export const Datatype = Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_.-]{0,63}$', description: 'Record kind, e.g. `sf_order`' });
/** Record ids are 24 hex characters; other modules may key records by short slugs. */
export const RecordId = Type.String({ pattern: '^[A-Za-z0-9_:.-]{1,128}$', description: 'Record id (`sk`)' });

export const DatatypeParams = Type.Object({ datatype: Datatype });
export const RecordParams = Type.Object({ datatype: Datatype, id: RecordId });

export { AfterCursor, ListOf, RecordSchema } from '../../schemas.js';

export const RecordList = ListOf(RecordSchema);
/** A document of any shape (projections and pipeline output). */
export const AnyDocument = Type.Object({}, { additionalProperties: true });

export const SortType = Type.Union([Type.Literal('asc'), Type.Literal('desc')], { description: '`asc` or `desc`' });

/** Paging and sorting by query string (spec: `p`, `ps`, `s`, `st`). */
export function pageQuery(maxPageSize: number) {
  return Type.Object({
    p: Type.Optional(Type.Integer({ minimum: 1, description: 'Page, 1-based (default 1)' })),
    ps: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize, description: `Page size (default 20, at most ${maxPageSize})` })),
    s: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Sort field path, e.g. `data.price`' })),
    st: Type.Optional(SortType),
    ...AfterCursor,
  });
}
