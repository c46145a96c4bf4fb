// The product listing reads every product of a tenant (and every location price) before it pages,
// so it runs in a query worker (core/query/pool.ts loads this module by URL) under the query budget,
// never on the event loop.
import type { JobContext } from '../../core/query/protocol.js';
import type { PageLimits } from '../../core/store/query.js';
import { listProducts, type ProductQuery } from './catalog.js';

/** This module, as the pool loads it (.ts under tsx). */
export const CATALOG_JOB = new URL(import.meta.url.endsWith('.ts') ? './catalog-job.ts' : './catalog-job.js', import.meta.url).href;

export interface CatalogRead {
  tenant: string;
  query: ProductQuery;
  limits: PageLimits;
}

export function run({ store }: JobContext, q: CatalogRead): unknown {
  return listProducts(store, q.tenant, q.query, q.limits);
}
