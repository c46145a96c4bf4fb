// Whether an account proved its email, and what a proven address lets the store match to it.
//
// An email typed at sign-up (or by an Admin) claims nothing: whoever typed it may not own the
// inbox. An account's address counts once the account redeemed a code sent to it (verification, a
// magic-code sign-in, a password reset); the proof is kept on the account's credentials record
// (user_security, which the record store never writes) as the address proven, so an address
// changed later is unproven again. Only a proven address matches things to an account by email:
// tickets by holder email, the customer records staff made for that address, a staff member's
// security record (spec: Authentication; DESIGN.md, Trust boundaries).
import type { Principal } from '../../core/auth/tokens.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { CUSTOMER, SECURITY, USER, normalizeEmail, type SecurityData } from './model.js';

type Reads = Pick<Store, 'getRecord' | 'scan'>;

function securityOf(store: Reads, tenant: string, sk: string): SecurityData | undefined {
  return store.getRecord(tenant, SECURITY, sk)?.data as SecurityData | undefined;
}

function emailOf(rec: StoredRecord | undefined): string | undefined {
  const e = rec?.data.email;
  return typeof e === 'string' && e ? normalizeEmail(e) : undefined;
}

/** True when the account record `rec` proved the address it holds now. */
export function recordProven(store: Reads, tenant: string, rec: StoredRecord): boolean {
  const email = emailOf(rec);
  return !!email && securityOf(store, tenant, rec.sk)?.emailProven === email;
}

/** The account record behind a staff or customer principal (applications have none). */
export function accountRecord(store: Reads, tenant: string, p: Principal): StoredRecord | undefined {
  if (p.kind === 'customer') return store.getRecord(tenant, CUSTOMER, p.customerId ?? p.sub);
  if (p.kind === 'staff') return store.getRecord(tenant, USER, p.sub);
  return undefined;
}

/** The caller's email when its account proved it; undefined otherwise (never the token's word). */
export function provenEmailOf(store: Reads, tenant: string, p: Principal): string | undefined {
  const rec = accountRecord(store, tenant, p);
  return rec && recordProven(store, tenant, rec) ? emailOf(rec) : undefined;
}

/** The customer records of an address (one index read). */
export function customersByEmail(store: Reads, tenant: string, email: string): StoredRecord[] {
  const e = normalizeEmail(email);
  return store.scan(tenant, CUSTOMER, { 'data.email': e }).filter((r) => emailOf(r) === e);
}

/** The customer record of `email` that proved it: the one a staff member's 2FA lives on. */
export function provenCustomerByEmail(store: Reads, tenant: string, email: string): StoredRecord | undefined {
  return customersByEmail(store, tenant, email).find((r) => recordProven(store, tenant, r));
}

/** A customer record nobody signs in to (made by a booking, the CRM or a purchase for an address). */
function isPlainRecord(store: Reads, tenant: string, rec: StoredRecord): boolean {
  const sec = securityOf(store, tenant, rec.sk);
  return !sec?.passwordHash && !sec?.emailProven;
}

/**
 * The customer ids whose orders, bookings and tickets are the caller's: its own account record,
 * and, once it proved its address, the plain customer records staff made for that address. A
 * staff token is matched to the proven customer account of its proven email, if any.
 */
export function customerIdsOf(store: Reads, tenant: string, p: Principal): string[] {
  let own: StoredRecord | undefined;
  if (p.kind === 'customer') own = store.getRecord(tenant, CUSTOMER, p.customerId ?? p.sub);
  else {
    const email = provenEmailOf(store, tenant, p);
    own = email ? provenCustomerByEmail(store, tenant, email) : undefined;
  }
  if (!own) return p.kind === 'customer' ? [p.customerId ?? p.sub] : [];
  const email = recordProven(store, tenant, own) ? emailOf(own) : undefined;
  const ids = [own.sk];
  if (email) for (const r of customersByEmail(store, tenant, email)) if (r.sk !== own.sk && isPlainRecord(store, tenant, r)) ids.push(r.sk);
  return ids;
}
