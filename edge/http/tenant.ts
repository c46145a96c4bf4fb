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

/**
 * Cluster mode: the organisation a request names elsewhere than the header (RouteDef.tenantHint),
 * when it exists: the request goes to its owner. Anything unreadable is left to the route.
 */
export function hintedTenant(store: Store, hint: NonNullable<RouteDef['tenantHint']>, headers: Readonly<Record<string, string>>, raw: Buffer | undefined): string | undefined {
  let body: unknown;
  if (raw && raw.length > 0) {
    try {
      body = JSON.parse(raw.toString('utf8'));
    } catch {
      body = undefined;
    }
  }
  let id: string | undefined;
  try {
    id = hint(headers, body)?.trim();
  } catch {
    return undefined;
  }
  return id && id.length <= 64 && orgById(store, id) ? id : undefined;
}
