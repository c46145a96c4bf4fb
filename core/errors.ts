// The one table of error codes. Every failure the service answers with is one of these; the edge
// turns it into the spec's envelope {statusCode, message, error} (spec: Errors). Codes are never
// reused once retired; test/core/errors.test.ts checks that every key equals its code.
import { STATUS_CODES } from 'node:http';

export interface ErrorDef {
  readonly code: string;
  readonly statusCode: number;
  /** Message template; `%s` is replaced by the arguments in order. */
  readonly template: string;
}

function def(code: string, statusCode: number, template: string): ErrorDef {
  return { code, statusCode, template };
}

export const ErrorCodes = {
  // 400
  ERR_BAD_REQUEST: def('ERR_BAD_REQUEST', 400, '%s'),
  ERR_INVALID_JSON: def('ERR_INVALID_JSON', 400, 'body is not valid JSON: %s'),
  ERR_VALIDATION: def('ERR_VALIDATION', 400, '%s'),
  ERR_ORGID_MISSING: def('ERR_ORGID_MISSING', 400, 'the orgid header is required'),
  ERR_ORGID_INVALID: def('ERR_ORGID_INVALID', 400, 'orgid "%s" does not name a known organisation'),
  ERR_BAD_ID: def('ERR_BAD_ID', 400, '%s must be a 24-character hexadecimal id'),
  ERR_IDEMPOTENCY_KEY: def('ERR_IDEMPOTENCY_KEY', 400, 'idempotencyKey must be a UUID'),
  // A client query stopped by its budget (time, heap, or an operator bound): 400 like any other
  // query the service will not run as sent (the spec has no 422); the message names the limit.
  ERR_QUERY_BUDGET: def('ERR_QUERY_BUDGET', 400, 'query budget: %s'),
  ERR_DOCUMENT_LIMIT: def('ERR_DOCUMENT_LIMIT', 400, '%s'),
  ERR_FORBIDDEN_KEY: def('ERR_FORBIDDEN_KEY', 400, '%s: the key "%s" is not allowed (it names a JavaScript object internal)'),
  // 401
  ERR_UNAUTHENTICATED: def('ERR_UNAUTHENTICATED', 401, 'authentication required: %s'),
  ERR_TOKEN_INVALID: def('ERR_TOKEN_INVALID', 401, 'token is invalid or expired'),
  ERR_TOKEN_REFUSED: def('ERR_TOKEN_REFUSED', 401, 'token refused: %s'),
  ERR_TOKEN_EXPIRED: def('ERR_TOKEN_EXPIRED', 401, 'token is invalid or expired: this %s token expired at %s; %s'),
  // 402
  ERR_PAYMENT_DECLINED: def('ERR_PAYMENT_DECLINED', 402, 'payment declined: %s'),
  // 403
  ERR_FORBIDDEN: def('ERR_FORBIDDEN', 403, '%s'),
  ERR_ROLE_REQUIRED: def('ERR_ROLE_REQUIRED', 403, 'this route needs one of the roles: %s'),
  ERR_WRONG_ORG: def('ERR_WRONG_ORG', 403, 'the credentials do not belong to organisation "%s"'),
  // 404
  ERR_ROUTE_NOT_FOUND: def('ERR_ROUTE_NOT_FOUND', 404, 'Cannot %s %s'),
  ERR_NOT_FOUND: def('ERR_NOT_FOUND', 404, '%s not found'),
  // A location slug no record names: the message says how to make one (no other document does).
  ERR_LOCATION_NOT_FOUND: def(
    'ERR_LOCATION_NOT_FOUND',
    404,
    'location %s not found: a location is a record of datatype "location" whose data.name is the slug sent as businessLocationId; ' +
      'create it with a staff token: POST /repository/create {"datatype":"location","data":{"name":%s},"isNew":true,"version":0} ' +
      '(optional data: displayName, timezone, currency, taxRate, address)',
  ),
  // 405
  ERR_METHOD_NOT_ALLOWED: def('ERR_METHOD_NOT_ALLOWED', 405, '%s is not served on %s; allowed: %s'),
  // 409
  ERR_VERSION_CONFLICT: def(
    'ERR_VERSION_CONFLICT',
    409,
    'version conflict on %s: expected version %s, stored version is %s; refetch and retry',
  ),
  ERR_CONFLICT: def('ERR_CONFLICT', 409, '%s'),
  ERR_RECORD_UNREADABLE: def(
    'ERR_RECORD_UNREADABLE',
    409,
    '%s is stored but cannot be decoded (written before the document limits); it can only be deleted',
  ),
  ERR_IDEMPOTENCY_MISMATCH: def(
    'ERR_IDEMPOTENCY_MISMATCH',
    409,
    'idempotencyKey was already used with a different request body',
  ),
  // 413, 415
  ERR_PAYLOAD_TOO_LARGE: def('ERR_PAYLOAD_TOO_LARGE', 413, 'request body is larger than %s bytes'),
  ERR_RECORD_TOO_LARGE: def('ERR_RECORD_TOO_LARGE', 413, '%s would be over the stored size limit of %s bytes (MAX_RECORD_BYTES): keep large content as media, or split it'),
  ERR_UPLOAD_TOO_LARGE: def('ERR_UPLOAD_TOO_LARGE', 413, 'the file is larger than the upload size cap of %s bytes'),
  ERR_STORAGE_QUOTA: def(
    'ERR_STORAGE_QUOTA',
    413,
    'storage quota: this write of %s bytes would take the organisation\'s %s to %s bytes, over its plan "%s" quota of %s bytes (%s bytes used now): delete data, or an operator raises quotas.plans.%s or moves the organisation to another plan',
  ),
  ERR_UNSUPPORTED_MEDIA_TYPE: def('ERR_UNSUPPORTED_MEDIA_TYPE', 415, 'Content-Type must be %s'),
  // 429
  ERR_RATE_LIMITED: def('ERR_RATE_LIMITED', 429, 'rate limit reached; retry after %s seconds'),
  ERR_RATE_LIMIT_BUCKET: def('ERR_RATE_LIMIT_BUCKET', 429, 'rate limit of %s reached (%s requests/s, burst %s); retry after %s seconds. %s'),
  ERR_TOO_MANY_STREAMS: def('ERR_TOO_MANY_STREAMS', 429, 'this organisation has %s live door views open on this server, the most %s allows; close one'),
  // 5xx
  ERR_INTERNAL: def('ERR_INTERNAL', 500, 'internal server error'),
  ERR_UNAVAILABLE: def('ERR_UNAVAILABLE', 503, '%s'),
  ERR_BUSY: def('ERR_BUSY', 503, 'the server is holding %s bytes of request bodies in flight (MAX_INFLIGHT_BODY_BYTES); retry after %s seconds'),
  ERR_TIMEOUT: def('ERR_TIMEOUT', 504, '%s timed out'),
  ERR_INSUFFICIENT_STORAGE: def(
    'ERR_INSUFFICIENT_STORAGE',
    507,
    'the server is low on disk space (%s bytes free, below the floor of %s bytes, STORAGE_MIN_FREE_DISK_BYTES): writes are refused until an operator frees space; deletes still work',
  ),
} as const;

