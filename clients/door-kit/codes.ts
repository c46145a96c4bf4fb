// Ticket codes a device checks with no network (issue 32). A dynamic code is
// `ticketId:timestamp:signature`, a printable signed static code `ticketId:S:signature`; the
// signature is the event key's 8-character id followed by the base64url Ed25519 signature (86
// characters) of `ticketId:timestamp:codeTag` (or `ticketId:S:codeTag`), where codeTag is the
// ticket's code generation from the feed: a transfer changes it, which voids every earlier code.
// A plain static code (the ticket number) is matched against the feed.
import { createPublicKey, verify, type KeyObject } from 'node:crypto';
import type { DoorKeys } from './types.js';

export interface SignedCode {
  ticketId: string;
  /** Unix ms of a dynamic code; null for a signed static code. */
  timestamp: number | null;
  kid: string;
  /** The base64url signature after the key id (any length: a cut-off code still names its ticket). */
  signature: string;
}

const KID = 8;
// The server's dynamic shape (24 hex id, 1 to 16 digits); an HMAC code of before (43 characters)
// parses too, and fails to verify here: only the server knows its secret.
const DYNAMIC = /^([0-9a-f]{24}):(\d{1,16}):([A-Za-z0-9_-]{1,128})$/;
const STATIC = /^([0-9a-f]{24}):S:([A-Za-z0-9_-]{1,128})$/;

/** A signed code's parts; undefined when the text has neither signed shape. */
export function parseSignedCode(code: string): SignedCode | undefined {
  const d = DYNAMIC.exec(code);
  if (d) return { ticketId: d[1], timestamp: Number(d[2]), kid: d[3].slice(0, KID), signature: d[3].slice(KID) };
  const s = STATIC.exec(code);
  if (s) return { ticketId: s[1], timestamp: null, kid: s[2].slice(0, KID), signature: s[2].slice(KID) };
  return undefined;
}

/** The message a signed code's signature covers. */
export function signedMessage(ticketId: string, timestamp: number | null, codeTag: string): string {
  return `${ticketId}:${timestamp === null ? 'S' : timestamp}:${codeTag}`;
}

const keyCache = new Map<string, KeyObject>();

function publicKey(raw: string): KeyObject | undefined {
  let k = keyCache.get(raw);
  if (!k) {
    try {
      k = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: raw }, format: 'jwk' });
    } catch {
      return undefined;
    }
    keyCache.set(raw, k);
  }
  return k;
}

/** Whether `code` was signed by one of the event's keys for the ticket's current code generation. */
export function verifySigned(keys: DoorKeys | null, code: SignedCode, codeTag: string | null): boolean {
  if (!keys || codeTag === null) return false;
  const key = keys.keys.find((k) => k.kid === code.kid && k.alg === 'Ed25519');
  const pk = key && publicKey(key.publicKey);
  if (!pk) return false;
  const sig = Buffer.from(code.signature, 'base64url');
  if (sig.length !== 64) return false;
  try {
    return verify(null, Buffer.from(signedMessage(code.ticketId, code.timestamp, codeTag), 'utf8'), pk, sig);
  } catch {
    return false;
  }
}

/** True when a dynamic code minted at `timestamp` is still good at `at` (the server's rule). */
export function withinWindow(timestamp: number, at: number, windowMs: number, skewMs: number): boolean {
  return timestamp <= at + skewMs && at - timestamp <= windowMs + skewMs;
}
