// Access and refresh tokens: HS256 JWTs (jsonwebtoken), verified with the algorithm pinned so
// `alg: none` and key-confusion tokens are refused. Verified access tokens are cached (the recently used, bounded)
// so the hot path verifies a given token once; the cache never outlives the token's `exp`.
// Every verification, cached or not, also asks the revocation records (a kv read for the subject,
// one for the session), so a deleted or disabled account's tokens, and a signed-out session's, stop
// on the next request. A token must say when it was issued and
// when it expires, and may not live longer than this service issues tokens for (plus a small clock
// skew): otherwise one leaked token, or one signed by a tool with the secret, would work forever
// and outlive any revocation record.
import jwt from 'jsonwebtoken';
import { createSecretKey, randomUUID, type KeyObject } from 'node:crypto';
import { systemClock, type Clock } from '../clock.js';
import { AppError } from '../errors.js';
import { issuedBefore, type RevocationCheck } from './revocations.js';

/**
 * `device`: an enrolled door scanner (actors/devices). It is never a JWT (principalOf refuses the
 * kind): only the device credential resolver makes one, and only routes that declare `device`
 * (edge/route.ts) let it in.
 */
export type PrincipalKind = 'staff' | 'customer' | 'app' | 'device';

/** What an enrolled scanner device may scan at, and what its scans are stamped with. */
export interface DeviceScope {
  /** The device id (also the principal's `sub`): every scan it makes carries it. */
  id: string;
  /** The events it may scan at; null: every event of the organisation. */
  eventIds: readonly string[] | null;
  /** The check-in list its scans use unless they name another of its events' lists. */
  listId?: string;
  /** The checkpoint its scans carry unless they name one. */
  checkpoint?: string;
}

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
  /** Issued at, seconds since the epoch (access tokens always carry it). */
  iat?: number;
  /** How the caller proved who it is. */
  via?: 'jwt' | 'api-key' | 'device-token';
  /**
   * Set when a customer's request was relayed by an application (an app token in Authorization
   * and the customer's token in x-client-authorization): the application's id. The principal
   * itself is then the customer.
   */
  app?: string;
  /** The customer record id of a customer principal. */
  customerId?: string;
  /** The session (refresh family) the token was issued to; signing out ends it (revocations.ts). */
  sid?: string;
  /** Set on a `device` principal only: its scope and stamp. */
  device?: DeviceScope;
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
  /** Consulted on every verification; without it nothing is ever revoked (tools, tests). */
  revocations?: RevocationCheck;
  /** Clock skew allowed on `iat` and on a token's lifetime (default 30 s). */
  skewSeconds?: number;
}

/** Why a correctly signed access token is still refused. */
function refused(why: string): AppError {
  return new AppError('ERR_TOKEN_REFUSED', [why]);
}

const ALG = 'HS256';

/** A JWT's signature part (the whole string when it has no dot: it is then never verified anyway). */
function signatureOf(token: string): string {
  return token.slice(token.lastIndexOf('.') + 1);
}

interface CachedToken {
  token: string;
  principal: Principal;
}

export class TokenService {
  /**
   * Verified access tokens by signature (the token's last part), holding the whole token to compare:
   * a map hashes its key on every request, and the signature is a sixth of the token. Kept in two
   * generations of at most half the cache size each: a hit in the older one is copied to the newer,
   * and when the newer is full it becomes the older and the older is dropped. The recently used
   * stay, as in an LRU, without reordering a map on every hit: deleting and setting again in a
   * V8 Map costs in proportion to its size (~30 µs per request with 10,000 tokens cached).
   */
  private young = new Map<string, CachedToken>();
  private old = new Map<string, CachedToken>();
  private readonly clock: Clock;
  private readonly issuer: string;

  /**
   * The secret as a key object, made once: given a string, jsonwebtoken tries to parse it as a
   * public key on every sign and verify (~290 us per verify here, against ~6 us with the key).
   */
  private readonly key: KeyObject;

  constructor(
    secret: string,
    private readonly opts: TokenOptions,
  ) {
    this.key = createSecretKey(Buffer.from(secret, 'utf8'));
    this.clock = opts.clock ?? systemClock;
    this.issuer = opts.issuer ?? 'business-platform';
  }

  private nowSeconds(): number {
    return Math.floor(this.clock.now() / 1000);
  }

