// Sign-in challenges (spec: Sign-in sequence 5): when 2FA or a new-device check is due, a sign-in
// answers a challenge token instead of tokens, and the code sent (or the authenticator's) redeems it.
import { randomBytes } from 'node:crypto';
import { digestSecret, newNumericCode } from '../../core/auth/password.js';
import { AppError, appError } from '../../core/errors.js';
import type { AccountLookup, Subject } from './account-lookup.js';
import type { ClientInfo } from './client-info.js';
import { sendCode } from './code-sender.js';
import { CODE_TTL_MS, codeHash } from './codes-actor.js';
import { type Challenge, CHALLENGE_ACTOR, type ChallengeMsg, type ChallengeReply, TRUSTED_DEVICES_ACTOR, type TrustedDevicesMsg } from './messages.js';
import type { AuthDeps } from './deps.js';
import { provenCustomerByEmail } from './email-proof.js';
import { ADDRESS_RULE, type FailureLimiter } from './limiter.js';
import { NS, type CustomerData, type TwoFactorMethod, type UserData } from './model.js';
import { securitySettingsOf } from './org-settings-actor.js';
import { CODE_KINDS, accountOf } from './outbox-view.js';
import type { SessionAnswer, Sessions } from './sessions.js';

/** The spec's challenge answer: no tokens, exactly these four fields. */
export interface ChallengeAnswer {
  requiresTwoFactor: true;
  challengeToken: string;
  twoFactorMethod: TwoFactorMethod;
  message: string;
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

export class SignInChallenges {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
    private readonly sessions: Sessions,
    private readonly limiter: FailureLimiter,
  ) {}

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
  async ifDue(tenant: string, s: Subject, info: ClientInfo, opts: { inboxProven?: boolean } = {}): Promise<ChallengeAnswer | undefined> {
    const settings = securitySettingsOf(this.deps.store.getOrg(tenant));
    const data = s.rec.data as UserData;
    const email = data.email ?? '';
    const person = s.kind === 'customer' ? s.rec : email ? provenCustomerByEmail(this.deps.store, tenant, email) : undefined;
    const psec = person ? this.accounts.security(tenant, person.sk) : undefined;
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
    await this.deps.runtime.ask(tenant, CHALLENGE_ACTOR, digestSecret(id, 'challenge'), { type: 'create', ch } satisfies ChallengeMsg);
    if (code) await sendCode(this.deps, tenant, method, ch.to!, code, CODE_KINDS.twoFactor, accountOf(s.kind, s.rec.sk));
    return { requiresTwoFactor: true, challengeToken: `${tenant}.${id}`, twoFactorMethod: method, message: challengeMessage(method) };
  }

  private parse(token: string, headerTenant: string): { tenant: string; key: string } {
    const dot = token.indexOf('.');
    const tenant = dot > 0 ? token.slice(0, dot) : '';
    const id = token.slice(dot + 1);
    if (!tenant || id.length < 20 || !this.deps.store.getOrg(tenant)) {
      throw appError('ERR_UNAUTHENTICATED', 'the challenge token is not valid; sign in again');
    }
    if (headerTenant && headerTenant !== tenant) throw appError('ERR_WRONG_ORG', headerTenant);
    return { tenant, key: digestSecret(id, 'challenge') };
  }

  async verify(token: string, code: string, trustDevice: boolean, headerTenant: string, info: ClientInfo): Promise<SessionAnswer> {
    const { tenant, key } = this.parse(token, headerTenant);
    const addr = `ip:${info.ip}`;
    this.limiter.check([addr]);
    const r = await this.deps.runtime.ask<ChallengeReply>(tenant, CHALLENGE_ACTOR, key, { type: 'verify', code: code.trim() } satisfies ChallengeMsg);
    if (r.status === 'wrong') {
      this.limiter.fail(addr, ADDRESS_RULE);
      const rest = r.attemptsLeft > 0 ? `${r.attemptsLeft} attempt${r.attemptsLeft === 1 ? '' : 's'} left` : 'no attempts left; sign in again';
      throw appError('ERR_BAD_REQUEST', `the code is not right (${rest})`);
    }
    if (r.status !== 'ok') throw appError('ERR_UNAUTHENTICATED', 'the challenge has expired or ended; sign in again');
    const ch = r.ch;
    const s = this.accounts.subject(tenant, ch.kind, ch.sub);
    if (!s) throw appError('ERR_UNAUTHENTICATED', 'the account no longer exists or is disabled');
    const device = ch.device ?? info.device;
    if (trustDevice && device && ch.email) {
      const msg: TrustedDevicesMsg = { type: 'trust', device };
      if (info.deviceLabel) msg.label = info.deviceLabel;
      await this.deps.runtime.ask(tenant, TRUSTED_DEVICES_ACTOR, ch.email, msg);
    }
    return this.sessions.issue(tenant, s, { ...info, device });
  }

  async send(token: string, headerTenant: string): Promise<{ sent: boolean; twoFactorMethod: TwoFactorMethod; message: string }> {
    const { tenant, key } = this.parse(token, headerTenant);
    const code = newNumericCode(6);
    const salt = randomBytes(16).toString('base64url');
    const r = await this.deps.runtime.ask<ChallengeReply>(tenant, CHALLENGE_ACTOR, key, {
      type: 'resend',
      codeHash: codeHash(code, salt),
      salt,
    } satisfies ChallengeMsg);
    if (r.status === 'not-sendable') {
      throw appError('ERR_BAD_REQUEST', 'authenticator codes are not sent: use the code shown by your authenticator app, or a backup code');
    }
    if (r.status === 'limit') {
      throw new AppError('ERR_RATE_LIMITED', [60], { headers: { 'retry-after': '60' } });
    }
    if (r.status !== 'ok') throw appError('ERR_UNAUTHENTICATED', 'the challenge has expired or ended; sign in again');
    await sendCode(this.deps, tenant, r.ch.method, r.ch.to ?? r.ch.email, code, CODE_KINDS.twoFactor, accountOf(r.ch.kind, r.ch.sub));
    return { sent: true, twoFactorMethod: r.ch.method, message: challengeMessage(r.ch.method) };
  }
}
