// Listings a module declares: the records of a datatype that hold given values at a few paths,
// in the order of one more path (an event's tickets by `createdate`, or by status then
// `createdate`). Their index entries carry the sort value after the equality values, so a page of
// such a listing is one range read at any size, and a count kept per tuple of equality values
// makes `total` exact without counting keys. Pure: which declared listing answers a find, and the
// opaque cursor (`after`/`next`) a page hands on. lmdb-listings.ts keeps and reads them.
import { appError } from '../errors.js';
import { exactStringKey, lookupKey, type IndexValue } from './index-values.js';
import { isSimpleFilter } from './find-plan.js';
import type { Filter } from './query.js';

/** A listing shape: records equal at every `equals` path, in the order of `sort`. */
export interface ListingShape {
  readonly datatype: string;
  readonly equals: readonly string[];
  readonly sort: string;
}

/** The name a shape's entries and counts are kept under (never a record path: those start with a letter). */
export function listingName(shape: ListingShape): string {
  return `${shape.equals.join(',')}>${shape.sort}`;
}

/**
 * The short name a shape's entries and counts are kept under (its name is long, and every entry
 * would carry it): a 32-bit FNV-1a hash of the name, base 36. LmdbListings refuses a second
 * shape of one datatype with the same one.
 */
export function listingKey(shape: ListingShape): string {
  const name = listingName(shape);
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h.toString(36);
}

/**
 * At most this many tuples of equality values one listing read merges (`$in`s multiply): an
 * event's tickets by id or slug are two.
 */
export const MAX_LISTING_TUPLES = 16;

/**
 * At most this many records a narrowed listing read tests (every one, for an exact `total`): the
 * bound route listings are read in place within (actors/records/reads.ts INLINE_LISTING_MAX), a
 * few ms. A larger one is read the usual way.
 */
export const NARROWED_LISTING_MAX = 1_000;

/**
 * A find a declared listing answers: its tuples of equality values (each one range of entries).
 * `narrowed`: the filter has conditions beyond the shape's equalities, so the listing holds a
 * superset of the find's records, in their order; it is then read whole and each record tested,
 * which the store allows only while the listing's kept count is small (lmdb-records.ts).
 */
export interface ListingRead {
  shape: ListingShape;
  tuples: IndexValue[][];
  narrowed?: true;
}

/**
 * The declared listing that answers `filter` sorted by `sort` exactly, or undefined. So it is when
 * the filter's every key is one of the shape's equality paths, each an equality or `$in` of
 * numbers, booleans or short strings (the index holds them whole), and the sort is the shape's.
 * Of several, the one with the most equality paths (the fewest entries to read).
 */
export function listingRead(filter: Filter | undefined, sort: string | undefined, shapes: readonly ListingShape[]): ListingRead | undefined {
  if (!sort || shapes.length === 0) return undefined;
  filter ??= {};
  const keys = Object.keys(filter);
  let best: ListingShape | undefined;
  for (const s of shapes) {
    if (s.sort !== sort || s.equals.length !== keys.length) continue;
    if (!keys.every((k) => s.equals.includes(k))) continue;
    if (!best || s.equals.length > best.equals.length) best = s;
  }
  return best ? tuplesOf(best, filter) : undefined;
}

/**
 * The declared listings that hold every record of a find no listing answers exactly, in its
 * order: the shape's every equality path is one of the filter's keys with exact values, and the
 * rest of the filter is simple (equality, `$in`, ranges, `$exists`, ... linear in the records
 * tested). Each comes `narrowed`; the store picks the one whose kept count is smallest.
 */
export function narrowingListings(filter: Filter | undefined, sort: string | undefined, shapes: readonly ListingShape[]): ListingRead[] {
  if (!sort || !filter || shapes.length === 0 || !isSimpleFilter(filter)) return [];
  const out: ListingRead[] = [];
  for (const s of shapes) {
    if (s.sort !== sort || !s.equals.every((p) => Object.hasOwn(filter, p))) continue;
    const read = tuplesOf(s, filter);
    if (read) out.push({ ...read, narrowed: true });
  }
  return out;
}

/** The shape's tuples of the filter's exact values at its equality paths, or undefined when one is not exact. */
function tuplesOf(shape: ListingShape, filter: Filter): ListingRead | undefined {
  let tuples: IndexValue[][] = [[]];
  for (const path of shape.equals) {
    const values = exactValues(filter[path]);
    if (!values) return undefined;
    const next: IndexValue[][] = [];
    for (const t of tuples) for (const v of values) next.push([...t, v]);
    if (next.length > MAX_LISTING_TUPLES) return undefined;
    tuples = next;
  }
  return { shape, tuples };
}

