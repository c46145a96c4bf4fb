// Proving an account's email: a 6-digit code sent to the address (kind `verify-email`), redeemed
// with the account's own token; a magic-code sign-in and a password reset prove it too. What a
// proof changes beyond the account's own flag:
//
// - Proven by a code that arrived without the account's password (a magic code, a reset), on an
//   account someone set up with credentials before proving the address: those credentials were
//   the typist's, not necessarily the owner's (account pre-hijacking). They go, with every
//   session of the account; the owner sets a password through the reset. Staff accounts an Admin
//   made are the organisation's doing and keep their password.
// - A staff member proving their address claims the customer records of it (the spec keeps staff
//   2FA on the customer record of the same email): an unproven customer account holding that
//   address loses what its typist set, so a stranger's sign-up can never hold a staff member's 2FA.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import type { Principal } from '../../core/auth/tokens.js';
import { newNumericCode } from '../../core/auth/password.js';
import { AppError, appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import { codeHash } from './codes-actor.js';
import { type CodeMsg, type CodeReply, type ProofResult, SECURITY_ACTOR, type SecurityMsg, VERIFY_ACTOR } from './messages.js';
import { accountRecord, customersByEmail, recordProven } from './email-proof.js';
import { ADDRESS_RULE, type FailureLimiter } from './limiter.js';
import { normalizeEmail, type SubjectKind } from './model.js';
import { CODE_KINDS, accountOf } from './outbox-view.js';
import type { AccountLookup, Subject } from './account-lookup.js';
import type { ClientInfo } from './client-info.js';
import { sendCode } from './code-sender.js';
import type { AuthDeps } from './deps.js';

export interface VerificationSent {
  sent: boolean;
  emailVerified: boolean;
  message: string;
}

function emailOf(rec: StoredRecord): string {
  return normalizeEmail(String(rec.data.email ?? ''));
}

export class EmailVerification {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
    private readonly limiter: FailureLimiter,
  ) {}

  private subjectOf(tenant: string, p: Principal): Subject {
    const rec = accountRecord(this.deps.store, tenant, p);
    const kind: SubjectKind = p.kind === 'customer' ? 'customer' : 'staff';
    const s = rec ? this.accounts.subject(tenant, kind, rec.sk) : undefined;
    if (!s) throw appError('ERR_UNAUTHENTICATED', 'the account no longer exists or is disabled; sign in again');
    if (!emailOf(s.rec)) throw appError('ERR_BAD_REQUEST', 'this account has no email address to verify');
    return s;
  }

  proven(tenant: string, s: Subject): boolean {
    return recordProven(this.deps.store, tenant, s.rec);
  }

  /** The code actor's key: the account and the address, so a code dies with an address change. */
  private codeKey(s: Subject): string {
    return `${accountOf(s.kind, s.rec.sk)}:${emailOf(s.rec)}`;
  }

  /** Sends a verification code to the caller's own address (at most 5 per 10 minutes: 429 past that). */
  async send(tenant: string, p: Principal): Promise<VerificationSent> {
    return this.sendFor(tenant, this.subjectOf(tenant, p));
  }

  async sendFor(tenant: string, s: Subject): Promise<VerificationSent> {
    const email = emailOf(s.rec);
    if (this.proven(tenant, s)) return { sent: false, emailVerified: true, message: `${email} is already verified` };
    const code = newNumericCode(6);
    const salt = randomBytes(16).toString('base64url');
    const msg: CodeMsg = { type: 'issue', sub: s.rec.sk, kind: s.kind, codeHash: codeHash(code, salt), salt };
    const r = await this.deps.runtime.ask<CodeReply>(tenant, VERIFY_ACTOR, this.codeKey(s), msg);
    if (r.status === 'limit') {
      throw new AppError('ERR_RATE_LIMITED', [r.retryAfterSeconds], { headers: { 'retry-after': String(r.retryAfterSeconds) } });
    }
    await sendCode(this.deps, tenant, 'email', email, code, CODE_KINDS.verifyEmail, accountOf(s.kind, s.rec.sk));
    return { sent: true, emailVerified: false, message: `A verification code was sent to ${email}; post it to /profile/customer/verify-email within 10 minutes.` };
  }

  /** Redeems the code sent to the caller's address: the address is proven for this account. */
  async verify(tenant: string, p: Principal, code: string, info: ClientInfo): Promise<{ emailVerified: true }> {
    const s = this.subjectOf(tenant, p);
    if (this.proven(tenant, s)) return { emailVerified: true };
    const addr = `ip:${info.ip}`;
    this.limiter.check([addr]);
    const r = await this.deps.runtime.ask<CodeReply>(tenant, VERIFY_ACTOR, this.codeKey(s), { type: 'redeem', code: code.trim() } satisfies CodeMsg);
    if (r.status === 'wrong') {
      this.limiter.fail(addr, ADDRESS_RULE);
      const rest = r.attemptsLeft > 0 ? `${r.attemptsLeft} attempt${r.attemptsLeft === 1 ? '' : 's'} left` : 'no attempts left; send a new code';
      throw appError('ERR_BAD_REQUEST', `the code is not right (${rest})`);
    }
    if (r.status !== 'ok' || r.sub !== s.rec.sk) {
      throw appError('ERR_BAD_REQUEST', 'no verification code is pending for this address, or it expired: send a new one (/profile/customer/verify-email/send)');
    }
    // The caller holds the account's session and the code from the inbox: both are the owner's.
    await this.prove(tenant, s, false);
    return { emailVerified: true };
  }

  /**
   * Records that `s` proved its address. `takeOver`: the proof came without the account's own
   * credentials (a magic code, a reset), so credentials set before it are dropped. Answers when
   * earlier sessions were revoked, if they were.
   */
  async prove(tenant: string, s: Subject, takeOver: boolean): Promise<number | undefined> {
    const email = emailOf(s.rec);
    const ask = (sk: string, msg: SecurityMsg) => this.deps.runtime.ask<ProofResult>(tenant, SECURITY_ACTOR, sk, msg);
    const subjectType = s.kind === 'customer' ? 'customer' : 'user';
    // A staff account an Admin made was set up by the organisation, not by a stranger who typed
    // the address: its password stays (the founder's own sign-up is typed like a customer's).
    const adminMade = s.kind === 'staff' && typeof s.rec.data.createdBy === 'string';
    const r = await ask(s.rec.sk, { type: 'proveEmail', email, subjectType, takeOver: takeOver && !adminMade });
    let revokedAt = r.revokedAt;
    if (s.kind === 'staff') {
      for (const c of customersByEmail(this.deps.store, tenant, email)) {
        if (recordProven(this.deps.store, tenant, c)) continue;
        const cr = await ask(c.sk, { type: 'proveEmail', email, subjectType: 'customer', takeOver: true });
        if (cr.revokedAt !== undefined) revokedAt = Math.max(revokedAt ?? 0, cr.revokedAt);
      }
    }
    if (r.tookOver) this.deps.logger.info({ orgId: tenant, account: accountOf(s.kind, s.rec.sk) }, 'address proven by its owner: earlier credentials and sessions ended');
    return revokedAt;
  }

  /**
   * Revocations cover tokens issued in the same whole second (tokens carry seconds): a session
   * issued right after one would be refused. Waits for the next second (at most one).
   */
  async pastRevocation(revokedAt: number | undefined): Promise<void> {
    if (revokedAt === undefined) return;
    const wait = (Math.floor(revokedAt / 1000) + 1) * 1000 - this.deps.clock.now();
    if (wait > 0 && wait <= 1000) await sleep(wait);
  }
}
