// Password recovery: a code to the address (kind `password-reset`), then a new password. The
// answer to "forgot" is the same whether or not an account holds the address, and whether or not a
// code went out (the sends limit included), so it tells a stranger nothing. A reset sets the
// password of the accounts of that address in the organisation (staff and customer, or the one
// named), proves the address for them, and ends every session they had: a thief's stolen session
// ends when the owner resets. Codes are single-use, live 10 minutes, allow 5 guesses each; wrong
// guesses are also limited per address and per client address.
import { randomBytes } from 'node:crypto';
import { hashPassword, newNumericCode } from '../../core/auth/password.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import { codeHash } from './codes-actor.js';
import { type CodeMsg, type CodeReply, type ProofResult, RESET_ACTOR, SECURITY_ACTOR, type SecurityMsg } from './messages.js';
import { customersByEmail } from './email-proof.js';
import { SECURITY, normalizeEmail, type SecurityData, type SubjectKind } from './model.js';
import { CODE_KINDS } from './outbox-view.js';
import type { AccountLookup, Subject } from './account-lookup.js';
import type { ClientInfo } from './client-info.js';
import { sendCode } from './code-sender.js';
import type { AuthDeps } from './deps.js';
import type { EmailVerification } from './email-verification.js';
import type { FailureLimiter } from './limiter.js';

export const FORGOT_MESSAGE = 'If an account in this organisation uses this email, a reset code was sent to it; it expires in 10 minutes.';

export class PasswordRecovery {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
    private readonly limiter: FailureLimiter,
    private readonly verification: EmailVerification,
  ) {}

  /**
   * The accounts of `email` a reset applies to: the staff user, and the customer account (the
   * one holding credentials or a proof, else the oldest customer record of the address, which the
   * owner's reset turns into their account).
   */
  accountsOf(tenant: string, email: string, only?: SubjectKind): Subject[] {
    const out: Subject[] = [];
    if (only !== 'customer') {
      const staff = this.accounts.userByEmail(tenant, email);
      const s = staff ? this.accounts.subject(tenant, 'staff', staff.sk) : undefined;
      if (s) out.push(s);
    }
    if (only !== 'staff') {
      const all = customersByEmail(this.deps.store, tenant, email);
      const holder = (c: StoredRecord) => {
        const sec = this.deps.store.getRecord(tenant, SECURITY, c.sk)?.data as SecurityData | undefined;
        return !!(sec?.passwordHash || sec?.emailProven);
      };
      const rec = all.find(holder) ?? all[0];
      const s = rec ? this.accounts.subject(tenant, 'customer', rec.sk) : undefined;
      if (s) out.push(s);
    }
    return out;
  }

  async forgot(tenant: string, rawEmail: string, only: SubjectKind | undefined): Promise<{ message: string }> {
    const email = normalizeEmail(rawEmail);
    if (this.accountsOf(tenant, email, only).length === 0) return { message: FORGOT_MESSAGE };
    const code = newNumericCode(6);
    const salt = randomBytes(16).toString('base64url');
    const r = await this.deps.runtime.ask<CodeReply>(tenant, RESET_ACTOR, email, { type: 'issue', codeHash: codeHash(code, salt), salt } satisfies CodeMsg);
    // Past the sends limit nothing goes out, and the answer says so no more than for a stranger.
    if (r.status === 'issued') await sendCode(this.deps, tenant, 'email', email, code, CODE_KINDS.passwordReset, `address:${email}`);
    return { message: FORGOT_MESSAGE };
  }

  async reset(
    tenant: string,
    body: { email: string; code: string; newPassword: string; accountType?: SubjectKind },
    info: ClientInfo,
  ): Promise<{ reset: true; emailVerified: true; accounts: number }> {
    const email = normalizeEmail(body.email);
    // Charged like a password guess: per address at this client, per client, and a slow ceiling
    // per address from everywhere (limiter.ts).
    const attempt = this.limiter.attempt(`reset:${tenant}:${email}`, info.ip);
    attempt.check();
    const r = await this.deps.runtime.ask<CodeReply>(tenant, RESET_ACTOR, email, { type: 'redeem', code: body.code.trim() } satisfies CodeMsg);
    const accounts = r.status === 'ok' ? this.accountsOf(tenant, email, body.accountType) : [];
    if (accounts.length === 0) {
      attempt.fail();
      const rest = r.status === 'wrong' && r.attemptsLeft > 0 ? ` (${r.attemptsLeft} attempt${r.attemptsLeft === 1 ? '' : 's'} left)` : '';
      throw appError('ERR_BAD_REQUEST', `the email or code is not right, or the code has expired${rest}: ask for a new one at /profile/password/forgot`);
    }
    const hash = await hashPassword(body.newPassword);
    let revokedAt = 0;
    for (const s of accounts) {
      const msg: SecurityMsg = { type: 'resetPassword', hash, email, subjectType: s.kind === 'customer' ? 'customer' : 'user' };
      const done = await this.deps.runtime.ask<ProofResult>(tenant, SECURITY_ACTOR, s.rec.sk, msg);
      revokedAt = Math.max(revokedAt, done.revokedAt ?? 0);
      // A staff member's proof claims the customer records of the address (email-verification.ts).
      if (s.kind === 'staff') revokedAt = Math.max(revokedAt, (await this.verification.prove(tenant, s, false)) ?? 0);
    }
    attempt.succeed();
    await this.verification.pastRevocation(revokedAt);
    return { reset: true, emailVerified: true, accounts: accounts.length };
  }
}
