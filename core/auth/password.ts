// Secrets at rest. Passwords and PINs (low entropy, chosen by people) are hashed with scrypt from
// node:crypto, a fresh random salt per hash, and compared in constant time; the parameters travel
// in the stored string (`scrypt$N$r$p$salt$hash`) so they can be raised later without breaking
// old hashes. Machine-made secrets (API keys, application secrets, one-time and backup codes) are
// high-entropy or salted and short-lived, so a SHA-256 digest is enough and lets them be looked up
// by hash.
import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual, type ScryptOptions } from 'node:crypto';
import { inPoolTurn } from '../pool-work.js';

export const MIN_PASSWORD_LENGTH = 8;
export const MAX_PASSWORD_LENGTH = 256;

export interface ScryptCost {
  N: number;
  r: number;
  p: number;
}

/** ~50 ms per hash on one core: slow enough to hurt guessing, fast enough for sign-in. */
export const DEFAULT_COST: ScryptCost = { N: 16384, r: 8, p: 1 };
const KEY_LENGTH = 32;
const SALT_LENGTH = 16;

/** scrypt runs on libuv's thread pool, where the store's commits run too: it takes turns (core/pool-work.ts). */
function scrypt(secret: string, salt: Buffer, keylen: number, opts: ScryptOptions): Promise<Buffer> {
  return inPoolTurn(
    'a password check',
    () =>
      new Promise((resolve, reject) => {
        scryptCb(secret.normalize('NFKC'), salt, keylen, { ...opts, maxmem: 256 * opts.N! * opts.r! }, (err, key) =>
          err ? reject(err) : resolve(key),
        );
      }),
  );
}

/** Hashes a password or PIN: `scrypt$N$r$p$<salt b64url>$<hash b64url>`. */
export async function hashPassword(plain: string, cost: ScryptCost = DEFAULT_COST): Promise<string> {
  const salt = randomBytes(SALT_LENGTH);
  const key = await scrypt(plain, salt, KEY_LENGTH, cost);
  return `scrypt$${cost.N}$${cost.r}$${cost.p}$${salt.toString('base64url')}$${key.toString('base64url')}`;
}

interface Parsed {
  cost: ScryptCost;
  salt: Buffer;
  key: Buffer;
}

function parse(stored: string): Parsed | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [N, r, p] = parts.slice(1, 4).map(Number);
  if (![N, r, p].every((n) => Number.isInteger(n) && n > 0) || N > 1 << 20 || r > 32 || p > 16) return undefined;
  const salt = Buffer.from(parts[4], 'base64url');
  const key = Buffer.from(parts[5], 'base64url');
  if (salt.length < 8 || key.length < 16) return undefined;
  return { cost: { N, r, p }, salt, key };
}

// Compared against when there is no stored hash, so an unknown account costs as much time as a
// known one (no account enumeration by timing).
const DUMMY: Parsed = { cost: DEFAULT_COST, salt: Buffer.alloc(SALT_LENGTH, 7), key: Buffer.alloc(KEY_LENGTH, 7) };

/**
 * True when `plain` matches `stored`. A missing or malformed hash is compared against a dummy of
 * the same cost and answers false.
 */
export async function verifyPassword(plain: string, stored: string | undefined | null): Promise<boolean> {
  const parsed = (stored && parse(stored)) || undefined;
  const target = parsed ?? DUMMY;
  const key = await scrypt(plain, target.salt, target.key.length, target.cost);
  return timingSafeEqual(key, target.key) && parsed !== undefined;
}

/** SHA-256 (hex) of a high-entropy or salted secret: API keys, app secrets, codes. */
export function digestSecret(secret: string, salt = ''): string {
  return createHash('sha256').update(salt).update('\u0000').update(secret).digest('hex');
}

/** Constant-time string comparison (false when the lengths differ). */
export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** A random secret for a machine: `<prefix><43 base64url chars>` (256 bits). */
export function newSecret(prefix = ''): string {
  return prefix + randomBytes(32).toString('base64url');
}

/** A random numeric code of `digits` digits, uniformly distributed. */
export function newNumericCode(digits = 6): string {
  const max = 10 ** digits;
  // Rejection sampling over 32-bit values keeps the distribution uniform.
  const limit = Math.floor(0x1_0000_0000 / max) * max;
  for (;;) {
    const n = randomBytes(4).readUInt32BE(0);
    if (n < limit) return String(n % max).padStart(digits, '0');
  }
}
