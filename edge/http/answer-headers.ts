// The bytes every answer starts with: its status line, content type and the security headers.
// Encoded once: uWS takes bytes as they are, where each string costs a measure and a UTF-8 copy
// per call (a door scan's answer writes a dozen of them).
import { STATUS_CODES } from 'node:http';
import type uWS from 'uWebSockets.js';

export const JSON_TYPE = 'application/json';

const bytes = (s: string): Buffer => Buffer.from(s, 'latin1');
const CONTENT_TYPE = bytes('content-type');
export const REQUEST_ID = bytes('x-request-id');
const JSON_TYPE_BYTES = bytes(JSON_TYPE);

const statusLines = new Map<number, Buffer>();
export function statusLine(code: number): Buffer {
  let s = statusLines.get(code);
  if (!s) {
    s = bytes(`${code} ${STATUS_CODES[code] ?? 'Unknown'}`);
    statusLines.set(code, s);
  }
  return s;
}

/** Sent on every answer. */
const SECURITY_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['x-content-type-options', 'nosniff'],
  ['x-frame-options', 'DENY'],
  ['referrer-policy', 'no-referrer'],
  ['cross-origin-opener-policy', 'same-origin'],
];
/** Sent on JSON answers, unless the handler set its own. */
const JSON_PAIRS: ReadonlyArray<readonly [string, string]> = [
  ['content-security-policy', "default-src 'none'; frame-ancestors 'none'"],
  ['cache-control', 'no-store'],
];
const SECURITY_HEADERS = SECURITY_PAIRS.map(([k, v]) => [bytes(k), bytes(v)] as const);
const JSON_HEADERS = JSON_PAIRS.map(([k, v]) => [k, bytes(k), bytes(v)] as const);

/**
 * A JSON answer's fixed headers (its type, the security and the JSON ones) as one header whose
 * value carries the rest, lines and all: uWS writes a header as `name: value` CRLF without looking
 * inside, so this is the same bytes in one call instead of seven. Only constants go in here.
 */
const JSON_BLOCK: readonly [Buffer, Buffer] = [CONTENT_TYPE, bytes([JSON_TYPE, ...[...SECURITY_PAIRS, ...JSON_PAIRS].map(([k, v]) => `${k}: ${v}`)].join('\r\n'))];

/**
 * The content type (none when `type` is undefined), security headers, and the JSON ones on JSON
 * answers where the handler set none of its own.
 */
export function writeStandardHeaders(res: uWS.HttpResponse, type: string | undefined, own: Record<string, string> | undefined): void {
  if (type === JSON_TYPE && (!own || JSON_HEADERS.every(([name]) => own[name] === undefined))) {
    res.writeHeader(JSON_BLOCK[0], JSON_BLOCK[1]);
    return;
  }
  if (type !== undefined) res.writeHeader(CONTENT_TYPE, type === JSON_TYPE ? JSON_TYPE_BYTES : type);
  for (const [k, v] of SECURITY_HEADERS) res.writeHeader(k, v);
  if (type !== JSON_TYPE) return;
  for (const [name, k, v] of JSON_HEADERS) if (!own || own[name] === undefined) res.writeHeader(k, v);
}
