// Dynamic QR codes (spec: Fields known per kind → ticket; Endpoints → Events, payload rule 1):
// `ticketId:timestamp:signature`. The timestamp is Unix epoch milliseconds. A code is good while it
// is no older than the event's window (plus the clock-skew tolerance) and no further in the future
// than the skew tolerance; refreshing a code invalidates nothing but codes outside it.
//
// Two signatures. New codes: the event's Ed25519 door key (door-keys.ts) over
// `ticketId:timestamp:codeTag`, written `kid + base64url(signature)` (8 + 86 characters), which a
// device holding the event's public keys checks with no network; and the signed static code
// `ticketId:S:signature`, the same signature over `ticketId:S:codeTag`, which never expires. The
// code tag names the ticket's code generation (its codeSecret): a transfer mints a new secret, so
// every code signed before it stops verifying. Before Ed25519: HMAC-SHA256 with the ticket's
// codeSecret over `ticketId:timestamp` (43 characters); those codes keep verifying on the server.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface DynamicCode {
  ticketId: string;
  timestamp: number;
  signature: string;
}

// 24 hex id, 1 to 16 digits, a base64url signature (ours are 94 characters, legacy ones 43). A signature
// of another length (cut short by a camera, say) still makes the code dynamic: when it
// names a ticket, the answer is `bad_signature`, which tells the door more than `invalid_code`.
const DYNAMIC = /^([0-9a-f]{24}):(\d{1,16}):([A-Za-z0-9_-]{1,128})$/;

/** A signed static code `ticketId:S:signature` (no expiry; Ed25519 only). */
export interface StaticCode {
  ticketId: string;
  signature: string;
}

const STATIC = /^([0-9a-f]{24}):S:([A-Za-z0-9_-]{1,128})$/;

/** Legacy HMAC signatures (32 bytes, base64url). */
export const HMAC_SIGNATURE_LENGTH = 43;
/** A key id: 8 base64url characters ahead of the Ed25519 signature. */
export const KID_LENGTH = 8;
/** `kid` + base64url of the 64-byte Ed25519 signature. */
export const ED25519_SIGNATURE_LENGTH = KID_LENGTH + 86;

/** Parses a signed static code; undefined when the text does not have its shape. */
export function parseStaticCode(code: string): StaticCode | undefined {
  if (code.length < 28 || code.charCodeAt(24) !== 58 || code.charCodeAt(25) !== 83) return undefined;
  const m = STATIC.exec(code);
  return m ? { ticketId: m[1], signature: m[2] } : undefined;
}

/** The ticket's code generation: base64url(sha256(codeSecret)), first 8 characters. Not a secret. */
export function codeTag(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url').slice(0, 8);
}

/** What the Ed25519 signature covers: `ticketId:timestamp:tag`, or `ticketId:S:tag` for a static code. */
export function signedMessage(ticketId: string, stamp: number | 'S', tag: string): Buffer {
  return Buffer.from(`${ticketId}:${stamp}:${tag}`, 'utf8');
}

/** Parses a dynamic code; undefined when the text does not have its shape. */
export function parseDynamicCode(code: string): DynamicCode | undefined {
  // Cheap reject first: most scans are static codes without a colon.
  if (code.length < 28 || code.charCodeAt(24) !== 58) return undefined;
  const m = DYNAMIC.exec(code);
  if (!m) return undefined;
  return { ticketId: m[1], timestamp: Number(m[2]), signature: m[3] };
}

export function newCodeSecret(): string {
  return randomBytes(32).toString('base64url');
}

function mac(secret: string, ticketId: string, timestamp: number): Buffer {
  return createHmac('sha256', secret).update(`${ticketId}:${timestamp}`).digest();
}

/** A legacy HMAC code for `ticketId` at `timestamp` (new codes are Ed25519: door-keys.ts). */
export function signCode(secret: string, ticketId: string, timestamp: number): string {
  return `${ticketId}:${timestamp}:${mac(secret, ticketId, timestamp).toString('base64url')}`;
}

/** Checks a legacy HMAC signature. */
export function verifySignature(secret: string, code: DynamicCode): boolean {
  const given = Buffer.from(code.signature, 'base64url');
  const expected = mac(secret, code.ticketId, code.timestamp);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** True when a code minted at `timestamp` is still good at `at`. */
export function withinWindow(timestamp: number, at: number, windowMs: number, skewMs: number): boolean {
  return timestamp <= at + skewMs && at - timestamp <= windowMs + skewMs;
}
