// The CRM's list reads run in a query worker (core/query/pool.ts loads this module by URL) under
// the query budget: one tenant's long lists hold one of its workers, never the event loop.
import type { JobContext } from '../../core/query/protocol.js';
import type { PageLimits } from '../../core/store/query.js';
import { crmListing, type CrmListing } from './listings.js';

/** This module, as the pool loads it (.ts under tsx). */
export const CRM_LISTINGS_JOB = new URL(import.meta.url.endsWith('.ts') ? './listings-job.ts' : './listings-job.js', import.meta.url).href;

export interface CrmListingRead {
  tenant: string;
  listing: CrmListing;
  limits: PageLimits;
}

export function run({ store }: JobContext, r: CrmListingRead): unknown {
  return crmListing(store, r.tenant, r.listing, r.limits);
}
