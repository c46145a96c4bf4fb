// Filtering, sorting and paging of records: the MongoDB filter language through mingo, a stable
// sort that compares numbers (and numeric strings, when every value is one) as numbers, and the
// spec's list envelope. Pure functions: the store feeds them an index-narrowed candidate set.
// Filters run in the client query language (core/query/language.ts): only allowed operators,
// bounded, regexes on RE2, whether a filter came from a client or from our own code.
import { AppError, appError } from '../errors.js';
import { clientFilter } from '../query/language.js';
import type { ListResult, StoredRecord } from './record.js';

export type SortOrder = 'asc' | 'desc';

export interface FindOptions {
  /** 1-based page. */
  page?: number;
  pageSize?: number;
  /** Field path, e.g. `data.price` or `createdate`. */
  sort?: string;
  sortType?: SortOrder;
  /** Driver-style alternatives used by /dynamic-query. */
  skip?: number;
  limit?: number;
  /**
   * A cursor: the `next` of the previous page (lmdb-listings.ts). Only a listing read by index
   * hands one out and takes one; it wins over `page`.
   */
  after?: string;
}

export interface PageLimits {
  defaultPageSize: number;
  maxPageSize: number;
}

export type Filter = Record<string, unknown>;

/**
 * How a find ran, in the spirit of MongoDB's explain with executionStats: the stage tree that
 * produced its candidates (`IXSCAN` of an index, `AND_INTERSECT`, `OR`, or `COLLSCAN` of the whole
 * datatype), index keys read, records read and returned. Every candidate is tested against the
 * whole filter, so `docsExamined` - `total` is what the index could not rule out.
 */
export interface FindExplain {
  plan: { stage: string };
  /** A sort, and how it was done (`memory`: every match read and sorted). */
  sort?: { path: string; order: SortOrder; by: 'memory' | 'index' };
  keysExamined: number;
  /** Keys counted to choose among an `$and`'s index reads (not part of the read itself). */
  keysCounted: number;
  docsExamined: number;
  nReturned: number;
  total: number;
  executionTimeMillis: number;
  /** Where the find ran: on the event loop (few candidates, simple operators) or in a query worker. */
  ranIn?: 'event-loop' | 'query-worker';
}

/** A compiled filter. */
export interface Matcher {
  test(obj: unknown): boolean;
}

const compiled = new Map<string, Matcher>();

/**
 * Compiles (and caches) a filter; an unknown or forbidden operator is a 400 naming it. A filter of plain
 * equalities on scalar values (`{"data.customerId": "c-17"}`, the common lookup, also as `$eq` or
 * inside `$and`) is matched without mingo: compiling a mingo query costs far more than testing a page of records, and such
 * filters rarely repeat. A record whose path crosses an array falls back to mingo, so the
 * semantics stay MongoDB's (a field holding an array matches when an element equals the value).
 */
export function compileFilter(filter: Filter): Matcher {
  const simple = scalarEqualities(filter);
  if (simple) return simple;
  const key = JSON.stringify(filter);
  let q = compiled.get(key);
  if (q) return q;
  try {
    q = clientFilter(filter);
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw appError('ERR_VALIDATION', `query is not a valid filter: ${(err as Error).message}`);
  }
  if (compiled.size > 1000) compiled.clear();
  compiled.set(key, q);
  return q;
}

type Scalar = string | number | boolean;
const NOT_SCALAR = Symbol('not scalar');

function scalarEqualities(filter: Filter): Matcher | undefined {
  const terms: Array<[string[], Scalar]> = [];
  if (!collectEqualities(filter, terms, 0)) return undefined;
  let fallback: Matcher | undefined;
  return {
    test(obj: unknown): boolean {
      for (const [parts, want] of terms) {
        const got = scalarAt(obj, parts);
        if (got === NOT_SCALAR) return (fallback ??= clientFilter(filter)).test(obj as Record<string, unknown>);
        if (got !== want) return false;
      }
      return true;
    },
  };
}