/** The keys an equality or `$in` names, when the index holds each whole; undefined otherwise. */
function exactValues(cond: unknown): IndexValue[] | undefined {
  const one = exactKey(cond);
  if (one !== undefined) return [one];
  if (cond === null || typeof cond !== 'object' || Array.isArray(cond)) return undefined;
  const ops = Object.keys(cond);
  if (ops.length !== 1) return undefined;
  const arg = (cond as Record<string, unknown>)[ops[0]];
  if (ops[0] === '$eq') return exactValues(arg);
  if (ops[0] !== '$in' || !Array.isArray(arg) || arg.length === 0 || arg.length > MAX_LISTING_TUPLES) return undefined;
  const out: IndexValue[] = [];
  for (const x of arg) {
    const k = exactKey(x);
    if (k === undefined) return undefined;
    if (!out.includes(k)) out.push(k);
  }
  return out;
}

function exactKey(v: unknown): IndexValue | undefined {
  if (typeof v === 'string' && !exactStringKey(v)) return undefined;
  // -0 and 0 are one key (index-values.ts writes 0).
  if (typeof v === 'number') return Number.isFinite(v) ? (v === 0 ? 0 : v) : undefined;
  return lookupKey(v);
}

/** A position in a listing: the sort value and id of the last record a page held. */
export interface ListingCursor {
  value: string;
  sk: string;
}

/** A position in a read in index order (a listing's, or an index's: its value may be a number). */
export interface OrderCursor {
  value: IndexValue;
  sk: string;
}

/** The cursor as the client holds it: opaque, URL-safe. */
export function encodeCursor(c: OrderCursor): string {
  return Buffer.from(JSON.stringify([c.value, c.sk]), 'utf8').toString('base64url');
}

/** At most this long: a cursor holds a timestamp and an id. */
const MAX_CURSOR_CHARS = 512;

/** A cursor a client sent back; anything else is a 400. */
export function decodeCursor(s: string): OrderCursor {
  if (s.length <= MAX_CURSOR_CHARS) {
    try {
      const v = JSON.parse(Buffer.from(s, 'base64url').toString('utf8')) as unknown;
      const pair = Array.isArray(v) && v.length === 2 && typeof v[1] === 'string' ? (v as [unknown, string]) : undefined;
      const value = pair?.[0];
      if (pair && ((typeof value === 'string' && exactStringKey(value)) || (typeof value === 'number' && Number.isFinite(value)))) return { value, sk: pair[1] };
    } catch {
      // falls through to the 400
    }
  }
  throw appError('ERR_VALIDATION', 'after is not a cursor this listing handed out (use the `next` of the previous page)');
}

const NUMERIC = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

/** Whether the store's sort may read a string as a number (query.ts sortRecords: when every value is one). */
export function numericString(v: unknown): boolean {
  return typeof v === 'string' && NUMERIC.test(v);
}
/** From here UTF-16 order (the store's sort) and code point order (the index's) may differ. */
const SURROGATE_OR_ABOVE = /[\ud800-\uffff]/;

/**
 * Whether a record's sort value orders in the index as the store's sort orders it: a string the
 * index holds whole, not empty (the key of a missing value), not numeric (the store sorts numeric
 * strings as numbers when every value is one), and below U+D800 (where both orders agree).
 * Timestamps (`createdate`) always are; a listing that meets another value is read the usual way
 * from then on.
 */
export function regularSortValue(v: unknown): v is string {
  return typeof v === 'string' && v !== '' && exactStringKey(v) && !NUMERIC.test(v) && !SURROGATE_OR_ABOVE.test(v);
}

/**
 * The sort key of a record without a sort value (the path missing, or null): the store's sort puts
 * those first ascending, by id, and '' is below every regular value (an open tab has no
 * `closedAt`, an unfinished task no `finishedAt`).
 */
export const MISSING_SORT_KEY = '';

/** The key a record's sort value is kept under, or undefined when the index cannot order it as the store does. */
export function sortKeyOf(v: unknown): string | undefined {
  if (v === undefined || v === null) return MISSING_SORT_KEY;
  return regularSortValue(v) ? v : undefined;
}
