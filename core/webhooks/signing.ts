// Standard Webhooks signatures: `webhook-signature: v1,<base64 HMAC-SHA256 of "id.timestamp.body">`
// keyed with the base64 part of the endpoint's `whsec_` secret; several signatures (a rotation's
// old and new secret) are separated by spaces, and a receiver accepts any one it can verify.
import { createHmac, randomBytes } from 'node:crypto';
import type { SigningSecret } from './model.js';

const PREFIX = 'whsec_';

/** A new secret: 32 random bytes. */
export function newSigningSecret(): string {
  return PREFIX + randomBytes(32).toString('base64');
}

/** Decoded keys of the secrets in use (a node signs with a few): not decoded again per attempt. */
const keys = new Map<string, Buffer>();
const KEYS_MAX = 1024;

function keyOf(secret: string): Buffer {
  let key = keys.get(secret);
  if (!key) {
    if (keys.size >= KEYS_MAX) keys.clear();
    key = Buffer.from(secret.startsWith(PREFIX) ? secret.slice(PREFIX.length) : secret, 'base64');
    keys.set(secret, key);
  }
  return key;
}

export function sign(secret: string, id: string, timestampS: number, body: string): string {
  return 'v1,' + createHmac('sha256', keyOf(secret)).update(`${id}.${timestampS}.${body}`).digest('base64');
}

/** The signature header with every secret still valid at `now`. */
export function signatureHeader(secrets: readonly SigningSecret[], id: string, timestampS: number, body: string, now: number): string {
  return secrets
    .filter((s) => s.expiresAt === undefined || s.expiresAt > now)
    .map((s) => sign(s.secret, id, timestampS, body))
    .join(' ');
}
