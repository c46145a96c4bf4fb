// The organisation an `orgid` names, as every way in (HTTP header, sign-in body, socket
// handshake) looks it up: a well-formed id of a stored organisation, else nothing. It runs on
// every request, so it is one pattern test and one store lookup.
import type { Org, Store } from '../store/store.js';

/** The shape of an organisation id (the `orgid` header). */
export const ORGID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;

export function orgById(store: Pick<Store, 'getOrg'>, orgid: string): Org | undefined {
  return ORGID_PATTERN.test(orgid) ? store.getOrg(orgid) : undefined;
}

/** What the socket channels ask about organisations, without holding the store. */
export interface OrgLookup {
  /** Whether `orgid` is a well-formed id of a stored organisation (the handshake's check). */
  exists(orgid: string): boolean;
  /** The organisation's plan, whose rate limit a client event is charged to. */
  planOf(tenant: string): string | undefined;
}

export function orgLookup(store: Pick<Store, 'getOrg'>): OrgLookup {
  return {
    exists: (orgid) => orgById(store, orgid) !== undefined,
    planOf: (tenant) => store.getOrg(tenant)?.plan,
  };
}