export type ErrorCode = keyof typeof ErrorCodes;

function format(template: string, args: readonly unknown[]): string {
  let i = 0;
  return template.replace(/%s/g, () => (i < args.length ? String(args[i++]) : ''));
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly statusCode: number;
  /** Extra response headers (for example Retry-After). */
  readonly headers?: Record<string, string>;
  /** When set, the envelope's message is this list (validation errors name every field). */
  readonly messages?: string[];
  /**
   * Set by refuseAfterWrites (core/actor/runtime.ts) and cleared by the runtime: the actor's
   * writes stand although the message is refused. Never crosses the wire.
   */
  keepWrites?: true;

  constructor(
    code: ErrorCode,
    args: readonly unknown[] = [],
    opts: { cause?: unknown; headers?: Record<string, string>; messages?: string[] } = {},
  ) {
    const d = ErrorCodes[code];
    super(format(d.template, args), opts.cause === undefined ? undefined : { cause: opts.cause });
    this.name = 'AppError';
    this.code = code;
    this.statusCode = d.statusCode;
    if (opts.headers) this.headers = opts.headers;
    if (opts.messages) this.messages = opts.messages;
  }
}

/** Shorthand used everywhere: `throw appError('ERR_NOT_FOUND', 'ticket')`. */
export function appError(code: ErrorCode, ...args: unknown[]): AppError {
  return new AppError(code, args);
}

export interface ErrorEnvelope {
  statusCode: number;
  message: string | string[];
  error: string;
}

/** The canonical short name of a status, e.g. 409 → "Conflict". */
export function statusName(statusCode: number): string {
  return STATUS_CODES[statusCode] ?? 'Error';
}

/** Turns any thrown value into the wire envelope. Unknown errors become a bare 500. */
export function toEnvelope(err: unknown): ErrorEnvelope {
  if (err instanceof AppError) {
    return {
      statusCode: err.statusCode,
      message: err.messages ?? err.message,
      error: statusName(err.statusCode),
    };
  }
  return { statusCode: 500, message: ErrorCodes.ERR_INTERNAL.template, error: statusName(500) };
}

/** Plain-object form for crossing a process boundary (bus replies); see fromWire. */
export interface WireError {
  code: string;
  message: string;
  messages?: string[];
  headers?: Record<string, string>;
}

export function toWire(err: unknown): WireError {
  if (err instanceof AppError) {
    const w: WireError = { code: err.code, message: err.message };
    if (err.messages) w.messages = err.messages;
    if (err.headers) w.headers = err.headers;
    return w;
  }
  return { code: 'ERR_INTERNAL', message: ErrorCodes.ERR_INTERNAL.template };
}

export function fromWire(w: WireError): AppError {
  const code = (w.code in ErrorCodes ? w.code : 'ERR_INTERNAL') as ErrorCode;
  const e = new AppError(code, [], { messages: w.messages, headers: w.headers });
  // Keep the original rendered text rather than re-rendering the template without its args.
  Object.defineProperty(e, 'message', { value: w.message });
  return e;
}
