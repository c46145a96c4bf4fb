// Reads of the record store (spec: Endpoints → Repository). Reads need no serialization with
// writes, so they go straight to the store (one LMDB read each) rather than through the actor.
// Every read passes the datatype policy and hands user and customer records out stripped.
import { AppError, appError } from '../../core/errors.js';
import type { Filter, FindOptions, SortOrder } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { assertNoCredentialReference, assertReadable, forReader } from './policy.js';

/** Operators that run code or reach outside the one datatype a query names. */
const FORBIDDEN_OPERATORS = new Set(['$where', '$function', '$accumulator', '$lookup', '$graphLookup', '$unionWith', '$out', '$merge']);

/** Throws 400 naming the first operator in `v` that may run code or reach another datatype. */
export function assertSafeOperators(v: unknown, where: string, depth = 0): void {
  if (depth > 64) throw appError('ERR_VALIDATION', `${where} is nested too deeply`);
  if (v === null || typeof v !== 'object') return;
  if (Array.isArray(v)) {
    for (const x of v) assertSafeOperators(x, where, depth + 1);
    return;
  }
  for (const [k, x] of Object.entries(v)) {
    if (FORBIDDEN_OPERATORS.has(k)) throw appError('ERR_VALIDATION', `${where} may not use ${k}`);
    assertSafeOperators(x, where, depth + 1);
  }
}

/**
 * Runs a store read whose filter came from a client: mingo's complaints about a filter it only
 * discovers while matching become 400s instead of 500s.
 */
export function clientQuery<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw appError('ERR_VALIDATION', `query could not be run: ${(err as Error).message}`);
  }
}

export function getRecord(store: Store, tenant: string, datatype: string, sk: string): StoredRecord {
  assertReadable(datatype);
  const rec = store.getRecord(tenant, datatype, sk);
  if (!rec) throw appError('ERR_NOT_FOUND', `${datatype} ${sk}`);
  return forReader(rec);
}

export interface FindRequest {
  filter?: Filter;
  page?: number;
  pageSize?: number;
  sort?: string;
  sortType?: SortOrder;
  skip?: number;
  limit?: number;
}

/** Filter, sort and page one datatype of one tenant into the list envelope. */
export function findRecords(store: Store, tenant: string, datatype: string, req: FindRequest): ListResult {
  assertReadable(datatype);
  const filter = req.filter ?? {};
  assertSafeOperators(filter, 'query');
  assertNoCredentialReference(datatype, filter, req.sort ? { [req.sort]: 1 } : undefined);
  const opts: FindOptions = {};
  if (req.page !== undefined) opts.page = req.page;
  if (req.pageSize !== undefined) opts.pageSize = req.pageSize;
  if (req.sort) opts.sort = req.sort;
  if (req.sortType) opts.sortType = req.sortType;
  if (req.skip !== undefined) opts.skip = req.skip;
  if (req.limit !== undefined) opts.limit = req.limit;
  const res = clientQuery(() => store.find(tenant, datatype, filter, opts));
  return { ...res, data: res.data.map(forReader) };
}

/** `name` → `data.name`; `data.name` stays (spec: business fields live in `data`). */
export function attributePath(attribute: string): string {
  return attribute.startsWith('data.') ? attribute : `data.${attribute}`;
}

const NUMERIC = /^-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;

/**
 * The filter for `/find-by-attribute/:datatype/:attribute/:value`. A path parameter is always
 * text, so a numeric text also matches the same number stored as a number; a stored numeric
 * string matches only the same string (values compare as stored, no other coercion).
 */
export function attributeFilter(attribute: string, value: string): Filter {
  const path = attributePath(attribute);
  if (NUMERIC.test(value) && Number.isFinite(Number(value))) return { [path]: { $in: [value, Number(value)] } };
  return { [path]: value };
}
