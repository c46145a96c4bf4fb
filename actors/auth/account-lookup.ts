// Accounts as the store holds them (reads only, no actor): organisations, staff users, customers,
// cards, who a signed-in subject is, and whether a caller may act for another account.
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import { isId } from '../../core/ids.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Org, Store } from '../../core/store/store.js';
import { provenCustomerByEmail, recordProven } from './email-proof.js';
import {
  CARD,
  CUSTOMER,
  SECURITY,
  USER,
  isApp,
  normalizeEmail,
  publicCustomer,
  publicUser,
  type CustomerData,
  type PublicUser,
  type SecurityData,
  type SubjectKind,
  type UserData,
} from './model.js';

/** A signed-in (or signing-in) account: a staff user or a customer, and its record. */
export interface Subject {
  kind: SubjectKind;
  rec: StoredRecord;
}

export class AccountLookup {
  constructor(private readonly store: Store) {}

  org(tenant: string): Org {
    const org = this.store.getOrg(tenant);
    if (!org) throw appError('ERR_NOT_FOUND', `organisation ${tenant}`);
    return org;
  }

  security(tenant: string, sk: string): SecurityData | undefined {
    return this.store.getRecord(tenant, SECURITY, sk)?.data as SecurityData | undefined;
  }

  userById(tenant: string, id: string): StoredRecord | undefined {
    const r = this.store.getRecord(tenant, USER, id);
    return r && !isApp(r) ? r : undefined;
  }

  userByEmail(tenant: string, email: string): StoredRecord | undefined {
    return this.store.scan(tenant, USER, { 'data.email': email }).find((r) => !isApp(r));
  }

  userByEmployeeId(tenant: string, employeeId: string): StoredRecord | undefined {
    return this.store.scan(tenant, USER, { 'data.employeeId': employeeId }).find((r) => !isApp(r));
  }

  /** The customer record of an email; the account (credentials or a proof) when there are several. */
  customerByEmail(tenant: string, email: string): StoredRecord | undefined {
    const all = this.store.scan(tenant, CUSTOMER, { 'data.email': email });
    return all.find((c) => {
      const sec = this.security(tenant, c.sk);
      return !!(sec?.passwordHash || sec?.emailProven);
    }) ?? all[0];
  }

  cardByUid(tenant: string, cardUid: string): StoredRecord | undefined {
    return this.store.scan(tenant, CARD, { 'data.cardUid': cardUid })[0];
  }

  /** A card by its card UID, else by its record id. */
  card(tenant: string, identifier: string): StoredRecord | undefined {
    return this.cardByUid(tenant, identifier) ?? (isId(identifier) ? this.store.getRecord(tenant, CARD, identifier) : undefined);
  }

  subject(tenant: string, kind: SubjectKind, sub: string): Subject | undefined {
    if (kind === 'staff') {
      const rec = this.userById(tenant, sub);
      return rec && (rec.data as UserData).status === 'active' ? { kind, rec } : undefined;
    }
    const rec = this.store.getRecord(tenant, CUSTOMER, sub);
    return rec && (rec.data as CustomerData).status !== 'disabled' ? { kind, rec } : undefined;
  }

  publicOf(tenant: string, s: Subject): PublicUser {
    const verified = recordProven(this.store, tenant, s.rec);
    if (s.kind === 'customer') return publicCustomer(s.rec, tenant, verified);
    return publicUser(s.rec, tenant, String(this.store.getOrg(tenant)?.primaryContactUserId ?? ''), verified);
  }

  /**
   * The addresses that are the caller's own, from the store (never from the token): the account's
   * email and phone, and for staff the phone of the proven customer record with the same email
   * (where a personal 2FA sends its SMS). Empty when the account no longer exists, and while it has
   * not proven its email: typing an address at sign-up does not make its mail readable.
   */
  ownAddresses(tenant: string, p: Principal): string[] {
    if (p.kind === 'app') return [];
    const s = this.subject(tenant, p.kind === 'customer' ? 'customer' : 'staff', p.sub);
    if (!s || !recordProven(this.store, tenant, s.rec)) return [];
    const d = s.rec.data as UserData;
    const out = new Set<string>();
    if (d.email) out.add(normalizeEmail(d.email));
    if (d.phone) out.add(String(d.phone));
    if (s.kind === 'staff' && d.email) {
      const phone = (provenCustomerByEmail(this.store, tenant, d.email)?.data as CustomerData | undefined)?.phone;
      if (phone) out.add(String(phone));
    }
    return [...out];
  }

  /**
   * An Admin acting on another staff account (setting its PIN, registering its card, disabling it)
   * must hold every role that account holds, and only the primary contact acts on the primary
   * contact: otherwise a plain Admin could set the founder's PIN and sign in as a ConfigAdmin.
   */
  assertMayActFor(tenant: string, caller: Principal, target: StoredRecord, what: string): void {
    const why = this.whyNotActFor(tenant, caller, target);
    if (why) throw appError('ERR_FORBIDDEN', `you cannot ${what} for ${why}`);
  }

  /** Undefined when `caller` (an Admin, or the account itself) may act for `target`; else who the target is. */
  whyNotActFor(tenant: string, caller: Principal, target: StoredRecord): string | undefined {
    if (target.sk === caller.sub) return undefined;
    if (!caller.roles.includes('Admin')) return 'another user (role Admin needed)';
    if (this.store.getOrg(tenant)?.primaryContactUserId === target.sk) return "the organisation's primary contact (only they may)";
    const extra = ((target.data as UserData).roles ?? []).filter((r) => !caller.roles.includes(r));
    return extra.length ? `a user holding roles you do not hold: ${extra.join(', ')}` : undefined;
  }
}
