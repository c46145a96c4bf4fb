// A CRM list read (actors/crm/listings.ts) measured before it runs, as a route's own record
// listings are (actors/records/reads.ts): up to INLINE_LISTING_MAX candidates on the event loop,
// beyond in a query worker (actors/crm/listings-job.ts), where it cannot hold other tenants.
import { CRM_LISTINGS_JOB, type CrmListingRead } from '../../../actors/crm/index.js';
import { crmListing, sourcesOf, type CrmListing } from '../../../actors/crm/index.js';
import { INLINE_LISTING_MAX } from '../../../actors/records/index.js';
import type { RequestContext } from '../../route.js';

export function crmList<T>(ctx: RequestContext, listing: CrmListing): Promise<T> {
  const { store, queries, config } = ctx.deps;
  let candidates = 0;
  for (const s of sourcesOf(listing)) {
    candidates += store.candidatesUpTo(ctx.tenant, s.datatype, s.filter, INLINE_LISTING_MAX + 1 - candidates);
    if (candidates > INLINE_LISTING_MAX) {
      return queries.run<T>(ctx.tenant, CRM_LISTINGS_JOB, { tenant: ctx.tenant, listing, limits: config.store } satisfies CrmListingRead);
    }
  }
  return Promise.resolve().then(() => crmListing(store, ctx.tenant, listing, config.store) as T);
}
