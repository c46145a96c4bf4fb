// Magic-code sign-in (spec: Sign-in sequence 7): a code to the account's inbox, exchanged for
// tokens. Redeeming it proves the address (email-verification.ts).
import { randomBytes } from 'node:crypto';
import { newNumericCode } from '../../core/auth/password.js';
import { AppError, appError } from '../../core/errors.js';
import type { AccountLookup } from './account-lookup.js';
import type { ChallengeAnswer, SignInChallenges } from './challenges.js';
import type { ClientInfo } from './client-info.js';
import { sendCode } from './code-sender.js';
import { codeHash } from './codes-actor.js';
import { MAGIC_ACTOR, type MagicMsg, type MagicReply } from './messages.js';
import type { AuthDeps } from './deps.js';
import type { EmailVerification } from './email-verification.js';
import { ADDRESS_RULE, type FailureLimiter } from './limiter.js';
import { normalizeEmail } from './model.js';
import { securitySettingsOf } from './org-settings-actor.js';
import { CODE_KINDS, accountOf } from './outbox-view.js';
import type { SessionAnswer, Sessions } from './sessions.js';

export class MagicCodes {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
    private readonly sessions: Sessions,
    private readonly challenges: SignInChallenges,
    private readonly verification: EmailVerification,
    private readonly limiter: FailureLimiter,
  ) {}

  /** Sends a sign-in code when the email has an account (staff first, else customer); silent otherwise. */
  async issue(tenant: string, rawEmail: string): Promise<void> {
    const email = normalizeEmail(rawEmail);
    const staff = this.accounts.userByEmail(tenant, email);
    const customer = staff ? undefined : this.accounts.customerByEmail(tenant, email);
    const s = staff ? this.accounts.subject(tenant, 'staff', staff.sk) : customer ? this.accounts.subject(tenant, 'customer', customer.sk) : undefined;
    if (!s) return;
    const code = newNumericCode(6);
    const salt = randomBytes(16).toString('base64url');
    const r = await this.deps.runtime.ask<MagicReply>(tenant, MAGIC_ACTOR, email, {
      type: 'issue',
      sub: s.rec.sk,
      kind: s.kind,
      codeHash: codeHash(code, salt),
      salt,
    } satisfies MagicMsg);
    if (r.status === 'limit') {
      throw new AppError('ERR_RATE_LIMITED', [r.retryAfterSeconds], { headers: { 'retry-after': String(r.retryAfterSeconds) } });
    }
    await sendCode(this.deps, tenant, 'email', email, code, CODE_KINDS.magic, accountOf(s.kind, s.rec.sk));
  }

  /**
   * Exchanges a magic code for tokens, or for a challenge when two-factor is due (org-wide, or the
   * person enrolled). The spec (Sign-in sequence 7) skips 2FA here, but a code to the inbox is one
   * factor: skipping the second would make the magic code a way around an org's 2FA (issue 17).
   * The new-device check is skipped: the code already proved the inbox it would send to.
   */
  async redeem(tenant: string, rawEmail: string, code: string, info: ClientInfo): Promise<SessionAnswer | ChallengeAnswer> {
    const email = normalizeEmail(rawEmail);
    const addr = `ip:${info.ip}`;
    this.limiter.check([addr]);
    const r = await this.deps.runtime.ask<MagicReply>(tenant, MAGIC_ACTOR, email, { type: 'redeem', code: code.trim() } satisfies MagicMsg);
    const s = r.status === 'ok' && r.kind && r.sub ? this.accounts.subject(tenant, r.kind, r.sub) : undefined;
    if (!s) {
      this.limiter.fail(addr, ADDRESS_RULE);
      throw appError('ERR_UNAUTHENTICATED', 'the email or code is not right, or the code has expired');
    }
    // The code came from the inbox without the account's password: the address is proven, and
    // credentials someone set before that proof stop working (email-verification.ts).
    await this.verification.pastRevocation(await this.verification.prove(tenant, s, true));
    // The spec (Sign-in sequence 7) has no 2FA on this path; an organisation that counts the
    // inbox as one factor only turns on requireTwoFactorForMagicCode.
    if (!securitySettingsOf(this.accounts.org(tenant)).requireTwoFactorForMagicCode) return this.sessions.issue(tenant, s, info);
    return (await this.challenges.ifDue(tenant, s, info, { inboxProven: true })) ?? this.sessions.issue(tenant, s, info);
  }
}
