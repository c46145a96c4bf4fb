// The query planner: which index reads narrow a find's candidates. An equality, `$in` or range
// (`$gt`, `$gte`, `$lt`, `$lte`) on an indexed path narrows wherever it stands: at the top, inside
// `$and` (every conjunct narrows; the runner intersects or picks the most selective), inside `$or`
// (the union of each branch's reads, or nothing when a branch cannot be narrowed). The plan only
// narrows: every candidate is still tested against the whole filter, so an index read may return
// more than matches but never miss one. Pure: it knows the indexes through IndexCatalog, whoever
// declared them, and reads nothing (lmdb-plan-run.ts runs a plan).
import { exactStringKey, fitsKey, lookupKey, stringRangeKey, type IndexValue } from './index-values.js';
import type { Filter } from './query.js';

/** One end of a range of index keys. */
export interface KeyBound {
  key: IndexValue;
  inclusive: boolean;
}

/** Keys of one type between two bounds (an absent bound: that end of the type's keys); `any`: every key of the path. */
export interface KeyRange {
  type: 'number' | 'string' | 'any';
  low?: KeyBound;
  high?: KeyBound;
}

/** One read of one index: the keys of a few values, or a range of keys. */
export type IndexRead = { path: string; values: IndexValue[] } | { path: string; range: KeyRange };

export type PlanNode =
  | { stage: 'IXSCAN'; read: IndexRead }
  /** Every input must hold a record (each input's candidates are a superset of its conjunct's matches). */
  | { stage: 'AND'; inputs: PlanNode[] }
  /** Any input may hold a record. */
  | { stage: 'OR'; inputs: PlanNode[] };

/** The complete indexes of one tenant's datatype, as the planner sees them. */
export interface IndexCatalog {
  readonly paths: readonly string[];
  /**
   * Whether some record holds an array at `path`: then `{$gt: 1, $lt: 3}` may be met by two
   * different elements ([0, 5] matches), so the two bounds cannot make one range, and the store's
   * sort (which orders an array as a whole) does not follow the index.
   */
  multikey(path: string): boolean;
}

const RANGE_OPS = new Set(['$gt', '$gte', '$lt', '$lte']);

/** The index reads that narrow `filter`, or undefined when none does (the find scans). */
export function planFilter(filter: Filter | undefined, catalog: IndexCatalog): PlanNode | undefined {
  if (!filter || catalog.paths.length === 0) return undefined;
  return conjunction(conjuncts(filter, catalog));
}

/**
 * Inputs of an `$and` the runner weighs: each is counted on keys before one is chosen, and
 * leaving a conjunct out only narrows less (the filter still decides).
 */
const MAX_AND_INPUTS = 8;

function conjunction(nodes: PlanNode[]): PlanNode | undefined {
  if (nodes.length === 0) return undefined;
  if (nodes.length === 1) return nodes[0];
  return { stage: 'AND', inputs: nodes.slice(0, MAX_AND_INPUTS) };
}

/** The narrowing conjuncts of one filter object (its keys are ANDed). */
function conjuncts(filter: Filter, catalog: IndexCatalog): PlanNode[] {
  const out: PlanNode[] = [];
  for (const k in filter) {
    const v = filter[k];
    if (k === '$and') {
      if (!Array.isArray(v)) continue;
      for (const sub of v) if (isPlainObject(sub)) out.push(...conjuncts(sub, catalog));
    } else if (k === '$or') {
      const or = disjunction(v, catalog);
      if (or) out.push(or);
    } else if (!k.startsWith('$') && catalog.paths.includes(k)) {
      out.push(...pathConjuncts(k, v, () => catalog.multikey(k)));
    }
    // `$nor`, `$expr`, an unindexed path: narrows nothing, the filter decides.
  }
  return out;
}

function disjunction(branches: unknown, catalog: IndexCatalog): PlanNode | undefined {
  if (!Array.isArray(branches) || branches.length === 0) return undefined;
  const inputs: PlanNode[] = [];
  for (const b of branches) {
    // One branch that cannot be narrowed can match any record: the whole `$or` narrows nothing.
    const node = isPlainObject(b) ? conjunction(conjuncts(b, catalog)) : undefined;
    if (!node) return undefined;
    inputs.push(node);
  }
  return inputs.length === 1 ? inputs[0] : { stage: 'OR', inputs };
}

/**
 * The index reads one path's condition allows (its operators are ANDed). Whether the path is
 * multikey is asked only when two ranges could be joined (the catalog may read it from the store).
 */
