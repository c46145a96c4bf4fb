// Reads of the record store (spec: Endpoints → Repository). Reads need no serialization with
// writes, so they go straight to the store rather than through the actor: a get by id on the
// event loop (one LMDB read), a small find on the event loop (simple operators, few candidates by
// index, measured on keys first), and every other query that takes a client's filter or sort in
// the query pool's workers (core/query/pool.ts), under its time and memory budget. Every read passes the
// datatype policy and hands user and customer records out stripped. Reads of tickets first pass the
// door's read barrier (actors/scanner/door-backlog.ts): a scan commits only its log entry, and the
// barrier writes the door fields of acknowledged scans into the records before the read runs.
import { hasForbiddenSegment } from '../../core/document-limits.js';
import { AppError, appError } from '../../core/errors.js';
import { assertClientQuery } from '../../core/query/language.js';
import type { QueryRunner } from '../../core/query/pool.js';
import { isSimpleFilter, planFilter } from '../../core/store/find-plan.js';
import type { Filter, FindExplain, FindOptions } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { RecordText, TextPage } from '../../core/store/record-cache.js';
import type { Store } from '../../core/store/store.js';
import type { DoorBacklog } from '../scanner/index.js';
import { assertNoCredentialReference, assertReadable, forReader } from './policy.js';
import type { FindRequest, RecordsQuery } from './query-requests.js';

/** The records job the query workers run (query-job.ts beside this file; .ts under tsx). */
export const RECORDS_QUERY_JOB = new URL(import.meta.url.endsWith('.ts') ? './query-job.ts' : './query-job.js', import.meta.url).href;

/**
 * Runs one records query in a worker of the pool, after the door's barrier when it reads tickets.
 * Every query reads its one datatype (an aggregate cannot reach another: `$lookup`, `$unionWith`
 * and the like are refused), so a query over anything else never waits for the door: during a
 * rush the tickets behind can be many, and settling them is the door's cost, not the caller's.
 */
export function inWorker<T>(deps: QueryDeps, q: RecordsQuery): Promise<T> {
  const { queries } = deps;
  const datatype = q.op === 'dynamicFind' ? q.q.datatype : q.datatype;
  const wait = datatype === TICKET_DATATYPE ? deps.services.doorBacklog.settle(q.tenant) : undefined;
  return wait ? wait.then(() => queries.run<T>(q.tenant, RECORDS_QUERY_JOB, q)) : queries.run<T>(q.tenant, RECORDS_QUERY_JOB, q);
}

/** What a query in a worker needs: the query pool, and the door's barrier for tickets (a node's deps have both). */
export interface QueryDeps {
  readonly queries: QueryRunner;
  readonly services: { readonly doorBacklog: DoorBacklog };
}

/** The events feature's ticket datatype (actors/events/records.ts), the one the door writes behind. */
export const TICKET_DATATYPE = 'ticket';

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

export function getRecord(deps: ListingDeps, tenant: string, datatype: string, sk: string): StoredRecord | Promise<StoredRecord> {
  assertReadable(datatype);
  const { store } = deps;
  const wait = datatype === TICKET_DATATYPE ? deps.services.doorBacklog.settle(tenant) : undefined;
  return wait ? wait.then(() => readRecord(store, tenant, datatype, sk)) : readRecord(store, tenant, datatype, sk);
}

function readRecord(store: Store, tenant: string, datatype: string, sk: string): StoredRecord {
  const rec = store.getRecord(tenant, datatype, sk);
  if (!rec) throw appError('ERR_NOT_FOUND', `${datatype} ${sk}`);
  return forReader(rec);
}

/** getRecord as `by` (a readerText) writes the record, kept while unchanged (store.recordText). */
export function getRecordText(deps: ListingDeps, tenant: string, datatype: string, sk: string, by: RecordText): string | Promise<string> {
  assertReadable(datatype);
  const { store } = deps;
  const read = () => {
    const text = store.recordText(tenant, datatype, sk, by);
    if (text === undefined) throw appError('ERR_NOT_FOUND', `${datatype} ${sk}`);
    return text;
  };
  const wait = datatype === TICKET_DATATYPE ? deps.services.doorBacklog.settle(tenant) : undefined;
  return wait ? wait.then(read) : read();
}

/** A caller's `by` of the record as a reader may see it (forReader): the function the store's texts are kept by. */
export function readerText(by: RecordText): RecordText {
  return (rec) => by(forReader(rec));
}

