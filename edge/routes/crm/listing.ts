// A CRM list read for a route: the crm area's listing (actors/crm/api.ts listCrm) decides whether
// it runs inline or in a query worker. Kept for the social routes, which have no area of their own.
import { listCrm, type CrmListing } from '../../../actors/crm/index.js';
import type { RequestContext } from '../../route.js';

export function crmList<T>(ctx: RequestContext, listing: CrmListing): Promise<T> {
  return listCrm<T>(ctx.deps, ctx.tenant, listing);
}
