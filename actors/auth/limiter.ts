// Slows down guessing without letting a guesser lock the owner out (issue 28). Repeated sign-in
// failures answer 429 with Retry-After. Three counts per attempt at an account's secret:
//  - the account at one address (ACCOUNT_ADDRESS_RULE): a guesser's failures make only the
//    guesser's own address wait, so the owner signing in from elsewhere is never slowed by them;
//  - the address across accounts (ADDRESS_RULE): password spraying;
//  - the account from anywhere (ACCOUNT_RULE): a slow ceiling against a guesser with many
//    addresses. It blocks the owner too, so it starts late and grows slowly; meanwhile the owner
//    signs in with a magic code (never counted here) or resets the password.
// In-process and bounded (a node keeps its own counts; with several nodes a guesser gets at most
// `free` tries per node before the delays start, which still caps the rate).
//
// A key may fail `free` times within `windowMs`; each failure beyond that blocks the key for
// `baseBlockMs` times `growth` per extra failure, capped at `maxBlockMs`. A success clears the
// account-at-address key only: one good password must not reset a spray from that address, nor a
// distributed guesser's progress on the account.
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';

export interface LimitRule {
  free: number;
  windowMs: number;
  baseBlockMs: number;
  maxBlockMs: number;
  /** Factor each further failure multiplies the block by (default 2). */
  growth?: number;
}

/** One account at one client address (org + email, org + employee id, org + application). */
export const ACCOUNT_ADDRESS_RULE: LimitRule = { free: 5, windowMs: 15 * 60_000, baseBlockMs: 30_000, maxBlockMs: 15 * 60_000 };
/** Per client address, across accounts (password spraying). */
export const ADDRESS_RULE: LimitRule = { free: 50, windowMs: 15 * 60_000, baseBlockMs: 60_000, maxBlockMs: 15 * 60_000 };
/**
 * Per account from every address: about 100 free guesses a day, then one a minute growing to one
 * per 15 minutes (at most ~200 a day), whatever the number of addresses.
 */
export const ACCOUNT_RULE: LimitRule = { free: 100, windowMs: 24 * 60 * 60_000, baseBlockMs: 60_000, maxBlockMs: 15 * 60_000, growth: 1.5 };

interface Entry {
  failures: number;
  firstAt: number;
  blockedUntil: number;
}

/** The counts one attempt at an account's secret is charged to (see FailureLimiter.attempt). */
export interface Attempt {
  /** Throws ERR_RATE_LIMITED (429, Retry-After) while any of the attempt's counts is blocked. */
  check(): void;
  fail(): void;
  succeed(): void;
}

export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 100_000,
  ) {}

  /** An attempt at `account`'s secret (password, PIN, card, application secret) from address `ip`. */
  attempt(account: string, ip: string): Attempt {
    const pair = `${account}\u0000ip:${ip}`;
    const addr = `ip:${ip}`;
    return {
      check: () => this.check([pair, addr, account]),
      fail: () => {
        this.fail(pair, ACCOUNT_ADDRESS_RULE);
        this.fail(addr, ADDRESS_RULE);
        this.fail(account, ACCOUNT_RULE);
      },
      succeed: () => this.reset(pair),
    };
  }

  /** Throws ERR_RATE_LIMITED (429, Retry-After) when any of the keys is blocked now. */
  check(keys: string[]): void {
    const now = this.clock.now();
    let wait = 0;
    for (const k of keys) {
      const e = this.entries.get(k);
      if (e && e.blockedUntil > now) wait = Math.max(wait, e.blockedUntil - now);
    }
    if (wait > 0) {
      const seconds = Math.ceil(wait / 1000);
      throw new AppError('ERR_RATE_LIMITED', [seconds], { headers: { 'retry-after': String(seconds) } });
    }
  }

  fail(key: string, rule: LimitRule): void {
    const now = this.clock.now();
    let e = this.entries.get(key);
    if (!e || now - e.firstAt > rule.windowMs) {
      e = { failures: 0, firstAt: now, blockedUntil: 0 };
    }
    this.entries.delete(key);
    e.failures++;
    if (e.failures >= rule.free) {
      const block = Math.min(Math.round(rule.baseBlockMs * (rule.growth ?? 2) ** (e.failures - rule.free)), rule.maxBlockMs);
      e.blockedUntil = now + block;
    }
    this.entries.set(key, e);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  reset(key: string): void {
    this.entries.delete(key);
  }
}
