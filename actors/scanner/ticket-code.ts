// Dynamic QR codes (spec: Fields known per kind → ticket; Endpoints → Events, payload rule 1):
// `ticketId:timestamp:signature`, where the signature is HMAC-SHA256 with the ticket's codeSecret
// over `ticketId:timestamp`, base64url. The timestamp is Unix epoch milliseconds. A code is good
// while it is no older than the event's window (plus the clock-skew tolerance) and no further in
// the future than the skew tolerance; refreshing a code invalidates nothing but codes outside it.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

export interface DynamicCode {
  ticketId: string;
  timestamp: number;
  signature: string;
}

// 24 hex id, 1 to 16 digits, a base64url signature (ours are 43 characters, 32 bytes). A signature
// of another length (cut short by a camera, say) still makes the code dynamic: when it
// names a ticket, the answer is `bad_signature`, which tells the door more than `invalid_code`.
const DYNAMIC = /^([0-9a-f]{24}):(\d{1,16}):([A-Za-z0-9_-]{1,128})$/;

/** Parses a dynamic code; undefined when the text does not have its shape. */
export function parseDynamicCode(code: string): DynamicCode | undefined {
  // Cheap reject first: most scans are static codes without a colon.
  if (code.length < 28 || code.charCodeAt(24) !== 58) return undefined;
  const m = DYNAMIC.exec(code);
  if (!m) return undefined;
  return { ticketId: m[1], timestamp: Number(m[2]), signature: m[3] };
}

/**
 * The generation of a ticket's code: 8 base64url characters of the SHA-256 of its codeSecret. A
 * device compares it with the code's, so a rotated secret (a transfer) voids every earlier code.
 */
export function codeTag(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url').slice(0, 8);
}

export function newCodeSecret(): string {
  return randomBytes(32).toString('base64url');
}

function mac(secret: string, ticketId: string, timestamp: number): Buffer {
  return createHmac('sha256', secret).update(`${ticketId}:${timestamp}`).digest();
}

/** A freshly signed code for `ticketId` at `timestamp`. */
export function signCode(secret: string, ticketId: string, timestamp: number): string {
  return `${ticketId}:${timestamp}:${mac(secret, ticketId, timestamp).toString('base64url')}`;
}

export function verifySignature(secret: string, code: DynamicCode): boolean {
  const given = Buffer.from(code.signature, 'base64url');
  const expected = mac(secret, code.ticketId, code.timestamp);
  return given.length === expected.length && timingSafeEqual(given, expected);
}

/** True when a code minted at `timestamp` is still good at `at`. */
export function withinWindow(timestamp: number, at: number, windowMs: number, skewMs: number): boolean {
  return timestamp <= at + skewMs && at - timestamp <= windowMs + skewMs;
}
