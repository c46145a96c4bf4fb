// The authentication flows: sign-up, password sign-in with its 2FA and new-device challenges,
// magic codes, passcode and card sign-in, refresh rotation, application tokens and API keys. Reads
// go straight to the store; every read-check-write goes through the actor that owns it. Depends
// only on core interfaces (the edge passes its AppDeps, which has these members).
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { appendFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { NodeServices } from '../../core/actor/services.js';
import type { ActorRuntime } from '../../core/actor/runtime.js';
import { digestSecret, hashPassword, newNumericCode, newSecret, safeEqual, verifyPassword } from '../../core/auth/password.js';
import { REVOKED_NS, REVOKED_SESSIONS_NS, type Revocation } from '../../core/auth/revocations.js';
import type { Principal, TokenService } from '../../core/auth/tokens.js';
import type { Clock } from '../../core/clock.js';
import { AppError, appError } from '../../core/errors.js';
import { isId } from '../../core/ids.js';
import type { Logger } from '../../core/log.js';
import type { OutboxProvider } from '../../core/outbox.js';
import type { QueryRunner } from '../../core/query/pool.js';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch, type Org, type Store } from '../../core/store/store.js';
import { ACCOUNTS, ORGS, type AccountsMsg, type CreatedOrg, type CreateOrgMsg } from './accounts.js';
import { CARD_ACTOR, type CardMsg } from './cards.js';
import {
  CHALLENGE_ACTOR,
  CODE_TTL_MS,
  MAGIC_ACTOR,
  codeHash,
  type Challenge,
  type ChallengeMsg,
  type ChallengeReply,
  type MagicMsg,
  type MagicReply,
} from './codes.js';
import { DEVICE_TOKEN_NS, deviceEntryLive, newDeviceToken, parseDeviceToken, type DeviceEntry } from './device-token.js';
import { ADDRESS_RULE, FailureLimiter } from './limiter.js';
import { CODE_KINDS, accountOf, type CodeKind } from './outbox-view.js';
import {
  APIKEY,
  CARD,
  CUSTOMER,
  GLOBAL_TENANT,
  NS,
  PRIVILEGED_ROLES,
  SECURITY,
  SETTING,
  SYSTEM_GROUP,
  USER,
  isApp,
  normalizeEmail,
  publicCustomer,
  publicUser,
  type ApiKeyData,
  type CardData,
  type CustomerData,
  type DirectoryEntry,
  type PublicUser,
  type SecurityData,
  type SubjectKind,
  type TwoFactorMethod,
  type UserData,
} from './model.js';
import { provenCustomerByEmail, recordProven } from './email-proof.js';
import { EmailVerification } from './email-verification.js';
import { securitySettingsOf } from './org-settings.js';
import { PasswordRecovery } from './recovery.js';
import { REFRESH_ACTOR, type Family, type RefreshMsg, type RefreshReply } from './refresh.js';
import { SECURITY_ACTOR, type SecurityMsg } from './security.js';

/**
 * With the `local` outbox, the one-time codes it records (undelivered) are also appended here,
 * under DATA_DIR, one JSON line each, readable by the server's user only: the operator's way to
 * sign in on a development server without reading the store.
 */
export const LOCAL_CODES_FILE = 'local-outbox-codes.jsonl';

export interface AuthDeps {
  readonly store: Store;
  /** Listings run in its workers (actors/records/reads.ts listRecords). */
  readonly queries: QueryRunner;
  /** The node's ports; listings reach the door's barrier there (actors/records/reads.ts). */
  readonly services: NodeServices;
  readonly runtime: ActorRuntime;
  readonly tokens: TokenService;
  readonly clock: Clock;
  readonly outbox: OutboxProvider;
  readonly logger: Logger;
  readonly config: {
    readonly auth: { readonly accessTokenTtlSeconds: number; readonly refreshTokenTtlSeconds: number };
    readonly rateLimits?: { readonly signupPlan?: string | null };
    /** Where the local outbox's codes file is kept (see LOCAL_CODES_FILE). */
    readonly dataDir?: string;
  };
}

/** What the edge knows of the caller: its address and the device it says it is. */
export interface ClientInfo {
  ip: string;
  /**
   * Digest of x-device-id (else of x-client-info); undefined when neither is sent. A fingerprint
   * for the trusted-device check of 2FA only: it never selects an organisation.
   */
  device?: string;
  /** The x-device-token header as sent (device-token.ts): the secret that selects the device's organisation. */
  deviceToken?: string;
  /** A short human label for the device (from x-client-info), for the trusted-devices list. */
  deviceLabel?: string;
}

export interface SessionAnswer {
  token: string;
  refreshToken: string;
  tokenType: 'Bearer';
  /** Seconds until the access token expires. */
  expiresIn: number;
  orgId: string;
  user: PublicUser;
  /** Staff sign-ins: the device's token for this organisation (device-token.ts), sent back as x-device-token. */
  deviceToken?: string;
}

/** The spec's challenge answer: no tokens, exactly these four fields. */
export interface ChallengeAnswer {
  requiresTwoFactor: true;
  challengeToken: string;
  twoFactorMethod: TwoFactorMethod;
  message: string;
}

export interface Subject {
  kind: SubjectKind;
  rec: StoredRecord;
}

export interface PasscodeSettings {
  enable: boolean;
  mode: string;
}

const BAD_CREDENTIALS = 'the email or password is not right';

function unauthenticated(msg: string): AppError {
  return new AppError('ERR_UNAUTHENTICATED', [msg]);
}

