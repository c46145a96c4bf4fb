// `/dynamic-query/*` (spec: Resources → Request bodies: driver-style `filter`, `limit`, `skip`):
// find, findOne, count, distinct and aggregate over ONE datatype of ONE tenant. Pipelines are
// mingo pipelines in the client query language (core/query/language.ts): only stages that
// reshape the documents they are given, so no stage can read another datatype (`$lookup`,
// `$graphLookup`, `$unionWith`), write (`$out`, `$merge`) or run code (`$function`,
// `$accumulator`, `$where`). Each query is checked on the event loop, then run in a worker of the
// query pool, under its budget (a small, simple find runs in place: reads.ts runsInPlace); the
// `run*` functions are what the worker runs.
import { hasForbiddenSegment } from '../../core/document-limits.js';
import { AppError, appError } from '../../core/errors.js';
import { assertClientQuery, PIPELINE_STAGES, runPipeline } from '../../core/query/language.js';
import type { Filter, FindExplain, SortOrder } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { assertNoCredentialReference, assertReadable, forReader } from './policy.js';
import type { DriverSort, DynamicFind } from './query-requests.js';
import { checkFind, clientQuery, explainFind, findChecked, findHere, inPlace, inWorker, runsInPlace, TICKET_DATATYPE, type FindDeps, type QueryDeps } from './reads.js';

const ALLOWED_STAGES: ReadonlySet<string> = new Set(PIPELINE_STAGES);

export const MAX_PIPELINE_STAGES = 20;
/** Largest answer of distinct and aggregate; beyond it the caller must narrow or `$limit`. */
export const MAX_RESULT_DOCUMENTS = 1000;

/** Throws 400 for a pipeline with a stage outside the allowlist or too many stages. */
export function assertPipeline(pipeline: unknown[], where = 'pipeline'): number {
  let stages = 0;
  pipeline.forEach((stage, i) => {
    const at = `${where}/${i}`;
    if (stage === null || typeof stage !== 'object' || Array.isArray(stage)) throw appError('ERR_VALIDATION', `${at} must be an object`);
    const keys = Object.keys(stage);
    if (keys.length !== 1) throw appError('ERR_VALIDATION', `${at} must have exactly one stage operator`);
    const op = keys[0];
    if (!ALLOWED_STAGES.has(op)) {
      throw appError('ERR_VALIDATION', `${at}: stage ${op} is not allowed (allowed: ${[...ALLOWED_STAGES].join(', ')})`);
    }
    stages++;
    const arg = (stage as Record<string, unknown>)[op];
    if (op === '$facet') {
      if (arg === null || typeof arg !== 'object' || Array.isArray(arg)) throw appError('ERR_VALIDATION', `${at}/$facet must be an object`);
      for (const [name, sub] of Object.entries(arg)) {
        if (!Array.isArray(sub)) throw appError('ERR_VALIDATION', `${at}/$facet/${name} must be an array`);
        stages += assertPipeline(sub, `${at}/$facet/${name}`);
      }
    } else {
      assertClientQuery(arg, at);
    }
  });
  if (where === 'pipeline' && stages > MAX_PIPELINE_STAGES) {
    throw appError('ERR_VALIDATION', `pipeline has ${stages} stages; at most ${MAX_PIPELINE_STAGES} are allowed`);
  }
  return stages;
}

/** Driver-style sort → the store's single sort path and order. */
export function storeSort(sort: DriverSort | undefined, sortType: SortOrder | undefined): { sort?: string; sortType?: SortOrder } {
  if (sort === undefined) return {};
  if (typeof sort === 'string') return { sort, sortType };
  const keys = Object.keys(sort);
  if (keys.length === 0) return {};
  // The store's order (numbers and all-numeric strings compare as numbers) is defined for one key.
  if (keys.length > 1) throw appError('ERR_VALIDATION', 'sort may name one field');
  const dir = sort[keys[0]];
  return { sort: keys[0], sortType: dir === -1 || dir === 'desc' ? 'desc' : 'asc' };
}

function project(docs: StoredRecord[], projection: Record<string, unknown> | undefined): Record<string, unknown>[] {
  if (!projection || Object.keys(projection).length === 0) return docs;
  return clientQuery(() => runPipeline([{ $project: projection }], docs));
}

function findRequest(q: DynamicFind) {
  return {
    filter: q.filter,
    ...storeSort(q.sort, q.sortType),
    page: q.page,
    pageSize: q.pageSize,
    skip: q.skip,
    limit: q.limit,
  };
}

function checkDynamicFind(q: DynamicFind): void {
  if (q.projection) assertClientQuery(q.projection, 'projection');
  assertNoCredentialReference(q.datatype, q.projection);
  checkFind(q.datatype, findRequest(q));
}

export function dynamicFind(deps: FindDeps, tenant: string, q: DynamicFind): Promise<ListResult<Record<string, unknown>>> {
  checkDynamicFind(q);
  if (q.datatype !== TICKET_DATATYPE) {
    try {
      const here = findHere(deps, tenant, q.datatype, findRequest(q), q.projection);
      if (here) return Promise.resolve({ ...here, data: project(here.data, q.projection) });
    } catch (err) {
      return Promise.reject(err);
    }
  } else if (runsInPlace(deps, tenant, q.datatype, q.filter, q.projection)) return inPlace(deps, tenant, q.datatype, () => dynamicFindChecked(deps.store, tenant, q));
  return inWorker(deps, { op: 'dynamicFind', tenant, q });
}

