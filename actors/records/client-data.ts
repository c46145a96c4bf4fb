// Customer self-service reads (spec: Endpoints → Customer self-service and notes): only the
// caller's own profile, orders and reservations. Orders (`sf_order`) and reservations point at
// their customer through `data.customerId`, the customer record's `sk`.
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { customerIdsOf } from '../auth/index.js';
import { forReader } from './policy.js';
import { listRecords, type ListingDeps } from './reads.js';

export const CUSTOMER = 'customer';
export const ORDER = 'sf_order';
export const RESERVATION = 'reservation';

/**
 * The caller's customer record id: a customer token carries it (`customerId`, else `sub`); a staff
 * token (also accepted on customer routes) is matched to the customer account that proved the
 * staff member's own proven email (actors/auth/email-proof.ts).
 */
export function customerIdOf(store: Store, tenant: string, p: Principal): string | undefined {
  return customerIdsOf(store, tenant, p)[0];
}

export function profile(store: Store, tenant: string, p: Principal): StoredRecord {
  const id = customerIdOf(store, tenant, p);
  const rec = id ? store.getRecord(tenant, CUSTOMER, id) : undefined;
  if (!rec) throw appError('ERR_NOT_FOUND', `customer for ${p.email ?? p.sub}`);
  return forReader(rec);
}

/** The caller's records of `datatype`, newest first, one page. No customer record: none. */
export async function ownRecords(
  deps: ListingDeps,
  tenant: string,
  p: Principal,
  datatype: string,
  page: number,
  pageSize: number,
): Promise<ListResult> {
  // Its own record's, and once its address is proven, those staff made for that address.
  const ids = customerIdsOf(deps.store, tenant, p);
  if (ids.length === 0) return { data: [], total: 0, hasNext: false, page, pageSize };
  const filter = ids.length === 1 ? { 'data.customerId': ids[0] } : { 'data.customerId': { $in: ids } };
  const res = await listRecords(deps, tenant, datatype, filter, { sort: 'createdate', sortType: 'desc', page, pageSize });
  return { ...res, data: res.data.map(forReader) };
}

/** One of the caller's reservations; another customer's is reported as absent (spec: 404). */
export function ownReservation(store: Store, tenant: string, p: Principal, id: string): StoredRecord {
  const rec = store.getRecord(tenant, RESERVATION, id);
  const mine = customerIdsOf(store, tenant, p);
  if (!rec || !mine.includes(String(rec.data.customerId))) throw appError('ERR_NOT_FOUND', `reservation ${id}`);
  return rec;
}