/** The device key (a digest, so raw device ids are never stored), its label and its device token. */
export function deviceOf(headers: Readonly<Record<string, string>>): { device?: string; deviceLabel?: string; deviceToken?: string } {
  const token = headers['x-device-token']?.trim();
  // Longer than any token this server issues: ignored rather than digested.
  const tokenPart = token && token.length <= 128 ? { deviceToken: token } : {};
  const id = headers['x-device-id']?.trim();
  const info = headers['x-client-info']?.trim();
  let deviceLabel: string | undefined;
  if (info) {
    try {
      const parsed = JSON.parse(info) as Record<string, unknown>;
      const label = [parsed.device, parsed.OS ?? parsed.os, parsed.userAgent].find((v) => typeof v === 'string' && v);
      if (typeof label === 'string') deviceLabel = label.slice(0, 120);
    } catch {
      // Not JSON: still usable as a fingerprint, just without a label.
    }
  }
  const source = id ? `id\u0000${id}` : info ? `info\u0000${info}` : undefined;
  if (!source) return { deviceLabel, ...tokenPart };
  return { device: createHash('sha256').update(source).digest('hex').slice(0, 40), deviceLabel, ...tokenPart };
}

export class AuthService {
  readonly limiter: FailureLimiter;
  readonly verification: EmailVerification;
  readonly recovery: PasswordRecovery;

  constructor(readonly deps: AuthDeps) {
    this.limiter = new FailureLimiter(deps.clock);
    this.verification = new EmailVerification(this);
    this.recovery = new PasswordRecovery(this);
  }

  // ---- lookups (reads straight from the store) ----------------------------------------------

  org(tenant: string): Org {
    const org = this.deps.store.getOrg(tenant);
    if (!org) throw appError('ERR_NOT_FOUND', `organisation ${tenant}`);
    return org;
  }

  security(tenant: string, sk: string): SecurityData | undefined {
    return this.deps.store.getRecord(tenant, SECURITY, sk)?.data as SecurityData | undefined;
  }

  userById(tenant: string, id: string): StoredRecord | undefined {
    const r = this.deps.store.getRecord(tenant, USER, id);
    return r && !isApp(r) ? r : undefined;
  }

  userByEmail(tenant: string, email: string): StoredRecord | undefined {
    return this.deps.store.scan(tenant, USER, { 'data.email': email }).find((r) => !isApp(r));
  }

  userByEmployeeId(tenant: string, employeeId: string): StoredRecord | undefined {
    return this.deps.store.scan(tenant, USER, { 'data.employeeId': employeeId }).find((r) => !isApp(r));
  }

  /** The customer record of an email; the account (credentials or a proof) when there are several. */
  customerByEmail(tenant: string, email: string): StoredRecord | undefined {
    const all = this.deps.store.scan(tenant, CUSTOMER, { 'data.email': email });
    return all.find((c) => {
      const sec = this.security(tenant, c.sk);
      return !!(sec?.passwordHash || sec?.emailProven);
    }) ?? all[0];
  }

  cardByUid(tenant: string, cardUid: string): StoredRecord | undefined {
    return this.deps.store.scan(tenant, CARD, { 'data.cardUid': cardUid })[0];
  }

  subject(tenant: string, kind: SubjectKind, sub: string): Subject | undefined {
    if (kind === 'staff') {
      const rec = this.userById(tenant, sub);
      return rec && (rec.data as UserData).status === 'active' ? { kind, rec } : undefined;
    }
    const rec = this.deps.store.getRecord(tenant, CUSTOMER, sub);
    return rec && (rec.data as CustomerData).status !== 'disabled' ? { kind, rec } : undefined;
  }

  publicOf(tenant: string, s: Subject): PublicUser {
    const verified = recordProven(this.deps.store, tenant, s.rec);
    if (s.kind === 'customer') return publicCustomer(s.rec, tenant, verified);
    return publicUser(s.rec, tenant, String(this.deps.store.getOrg(tenant)?.primaryContactUserId ?? ''), verified);
  }

