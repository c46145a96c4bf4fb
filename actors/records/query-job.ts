// The records queries a query worker runs (core/query/pool.ts loads this module by URL in each
// worker): find, dynamic find, explain, count, distinct and aggregate, each with the datatype policy
// applied, and the routes' own listings. Answers are plain data.
import type { JobContext } from '../../core/query/protocol.js';
import { runAggregate, runCount, runDistinct, runDynamicFind } from './dynamic-query.js';
import type { RecordsQuery } from './query-requests.js';
import { runExplain, runFind } from './reads.js';

export function run({ store }: JobContext, q: RecordsQuery): unknown {
  switch (q.op) {
    case 'find':
      return runFind(store, q.tenant, q.datatype, q.req);
    case 'list':
      return store.find(q.tenant, q.datatype, q.filter, q.opts);
    case 'explain':
      return runExplain(store, q.tenant, q.datatype, q.req);
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