function pathConjuncts(path: string, cond: unknown, multikey: () => boolean): PlanNode[] {
  const eq = equalityKeys(cond);
  if (eq) return [{ stage: 'IXSCAN', read: { path, values: eq } }];
  if (!isPlainObject(cond)) return [];
  const ops = Object.keys(cond);
  // `{a: {x: 1}}` is an equality with an object, which the index does not hold.
  if (ops.length === 0 || !ops.every((o) => o.startsWith('$'))) return [];
  const out: PlanNode[] = [];
  const ranges: KeyRange[] = [];
  for (const op of ops) {
    const arg = cond[op];
    if (op === '$eq' || op === '$in') {
      const values = equalityKeys(op === '$eq' ? arg : { $in: arg });
      if (values) out.push({ stage: 'IXSCAN', read: { path, values } });
    } else if (RANGE_OPS.has(op)) {
      const r = rangeOf(op, arg);
      if (r) ranges.push(r);
    }
    // `$ne`, `$exists`, `$regex`, `$elemMatch`, ...: the filter decides.
  }
  for (const r of ranges.length > 1 && !multikey() ? mergeRanges(ranges) : ranges) out.push({ stage: 'IXSCAN', read: { path, range: r } });
  return out;
}

/** The keys of an equality (`v`, `{$eq: v}`) or `{$in: [...]}` of scalars; undefined otherwise. */
function equalityKeys(cond: unknown): IndexValue[] | undefined {
  const one = lookupKey(cond);
  if (one !== undefined) return one === 0 ? [0, -0] : [one];
  if (!isPlainObject(cond)) return undefined;
  const keys = Object.keys(cond);
  if (keys.length !== 1) return undefined;
  if (keys[0] === '$eq') return equalityKeys(cond.$eq);
  if (keys[0] !== '$in' || !Array.isArray(cond.$in)) return undefined;
  const out = new Set<IndexValue>();
  for (const x of cond.$in) {
    // `null` matches a missing field, a regex or an object is not a key: the index cannot answer.
    const k = lookupKey(x);
    if (k === undefined) return undefined;
    out.add(k);
    // Entries written before -0 was indexed as 0.
    if (k === 0) out.add(-0);
  }
  return [...out];
}

/**
 * The keys a range operator can match. mingo compares only values of the bound's type (MongoDB's
 * type bracketing), so `{$gt: 5}` reads numbers only and `{$lt: "m"}` strings only. A string
 * bound reads from its kept prefix (inclusive) and to itself, or to the end of the strings when
 * it is too long to be a key; a bound whose order the index cannot follow reads the whole type.
 */
function rangeOf(op: string, arg: unknown): KeyRange | undefined {
  const lower = op === '$gt' || op === '$gte';
  if (typeof arg === 'number') {
    if (Number.isNaN(arg)) return undefined;
    const bound: KeyBound = { key: arg === 0 ? 0 : arg, inclusive: op === '$gte' || op === '$lte' };
    return lower ? { type: 'number', low: bound } : { type: 'number', high: bound };
  }
  if (typeof arg === 'string') {
    const key = stringRangeKey(arg);
    if (key === undefined) return { type: 'string' };
    if (lower) return { type: 'string', low: { key, inclusive: true } };
    if (!fitsKey(arg)) return { type: 'string' };
    return { type: 'string', high: { key: arg, inclusive: op === '$lte' } };
  }
  return undefined;
}

/** Ranges of one type on a path no record holds an array at, joined into one (the tightest bounds). */
function mergeRanges(ranges: KeyRange[]): KeyRange[] {
  const byType = new Map<string, KeyRange>();
  for (const r of ranges) {
    const m = byType.get(r.type);
    if (!m) {
      byType.set(r.type, { ...r });
      continue;
    }
    if (r.low && (!m.low || tighter(r.low, m.low, 1))) m.low = r.low;
    if (r.high && (!m.high || tighter(r.high, m.high, -1))) m.high = r.high;
  }
  return [...byType.values()];
}

/** Whether bound `a` leaves fewer keys than `b` (dir 1: lower bounds, -1: upper bounds). */
function tighter(a: KeyBound, b: KeyBound, dir: 1 | -1): boolean {
  if (a.key === b.key) return !a.inclusive && b.inclusive;
  return dir === 1 ? a.key > b.key : a.key < b.key;
}