  signAccess(p: Omit<Principal, 'exp' | 'via'>, ttlSeconds = this.opts.accessTtlSeconds): string {
    const { sub, app: _a, ...rest } = p;
    const now = this.nowSeconds();
    return jwt.sign({ ...rest, typ: 'access', iat: now, exp: now + ttlSeconds }, this.key, {
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
      this.key,
      { algorithm: ALG, subject: c.sub, issuer: this.issuer, jwtid: jti },
    );
    return { token, jti };
  }

  private decode(token: string, typ: 'access' | 'refresh'): Record<string, unknown> {
    let claims: Record<string, unknown>;
    try {
      claims = jwt.verify(token, this.key, {
        algorithms: [ALG],
        issuer: this.issuer,
        clockTimestamp: this.nowSeconds(),
      }) as Record<string, unknown>;
    } catch (cause) {
      if (cause instanceof jwt.TokenExpiredError) {
        const next =
          typ === 'access'
            ? 'get a new one from POST /profile/user/refresh (staff) or POST /profile/customer/refresh (customers) with the refresh token'
            : 'sign in again';
        throw new AppError('ERR_TOKEN_EXPIRED', [typ, cause.expiredAt.toISOString(), next], { cause });
      }
      throw new AppError('ERR_TOKEN_INVALID', [], { cause });
    }
    if (claims.typ !== typ || typeof claims.sub !== 'string' || typeof claims.org !== 'string') {
      throw new AppError('ERR_TOKEN_INVALID');
    }
    return claims;
  }

  /**
   * Verifies an access token (cached). Throws ERR_TOKEN_INVALID (401) for a bad signature, a wrong
   * shape or an expired token, ERR_TOKEN_REFUSED (401) for a signed token this service does not
   * honour (no exp or iat, a lifetime over the configured one, issued in the future, revoked).
   */
  verifyAccess(token: string): Principal {
    const key = signatureOf(token);
    const young = this.young.get(key);
    const hit = young ?? this.old.get(key);
    let p: Principal | undefined;
    if (hit && hit.token === token) {
      p = hit.principal;
      if ((p.exp ?? 0) > this.nowSeconds()) {
        // Used again: kept into the next generation.
        if (!young) this.remember(key, hit);
      } else {
        this.young.delete(key);
        this.old.delete(key);
        p = undefined;
      }
    }
    if (!p) {
      p = this.principalOf(this.decode(token, 'access'));
      if (this.opts.cacheSize > 0) this.remember(key, { token, principal: p });
    }
    const revocations = this.opts.revocations;
    if (revocations) {
      const revokedAt = revocations.revokedAt(p.org, p.sub);
      if (revokedAt !== undefined && issuedBefore(p.iat!, revokedAt)) {
        throw refused('access for this account was revoked (deleted, disabled or revoked) after this token was issued; sign in again');
      }
      // Checked on cache hits too: a signed-out token stays cached until it expires or is pushed out.
      if (typeof p.sid === 'string' && revocations.sessionEndedAt(p.org, p.sid) !== undefined) {
        throw refused('this session has ended (signed out, or its refresh token was reused); sign in again');
      }
    }
    return p;
  }

  /** The longest lifetime (exp - iat) an access token may claim, in seconds. */
  get maxLifetimeSeconds(): number {
    return this.opts.accessTtlSeconds + this.skew;
  }

  private get skew(): number {
    return this.opts.skewSeconds ?? 30;
  }

  private principalOf(c: Record<string, unknown>): Principal {
    // A device's scope comes from its enrolment record only, never from a token's claims.
    const { typ: _t, iss: _s, device: _d, ...rest } = c;
    if (typeof c.exp !== 'number') throw refused('the token has no exp (expiry) claim; tokens without an expiry are not accepted');
    if (typeof c.iat !== 'number') throw refused('the token has no iat (issued at) claim');
    if (c.iat > this.nowSeconds() + this.skew) throw refused('the token claims to be issued in the future');
    if (c.exp - c.iat > this.maxLifetimeSeconds) {
      throw refused(
        `the token lives ${c.exp - c.iat} s, longer than access tokens are issued for (${this.opts.accessTtlSeconds} s, AUTH_ACCESS_TOKEN_TTL_SECONDS, plus ${this.skew} s skew); sign in for a new one`,
      );
    }
    const p = { ...rest, roles: Array.isArray(c.roles) ? (c.roles as string[]) : [], via: 'jwt' } as Principal;
    if (p.kind !== 'staff' && p.kind !== 'customer' && p.kind !== 'app') throw new AppError('ERR_TOKEN_INVALID');
    Object.freeze(p.roles);
    return Object.freeze(p);
  }

  verifyRefresh(token: string): RefreshClaims {
    const c = this.decode(token, 'refresh');
    if (typeof c.jti !== 'string' || typeof c.fam !== 'string') throw new AppError('ERR_TOKEN_INVALID');
    if (typeof c.exp !== 'number') throw refused('the refresh token has no exp (expiry) claim');
    return { sub: c.sub as string, org: c.org as string, kind: c.kind as PrincipalKind, jti: c.jti, fam: c.fam, exp: c.exp };
  }

  /** Caches a verification in the newer generation, turning generations over when it is full. */
  private remember(key: string, entry: CachedToken): void {
    if (this.young.size >= Math.ceil(this.opts.cacheSize / 2)) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, entry);
  }

  /** Drops cached verifications (for example after a credential is revoked). */
  forget(token?: string): void {
    if (token) {
      const key = signatureOf(token);
      if (this.young.get(key)?.token === token) this.young.delete(key);
      if (this.old.get(key)?.token === token) this.old.delete(key);
    } else {
      this.young.clear();
      this.old.clear();
    }
  }
}