function isEqualityScalar(v: unknown): v is Scalar {
  return typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

/**
 * The terms of a filter that only ANDs scalar equalities: `{path: v}`, `{path: {$eq: v}}`, and
 * `$and` of such filters (the same conjunction written out, as query builders do). False for
 * anything else, which mingo compiles. An empty `$and` is mingo's to refuse.
 */
function collectEqualities(filter: Filter, terms: Array<[string[], Scalar]>, depth: number): boolean {
  for (const k in filter) {
    const v = filter[k];
    if (k === '$and') {
      if (depth >= 8 || !Array.isArray(v) || v.length === 0 || v.length > 64) return false;
      for (const sub of v) {
        if (sub === null || typeof sub !== 'object' || Array.isArray(sub) || !collectEqualities(sub as Filter, terms, depth + 1)) return false;
      }
      continue;
    }
    if (k.startsWith('$') || k.includes('.$') || k === '' || k.split('.').some((p) => p === '')) return false;
    if (isEqualityScalar(v)) terms.push([k.split('.'), v]);
    else if (v !== null && typeof v === 'object' && !Array.isArray(v) && Object.keys(v).length === 1 && '$eq' in v && isEqualityScalar((v as { $eq: unknown }).$eq)) {
      terms.push([k.split('.'), (v as { $eq: Scalar }).$eq]);
    } else return false;
  }
  return true;
}

/** The value at a path when no step crosses an array or ends on one; NOT_SCALAR otherwise. */
function scalarAt(obj: unknown, parts: string[]): unknown {
  let cur: unknown = obj;
  for (const part of parts) {
    if (cur === null || cur === undefined) return undefined;
    if (Array.isArray(cur)) return NOT_SCALAR;
    if (typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  if (Array.isArray(cur) || (cur !== null && typeof cur === 'object')) return NOT_SCALAR;
  return cur;
}

/** Dotted paths split once: index maintenance reads the same few paths on every write. */
const splitPaths = new Map<string, readonly string[]>();

function partsOf(path: string): readonly string[] {
  let parts = splitPaths.get(path);
  if (parts === undefined) {
    // Sort fields come from callers too: keep the cache bounded.
    if (splitPaths.size >= 1024) splitPaths.clear();
    parts = path.split('.');
    splitPaths.set(path, parts);
  }
  return parts;
}

export function getPath(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  const parts = partsOf(path);
  for (let i = 0; i < parts.length; i++) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[parts[i]];
  }
  return cur;
}

const NUMERIC = /^\s*-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*$/;

function typeRank(v: unknown): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return 1;
  if (typeof v === 'string') return 2;
  if (typeof v === 'boolean') return 4;
  return 3;
}

/**
 * Sorts in place by `path`, stable (ties broken by sk). Missing values sort first ascending.
 * Numeric strings sort numerically when every present value is numeric (spec: money and quantity
 * fields arrive as numbers or numeric strings).
 */
export function sortRecords(records: StoredRecord[], path: string, order: SortOrder = 'asc'): void {
  // Each record's key and type rank computed once (a comparison reads two array slots, not a Map).
  const entries: Array<{ r: StoredRecord; v: unknown; rank: number }> = new Array(records.length);
  let allNumeric = true;
  for (let i = 0; i < records.length; i++) {
    const r = records[i];
    const v = getPath(r, path);
    entries[i] = { r, v, rank: 0 };
    if (v === undefined || v === null) continue;
    if (typeof v === 'number') continue;
    if (typeof v === 'string' && NUMERIC.test(v)) continue;
    allNumeric = false;
  }
  for (const e of entries) {
    if (allNumeric && typeof e.v === 'string') e.v = Number(e.v);
    e.rank = typeRank(e.v);
  }
  const dir = order === 'desc' ? -1 : 1;
  entries.sort((a, b) => {
    const va = a.v;
    const vb = b.v;
    const ra = a.rank;
    const rb = b.rank;
    let c = 0;
    if (ra !== rb) c = ra - rb;
    else if (ra === 1) c = (va as number) - (vb as number);
    else if (ra === 2) c = (va as string) < (vb as string) ? -1 : (va as string) > (vb as string) ? 1 : 0;
    else if (ra === 4) c = Number(va) - Number(vb);
    else if (ra === 3) c = JSON.stringify(va).localeCompare(JSON.stringify(vb));
    if (c !== 0) return c * dir;
    return a.r.sk < b.r.sk ? -1 : a.r.sk > b.r.sk ? 1 : 0;
  });
  for (let i = 0; i < entries.length; i++) records[i] = entries[i].r;
}

export function resolvePaging(
  opts: FindOptions,
  limits: PageLimits,
): { page: number; pageSize: number; offset: number } {
  if (opts.limit !== undefined || opts.skip !== undefined) {
    const pageSize = clampSize(opts.limit ?? limits.defaultPageSize, limits);
    const offset = Math.max(0, Math.floor(opts.skip ?? 0));
    return { page: Math.floor(offset / pageSize) + 1, pageSize, offset };
  }
  const pageSize = clampSize(opts.pageSize ?? limits.defaultPageSize, limits);
  const page = Math.max(1, Math.floor(opts.page ?? 1));
  return { page, pageSize, offset: (page - 1) * pageSize };
}

function clampSize(n: number, limits: PageLimits): number {
  if (!Number.isFinite(n) || n < 1) return limits.defaultPageSize;
  return Math.min(Math.floor(n), limits.maxPageSize);
}

/** Pages an in-memory list into the list envelope (page size clamped as for finds). */
export function pageItems<T>(items: readonly T[], page: number | undefined, pageSize: number | undefined, limits: PageLimits): ListResult<T> {
  const { page: p, pageSize: size, offset } = resolvePaging({ page, pageSize }, limits);
  const data = items.slice(offset, offset + size);
  return { data, total: items.length, hasNext: offset + data.length < items.length, page: p, pageSize: size };
}

/** Filters, sorts and pages a candidate set into the list envelope. */
export function runQuery(
  candidates: Iterable<StoredRecord>,
  filter: Filter | undefined,
  opts: FindOptions,
  limits: PageLimits,
): ListResult {
  const q = filter && Object.keys(filter).length > 0 ? compileFilter(filter) : undefined;
  const matched: StoredRecord[] = [];
  for (const r of candidates) if (!q || q.test(r)) matched.push(r);
  if (opts.sort) sortRecords(matched, opts.sort, opts.sortType);
  const { page, pageSize, offset } = resolvePaging(opts, limits);
  const data = matched.slice(offset, offset + pageSize);
  return { data, total: matched.length, hasNext: offset + data.length < matched.length, page, pageSize };
}