/**
 * The one index read whose keys are exactly the filter's matches, in the order of a sort on the
 * same path, or undefined. So it is when that path never held an array (each record has one key
 * there, or none), and the filter is one condition on the sorted path: an equality on a number or
 * a short string, or a range of numbers (mingo's ranges compare within one type, and numbers sort
 * as the index orders them, equal values by id as the index does). Then a page is read by index
 * order and `total` counted on keys, however many records match. Two more reads come with
 * conditions the store checks before it trusts the order (lmdb-records.ts indexOrdered): a range
 * of short strings (type `string`), and no filter at all (type `any`: every record must hold one
 * key there).
 */
export function exactOrderedRead(filter: Filter | undefined, sort: string | undefined, catalog: IndexCatalog): IndexRead | undefined {
  if (!sort || !catalog.paths.includes(sort) || catalog.multikey(sort)) return undefined;
  let only: string | undefined;
  for (const k in filter ?? {}) {
    if (only !== undefined) return undefined;
    only = k;
  }
  if (only === undefined) return { path: sort, range: { type: 'any' } };
  if (only !== sort) return undefined;
  const cond = filter![sort];
  if (typeof cond === 'number') return Number.isFinite(cond) ? { path: sort, values: [cond === 0 ? 0 : cond] } : undefined;
  if (typeof cond === 'string') return exactStringKey(cond) ? { path: sort, values: [cond] } : undefined;
  if (!isPlainObject(cond)) return undefined;
  const ranges: KeyRange[] = [];
  for (const op in cond) {
    const arg = cond[op];
    if (op !== '$eq' && !RANGE_OPS.has(op)) return undefined;
    if (typeof arg === 'number') {
      if (!Number.isFinite(arg)) return undefined;
      if (op === '$eq') ranges.push({ type: 'number', low: { key: arg === 0 ? 0 : arg, inclusive: true }, high: { key: arg === 0 ? 0 : arg, inclusive: true } });
      else ranges.push(rangeOf(op, arg)!);
    } else if (typeof arg === 'string') {
      // A bound the index holds whole, below U+D800 (where code point and UTF-16 order agree).
      if (!exactStringKey(arg) || stringRangeKey(arg) !== arg) return undefined;
      const bound: KeyBound = { key: arg, inclusive: op !== '$gt' && op !== '$lt' };
      if (op === '$eq') ranges.push({ type: 'string', low: bound, high: bound });
      else ranges.push(op === '$gt' || op === '$gte' ? { type: 'string', low: bound } : { type: 'string', high: bound });
    } else return undefined;
  }
  // Bounds of two types match nothing (one type each), and are left to the usual way.
  if (ranges.length === 0 || ranges.some((r) => r.type !== ranges[0].type)) return undefined;
  return { path: sort, range: mergeRanges(ranges)[0] };
}

/**
 * Whether a filter uses only operators whose cost is linear in the candidates and small per
 * record: equality, `$in`, `$nin`, `$ne`, ranges, `$exists`, and `$and`/`$or`/`$nor` of those, on
 * scalar values. Such a find over few candidates may run on the event loop.
 */
export function isSimpleFilter(filter: Filter | undefined, budget = { n: 256 }): boolean {
  if (!filter) return true;
  for (const k in filter) {
    if (--budget.n < 0) return false;
    const v = filter[k];
    if (k === '$and' || k === '$or' || k === '$nor') {
      if (!Array.isArray(v)) return false;
      for (const sub of v) if (!isPlainObject(sub) || !isSimpleFilter(sub, budget)) return false;
    } else if (k.startsWith('$')) {
      return false;
    } else if (!simpleCondition(v, budget)) return false;
  }
  return true;
}

const SIMPLE_OPS = new Set(['$eq', '$ne', '$gt', '$gte', '$lt', '$lte', '$in', '$nin', '$exists']);

function simpleCondition(cond: unknown, budget: { n: number }): boolean {
  if (isScalar(cond)) return true;
  if (!isPlainObject(cond)) return false;
  for (const op in cond) {
    if (--budget.n < 0 || !SIMPLE_OPS.has(op)) return false;
    const arg = cond[op];
    if (op === '$in' || op === '$nin') {
      if (!Array.isArray(arg) || arg.length > 1000 || !arg.every(isScalar)) return false;
    } else if (!isScalar(arg)) return false;
  }
  return true;
}

function isScalar(v: unknown): boolean {
  return v === null || typeof v === 'string' || typeof v === 'boolean' || (typeof v === 'number' && Number.isFinite(v));
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}