  passcodeSettings(tenant: string): PasscodeSettings {
    const doc = this.deps.store.scan(tenant, SETTING, { 'data.name': 'base-setting' })[0];
    const s = (doc?.data.passcodeLoginSettings ?? {}) as Record<string, unknown>;
    return { enable: s.enable === true, mode: typeof s.mode === 'string' ? s.mode : 'either' };
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
    if (!s || !recordProven(this.deps.store, tenant, s.rec)) return [];
    const d = s.rec.data as UserData;
    const out = new Set<string>();
    if (d.email) out.add(normalizeEmail(d.email));
    if (d.phone) out.add(String(d.phone));
    if (s.kind === 'staff' && d.email) {
      const phone = (provenCustomerByEmail(this.deps.store, tenant, d.email)?.data as CustomerData | undefined)?.phone;
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
    if (this.deps.store.getOrg(tenant)?.primaryContactUserId === target.sk) return "the organisation's primary contact (only they may)";
    const extra = ((target.data as UserData).roles ?? []).filter((r) => !caller.roles.includes(r));
    return extra.length ? `a user holding roles you do not hold: ${extra.join(', ')}` : undefined;
  }

  /** Disables or re-enables a staff user (role Admin). Disabling stops its tokens and API keys at once. */
  async setUserStatus(tenant: string, caller: Principal, userId: string, status: 'active' | 'disabled'): Promise<StoredRecord> {
    const user = this.userById(tenant, userId);
    if (!user) throw appError('ERR_NOT_FOUND', `user ${userId}`);
    if (user.sk === caller.sub) throw appError('ERR_FORBIDDEN', 'you cannot change the status of your own account');
    this.assertMayActFor(tenant, caller, user, 'change the status');
    return this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', { t: 'setUserStatus', userId: user.sk, status, by: caller.sub } satisfies AccountsMsg);
  }

  // ---- sessions -----------------------------------------------------------------------------

  private principalOf(tenant: string, s: Subject, fam: string): Omit<Principal, 'exp' | 'via'> {
    const email = (s.rec.data as UserData).email;
    if (s.kind === 'customer') {
      return { sub: s.rec.sk, org: tenant, roles: [], kind: 'customer', customerId: s.rec.sk, ...(email ? { email } : {}), sid: fam };
    }
    return { sub: s.rec.sk, org: tenant, roles: [...((s.rec.data as UserData).roles ?? [])], kind: 'staff', ...(email ? { email } : {}), sid: fam };
  }

  private answer(tenant: string, s: Subject, fam: string, refreshToken: string): SessionAnswer {
    return {
      token: this.deps.tokens.signAccess(this.principalOf(tenant, s, fam)),
      refreshToken,
      tokenType: 'Bearer',
      expiresIn: this.deps.config.auth.accessTokenTtlSeconds,
      orgId: tenant,
      user: this.publicOf(tenant, s),
    };
  }

  private refreshExpiry(): number {
    return this.deps.clock.now() + this.deps.config.auth.refreshTokenTtlSeconds * 1000;
  }

  /** Starts a token family and answers the pair. Records the org use and, for staff, the device's token. */
  async issueSession(tenant: string, s: Subject, info: ClientInfo): Promise<SessionAnswer> {
    const fam = randomUUID();
    const { token: refreshToken, jti } = this.deps.tokens.signRefresh({ sub: s.rec.sk, org: tenant, kind: s.kind, fam });
    const start: RefreshMsg = { t: 'start', sub: s.rec.sk, kind: s.kind, jti, expiresAt: this.refreshExpiry() };
    await this.deps.runtime.ask(tenant, REFRESH_ACTOR, fam, start);
    const deviceToken = await this.noteSignIn(tenant, s, info);
    const answer = this.answer(tenant, s, fam, refreshToken);
    return deviceToken ? { ...answer, deviceToken } : answer;
  }

  /**
   * Records a staff sign-in: the org directory's last use, and the device token (device-token.ts).
   * The x-device-token sent is renewed and answered back when it was issued for this organisation;
   * otherwise (none, unknown, expired, or another organisation's) a new one is issued, and a token
   * of another organisation is left as it is: only its own organisation's sign-ins touch it.
   */
  private async noteSignIn(tenant: string, s: Subject, info: ClientInfo): Promise<string | undefined> {
    if (s.kind !== 'staff') return undefined;
    const now = this.deps.clock.now();
    const batch = new WriteBatch();
    const email = (s.rec.data as UserData).email;
    if (email) {
      const prev = this.deps.store.getKv<DirectoryEntry>(GLOBAL_TENANT, NS.directory(email), tenant);
      batch.putKv(GLOBAL_TENANT, NS.directory(email), tenant, { lastUsedAt: now, addedAt: prev?.addedAt ?? now } satisfies DirectoryEntry);
    }
    const sent = parseDeviceToken(info.deviceToken);
    const held = sent?.tenant === tenant ? this.deps.store.getKv<DeviceEntry>(tenant, DEVICE_TOKEN_NS, sent.key) : undefined;
    let deviceToken: string;
    if (sent && deviceEntryLive(held, now)) {
      deviceToken = info.deviceToken!;
      batch.putKv(tenant, DEVICE_TOKEN_NS, sent.key, { ...held, usedAt: now } satisfies DeviceEntry);
    } else {
      const issued = newDeviceToken(tenant);
      deviceToken = issued.token;
      batch.putKv(tenant, DEVICE_TOKEN_NS, issued.key, { createdAt: now, usedAt: now } satisfies DeviceEntry);
    }
    await this.deps.store.commit(batch);
    return deviceToken;
  }

  /** Rotates a refresh token (spec: Tokens and refresh). Reuse of a rotated token revokes the family. */
  async refresh(token: string, kind: SubjectKind, headerTenant: string): Promise<SessionAnswer> {
    const c = this.deps.tokens.verifyRefresh(token);
    if (c.kind !== kind) {
      throw unauthenticated(`this is a ${c.kind} refresh token; use /profile/${c.kind === 'staff' ? 'user' : 'customer'}/refresh`);
    }
    if (headerTenant && headerTenant !== c.org) throw appError('ERR_WRONG_ORG', headerTenant);
    if (!this.deps.store.getOrg(c.org)) throw unauthenticated('the organisation no longer exists');
    const s = this.subject(c.org, kind, c.sub);
    if (!s) {
      await this.deps.runtime.ask(c.org, REFRESH_ACTOR, c.fam, { t: 'revoke', reason: 'account gone' } satisfies RefreshMsg);
      throw unauthenticated('the account no longer exists or is disabled; sign in again');
    }
    const revokedAt = this.deps.store.getKv<Revocation>(c.org, REVOKED_NS, c.sub)?.at;
    const fam = revokedAt === undefined ? undefined : this.family(c.org, c.fam);
    if (revokedAt !== undefined && (!fam || fam.createdAt <= revokedAt)) {
      // Signed in before the account was disabled (and since re-enabled): that session stays ended.
      await this.deps.runtime.ask(c.org, REFRESH_ACTOR, c.fam, { t: 'revoke', reason: 'account access revoked' } satisfies RefreshMsg);
      throw unauthenticated('access for this account was revoked after this session began; sign in again');
    }
    const newJti = randomUUID();
    const r = await this.deps.runtime.ask<RefreshReply>(c.org, REFRESH_ACTOR, c.fam, {
      t: 'rotate',
      jti: c.jti,
      newJti,
      expiresAt: this.refreshExpiry(),
    } satisfies RefreshMsg);
    if (r.status === 'reuse') throw unauthenticated('this refresh token was already used; the session is revoked, sign in again');
    if (r.status !== 'ok') throw unauthenticated('the session is revoked or unknown; sign in again');
    const { token: refreshToken } = this.deps.tokens.signRefresh({ sub: c.sub, org: c.org, kind, fam: c.fam, jti: newJti });
    return this.answer(c.org, s, c.fam, refreshToken);
  }

  /**
   * Changes the caller's password after checking the current one (failures count toward the
   * account's slow-down like sign-in failures). Other sessions keep running until they expire.
   */
  async changePassword(tenant: string, p: Principal, current: string, next: string, info: ClientInfo): Promise<void> {
    const kind: SubjectKind = p.kind === 'customer' ? 'customer' : 'staff';
    const s = this.subject(tenant, kind, p.sub);
    if (!s) throw unauthenticated('the account no longer exists or is disabled; sign in again');
    const email = normalizeEmail(String((s.rec.data as UserData).email ?? ''));
    const attempt = this.limiter.attempt(`pw:${tenant}:${kind}:${email}`, info.ip);
    attempt.check();
    if (!(await verifyPassword(current, this.security(tenant, s.rec.sk)?.passwordHash))) {
      attempt.fail();
      throw appError('ERR_BAD_REQUEST', 'the current password is not right');
    }
    const hash = await hashPassword(next);
    const msg: SecurityMsg = { t: 'setPassword', hash, subjectType: kind === 'customer' ? 'customer' : 'user' };
    await this.deps.runtime.ask(tenant, SECURITY_ACTOR, s.rec.sk, msg);
  }

  /** Ends a session: its refresh family is revoked, and with it the session's access tokens (refresh.ts). */
  async revokeFamily(tenant: string, fam: string, reason: string): Promise<void> {
    await this.deps.runtime.ask(tenant, REFRESH_ACTOR, fam, { t: 'revoke', reason } satisfies RefreshMsg);
  }

  family(tenant: string, fam: string): Family | undefined {
    return this.deps.store.getKv<Family>(tenant, NS.family, fam);
  }

  // ---- sign-up ------------------------------------------------------------------------------

  async signupOrg(input: { email: string; password: string; name?: string; orgName: string; openStorefront?: boolean }, info: ClientInfo): Promise<SessionAnswer> {
    const passwordHash = await hashPassword(input.password);
    const msg: CreateOrgMsg = { t: 'createOrg', orgName: input.orgName.trim(), email: normalizeEmail(input.email), passwordHash };
    if (input.name?.trim()) msg.name = input.name.trim();
    const plan = this.deps.config.rateLimits?.signupPlan;
    if (plan) msg.plan = plan;
    if (input.openStorefront === true) msg.openStorefront = true;
    const { org, user } = await this.deps.runtime.ask<CreatedOrg>(GLOBAL_TENANT, ORGS, 'orgs', msg);
    this.deps.logger.info({ orgId: org.orgId }, 'organisation created');
    return this.issueSession(org.orgId, { kind: 'staff', rec: user }, info);
  }

  /**
   * Creates a staff user. The roles that carry this service's privileges (Admin, ConfigAdmin) are
   * granted only by a caller who holds them, so an Admin cannot make a ConfigAdmin (as a key
   * cannot carry roles its owner lacks); other role names carry no privilege here and any Admin
   * may give them.
   */
  async createStaff(
    tenant: string,
    input: { email: string; password: string; name?: string; roles?: string[]; employeeId?: string; phone?: string },
    by: string,
    callerRoles: readonly string[],
  ): Promise<StoredRecord> {
    const roles = [...new Set(['User', ...(input.roles ?? [])])];
    if (roles.includes(SYSTEM_GROUP)) throw appError('ERR_VALIDATION', `body/roles must not contain ${SYSTEM_GROUP} (applications are registered at /profile/app/register)`);
    const beyond = roles.filter((r) => PRIVILEGED_ROLES.includes(r) && !callerRoles.includes(r));
    if (beyond.length) throw appError('ERR_FORBIDDEN', `only a holder of a role may grant it: you do not hold ${beyond.join(', ')}`);
    const passwordHash = await hashPassword(input.password);
    const msg: AccountsMsg = { t: 'createUser', email: normalizeEmail(input.email), roles, passwordHash, createdBy: by };
    if (input.name?.trim()) msg.name = input.name.trim();
    if (input.employeeId) msg.employeeId = input.employeeId;
    if (input.phone) msg.phone = input.phone;
    return this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', msg);
  }

  async signupCustomer(tenant: string, input: { email: string; password: string; name?: string; phone?: string }, info: ClientInfo): Promise<SessionAnswer> {
    const passwordHash = await hashPassword(input.password);
    const msg: AccountsMsg = { t: 'createCustomer', email: normalizeEmail(input.email), passwordHash };
    if (input.name?.trim()) msg.name = input.name.trim();
    if (input.phone) msg.phone = input.phone;
    const { customer } = await this.deps.runtime.ask<{ customer: StoredRecord }>(tenant, ACCOUNTS, 'customer', msg);
    const s: Subject = { kind: 'customer', rec: customer };
    // The address claims nothing until its owner redeems this code (email-verification.ts).
    await this.verification.sendFor(tenant, s);
    return this.issueSession(tenant, s, info);
  }

  // ---- password sign-in and challenges ------------------------------------------------------

  async passwordSignIn(
    tenant: string,
    kind: SubjectKind,
    rawEmail: string,
    password: string,
    info: ClientInfo,
  ): Promise<SessionAnswer | ChallengeAnswer> {
    const email = normalizeEmail(rawEmail);
    const attempt = this.limiter.attempt(`pw:${tenant}:${kind}:${email}`, info.ip);
    attempt.check();
    const rec = kind === 'staff' ? this.userByEmail(tenant, email) : this.customerByEmail(tenant, email);
    const ok = await verifyPassword(password, rec ? this.security(tenant, rec.sk)?.passwordHash : undefined);
    const s = ok && rec ? this.subject(tenant, kind, rec.sk) : undefined;
    if (!s) {
      attempt.fail();
      throw unauthenticated(BAD_CREDENTIALS);
    }
    attempt.succeed();
    return (await this.challengeIfDue(tenant, s, info)) ?? this.issueSession(tenant, s, info);
  }

  isTrusted(tenant: string, email: string | undefined, device: string | undefined): boolean {
    return !!email && !!device && this.deps.store.getKv(tenant, NS.trusted(email), device) !== undefined;
  }

  /**
   * The spec's three cases (Sign-in sequence 5): the org requires 2FA for this kind of account,
   * the person enabled 2FA, or new-device verification is on and the device is not trusted. A
   * person's own 2FA lives on their customer record (the one /profile/security/* manages); staff
   * are matched to it by email, and only to a record that proved that email: a stranger's sign-up
   * with a staff member's address never decides how that staff member signs in.
   */
  private async challengeIfDue(tenant: string, s: Subject, info: ClientInfo, opts: { inboxProven?: boolean } = {}): Promise<ChallengeAnswer | undefined> {
    const settings = securitySettingsOf(this.deps.store.getOrg(tenant));
    const data = s.rec.data as UserData;
    const email = data.email ?? '';
    const person = s.kind === 'customer' ? s.rec : email ? provenCustomerByEmail(this.deps.store, tenant, email) : undefined;
    const psec = person ? this.security(tenant, person.sk) : undefined;
    const enrolled = psec?.twoFactorEnabled ? (psec.twoFactorMethod ?? 'email') : undefined;
    const orgWide = s.kind === 'staff' ? settings.enableTwoFactorForUsers : settings.enableTwoFactorForCustomers;
    let reason: Challenge['reason'] | undefined;
    if (orgWide) reason = 'org';
    else if (enrolled) reason = 'personal';
    // A magic code already proved the inbox, which is all a new-device check would prove.
    else if (!opts.inboxProven && settings.enableNewDeviceAuthentication && !this.isTrusted(tenant, email, info.device)) reason = 'new-device';
    if (!reason) return undefined;

    const phone = (person?.data as CustomerData | undefined)?.phone ?? data.phone;
    let method: TwoFactorMethod = enrolled ?? 'email';
    if (method === 'sms' && !phone) method = 'email';
    if (method === 'authenticator' && !psec?.totpSecret) method = 'email';
    const now = this.deps.clock.now();
    const ch: Challenge = {
      sub: s.rec.sk,
      kind: s.kind,
      email,
      method,
      reason,
      attempts: 0,
      sends: 0,
      createdAt: now,
      expiresAt: now + CODE_TTL_MS,
    };
    if (person) ch.factorSubject = person.sk;
    if (info.device) ch.device = info.device;
    let code: string | undefined;
    if (method !== 'authenticator') {
      code = newNumericCode(6);
      ch.salt = randomBytes(16).toString('base64url');
      ch.codeHash = codeHash(code, ch.salt);
      ch.to = method === 'sms' ? String(phone) : email;
      ch.sends = 1;
    }
    const id = randomBytes(32).toString('base64url');
    await this.deps.runtime.ask(tenant, CHALLENGE_ACTOR, digestSecret(id, 'challenge'), { t: 'create', ch } satisfies ChallengeMsg);
    if (code) await this.sendCode(tenant, method, ch.to!, code, CODE_KINDS.twoFactor, accountOf(s.kind, s.rec.sk));
    return { requiresTwoFactor: true, challengeToken: `${tenant}.${id}`, twoFactorMethod: method, message: challengeMessage(method) };
  }

  /**
   * Sends a one-time code to its owner's address. Only that person reads it: Admins see the
   * envelope (outbox-view.ts). With the `local` provider nothing is delivered, so the operator finds
   * the code in LOCAL_CODES_FILE under DATA_DIR (owner-only), never in the log: logs are shipped
   * and kept where codes must not go.
   */
  async sendCode(tenant: string, method: TwoFactorMethod, to: string, code: string, kind: CodeKind, account: string): Promise<void> {
    const minutes = CODE_TTL_MS / 60_000;
    const what = kind === CODE_KINDS.magic ? 'sign-in' : kind === CODE_KINDS.passwordReset ? 'password reset' : 'verification';
    if (this.deps.outbox.name === 'local' && this.deps.config.dataDir) {
      const line = JSON.stringify({ time: new Date(this.deps.clock.now()).toISOString(), orgId: tenant, to, kind, code }) + '\n';
      await appendFile(join(this.deps.config.dataDir, LOCAL_CODES_FILE), line, { mode: 0o600 }).catch((err: Error) =>
        this.deps.logger.warn({ err: err.message }, `could not write ${LOCAL_CODES_FILE}`),
      );
    }
    await this.deps.outbox.send(tenant, {
      channel: method === 'sms' ? 'sms' : 'email',
      to,
      subject: method === 'sms' ? undefined : `Your ${what} code`,
      body: `Your ${what} code is ${code}. It expires in ${minutes} minutes. If you did not ask for it, ignore this message.`,
      code,
      kind,
      // The account the code signs in: an address alone is no proof (a customer may sign up with
      // any email), so only this account reads the code back (outbox-view.ts).
      payload: { account },
    });
  }

  private parseChallenge(token: string, headerTenant: string): { tenant: string; key: string } {
    const dot = token.indexOf('.');
    const tenant = dot > 0 ? token.slice(0, dot) : '';
    const id = token.slice(dot + 1);
    if (!tenant || id.length < 20 || !this.deps.store.getOrg(tenant)) {
      throw unauthenticated('the challenge token is not valid; sign in again');
    }
    if (headerTenant && headerTenant !== tenant) throw appError('ERR_WRONG_ORG', headerTenant);
    return { tenant, key: digestSecret(id, 'challenge') };
  }

  async challengeVerify(
    token: string,
    code: string,
    trustDevice: boolean,
    headerTenant: string,
    info: ClientInfo,
  ): Promise<SessionAnswer> {
    const { tenant, key } = this.parseChallenge(token, headerTenant);
    const addr = `ip:${info.ip}`;
    this.limiter.check([addr]);
    const r = await this.deps.runtime.ask<ChallengeReply>(tenant, CHALLENGE_ACTOR, key, { t: 'verify', code: code.trim() } satisfies ChallengeMsg);
    if (r.status === 'wrong') {
      this.limiter.fail(addr, ADDRESS_RULE);
      const rest = r.attemptsLeft > 0 ? `${r.attemptsLeft} attempt${r.attemptsLeft === 1 ? '' : 's'} left` : 'no attempts left; sign in again';
      throw appError('ERR_BAD_REQUEST', `the code is not right (${rest})`);
    }
    if (r.status !== 'ok') throw unauthenticated('the challenge has expired or ended; sign in again');
    const ch = r.ch;
    const s = this.subject(tenant, ch.kind, ch.sub);
    if (!s) throw unauthenticated('the account no longer exists or is disabled');
    const device = ch.device ?? info.device;
    if (trustDevice && device && ch.email) {
      const label = info.deviceLabel;
      await this.deps.store.commit(
        new WriteBatch().putKv(tenant, NS.trusted(ch.email), device, { addedAt: this.deps.clock.now(), ...(label ? { label } : {}) }),
      );
    }
    return this.issueSession(tenant, s, { ...info, device });
  }

  async challengeSend(token: string, headerTenant: string): Promise<{ sent: boolean; twoFactorMethod: TwoFactorMethod; message: string }> {
    const { tenant, key } = this.parseChallenge(token, headerTenant);
    const code = newNumericCode(6);
    const salt = randomBytes(16).toString('base64url');
    const r = await this.deps.runtime.ask<ChallengeReply>(tenant, CHALLENGE_ACTOR, key, {
      t: 'resend',
      codeHash: codeHash(code, salt),
      salt,
    } satisfies ChallengeMsg);
    if (r.status === 'not-sendable') {
      throw appError('ERR_BAD_REQUEST', 'authenticator codes are not sent: use the code shown by your authenticator app, or a backup code');
    }
    if (r.status === 'limit') {
      throw new AppError('ERR_RATE_LIMITED', [60], { headers: { 'retry-after': '60' } });
    }
    if (r.status !== 'ok') throw unauthenticated('the challenge has expired or ended; sign in again');
    await this.sendCode(tenant, r.ch.method, r.ch.to ?? r.ch.email, code, CODE_KINDS.twoFactor, accountOf(r.ch.kind, r.ch.sub));
    return { sent: true, twoFactorMethod: r.ch.method, message: challengeMessage(r.ch.method) };
  }

  // ---- magic code ---------------------------------------------------------------------------

  /** Sends a sign-in code when the email has an account (staff first, else customer); silent otherwise. */
  async magicIssue(tenant: string, rawEmail: string): Promise<void> {
    const email = normalizeEmail(rawEmail);
    const staff = this.userByEmail(tenant, email);
    const customer = staff ? undefined : this.customerByEmail(tenant, email);
    const s = staff ? this.subject(tenant, 'staff', staff.sk) : customer ? this.subject(tenant, 'customer', customer.sk) : undefined;
    if (!s) return;
    const code = newNumericCode(6);
    const salt = randomBytes(16).toString('base64url');
    const r = await this.deps.runtime.ask<MagicReply>(tenant, MAGIC_ACTOR, email, {
      t: 'issue',
      sub: s.rec.sk,
      kind: s.kind,
      codeHash: codeHash(code, salt),
      salt,
    } satisfies MagicMsg);
    if (r.status === 'limit') {
      throw new AppError('ERR_RATE_LIMITED', [r.retryAfterSeconds], { headers: { 'retry-after': String(r.retryAfterSeconds) } });
    }
    await this.sendCode(tenant, 'email', email, code, CODE_KINDS.magic, accountOf(s.kind, s.rec.sk));
  }

  /**
   * Exchanges a magic code for tokens, or for a challenge when two-factor is due (org-wide, or the
   * person enrolled). The spec (Sign-in sequence 7) skips 2FA here, but a code to the inbox is one
   * factor: skipping the second would make the magic code a way around an org's 2FA (issue 17).
   * The new-device check is skipped: the code already proved the inbox it would send to.
   */
  async magicRedeem(tenant: string, rawEmail: string, code: string, info: ClientInfo): Promise<SessionAnswer | ChallengeAnswer> {
    const email = normalizeEmail(rawEmail);
    const addr = `ip:${info.ip}`;
    this.limiter.check([addr]);
    const r = await this.deps.runtime.ask<MagicReply>(tenant, MAGIC_ACTOR, email, { t: 'redeem', code: code.trim() } satisfies MagicMsg);
    const s = r.status === 'ok' && r.kind && r.sub ? this.subject(tenant, r.kind, r.sub) : undefined;
    if (!s) {
      this.limiter.fail(addr, ADDRESS_RULE);
      throw unauthenticated('the email or code is not right, or the code has expired');
    }
    // The code came from the inbox without the account's password: the address is proven, and
    // credentials someone set before that proof stop working (email-verification.ts).
    await this.verification.pastRevocation(await this.verification.prove(tenant, s, true));
    // The spec (Sign-in sequence 7) has no 2FA on this path; an organisation that counts the
    // inbox as one factor only turns on requireTwoFactorForMagicCode.
    if (!securitySettingsOf(this.org(tenant)).requireTwoFactorForMagicCode) return this.issueSession(tenant, s, info);
    return (await this.challengeIfDue(tenant, s, info, { inboxProven: true })) ?? this.issueSession(tenant, s, info);
  }

  // ---- passcode and card --------------------------------------------------------------------

  /**
   * Quick sign-in with employee id plus PIN and/or card (spec: Passcodes and access cards). The
   * org is the `orgid` header's, else the one the device's x-device-token was issued for (the
   * device's last sign-in; device-token.ts). x-device-id selects nothing. No 2FA or new-device
   * challenge (spec: Sign-in sequence 7). `passcodeLoginSettings.mode`: `pin` needs the PIN,
   * `card` the card, `both` (or `pin_and_card`) both; anything else accepts either.
   */
  async passcodeSignIn(
    headerTenant: string,
    body: { employeeId: string; pin?: string; cardUid?: string },
    info: ClientInfo,
  ): Promise<SessionAnswer> {
    let tenant = headerTenant;
    if (!tenant) {
      const sent = parseDeviceToken(info.deviceToken);
      const live =
        sent && this.deps.store.getOrg(sent.tenant) && deviceEntryLive(this.deps.store.getKv<DeviceEntry>(sent.tenant, DEVICE_TOKEN_NS, sent.key), this.deps.clock.now());
      if (!sent || !live) {
        throw appError(
          'ERR_BAD_REQUEST',
          info.deviceToken
            ? 'send the orgid header: this x-device-token is not valid (unknown, or unused for 90 days); sign in once with orgid for a new one'
            : 'send the orgid header, or the x-device-token this device was given at its last staff sign-in (x-device-id does not select an organisation)',
        );
      }
      tenant = sent.tenant;
    }
    const settings = this.passcodeSettings(tenant);
    if (!settings.enable) throw appError('ERR_FORBIDDEN', 'passcode sign-in is disabled for this organisation');
    const { employeeId, pin, cardUid } = body;
    const mode = settings.mode.toLowerCase();
    if (!pin && !cardUid) throw appError('ERR_VALIDATION', 'body/pin or body/cardUid is required');
    if (mode === 'pin' && !pin) throw appError('ERR_VALIDATION', 'body/pin is required: this organisation signs in with a PIN');
    if (mode === 'card' && !cardUid) throw appError('ERR_VALIDATION', 'body/cardUid is required: this organisation signs in with a card');
    if ((mode === 'both' || mode === 'pin_and_card') && !(pin && cardUid)) {
      throw appError('ERR_VALIDATION', 'body/pin and body/cardUid are both required in this organisation');
    }
    const attempt = this.limiter.attempt(`pc:${tenant}:${employeeId}`, info.ip);
    attempt.check();
    const failed = (err: AppError): AppError => {
      attempt.fail();
      return err;
    };
    const user = this.userByEmployeeId(tenant, employeeId);
    if (cardUid) {
      const card = this.cardByUid(tenant, cardUid);
      const d = card?.data as unknown as CardData | undefined;
      if (!d || !user || d.userId !== user.sk || d.employeeId !== employeeId) throw failed(unauthenticated('the employee id or card is not right'));
      if (d.status !== 'active') throw failed(appError('ERR_FORBIDDEN', `this card is ${d.status}; it cannot be used to sign in`));
    }
    if (pin) {
      const ok = await verifyPassword(pin, user ? this.security(tenant, user.sk)?.pinHash : undefined);
      if (!ok || !user) throw failed(unauthenticated('the employee id or PIN is not right'));
    }
    const s = user ? this.subject(tenant, 'staff', user.sk) : undefined;
    if (!s) throw failed(unauthenticated('the employee id is not right'));
    attempt.succeed();
    return this.issueSession(tenant, s, info);
  }

  async registerCard(tenant: string, caller: Principal, body: { employeeId: string; cardUid: string; label?: string }): Promise<StoredRecord> {
    const user = this.userByEmployeeId(tenant, body.employeeId);
    if (!user) throw appError('ERR_NOT_FOUND', `employee ${body.employeeId}`);
    if (caller.roles.includes('Admin')) this.assertMayActFor(tenant, caller, user, 'register a card');
    const msg: CardMsg = { t: 'register', employeeId: body.employeeId, userId: user.sk, caller: this.cardCaller(tenant, caller) };
    if (body.label) msg.label = body.label;
    return this.deps.runtime.ask<StoredRecord>(tenant, CARD_ACTOR, body.cardUid, msg);
  }

  async setCardStatus(tenant: string, caller: Principal, cardUid: string, status: CardData['status']): Promise<StoredRecord> {
    // Re-activating a card makes it sign in as its holder again: the same rule as registering one.
    const holderId = (this.cardByUid(tenant, cardUid)?.data as unknown as CardData | undefined)?.userId;
    const holder = holderId ? this.userById(tenant, holderId) : undefined;
    if (status === 'active' && holder && caller.roles.includes('Admin')) this.assertMayActFor(tenant, caller, holder, 're-activate a card');
    return this.deps.runtime.ask<StoredRecord>(tenant, CARD_ACTOR, cardUid, { t: 'status', status, caller: this.cardCaller(tenant, caller) } satisfies CardMsg);
  }

  private cardCaller(tenant: string, p: Principal): { userId: string; employeeId?: string; admin: boolean } {
    const me = this.userById(tenant, p.sub);
    const employeeId = (me?.data as UserData | undefined)?.employeeId;
    return { userId: p.sub, admin: p.roles.includes('Admin'), ...(employeeId ? { employeeId } : {}) };
  }

  // ---- applications and API keys ------------------------------------------------------------

  /** Application token exchange (spec: Tokens and refresh 3). A legacy `key` field is ignored. */
  async appToken(tenant: string, appId: string, secret: string, domain: string | undefined, info: ClientInfo): Promise<{ token: string; tokenType: 'Bearer'; expiresIn: number; appId: string }> {
    const attempt = this.limiter.attempt(`app:${tenant}:${appId}`, info.ip);
    attempt.check();
    const rec = isId(appId) ? this.deps.store.getRecord(tenant, USER, appId) : undefined;
    const hash = rec && isApp(rec) ? this.security(tenant, rec.sk)?.secretHash : undefined;
    if (!rec || !hash || !safeEqual(digestSecret(secret), hash)) {
      attempt.fail();
      throw unauthenticated('the application id or secret is not right');
    }
    const d = rec.data as UserData;
    if (d.status !== 'active') throw unauthenticated('this application is revoked');
    const domains = d.domains ?? [];
    if (domains.length > 0 && !(domain && domains.includes(domain.trim().toLowerCase()))) {
      throw appError('ERR_FORBIDDEN', 'domain is not one of the domains registered for this application');
    }
    attempt.succeed();
    const token = this.deps.tokens.signAccess({ sub: rec.sk, org: tenant, roles: [SYSTEM_GROUP], kind: 'app' });
    return { token, tokenType: 'Bearer', expiresIn: this.deps.config.auth.accessTokenTtlSeconds, appId: rec.sk };
  }

  async registerApp(tenant: string, by: string, name: string, domains: string[]): Promise<{ app: StoredRecord; secret: string }> {
    const secret = newSecret('bps_');
    const app = await this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', {
      t: 'createApp',
      name,
      domains: [...new Set(domains.map((x) => x.trim().toLowerCase()))],
      secretHash: digestSecret(secret),
      createdBy: by,
    } satisfies AccountsMsg);
    return { app, secret };
  }

  async createApiKey(
    tenant: string,
    caller: Principal,
    body: { name: string; roles?: string[]; expiresAt?: string },
  ): Promise<{ rec: StoredRecord; key: string }> {
    const owner = this.userById(tenant, caller.sub);
    if (!owner) throw unauthenticated('the account no longer exists');
    const held = (owner.data as UserData).roles ?? [];
    const roles = [...new Set(['User', ...(body.roles ?? held)])];
    const extra = roles.filter((r) => !held.includes(r));
    if (extra.length) throw appError('ERR_FORBIDDEN', `a key cannot carry roles its owner does not hold: ${extra.join(', ')}`);
    if (body.expiresAt && Date.parse(body.expiresAt) <= this.deps.clock.now()) throw appError('ERR_VALIDATION', 'body/expiresAt must be in the future');
    const key = newSecret('bpk_');
    const data: ApiKeyData = { name: body.name, keyHash: digestSecret(key), prefix: key.slice(0, 10), roles, ownerId: owner.sk, createdBy: caller.sub };
    if (body.expiresAt) data.expiresAt = new Date(body.expiresAt).toISOString();
    const rec = await this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', { t: 'createApiKey', data } satisfies AccountsMsg);
    return { rec, key };
  }

  /**
   * The x-api-key credential (spec: Authentication → Headers): looked up by its hash on every
   * request (an LMDB index read), so a deleted key is refused at once. It acts as its owner, with
   * the key's roles narrowed to those the owner still holds.
   */
  resolveApiKey(headers: Readonly<Record<string, string>>, tenant: string | undefined): Principal | undefined {
    const key = headers['x-api-key'];
    if (!key) return undefined;
    if (!tenant) throw unauthenticated('x-api-key must be sent with the orgid header');
    const rec = this.deps.store.scan(tenant, APIKEY, { 'data.keyHash': digestSecret(key.trim()) })[0];
    const d = rec?.data as unknown as ApiKeyData | undefined;
    if (!d) throw unauthenticated('the API key is not valid for this organisation');
    if (d.expiresAt && Date.parse(d.expiresAt) <= this.deps.clock.now()) throw unauthenticated('the API key has expired');
    const owner = this.userById(tenant, d.ownerId);
    const od = owner?.data as UserData | undefined;
    if (!owner || od?.status !== 'active') throw unauthenticated('the API key owner no longer has access');
    const roles = d.roles.filter((r) => (od.roles ?? []).includes(r));
    return { sub: owner.sk, org: tenant, roles, kind: 'staff', ...(od.email ? { email: od.email } : {}), via: 'api-key' };
  }

  // ---- housekeeping -------------------------------------------------------------------------

  /** Forgets expired challenges, magic codes and refresh families (every org). */
  async sweep(): Promise<number> {
    const { store } = this.deps;
    const now = this.deps.clock.now();
    const revocationLifeMs = (Math.max(this.deps.tokens.maxLifetimeSeconds, this.deps.config.auth.refreshTokenTtlSeconds) + 60) * 1000;
    const batch = new WriteBatch();
    for (const org of store.listOrgs()) {
      for (const { key, value } of store.listKv<Challenge>(org.orgId, NS.challenge)) {
        if (value.expiresAt < now) batch.deleteKv(org.orgId, NS.challenge, key);
      }
      for (const ns of [NS.magic, NS.reset, NS.verify]) {
        for (const { key, value } of store.listKv<{ expiresAt: number; issued: number[] }>(org.orgId, ns)) {
          if (value.expiresAt < now && value.issued.every((t) => t < now - CODE_TTL_MS)) batch.deleteKv(org.orgId, ns, key);
        }
      }
      for (const { key, value } of store.listKv<Family>(org.orgId, NS.family)) {
        if (value.expiresAt + 60_000 < now) batch.deleteKv(org.orgId, NS.family, key);
      }
      // Once every access and refresh token issued before a revocation has expired, the record
      // has nothing left to stop.
      for (const ns of [REVOKED_NS, REVOKED_SESSIONS_NS]) {
        for (const { key, value } of store.listKv<Revocation>(org.orgId, ns)) {
          if (value.at + revocationLifeMs < now) batch.deleteKv(org.orgId, ns, key);
        }
      }
      for (const { key, value } of store.listKv<DeviceEntry>(org.orgId, DEVICE_TOKEN_NS)) {
        if (!deviceEntryLive(value, now)) batch.deleteKv(org.orgId, DEVICE_TOKEN_NS, key);
      }
    }
    // Before device tokens, a client-chosen x-device-id selected the org: those entries mean nothing now.
    for (const { key } of store.listKv(GLOBAL_TENANT, NS.deviceOrg)) batch.deleteKv(GLOBAL_TENANT, NS.deviceOrg, key);
    const n = batch.size;
    if (n > 0) await store.commit(batch);
    return n;
  }
}

export function challengeMessage(method: TwoFactorMethod): string {
  switch (method) {
    case 'authenticator':
      return 'Enter the code from your authenticator app (or a backup code) at /profile/security/challenge/verify.';
    case 'sms':
      return 'A verification code was sent to your phone; post it to /profile/security/challenge/verify.';
    default:
      return 'A verification code was sent to your email address; post it to /profile/security/challenge/verify.';
  }
}
