// Rate limits (spec: Limits → Rate limit; Errors → 429): token buckets charged by principal.
// - An organisation's own credentials (staff users, API keys, application tokens) spend its plan's
//   bucket, as Stripe and GitHub charge every key of an account one budget.
// - A customer token also spends the plan's bucket, and first its own sub-bucket (a share of the
//   plan): anyone may sign up as a customer, so one customer never spends all of it.
// - A request without a credential that names an organisation spends that organisation's
//   anonymous bucket (a share of the plan, apart from the plan's own) and its caller's address,
//   never the bucket the organisation's signed-in users spend: a flood of its public routes
//   leaves its staff untouched.
// - The unauthenticated authentication routes (sign-in, directory lookup, magic code, app key)
//   are also charged per client address, since guessing happens before there is anyone to charge.
// Over a limit a request answers 429 with Retry-After in whole seconds.
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
  /** One customer's share of its organisation's plan (rate and burst); default 0.1. */
  customerShare?: number;
  /** An organisation's anonymous callers' bucket, as a share of its plan; default 0.25. */
  anonymousShare?: number;
  /** Per client address, on every request without a credential that names an organisation. */
  anonymousPerAddress?: Bucket;
}

export const DEFAULT_CUSTOMER_SHARE = 0.1;
export const DEFAULT_ANONYMOUS_SHARE = 0.25;
export const DEFAULT_ANONYMOUS_PER_ADDRESS: Bucket = { perSecond: 50, burst: 200 };

/** Who a request is charged to: its verified principal, or nobody (anonymous). */
export interface Chargee {
  kind: string;
  sub: string;
}

/** A plan's buckets: the plan's own, and the shares derived from it. */
interface PlanBuckets {
  name: string;
  /** The organisation named a plan the config has. */
  named: boolean;
  plan: Bucket;
  customer: Bucket;
  anonymous: Bucket;
}

function share(b: Bucket, fraction: number): Bucket {
  return { perSecond: b.perSecond * fraction, burst: Math.max(1, Math.round(b.burst * fraction)) };
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
  /** Sub-buckets of customers and the organisations' anonymous buckets (keys never collide). */
  private readonly shares: TokenBuckets;
  private readonly addresses: TokenBuckets;
  private readonly anonymousAddresses: TokenBuckets;
  private readonly buckets = new Map<string, PlanBuckets>();
  /** The default plan's buckets, for an organisation that names no plan (or an unknown one). */
  private readonly fallback: PlanBuckets | undefined;
  private readonly anonymousPerAddress: Bucket;

  constructor(
    private readonly cfg: RateLimitConfig,
    clock: Clock,
  ) {
    this.orgs = new TokenBuckets(clock);
    this.shares = new TokenBuckets(clock);
    this.addresses = new TokenBuckets(clock);
    this.anonymousAddresses = new TokenBuckets(clock);
    this.anonymousPerAddress = cfg.anonymousPerAddress ?? DEFAULT_ANONYMOUS_PER_ADDRESS;
    const customer = cfg.customerShare ?? DEFAULT_CUSTOMER_SHARE;
    const anonymous = cfg.anonymousShare ?? DEFAULT_ANONYMOUS_SHARE;
    for (const [name, plan] of Object.entries(cfg.plans)) {
      this.buckets.set(name, { name, named: true, plan, customer: share(plan, customer), anonymous: share(plan, anonymous) });
    }
    const d = this.buckets.get(cfg.defaultPlan);
    this.fallback = d && { ...d, named: false };
  }

  /** The buckets of an organisation's plan; undefined when not even the default plan exists. */
  private planOf(plan: string | undefined): PlanBuckets | undefined {
    const named = plan !== undefined ? this.buckets.get(plan) : undefined;
    return named ?? this.fallback;
  }

  /** A 429 that names the bucket that ran out and the setting that sizes it. */
  private refuse(seconds: number, which: string, bucket: Bucket, raise: string): never {
    throw new AppError('ERR_RATE_LIMIT_BUCKET', [which, bucket.perSecond, bucket.burst, seconds, raise], {
      headers: { 'retry-after': String(seconds) },
    });
  }

  private sizedBy(p: PlanBuckets): string {
    return p.named
      ? `The organisation's plan "${p.name}" sizes it: an operator raises rateLimits.plans.${p.name} in the config, or moves the organisation to another plan.`
      : `The server's default plan sizes it: an operator sets RATE_LIMIT_DEFAULT_PLAN (or rateLimits.plans.${p.name} in the config).`;
  }

  /**
   * Charges one request or socket event of a signed-in principal: a customer's own sub-bucket
   * first (so a customer over its share spends nothing of the organisation's), then the plan's.
   */
  charge(orgId: string, plan: string | undefined, who: Chargee): void {
    if (!this.cfg.enabled) return;
    const p = this.planOf(plan);
    if (!p) return;
    if (who.kind === 'customer') {
      const wait = this.shares.take(`c\u0000${orgId}\u0000${who.sub}`, p.customer);
      if (wait > 0) {
        this.refuse(wait, `one customer of organisation ${orgId} (its share of plan "${p.name}")`, p.customer, `Each customer may spend rateLimits.customerShare (RATE_LIMIT_CUSTOMER_SHARE) of the plan. ${this.sizedBy(p)}`);
      }
    }
    this.chargeOrg(orgId, plan);
  }

  /** Charges one request to the organisation's plan; throws 429 over it. */
  chargeOrg(orgId: string, plan: string | undefined): void {
    if (!this.cfg.enabled) return;
    const p = this.planOf(plan);
    if (!p) return;
    const wait = this.orgs.take(orgId, p.plan);
    if (wait > 0) this.refuse(wait, `plan "${p.name}" for organisation ${orgId}`, p.plan, this.sizedBy(p));
  }

  /**
   * Charges one request without a credential that names an organisation: to the caller's address
   * first (one flooding address spends nothing of the organisation's), then to the organisation's
   * anonymous bucket. Never to the plan's bucket its signed-in users spend.
   */
  chargeAnonymous(orgId: string, plan: string | undefined, address: string): void {
    if (!this.cfg.enabled) return;
    const byAddress = this.anonymousAddresses.take(address, this.anonymousPerAddress);
    if (byAddress > 0) {
      this.refuse(byAddress, `the client address ${address} without credentials`, this.anonymousPerAddress, 'Send a token or API key, or an operator raises rateLimits.anonymousPerAddress in the config.');
    }
    const p = this.planOf(plan);
    if (!p) return;
    const wait = this.shares.take(`a\u0000${orgId}`, p.anonymous);
    if (wait > 0) {
      this.refuse(wait, `the anonymous callers of organisation ${orgId} (their share of plan "${p.name}")`, p.anonymous, `Signed-in callers are not charged for it. Anonymous callers share rateLimits.anonymousShare (RATE_LIMIT_ANONYMOUS_SHARE) of the plan. ${this.sizedBy(p)}`);
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
