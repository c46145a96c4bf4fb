// Access and refresh tokens: HS256 JWTs (jsonwebtoken), verified with the algorithm pinned so
// `alg: none` and key-confusion tokens are refused. Verified access tokens are cached (LRU, bounded)
// so the hot path verifies a given token once; the cache never outlives the token's `exp`.
import jwt from 'jsonwebtoken';
import { randomUUID } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import { AppError } from '../errors.js';

export type PrincipalKind = 'staff' | 'customer' | 'app';

export interface Principal {
  /** Subject: the user, customer or application id. */
  sub: string;
  /** The organisation (tenant) the token was issued for. */
  org: string;
  roles: string[];
  kind: PrincipalKind;
  email?: string;
  /** Seconds since the epoch. */
  exp?: number;
  /** How the caller proved who it is. */
  via?: 'jwt' | 'api-key';
  /**
   * Set when a customer's request was relayed by an application (an app token in Authorization
   * and the customer's token in x-client-authorization): the application's id. The principal
   * itself is then the customer.
   */
  app?: string;
  /** The customer record id of a customer principal. */
  customerId?: string;
  /** Session or device the token was issued to. */
  sid?: string;
}

export interface RefreshClaims {
  sub: string;
  org: string;
  kind: PrincipalKind;
  /** Token id: each refresh token is used once. */
  jti: string;
  /** Family: every token rotated from one sign-in shares it, so reuse can revoke them all. */
  fam: string;
  exp?: number;
}

export interface TokenOptions {
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
  cacheSize: number;
  clock?: Clock;
  issuer?: string;
}

const ALG = 'HS256';

export class TokenService {
  private readonly cache = new Map<string, Principal>();
  private readonly clock: Clock;
  private readonly issuer: string;

  constructor(
    private readonly secret: string,
    private readonly opts: TokenOptions,
  ) {
    this.clock = opts.clock ?? systemClock;
    this.issuer = opts.issuer ?? 'business-platform';
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  signAccess(p: Omit<Principal, 'exp' | 'via'>, ttlSeconds = this.opts.accessTtlSeconds): string {
    const { sub, app: _a, ...rest } = p;
    const now = this.nowSeconds();
    return jwt.sign({ ...rest, typ: 'access', iat: now, exp: now + ttlSeconds }, this.secret, {
      algorithm: ALG,
      subject: sub,
      issuer: this.issuer,
    });
  }

  signRefresh(c: Omit<RefreshClaims, 'jti' | 'exp'> & { jti?: string }): { token: string; jti: string } {
    const jti = c.jti ?? randomUUID();
    const now = this.nowSeconds();
    const token = jwt.sign(
      { org: c.org, kind: c.kind, fam: c.fam, typ: 'refresh', iat: now, exp: now + this.opts.refreshTtlSeconds },
      this.secret,
      { algorithm: ALG, subject: c.sub, issuer: this.issuer, jwtid: jti },
    );
    return { token, jti };
  }

  private decode(token: string, typ: 'access' | 'refresh'): Record<string, unknown> {
    let claims: Record<string, unknown>;
    try {
      claims = jwt.verify(token, this.secret, {
        algorithms: [ALG],
        issuer: this.issuer,
        clockTimestamp: this.nowSeconds(),
      }) as Record<string, unknown>;
    } catch (cause) {
      throw new AppError('ERR_TOKEN_INVALID', [], { cause });
    }
    if (claims.typ !== typ || typeof claims.sub !== 'string' || typeof claims.org !== 'string') {
      throw new AppError('ERR_TOKEN_INVALID');
    }
    return claims;
  }

  /** Verifies an access token (cached). Throws ERR_TOKEN_INVALID (401). */
  verifyAccess(token: string): Principal {
    const hit = this.cache.get(token);
    if (hit) {
      if ((hit.exp ?? 0) > this.nowSeconds()) {
        // Refresh its place in the LRU order.
        this.cache.delete(token);
        this.cache.set(token, hit);
        return hit;
      }
      this.cache.delete(token);
    }
    const c = this.decode(token, 'access');
    const { typ: _t, iat: _i, iss: _s, ...rest } = c;
    const p = { ...rest, roles: Array.isArray(c.roles) ? (c.roles as string[]) : [], via: 'jwt' } as Principal;
    if (p.kind !== 'staff' && p.kind !== 'customer' && p.kind !== 'app') throw new AppError('ERR_TOKEN_INVALID');
    Object.freeze(p.roles);
    Object.freeze(p);
    if (this.opts.cacheSize > 0) {
      if (this.cache.size >= this.opts.cacheSize) this.cache.delete(this.cache.keys().next().value as string);
      this.cache.set(token, p);
    }
    return p;
  }

  verifyRefresh(token: string): RefreshClaims {
    const c = this.decode(token, 'refresh');
    if (typeof c.jti !== 'string' || typeof c.fam !== 'string') throw new AppError('ERR_TOKEN_INVALID');
    return { sub: c.sub as string, org: c.org as string, kind: c.kind as PrincipalKind, jti: c.jti, fam: c.fam, exp: c.exp as number };
  }

  /** Drops cached verifications (for example after a credential is revoked). */
  forget(token?: string): void {
    if (token) this.cache.delete(token);
    else this.cache.clear();
  }
}
