// Second-factor management (/profile/security/*). A person's 2FA lives on their customer record:
// a customer manages their own; a staff member manages the customer record with their email, and
// one without such a record gets 404 "customer for <email> not found" (spec: Errors, case 6). The
// enrolment then applies to that person's sign-ins as staff too (matched by email). Both the
// record and a staff caller must have proven the address (email-proof.ts).
import { randomBytes } from 'node:crypto';
import type { Principal } from '../../core/auth/tokens.js';
import { base32Encode, newTotpSecret, otpauthUri } from '../../core/auth/totp.js';
import { appError, type AppError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import { BACKUP, CUSTOMER, NS, normalizeEmail, type BackupData, type CustomerData, type TwoFactorMethod } from './model.js';
import { customersByEmail, provenCustomerByEmail, provenEmailOf, recordProven } from './email-proof.js';
import { backupCodeHash } from './security-actor.js';
import { SECURITY_ACTOR, type SecurityMsg, TRUSTED_DEVICES_ACTOR, type TrustedDevicesMsg } from './messages.js';
import type { AccountLookup } from './account-lookup.js';
import type { AuthDeps } from './deps.js';

export const BACKUP_CODE_COUNT = 10;

function unproven(): AppError {
  return appError(
    'ERR_FORBIDDEN',
    'verify your email address first: POST /profile/customer/verify-email/send sends a code to it, POST /profile/customer/verify-email {code} proves it',
  );
}

export interface TwoFactorStatus {
  email: string;
  twoFactorEnabled: boolean;
  twoFactorMethod?: TwoFactorMethod;
  authenticatorEnrolled: boolean;
  backupCodesRemaining: number;
  trustedDevices: number;
}

export interface TrustedDevice {
  id: string;
  label?: string;
  addedAt: string;
}

function newBackupCode(): string {
  const raw = base32Encode(randomBytes(7)).slice(0, 10);
  return `${raw.slice(0, 5)}-${raw.slice(5)}`;
}

export class TwoFactorAdmin {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
  ) {}

  /**
   * The customer record whose 2FA this caller manages (spec: Errors, case 6). It must have proven
   * its address, and so must a staff caller: a second factor decides who signs in, so only the
   * owner of the inbox may set it (403 naming verify-email otherwise). A staff user with no customer
   * record at all still gets the spec's 404 first.
   */
  person(tenant: string, p: Principal): StoredRecord {
    const { store } = this.deps;
    if (p.kind === 'customer') {
      const rec = store.getRecord(tenant, CUSTOMER, p.customerId ?? p.sub);
      if (!rec) throw appError('ERR_NOT_FOUND', `customer for ${p.email ?? p.sub}`);
      if (!recordProven(store, tenant, rec)) throw unproven();
      return rec;
    }
    const email = p.email ? normalizeEmail(p.email) : undefined;
    if (!email || customersByEmail(store, tenant, email).length === 0) throw appError('ERR_NOT_FOUND', `customer for ${p.email ?? p.sub}`);
    if (!provenEmailOf(store, tenant, p)) throw unproven();
    const rec = provenCustomerByEmail(store, tenant, email);
    if (!rec) throw unproven();
    return rec;
  }

  private emailOf(rec: StoredRecord): string {
    return normalizeEmail(String((rec.data as CustomerData).email ?? ''));
  }

  private ask<R>(tenant: string, sk: string, msg: SecurityMsg): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, SECURITY_ACTOR, sk, msg);
  }

  status(tenant: string, p: Principal): TwoFactorStatus {
    const rec = this.person(tenant, p);
    const sec = this.accounts.security(tenant, rec.sk);
    const backup = this.deps.store.getRecord(tenant, BACKUP, rec.sk)?.data as unknown as BackupData | undefined;
    const email = this.emailOf(rec);
    const out: TwoFactorStatus = {
      email,
      twoFactorEnabled: sec?.twoFactorEnabled === true,
      authenticatorEnrolled: !!sec?.totpSecret,
      backupCodesRemaining: backup ? backup.codes.filter((c) => !c.usedAt).length : 0,
      trustedDevices: email ? this.deps.store.listKv(tenant, NS.trusted(email)).length : 0,
    };
    if (sec?.twoFactorEnabled && sec.twoFactorMethod) out.twoFactorMethod = sec.twoFactorMethod;
    return out;
  }

  /** Starts authenticator enrolment: the secret is shown this once, then only its holder knows it. */
  async totpSetup(tenant: string, p: Principal): Promise<{ secret: string; otpauthUrl: string; issuer: string }> {
    const rec = this.person(tenant, p);
    const secret = newTotpSecret();
    await this.ask(tenant, rec.sk, { type: 'totpBegin', secret, subjectType: 'customer' });
    const issuer = String(this.accounts.org(tenant).displayName || tenant);
    return { secret, otpauthUrl: otpauthUri(secret, this.emailOf(rec) || rec.sk, issuer), issuer };
  }

  async totpVerify(tenant: string, p: Principal, code: string): Promise<TwoFactorStatus> {
    const rec = this.person(tenant, p);
    const r = await this.ask<{ ok: boolean }>(tenant, rec.sk, { type: 'totpConfirm', code: code.trim() });
    if (!r.ok) throw appError('ERR_BAD_REQUEST', 'the code is not right');
    return this.status(tenant, p);
  }

  async enable(tenant: string, p: Principal, method: TwoFactorMethod): Promise<TwoFactorStatus> {
    const rec = this.person(tenant, p);
    if (method === 'sms' && !(rec.data as CustomerData).phone) {
      throw appError('ERR_BAD_REQUEST', 'sms needs a phone number on the customer record');
    }
    await this.ask(tenant, rec.sk, { type: 'enable', method, subjectType: 'customer' });
    return this.status(tenant, p);
  }

  async disable(tenant: string, p: Principal, code: string | undefined): Promise<TwoFactorStatus> {
    const rec = this.person(tenant, p);
    const msg: SecurityMsg = { type: 'disable' };
    if (code) msg.code = code.trim();
    const r = await this.ask<{ ok: boolean }>(tenant, rec.sk, msg);
    if (!r.ok) throw appError('ERR_BAD_REQUEST', 'the code is not right: send a current authenticator code or a backup code');
    return this.status(tenant, p);
  }

  /** New backup codes (the old ones stop working); shown this once, stored hashed. */
  async backupGenerate(tenant: string, p: Principal): Promise<{ codes: string[]; generatedAt: string }> {
    const rec = this.person(tenant, p);
    if (!this.accounts.security(tenant, rec.sk)?.twoFactorEnabled) {
      throw appError('ERR_BAD_REQUEST', 'turn two-factor authentication on before generating backup codes');
    }
    const codes = Array.from({ length: BACKUP_CODE_COUNT }, newBackupCode);
    await this.ask(tenant, rec.sk, { type: 'setBackup', hashes: codes.map((c) => backupCodeHash(rec.sk, c)) });
    return { codes, generatedAt: new Date(this.deps.clock.now()).toISOString() };
  }

  trustedDevices(tenant: string, p: Principal): TrustedDevice[] {
    const email = this.emailOf(this.person(tenant, p));
    if (!email) return [];
    return this.deps.store.listKv<{ addedAt: number; label?: string }>(tenant, NS.trusted(email)).map(({ key, value }) => {
      const d: TrustedDevice = { id: key.slice(0, 16), addedAt: new Date(value.addedAt).toISOString() };
      if (value.label) d.label = value.label;
      return d;
    });
  }

  /** Forgets one trusted device (by its listed id) or all of them (trusted-devices-actor.ts). */
  async forgetDevices(tenant: string, p: Principal, id: string | undefined): Promise<{ removed: number }> {
    const email = this.emailOf(this.person(tenant, p));
    if (!email) return { removed: 0 };
    const msg: TrustedDevicesMsg = id === undefined ? { type: 'forget' } : { type: 'forget', id };
    return this.deps.runtime.ask<{ removed: number }>(tenant, TRUSTED_DEVICES_ACTOR, email, msg);
  }
}
