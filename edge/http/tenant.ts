// The request's organisation: the `orgid` header, as the route's tenant mode asks.
import { orgById } from '../../core/auth/org-lookup.js';
import { AppError } from '../../core/errors.js';
import type { Org, Store } from '../../core/store/store.js';
import type { RouteDef } from '../route.js';

/** The organisation named by `orgid`, as the route's tenant mode asks. */
export function resolveTenant(store: Store, def: RouteDef, headers: Record<string, string>): Org | undefined {
  const mode = def.tenant ?? 'required';
  const orgid = headers['orgid'];
  if (mode === 'none') return undefined;
  if (!orgid) {
    if (mode === 'optional') return undefined;
    throw new AppError('ERR_ORGID_MISSING');
  }
  const org = orgById(store, orgid);
  if (!org) throw new AppError('ERR_ORGID_INVALID', [orgid.length > 64 ? orgid.slice(0, 64) + '…' : orgid]);
  return org;
}
