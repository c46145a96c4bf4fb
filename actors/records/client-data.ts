// Customer self-service reads (spec: Endpoints → Customer self-service and notes): only the
// caller's own profile, orders and reservations. Orders (`sf_order`) and reservations point at
// their customer through `data.customerId`, the customer record's `sk`.
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { forReader } from './policy.js';
import { listRecords, type ListingDeps } from './reads.js';

export const CUSTOMER = 'customer';
export const ORDER = 'sf_order';
export const RESERVATION = 'reservation';

/**
 * The caller's customer record id: a customer token carries it (`customerId`, else `sub`); a staff
 * token (also accepted on customer routes) is matched to a customer record by its email.
 */
export function customerIdOf(store: Store, tenant: string, p: Principal): string | undefined {
  if (p.kind === 'customer') return p.customerId ?? p.sub;
  if (!p.email) return undefined;
  const emails = [...new Set([p.email, p.email.toLowerCase()])];
  const hit = store.find(tenant, CUSTOMER, { 'data.email': { $in: emails } }, { pageSize: 1 });
  return hit.data[0]?.sk;
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
  const id = customerIdOf(deps.store, tenant, p);
  if (!id) return { data: [], total: 0, hasNext: false, page, pageSize };
  const res = await listRecords(deps, tenant, datatype, { 'data.customerId': id }, { sort: 'createdate', sortType: 'desc', page, pageSize });
  return { ...res, data: res.data.map(forReader) };
}

/** One of the caller's reservations; another customer's is reported as absent (spec: 404). */
export function ownReservation(store: Store, tenant: string, p: Principal, id: string): StoredRecord {
  const rec = store.getRecord(tenant, RESERVATION, id);
  const mine = customerIdOf(store, tenant, p);
  if (!rec || !mine || rec.data.customerId !== mine) throw appError('ERR_NOT_FOUND', `reservation ${id}`);
  return rec;
}