/** Throws 400/403 for a find the service will not run: checked before a worker is asked. */
export function checkFind(datatype: string, req: FindRequest): void {
  assertReadable(datatype);
  if (req.filter) assertClientQuery(req.filter, 'query');
  // A sort path through an object internal would read the prototype (a function), not a field.
  const bad = req.sort ? hasForbiddenSegment(req.sort) : undefined;
  if (bad !== undefined) throw new AppError('ERR_FORBIDDEN_KEY', ['sort', bad]);
  assertNoCredentialReference(datatype, req.filter ?? {}, req.sort ? { [req.sort]: 1 } : undefined);
}

/** What a listing needs: the store (to measure it, and to run a small one), the query pool and the door's barrier. */
export interface ListingDeps extends QueryDeps {
  readonly store: Store;
}

/** What a client's find needs: a listing's parts, and the node's bound on finds run in place. */
export interface FindDeps extends ListingDeps {
  /** `query.inPlaceMaxCandidates` (QUERY_IN_PLACE_MAX_CANDIDATES); 1,000 when absent. */
  readonly config?: { readonly query: { readonly inPlaceMaxCandidates?: number } };
}

/** Candidates a client find may read on the event loop when the node's config says nothing. */
export const DEFAULT_IN_PLACE_MAX_CANDIDATES = 1_000;

/**
 * Whether a client's find runs on the event loop: its filter uses only simple operators (cost
 * linear in the records tested, no regex or expression), an index narrows it, and the index's
 * keys count at most `query.inPlaceMaxCandidates` candidates. A scan, anything heavier or larger
 * goes to a query worker, under the budget. Counting stops at the bound, so deciding costs at
 * most that many key reads per index read of the filter.
 */
export function runsInPlace(deps: FindDeps, tenant: string, datatype: string, filter: Filter | undefined, projection?: Record<string, unknown>): boolean {
  const max = deps.config?.query.inPlaceMaxCandidates ?? DEFAULT_IN_PLACE_MAX_CANDIDATES;
  if (max <= 0 || !filter || !isSimpleFilter(filter) || !isPlainProjection(projection)) return false;
  const { store } = deps;
  if (!planFilter(filter, { paths: store.indexedPaths(datatype, tenant), multikey: () => true })) return false;
  return store.candidatesUpTo(tenant, datatype, filter, max + 1) <= max;
}

/** A projection that only names fields (`{"data.name": 1}`): no expression to compute. */
function isPlainProjection(projection: Record<string, unknown> | undefined): boolean {
  if (!projection) return true;
  for (const k in projection) {
    const v = projection[k];
    if (v !== 0 && v !== 1 && v !== true && v !== false) return false;
  }
  return true;
}

/** Runs `fn` on the event loop, after the door's barrier when it reads tickets. */
export function inPlace<T>(deps: ListingDeps, tenant: string, datatype: string, fn: () => T): Promise<T> {
  const wait = datatype === TICKET_DATATYPE ? deps.services.doorBacklog.settle(tenant) : undefined;
  return wait ? wait.then(fn) : Promise.resolve().then(fn);
}

/**
 * Filter, sort and page one datatype of one tenant into the list envelope: on the event loop when
 * small and simple (runsInPlace), else in a query worker.
 */
export function findRecords(deps: FindDeps, tenant: string, datatype: string, req: FindRequest, by?: RecordText): Promise<TextPage> {
  checkFind(datatype, req);
  if (datatype !== TICKET_DATATYPE) {
    let here: TextPage | undefined;
    try {
      here = findHere(deps, tenant, datatype, req, undefined, by);
    } catch (err) {
      return Promise.reject(err);
    }
    if (here) return Promise.resolve(here);
    if (isSimpleFilter(req.filter) && deps.store.pagesByIndex(tenant, datatype, req.filter, storeOptions(req))) {
      return inPlace(deps, tenant, datatype, () => findChecked(deps.store, tenant, datatype, req));
    }
    return inWorker(deps, { op: 'find', tenant, datatype, req });
  }
  if (pagesInPlace(deps, tenant, datatype, req)) return inPlace(deps, tenant, datatype, () => findChecked(deps.store, tenant, datatype, req));
  return inWorker(deps, { op: 'find', tenant, datatype, req });
}

/**
 * The find runsInPlace admits, decided and run at once (store.findUpTo: the keys counted are the
 * candidates read); undefined when it is not one. Not for tickets, which wait for the door's
 * barrier between deciding and reading (runsInPlace, then inPlace). With `by` (a readerText), a
 * find one index read answers exactly comes as `texts`, each record as `by` writes it.
 */
