// Password sign-in (with its challenge when one is due) and changing one's own password.
import { hashPassword, verifyPassword } from '../../core/auth/password.js';
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { AccountLookup } from './account-lookup.js';
import type { ChallengeAnswer, SignInChallenges } from './challenges.js';
import type { ClientInfo } from './client-info.js';
import type { AuthDeps } from './deps.js';
import type { FailureLimiter } from './limiter.js';
import { normalizeEmail, type SubjectKind, type UserData } from './model.js';
import { SECURITY_ACTOR, type SecurityMsg } from './messages.js';
import type { SessionAnswer, Sessions } from './sessions.js';

const BAD_CREDENTIALS = 'the email or password is not right';

export class Passwords {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
    private readonly sessions: Sessions,
    private readonly challenges: SignInChallenges,
    private readonly limiter: FailureLimiter,
  ) {}

  async signIn(tenant: string, kind: SubjectKind, rawEmail: string, password: string, info: ClientInfo): Promise<SessionAnswer | ChallengeAnswer> {
    const email = normalizeEmail(rawEmail);
    const attempt = this.limiter.attempt(`pw:${tenant}:${kind}:${email}`, info.ip);
    attempt.check();
    const rec = kind === 'staff' ? this.accounts.userByEmail(tenant, email) : this.accounts.customerByEmail(tenant, email);
    const ok = await verifyPassword(password, rec ? this.accounts.security(tenant, rec.sk)?.passwordHash : undefined);
    const s = ok && rec ? this.accounts.subject(tenant, kind, rec.sk) : undefined;
    if (!s) {
      attempt.fail();
      throw appError('ERR_UNAUTHENTICATED', BAD_CREDENTIALS);
    }
    attempt.succeed();
    return (await this.challenges.ifDue(tenant, s, info)) ?? this.sessions.issue(tenant, s, info);
  }

  /**
   * Changes the caller's password after checking the current one (failures count toward the
   * account's slow-down like sign-in failures). Other sessions keep running until they expire.
   */
  async change(tenant: string, p: Principal, current: string, next: string, info: ClientInfo): Promise<void> {
    const kind: SubjectKind = p.kind === 'customer' ? 'customer' : 'staff';
    const s = this.accounts.subject(tenant, kind, p.sub);
    if (!s) throw appError('ERR_UNAUTHENTICATED', 'the account no longer exists or is disabled; sign in again');
    const email = normalizeEmail(String((s.rec.data as UserData).email ?? ''));
    const attempt = this.limiter.attempt(`pw:${tenant}:${kind}:${email}`, info.ip);
    attempt.check();
    if (!(await verifyPassword(current, this.accounts.security(tenant, s.rec.sk)?.passwordHash))) {
      attempt.fail();
      throw appError('ERR_BAD_REQUEST', 'the current password is not right');
    }
    const hash = await hashPassword(next);
    const msg: SecurityMsg = { type: 'setPassword', hash, subjectType: kind === 'customer' ? 'customer' : 'user' };
    await this.deps.runtime.ask(tenant, SECURITY_ACTOR, s.rec.sk, msg);
  }
}
