// Slows down guessing: repeated sign-in failures for one account or from one address answer 429
// with Retry-After. In-process and bounded (a node keeps its own counts; with several nodes a
// guesser gets at most `free` tries per node before the delays start, which still caps the rate).
//
// A key may fail `free` times within `windowMs`; each failure beyond that blocks the key for
// `baseBlockMs` doubled per extra failure, capped at `maxBlockMs`. A success clears an account key
// (never an address key: one good password must not reset a spray from that address).
import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';

export interface LimitRule {
  free: number;
  windowMs: number;
  baseBlockMs: number;
  maxBlockMs: number;
}

/** Per account (org + email, org + employee id, org + application). */
export const ACCOUNT_RULE: LimitRule = { free: 5, windowMs: 15 * 60_000, baseBlockMs: 30_000, maxBlockMs: 15 * 60_000 };
/** Per client address, across accounts (password spraying). */
export const ADDRESS_RULE: LimitRule = { free: 50, windowMs: 15 * 60_000, baseBlockMs: 60_000, maxBlockMs: 15 * 60_000 };

interface Entry {
  failures: number;
  firstAt: number;
  blockedUntil: number;
}

export class FailureLimiter {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly clock: Clock,
    private readonly maxEntries = 100_000,
  ) {}

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
      const block = Math.min(rule.baseBlockMs * 2 ** (e.failures - rule.free), rule.maxBlockMs);
      e.blockedUntil = now + block;
    }
    this.entries.set(key, e);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }

  reset(key: string): void {
    this.entries.delete(key);
  }
}
