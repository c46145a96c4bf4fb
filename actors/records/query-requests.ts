// What a records query asks for: a find as a route builds it, and the message a query worker
// receives (query-job.ts). Plain data, shared by the routes' side (reads.ts, dynamic-query.ts) and
// the worker's.
import type { Filter, FindOptions, SortOrder } from '../../core/store/query.js';

/** A find: the store's paging and sort options and a filter. */
export interface FindRequest extends FindOptions {
  filter?: Filter;
}

export type DriverSort = string | Record<string, 1 | -1 | 'asc' | 'desc'>;

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

export type RecordsQuery =
  | { op: 'find'; tenant: string; datatype: string; req: FindRequest }
  /** A listing of the service's own: a route's filter and sort, trusted, answered as stored. */
  | { op: 'list'; tenant: string; datatype: string; filter: Filter; opts: FindOptions }
  | { op: 'dynamicFind'; tenant: string; q: DynamicFind }
  /** A find's plan and what it examined (reads.ts runExplain), instead of its records. */
  | { op: 'explain'; tenant: string; datatype: string; req: FindRequest }
  | { op: 'count'; tenant: string; datatype: string; filter?: Filter }
  | { op: 'distinct'; tenant: string; datatype: string; field: string; filter?: Filter }
  | { op: 'aggregate'; tenant: string; datatype: string; pipeline: Record<string, unknown>[] };
