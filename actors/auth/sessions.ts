// Sessions: a sign-in starts a refresh-token family and answers the token pair; refresh rotates it
// (spec: Tokens and refresh); sign-out revokes it.
import { randomUUID } from 'node:crypto';
import { REVOKED_NS, type Revocation } from '../../core/auth/revocations.js';
import type { Principal } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { AccountLookup, Subject } from './account-lookup.js';
import type { ClientInfo } from './client-info.js';
import type { AuthDeps } from './deps.js';
import { ACCOUNTS, type AccountsMsg, type Family, REFRESH_ACTOR, type RefreshMsg, type RefreshReply } from './messages.js';
import { NS, type PublicUser, type SubjectKind, type UserData } from './model.js';

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

export class Sessions {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
  ) {}

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
      user: this.accounts.publicOf(tenant, s),
    };
  }

  private refreshExpiry(): number {
    return this.deps.clock.now() + this.deps.config.auth.refreshTokenTtlSeconds * 1000;
  }

  /** Starts a token family and answers the pair. Records the org use and, for staff, the device's token. */
  async issue(tenant: string, s: Subject, info: ClientInfo): Promise<SessionAnswer> {
    const fam = randomUUID();
    const { token: refreshToken, jti } = this.deps.tokens.signRefresh({ sub: s.rec.sk, org: tenant, kind: s.kind, fam });
    const start: RefreshMsg = { type: 'start', sub: s.rec.sk, kind: s.kind, jti, expiresAt: this.refreshExpiry() };
    await this.deps.runtime.ask(tenant, REFRESH_ACTOR, fam, start);
    const deviceToken = await this.noteSignIn(tenant, s, info);
    const answer = this.answer(tenant, s, fam, refreshToken);
    return deviceToken ? { ...answer, deviceToken } : answer;
  }

  /**
   * Records a staff sign-in: the org directory's last use, and the device token (device-token.ts),
   * by the organisation's staff accounts actor, which also writes the directory entry when it
   * creates or deletes the user.
   */
  private async noteSignIn(tenant: string, s: Subject, info: ClientInfo): Promise<string | undefined> {
    if (s.kind !== 'staff') return undefined;
    const msg: AccountsMsg = { type: 'noteSignIn', userId: s.rec.sk };
    const email = (s.rec.data as UserData).email;
    if (email) msg.email = email;
    if (info.deviceToken !== undefined) msg.deviceToken = info.deviceToken;
    const r = await this.deps.runtime.ask<{ deviceToken: string }>(tenant, ACCOUNTS, 'staff', msg);
    return r.deviceToken;
  }

  /** Rotates a refresh token (spec: Tokens and refresh). Reuse of a rotated token revokes the family. */
  async refresh(token: string, kind: SubjectKind, headerTenant: string): Promise<SessionAnswer> {
    const c = this.deps.tokens.verifyRefresh(token);
    if (c.kind !== kind) {
      throw appError('ERR_UNAUTHENTICATED', `this is a ${c.kind} refresh token; use /profile/${c.kind === 'staff' ? 'user' : 'customer'}/refresh`);
    }
    if (headerTenant && headerTenant !== c.org) throw appError('ERR_WRONG_ORG', headerTenant);
    if (!this.deps.store.getOrg(c.org)) throw appError('ERR_UNAUTHENTICATED', 'the organisation no longer exists');
    const s = this.accounts.subject(c.org, kind, c.sub);
    if (!s) {
      await this.deps.runtime.ask(c.org, REFRESH_ACTOR, c.fam, { type: 'revoke', reason: 'account gone' } satisfies RefreshMsg);
      throw appError('ERR_UNAUTHENTICATED', 'the account no longer exists or is disabled; sign in again');
    }
    const revokedAt = this.deps.store.getKv<Revocation>(c.org, REVOKED_NS, c.sub)?.at;
    const fam = revokedAt === undefined ? undefined : this.family(c.org, c.fam);
    if (revokedAt !== undefined && (!fam || fam.createdAt <= revokedAt)) {
      // Signed in before the account was disabled (and since re-enabled): that session stays ended.
      await this.deps.runtime.ask(c.org, REFRESH_ACTOR, c.fam, { type: 'revoke', reason: 'account access revoked' } satisfies RefreshMsg);
      throw appError('ERR_UNAUTHENTICATED', 'access for this account was revoked after this session began; sign in again');
    }
    const newJti = randomUUID();
    const r = await this.deps.runtime.ask<RefreshReply>(c.org, REFRESH_ACTOR, c.fam, {
      type: 'rotate',
      jti: c.jti,
      newJti,
      expiresAt: this.refreshExpiry(),
    } satisfies RefreshMsg);
    if (r.status === 'reuse') throw appError('ERR_UNAUTHENTICATED', 'this refresh token was already used; the session is revoked, sign in again');
    if (r.status !== 'ok') throw appError('ERR_UNAUTHENTICATED', 'the session is revoked or unknown; sign in again');
    const { token: refreshToken } = this.deps.tokens.signRefresh({ sub: c.sub, org: c.org, kind, fam: c.fam, jti: newJti });
    return this.answer(c.org, s, c.fam, refreshToken);
  }

  /** Ends a session: its refresh family is revoked, and with it the session's access tokens (refresh-actor.ts). */
  async revokeFamily(tenant: string, fam: string, reason: string): Promise<void> {
    await this.deps.runtime.ask(tenant, REFRESH_ACTOR, fam, { type: 'revoke', reason } satisfies RefreshMsg);
  }

  family(tenant: string, fam: string): Family | undefined {
    return this.deps.store.getKv<Family>(tenant, NS.family, fam);
  }
}
