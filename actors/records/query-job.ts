// The records queries a query worker runs (core/query/pool.ts loads this module by URL in each
// worker): find, dynamic find, count, distinct and aggregate, each with the datatype policy
// applied, and the routes' own listings. Answers are plain data.
import type { JobContext } from '../../core/query/protocol.js';
import type { Filter, FindOptions } from '../../core/store/query.js';
import { runAggregate, runCount, runDistinct, runDynamicFind, type DynamicFind } from './dynamic-query.js';
import { runFind, type FindRequest } from './reads.js';

export type RecordsQuery =
  | { op: 'find'; tenant: string; datatype: string; req: FindRequest }
  /** A listing of the service's own: a route's filter and sort, trusted, answered as stored. */
  | { op: 'list'; tenant: string; datatype: string; filter: Filter; opts: FindOptions }
  | { op: 'dynamicFind'; tenant: string; q: DynamicFind }
  | { op: 'count'; tenant: string; datatype: string; filter?: Filter }
  | { op: 'distinct'; tenant: string; datatype: string; field: string; filter?: Filter }
  | { op: 'aggregate'; tenant: string; datatype: string; pipeline: Record<string, unknown>[] };

export function run({ store }: JobContext, q: RecordsQuery): unknown {
  switch (q.op) {
    case 'find':
      return runFind(store, q.tenant, q.datatype, q.req);
    case 'list':
      return store.find(q.tenant, q.datatype, q.filter, q.opts);
    case 'dynamicFind':
      return runDynamicFind(store, q.tenant, q.q);
    case 'count':
      return runCount(store, q.tenant, q.datatype, q.filter);
    case 'distinct':
      return runDistinct(store, q.tenant, q.datatype, q.field, q.filter);
    case 'aggregate':
      return runAggregate(store, q.tenant, q.datatype, q.pipeline);
  }
}