export function findHere(deps: FindDeps, tenant: string, datatype: string, req: FindRequest, projection?: Record<string, unknown>, by?: RecordText): TextPage | undefined {
  const max = deps.config?.query.inPlaceMaxCandidates ?? DEFAULT_IN_PLACE_MAX_CANDIDATES;
  const filter = req.filter;
  if (max <= 0 || !filter || !isSimpleFilter(filter) || !isPlainProjection(projection)) return undefined;
  const res = clientQuery(() => deps.store.findUpTo(tenant, datatype, filter, storeOptions(req), max, by));
  if (!res) return undefined;
  return res.texts ? res : { ...res, data: res.data.map(forReader) };
}

/** How a find runs (its plan, keys and records examined), where findRecords would run it. */
export async function explainFind(deps: FindDeps, tenant: string, datatype: string, req: FindRequest): Promise<FindExplain> {
  checkFind(datatype, req);
  if (pagesInPlace(deps, tenant, datatype, req)) {
    const explained = await inPlace(deps, tenant, datatype, () => runExplain(deps.store, tenant, datatype, req));
    return { ...explained, ranIn: 'event-loop' };
  }
  const explained = await inWorker<FindExplain>(deps, { op: 'explain', tenant, datatype, req });
  return { ...explained, ranIn: 'query-worker' };
}

/**
 * Whether a client's find runs on the event loop: a small simple one (runsInPlace), or one a
 * declared listing answers (a page of index keys and the page's records, at any size).
 */
function pagesInPlace(deps: FindDeps, tenant: string, datatype: string, req: FindRequest): boolean {
  return runsInPlace(deps, tenant, datatype, req.filter) || (isSimpleFilter(req.filter) && deps.store.pagesByIndex(tenant, datatype, req.filter, storeOptions(req)));
}

/** The explain itself (in the worker, or in place). */
export function runExplain(store: Store, tenant: string, datatype: string, req: FindRequest): FindExplain {
  checkFind(datatype, req);
  return clientQuery(() => store.explain(tenant, datatype, req.filter ?? {}, storeOptions(req)));
}

/** Candidates a route's listing may read on the event loop; past this it runs in a query worker. */
export const INLINE_LISTING_MAX = 1_000;

/**
 * A listing a route makes with its own filter and sort (the tickets of an event, a location's
 * closed orders, a conversation's messages). One a module declared (Module.listings) reads a page
 * by index at any size, here: its cost is the page. Any other costs what the tenant has stored
 * (every candidate is read, filtered and sorted), so it is measured first on keys alone: up to
 * INLINE_LISTING_MAX candidates it runs here (a few ms at most), beyond in a query worker under the
 * query budget, where it cannot hold other tenants' requests.
 */
export function listRecords(
  deps: ListingDeps,
  tenant: string,
  datatype: string,
  filter: Filter,
  opts: FindOptions,
): Promise<ListResult> {
  if (deps.store.pagesByIndex(tenant, datatype, filter, opts)) return inPlace(deps, tenant, datatype, () => deps.store.find(tenant, datatype, filter, opts));
  if (deps.store.candidatesUpTo(tenant, datatype, filter, INLINE_LISTING_MAX + 1) > INLINE_LISTING_MAX) {
    return inWorker(deps, { op: 'list', tenant, datatype, filter, opts });
  }
  return inPlace(deps, tenant, datatype, () => deps.store.find(tenant, datatype, filter, opts));
}

/** The find itself (in the worker). */
export function runFind(store: Store, tenant: string, datatype: string, req: FindRequest): ListResult {
  checkFind(datatype, req);
  return findChecked(store, tenant, datatype, req);
}

/** A find checkFind has passed. */
export function findChecked(store: Store, tenant: string, datatype: string, req: FindRequest): ListResult {
  const res = clientQuery(() => store.find(tenant, datatype, req.filter ?? {}, storeOptions(req)));
  return { ...res, data: res.data.map(forReader) };
}

/** The store's paging and sort options of a find request (nothing else of it). */
function storeOptions(req: FindRequest): FindOptions {
  const opts: FindOptions = {};
  if (req.page !== undefined) opts.page = req.page;
  if (req.pageSize !== undefined) opts.pageSize = req.pageSize;
  if (req.sort) opts.sort = req.sort;
  if (req.sortType) opts.sortType = req.sortType;
  if (req.skip !== undefined) opts.skip = req.skip;
  if (req.limit !== undefined) opts.limit = req.limit;
  if (req.after !== undefined) opts.after = req.after;
  return opts;
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