/** How a dynamic find runs (its projection aside), where dynamicFind would run it. */
export function dynamicExplain(deps: FindDeps, tenant: string, q: DynamicFind): Promise<FindExplain> {
  checkDynamicFind(q);
  return explainFind(deps, tenant, q.datatype, findRequest(q));
}

export function runDynamicFind(store: Store, tenant: string, q: DynamicFind): ListResult<Record<string, unknown>> {
  checkDynamicFind(q);
  return dynamicFindChecked(store, tenant, q);
}

/** A dynamic find checkDynamicFind has passed. */
function dynamicFindChecked(store: Store, tenant: string, q: DynamicFind): ListResult<Record<string, unknown>> {
  const res = findChecked(store, tenant, q.datatype, findRequest(q));
  return { ...res, data: project(res.data, q.projection) };
}

export async function dynamicFindOne(deps: FindDeps, tenant: string, q: DynamicFind): Promise<Record<string, unknown> | null> {
  const res = await dynamicFind(deps, tenant, { ...q, limit: 1, page: undefined, pageSize: undefined });
  return res.data[0] ?? null;
}

function checkFiltered(datatype: string, filter: Filter | undefined, ...more: unknown[]): Filter {
  assertReadable(datatype);
  const f = filter ?? {};
  assertClientQuery(f, 'filter');
  assertNoCredentialReference(datatype, f, ...more);
  return f;
}

export function dynamicCount(deps: QueryDeps, tenant: string, datatype: string, filter: Filter | undefined): Promise<number> {
  checkFiltered(datatype, filter);
  return inWorker(deps, { op: 'count', tenant, datatype, filter });
}

export function runCount(store: Store, tenant: string, datatype: string, filter: Filter | undefined): number {
  const f = checkFiltered(datatype, filter);
  return clientQuery(() => store.count(tenant, datatype, f));
}

/** A field path through an object internal (`__proto__`, ...) would read the prototype, not a field. */
function checkDistinctField(field: string): void {
  const bad = hasForbiddenSegment(field);
  if (bad !== undefined) throw new AppError('ERR_FORBIDDEN_KEY', ['body/field', bad]);
}

export function dynamicDistinct(deps: QueryDeps, tenant: string, datatype: string, field: string, filter: Filter | undefined): Promise<unknown[]> {
  checkDistinctField(field);
  checkFiltered(datatype, filter, { [field]: 1 });
  return inWorker(deps, { op: 'distinct', tenant, datatype, field, filter });
}

/** Distinct values of `field` (array values are unwound, as MongoDB does), in first-seen order. */
export function runDistinct(store: Store, tenant: string, datatype: string, field: string, filter: Filter | undefined): unknown[] {
  checkDistinctField(field);
  const f = checkFiltered(datatype, filter, { [field]: 1 });
  const records = clientQuery(() => store.scan(tenant, datatype, f));
  const seen = new Map<string, unknown>();
  const add = (v: unknown) => {
    if (v === undefined) return;
    const key = typeof v === 'string' ? `s${v}` : `j${JSON.stringify(v)}`;
    if (seen.has(key)) return;
    if (seen.size >= MAX_RESULT_DOCUMENTS) {
      throw appError('ERR_VALIDATION', `more than ${MAX_RESULT_DOCUMENTS} distinct values; narrow the filter`);
    }
    seen.set(key, v);
  };
  for (const rec of clientQuery(() => runPipeline([{ $project: { _id: 0, v: `$${field}` } }], records.map(forReader)))) {
    const v = (rec as { v?: unknown }).v;
    if (Array.isArray(v)) v.forEach(add);
    else add(v);
  }
  return [...seen.values()];
}

function checkAggregate(datatype: string, pipeline: Record<string, unknown>[]): void {
  assertReadable(datatype);
  assertPipeline(pipeline);
  assertNoCredentialReference(datatype, pipeline);
}

export function dynamicAggregate(
  deps: QueryDeps,
  tenant: string,
  datatype: string,
  pipeline: Record<string, unknown>[],
): Promise<Record<string, unknown>[]> {
  checkAggregate(datatype, pipeline);
  return inWorker(deps, { op: 'aggregate', tenant, datatype, pipeline });
}

/**
 * Runs a pipeline over one datatype. A leading `$match` narrows the input through the store (and
 * its indexes); user and customer records enter the pipeline already stripped of credentials.
 */
export function runAggregate(store: Store, tenant: string, datatype: string, pipeline: Record<string, unknown>[]): Record<string, unknown>[] {
  checkAggregate(datatype, pipeline);
  const first = pipeline[0] as { $match?: Filter } | undefined;
  const lead = first && first.$match && typeof first.$match === 'object' ? first.$match : undefined;
  const input = clientQuery(() => store.scan(tenant, datatype, lead)).map(forReader);
  const rest = lead ? pipeline.slice(1) : pipeline;
  const out = clientQuery(() => runPipeline([...rest, { $limit: MAX_RESULT_DOCUMENTS + 1 }], input));
  if (out.length > MAX_RESULT_DOCUMENTS) {
    throw appError('ERR_VALIDATION', `the pipeline yields more than ${MAX_RESULT_DOCUMENTS} documents; add a $limit stage`);
  }
  return out;
}
