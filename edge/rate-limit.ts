// Rate limits (spec: Limits → Rate limit; Errors → 429): token buckets per organisation, sized by
// the organisation's plan, and per client address on the unauthenticated authentication routes
// (sign-in, directory lookup, magic code, app key) where there is no organisation to charge yet.
// Over the limit a request answers 429 with Retry-After in whole seconds.
import type { Clock } from '../core/clock.js';
import { AppError } from '../core/errors.js';

export interface Bucket {
  perSecond: number;
  burst: number;
}

export interface RateLimitConfig {
  enabled: boolean;
  defaultPlan: string;
  plans: Record<string, Bucket>;
  /** Per client address, on routes marked `rateLimit: 'address'`. */
  perAddress: Bucket;
}

interface State {
  tokens: number;
  at: number;
}

/** Token buckets keyed by string; idle buckets are forgotten (a full bucket equals a new one). */
export class TokenBuckets {
  private readonly state = new Map<string, State>();
  private sweptAt: number;

  constructor(private readonly clock: Clock) {
    this.sweptAt = clock.now();
  }

  /** Takes one token; returns 0 when granted, else the seconds until one is available. */
  take(key: string, bucket: Bucket): number {
    const now = this.clock.now();
    let s = this.state.get(key);
    if (!s) {
      s = { tokens: bucket.burst, at: now };
      this.state.set(key, s);
    } else {
      // A clock stepped backwards (NTP, a test's manual clock) refills nothing rather than draining.
      const elapsed = Math.max(0, now - s.at);
      s.tokens = Math.min(bucket.burst, s.tokens + (elapsed / 1000) * bucket.perSecond);
      s.at = now;
    }
    if (now - this.sweptAt > 60_000) this.sweep(now);
    if (s.tokens >= 1) {
      s.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - s.tokens) / bucket.perSecond));
  }

  /** Buckets idle for ten minutes have refilled (every configured burst refills faster). */
  private sweep(now: number): void {
    this.sweptAt = now;
    for (const [k, s] of this.state) if (now - s.at > 600_000) this.state.delete(k);
  }

  get size(): number {
    return this.state.size;
  }
}

export class RateLimiter {
  private readonly orgs: TokenBuckets;
  private readonly addresses: TokenBuckets;

  constructor(
    private readonly cfg: RateLimitConfig,
    clock: Clock,
  ) {
    this.orgs = new TokenBuckets(clock);
    this.addresses = new TokenBuckets(clock);
  }

  /** A 429 that names the bucket that ran out and the setting that sizes it. */
  private refuse(seconds: number, which: string, bucket: Bucket, raise: string): never {
    throw new AppError('ERR_RATE_LIMIT_BUCKET', [which, bucket.perSecond, bucket.burst, seconds, raise], {
      headers: { 'retry-after': String(seconds) },
    });
  }

  /** Charges one request to the organisation; throws 429 over its plan's limit. */
  chargeOrg(orgId: string, plan: string | undefined): void {
    if (!this.cfg.enabled) return;
    const name = plan !== undefined && this.cfg.plans[plan] ? plan : this.cfg.defaultPlan;
    const bucket = this.cfg.plans[name];
    if (!bucket) return;
    const wait = this.orgs.take(orgId, bucket);
    if (wait > 0) {
      const raise =
        plan !== undefined && this.cfg.plans[plan]
          ? `The organisation's plan "${name}" sizes it: an operator raises rateLimits.plans.${name} in the config, or moves the organisation to another plan.`
          : `The server's default plan sizes it: an operator sets RATE_LIMIT_DEFAULT_PLAN (or rateLimits.plans.${name} in the config).`;
      this.refuse(wait, `plan "${name}" for organisation ${orgId}`, bucket, raise);
    }
  }

  /** Charges one request to the client address; throws 429 over the per-address limit. */
  chargeAddress(address: string): void {
    if (!this.cfg.enabled) return;
    const wait = this.addresses.take(address, this.cfg.perAddress);
    if (wait > 0) {
      this.refuse(wait, `the client address ${address} on the public sign-in routes`, this.cfg.perAddress, 'An operator raises rateLimits.perAddress in the config.');
    }
  }
}
