// Applications (spec: Tokens and refresh 3): registering one with its secret, and exchanging the
// secret for an access token.
import { digestSecret, newSecret, safeEqual } from '../../core/auth/password.js';
import { appError } from '../../core/errors.js';
import { isId } from '../../core/ids.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { AccountLookup } from './account-lookup.js';
import { ACCOUNTS, type AccountsMsg } from './messages.js';
import type { ClientInfo } from './client-info.js';
import type { AuthDeps } from './deps.js';
import type { FailureLimiter } from './limiter.js';
import { SYSTEM_GROUP, USER, isApp, publicApp, type PublicApp, type UserData } from './model.js';

export class AppTokens {
  constructor(
    private readonly deps: AuthDeps,
    private readonly accounts: AccountLookup,
    private readonly limiter: FailureLimiter,
  ) {}

  /** The organisation's applications, as listed (never their secrets). */
  list(tenant: string): PublicApp[] {
    return this.deps.store.scan(tenant, USER, { 'data.group': SYSTEM_GROUP }).filter(isApp).map(publicApp);
  }

  /** Application token exchange (spec: Tokens and refresh 3). A legacy `key` field is ignored. */
  async exchange(tenant: string, appId: string, secret: string, domain: string | undefined, info: ClientInfo): Promise<{ token: string; tokenType: 'Bearer'; expiresIn: number; appId: string }> {
    const attempt = this.limiter.attempt(`app:${tenant}:${appId}`, info.ip);
    attempt.check();
    const rec = isId(appId) ? this.deps.store.getRecord(tenant, USER, appId) : undefined;
    const hash = rec && isApp(rec) ? this.accounts.security(tenant, rec.sk)?.secretHash : undefined;
    if (!rec || !hash || !safeEqual(digestSecret(secret), hash)) {
      attempt.fail();
      throw appError('ERR_UNAUTHENTICATED', 'the application id or secret is not right');
    }
    const d = rec.data as UserData;
    if (d.status !== 'active') throw appError('ERR_UNAUTHENTICATED', 'this application is revoked');
    const domains = d.domains ?? [];
    if (domains.length > 0 && !(domain && domains.includes(domain.trim().toLowerCase()))) {
      throw appError('ERR_FORBIDDEN', 'domain is not one of the domains registered for this application');
    }
    attempt.succeed();
    const token = this.deps.tokens.signAccess({ sub: rec.sk, org: tenant, roles: [SYSTEM_GROUP], kind: 'app' });
    return { token, tokenType: 'Bearer', expiresIn: this.deps.config.auth.accessTokenTtlSeconds, appId: rec.sk };
  }

  async register(tenant: string, by: string, name: string, domains: string[]): Promise<{ app: StoredRecord; secret: string }> {
    const secret = newSecret('bps_');
    const app = await this.deps.runtime.ask<StoredRecord>(tenant, ACCOUNTS, 'staff', {
      type: 'createApp',
      name,
      domains: [...new Set(domains.map((x) => x.trim().toLowerCase()))],
      secretHash: digestSecret(secret),
      createdBy: by,
    } satisfies AccountsMsg);
    return { app, secret };
  }
}
