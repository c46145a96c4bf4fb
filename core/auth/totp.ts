// Time-based one-time passwords (RFC 6238) over HOTP (RFC 4226), on node:crypto only. Secrets are
// exchanged in base32 (RFC 4648, as authenticator apps expect). Verification accepts one step of
// clock drift either side by default and returns the matched step, so a caller can refuse a code
// that was already used (replay).
import { createHmac, randomBytes } from 'node:crypto';
import { safeEqual } from './password.js';

export type TotpAlgorithm = 'sha1' | 'sha256' | 'sha512';

export interface TotpOptions {
  /** Seconds per step (default 30). */
  period?: number;
  /** Code length (default 6). */
  digits?: number;
  algorithm?: TotpAlgorithm;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

export function base32Encode(buf: Buffer): string {
  let bits = 0;
  let value = 0;
  let out = '';
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(value << (5 - bits)) & 31];
  return out;
}

/** Decodes base32, ignoring case, spaces, dashes and `=` padding; throws on other characters. */
export function base32Decode(text: string): Buffer {
  const clean = text.toUpperCase().replace(/[\s=-]/g, '');
  const out: number[] = [];
  let bits = 0;
  let value = 0;
  for (const ch of clean) {
    const idx = ALPHABET.indexOf(ch);
    if (idx < 0) throw new Error(`invalid base32 character "${ch}"`);
    value = (value << 5) | idx;
    bits += 5;
    if (bits >= 8) {
      out.push((value >>> (bits - 8)) & 0xff);
      bits -= 8;
    }
  }
  return Buffer.from(out);
}

/** HOTP (RFC 4226): HMAC of the 8-byte counter, dynamic truncation, `digits` decimal digits. */
export function hotp(key: Buffer, counter: number, digits = 6, algorithm: TotpAlgorithm = 'sha1'): string {
  const msg = Buffer.alloc(8);
  msg.writeBigUInt64BE(BigInt(counter));
  const mac = createHmac(algorithm, key).update(msg).digest();
  const offset = mac[mac.length - 1] & 0x0f;
  const bin =
    ((mac[offset] & 0x7f) << 24) | (mac[offset + 1] << 16) | (mac[offset + 2] << 8) | mac[offset + 3];
  return String(bin % 10 ** digits).padStart(digits, '0');
}

export function totpStep(timeMs: number, period = 30): number {
  return Math.floor(timeMs / 1000 / period);
}

/** The TOTP code for `timeMs`. */
export function totp(key: Buffer, timeMs: number, opts: TotpOptions = {}): string {
  return hotp(key, totpStep(timeMs, opts.period), opts.digits, opts.algorithm);
}

/**
 * Checks `code` against the steps around `timeMs` (± `window`). Returns the matching step, or
 * undefined. Every candidate is compared, in constant time, so timing does not tell which matched.
 */
export function verifyTotp(
  key: Buffer,
  code: string,
  timeMs: number,
  opts: TotpOptions & { window?: number } = {},
): number | undefined {
  const digits = opts.digits ?? 6;
  if (!/^\d+$/.test(code) || code.length !== digits) return undefined;
  const now = totpStep(timeMs, opts.period);
  const window = opts.window ?? 1;
  let matched: number | undefined;
  for (let s = now - window; s <= now + window; s++) {
    if (s < 0) continue;
    if (safeEqual(hotp(key, s, digits, opts.algorithm), code) && matched === undefined) matched = s;
  }
  return matched;
}

/** A new 160-bit secret, base32 (the size RFC 4226 recommends for SHA-1). */
export function newTotpSecret(): string {
  return base32Encode(randomBytes(20));
}

/** The `otpauth://` URI authenticator apps scan (as a QR code) to enrol a secret. */
export function otpauthUri(secret: string, account: string, issuer: string): string {
  const label = `${encodeURIComponent(issuer)}:${encodeURIComponent(account)}`;
  const q = new URLSearchParams({ secret, issuer, algorithm: 'SHA1', digits: '6', period: '30' });
  return `otpauth://totp/${label}?${q.toString()}`;
}
