// `/dynamic-query/*` (spec: Resources → Request bodies: driver-style `filter`, `limit`, `skip`):
// find, findOne, count, distinct and aggregate over ONE datatype of ONE tenant. Pipelines are
// mingo pipelines restricted to stages that only reshape the documents they are given, so no
// stage can read another datatype (`$lookup`, `$graphLookup`, `$unionWith`), write (`$out`,
// `$merge`) or run code (`$function`, `$accumulator`, `$where`).
import { Aggregator } from 'mingo';
import { appError } from '../../core/errors.js';
import type { Filter, SortOrder } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { assertNoCredentialReference, assertReadable, forReader } from './policy.js';
import { assertSafeOperators, clientQuery, findRecords } from './reads.js';

/** Stages that only filter, reshape, group or order the documents they receive. */
const ALLOWED_STAGES = new Set([
  '$match',
  '$project',
  '$addFields',
  '$set',
  '$unset',
  '$group',
  '$sort',
  '$limit',
  '$skip',
  '$count',
  '$unwind',
  '$sortByCount',
  '$bucket',
  '$bucketAuto',
  '$facet',
  '$replaceRoot',
  '$replaceWith',
  '$sample',
  '$redact',
  '$setWindowFields',
]);

export const MAX_PIPELINE_STAGES = 20;
/** Largest answer of distinct and aggregate; beyond it the caller must narrow or `$limit`. */
export const MAX_RESULT_DOCUMENTS = 1000;

const MINGO_OPTIONS = { scriptEnabled: false } as const;

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
      assertSafeOperators(arg, at);
    }
  });
  if (where === 'pipeline' && stages > MAX_PIPELINE_STAGES) {
    throw appError('ERR_VALIDATION', `pipeline has ${stages} stages; at most ${MAX_PIPELINE_STAGES} are allowed`);
  }
  return stages;
}

export type DriverSort = string | Record<string, 1 | -1 | 'asc' | 'desc'>;

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
  return clientQuery(() => new Aggregator([{ $project: projection }], MINGO_OPTIONS).run(docs));
}

export interface DynamicFind {
  datatype: string;
  filter?: Filter;
  sort?: DriverSort;
  sortType?: SortOrder;
  limit?: number;
  skip?: number;
  page?: number;
  pageSize?: number;
  projection?: Record<string, unknown>;
}

export function dynamicFind(store: Store, tenant: string, q: DynamicFind): ListResult<Record<string, unknown>> {
  if (q.projection) assertSafeOperators(q.projection, 'projection');
  assertNoCredentialReference(q.datatype, q.projection);
  const res = findRecords(store, tenant, q.datatype, {
    filter: q.filter,
    ...storeSort(q.sort, q.sortType),
    page: q.page,
    pageSize: q.pageSize,
    skip: q.skip,
    limit: q.limit,
  });
  return { ...res, data: project(res.data, q.projection) };
}

export function dynamicFindOne(store: Store, tenant: string, q: DynamicFind): Record<string, unknown> | null {
  const res = dynamicFind(store, tenant, { ...q, limit: 1, page: undefined, pageSize: undefined });
  return res.data[0] ?? null;
}

export function dynamicCount(store: Store, tenant: string, datatype: string, filter: Filter | undefined): number {
  assertReadable(datatype);
  const f = filter ?? {};
  assertSafeOperators(f, 'filter');
  assertNoCredentialReference(datatype, f);
  return clientQuery(() => store.count(tenant, datatype, f));
}

/** Distinct values of `field` (array values are unwound, as MongoDB does), in first-seen order. */
export function dynamicDistinct(store: Store, tenant: string, datatype: string, field: string, filter: Filter | undefined): unknown[] {
  assertReadable(datatype);
  const f = filter ?? {};
  assertSafeOperators(f, 'filter');
  assertNoCredentialReference(datatype, f, { [field]: 1 });
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
  const getter = new Aggregator([{ $project: { _id: 0, v: `$${field}` } }], MINGO_OPTIONS);
  for (const rec of getter.run(records.map(forReader))) {
    const v = (rec as { v?: unknown }).v;
    if (Array.isArray(v)) v.forEach(add);
    else add(v);
  }
  return [...seen.values()];
}

/**
 * Runs a pipeline over one datatype. A leading `$match` narrows the input through the store (and
 * its indexes); user and customer records enter the pipeline already stripped of credentials.
 */
export function dynamicAggregate(store: Store, tenant: string, datatype: string, pipeline: Record<string, unknown>[]): Record<string, unknown>[] {
  assertReadable(datatype);
  assertPipeline(pipeline);
  assertNoCredentialReference(datatype, pipeline);
  const first = pipeline[0] as { $match?: Filter } | undefined;
  const lead = first && first.$match && typeof first.$match === 'object' ? first.$match : undefined;
  const input = clientQuery(() => store.scan(tenant, datatype, lead)).map(forReader);
  const rest = lead ? pipeline.slice(1) : pipeline;
  const out = clientQuery(() =>
    new Aggregator([...rest, { $limit: MAX_RESULT_DOCUMENTS + 1 }], MINGO_OPTIONS).run(input as unknown as Record<string, unknown>[]),
  );
  if (out.length > MAX_RESULT_DOCUMENTS) {
    throw appError('ERR_VALIDATION', `the pipeline yields more than ${MAX_RESULT_DOCUMENTS} documents; add a $limit stage`);
  }
  return out;
}
