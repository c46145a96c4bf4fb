// The HTTP edge on uWebSockets.js. Every route of the table becomes one uWS route; a request is
// read synchronously (headers, url, query, parameters: uWS frees `req` at the first await), its
// body collected chunk by chunk (copied: uWS reuses the buffer), then validated, authenticated and
// handed to the route's handler. Writes after an await happen inside `res.cork`, and nothing is
// written to a response the client has aborted.
import { isUtf8 } from 'node:buffer';
import { randomBytes } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import uWS from 'uWebSockets.js';
import type { Principal } from '../core/auth/tokens.js';
import type { Org } from '../core/store/store.js';
import { parseBoundedJson, type DocumentLimits } from '../core/document-limits.js';
import { AppError, toEnvelope } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import { compileRoute, type CompiledRoute } from './compile.js';
import type { EdgeForwarder, ForwardedResponse } from './cluster-forward.js';
import type { AppDeps } from './deps.js';
import type { HttpMetrics } from './metrics.js';
import { RateLimiter } from './rate-limit.js';
import { paramNames, type Method, type RequestContext, type ResponseStream, type RouteDef } from './route.js';

export type HttpResponse = uWS.HttpResponse;
export type HttpRequest = uWS.HttpRequest;
export type TemplatedApp = uWS.TemplatedApp;

const ORGID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$/;
const JSON_TYPE = 'application/json';

// What every answer writes is encoded once: uWS takes bytes as they are, where each string costs
// a measure and a UTF-8 copy per call (a door scan's answer writes a dozen of them).
const bytes = (s: string): Buffer => Buffer.from(s, 'latin1');
const CONTENT_TYPE = bytes('content-type');
const REQUEST_ID = bytes('x-request-id');
const JSON_TYPE_BYTES = bytes(JSON_TYPE);

const statusLines = new Map<number, Buffer>();
function statusLine(code: number): Buffer {
  let s = statusLines.get(code);
  if (!s) {
    s = bytes(`${code} ${STATUS_CODES[code] ?? 'Unknown'}`);
    statusLines.set(code, s);
  }
  return s;
}

/** State of one exchange that outlives the synchronous part of the uWS callback. */
interface Exchange {
  aborted: boolean;
  done: boolean;
  requestId: string;
  origin: string | undefined;
  started: number;
  /** A streamed answer's hook: told when the client goes away. */
  onAbort?: () => void;
  /** Body bytes this request holds against the node's in-flight budget, released when it ends. */
  bodyBytes: number;
  /** For the access log: the method and path as sent, and the `orgid` header. */
  method: string;
  path: string;
  orgid: string;
  /** A HEAD request served by a GET route: headers (with the length) and no body. */
  head: boolean;
}

const METHODS: readonly Method[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** The tenant and caller a request was checked for from its headers, before its body. */
interface Checked {
  org: Org | undefined;
  principal: Principal | undefined;
}

/** 401 answers carry the scheme a client should use (RFC 6750); a bad token also says so. */
const TOKEN_ERRORS = new Set(['ERR_TOKEN_INVALID', 'ERR_TOKEN_REFUSED', 'ERR_TOKEN_EXPIRED']);

function wwwAuthenticate(err: unknown): string {
  return err instanceof AppError && TOKEN_ERRORS.has(err.code) ? 'Bearer error="invalid_token"' : 'Bearer';
}

export interface EdgeOptions {
  deps: AppDeps;
  routes: RouteDef[];
  metrics?: HttpMetrics;
  logger: Logger;
  /** Cluster mode: sends requests for tenants this node does not own to their owner. */
  forwarder?: EdgeForwarder;
}

// Request ids: a random per-process prefix and a counter (unique without a syscall per request).
// A caller's own x-request-id is kept when it is a plain token, so it can never inject into logs
// or headers.
const ID_PREFIX = randomBytes(4).toString('hex');
let idSeq = 0;
const CALLER_ID = /^[A-Za-z0-9._:-]{1,128}$/;
function newRequestId(): string {
  return ID_PREFIX + (++idSeq).toString(36).padStart(8, '0');
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

function parseQuery(q: string): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  if (!q) return out;
  for (const [k, v] of new URLSearchParams(q)) {
    const prev = out[k];
    if (prev === undefined) out[k] = v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[k] = [prev, v];
  }
  return out;
}

function callerRequestId(given: string): string {
  return given && CALLER_ID.test(given) ? given : newRequestId();
}

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
function writeStandardHeaders(res: HttpResponse, type: string | undefined, own: Record<string, string> | undefined): void {
  if (type === JSON_TYPE && (!own || JSON_HEADERS.every(([name]) => own[name] === undefined))) {
    res.writeHeader(JSON_BLOCK[0], JSON_BLOCK[1]);
    return;
  }
  if (type !== undefined) res.writeHeader(CONTENT_TYPE, type === JSON_TYPE ? JSON_TYPE_BYTES : type);
  for (const [k, v] of SECURITY_HEADERS) res.writeHeader(k, v);
  if (type !== JSON_TYPE) return;
  for (const [name, k, v] of JSON_HEADERS) if (!own || own[name] === undefined) res.writeHeader(k, v);
}

export class HttpEdge {
  readonly app: TemplatedApp;
  private listenSocket: uWS.us_listen_socket | null = null;
  private inflight = 0;
  private accepting = true;
  private readonly corsAny: boolean;
  private readonly corsOrigins: Set<string>;
  private readonly deps: AppDeps;
  private readonly log: Logger;
  private readonly metrics?: HttpMetrics;
  private readonly maxBody: number;
  private readonly maxAnonymousBody: number;
  /** Bytes of request bodies buffered on this node now, and the cap on them. */
  private bodyBytesInFlight = 0;
  private readonly maxInflightBody: number;
  private readonly documentLimits: DocumentLimits;
  /** Streamed answers still open; ended on close() so shutdown does not wait on them. */
  private readonly streams = new Set<ResponseStream>();
  /** The organisations' rate limits (off: undefined); socket events are charged to it too. */
  readonly limiter?: RateLimiter;
  private readonly forwarder?: EdgeForwarder;

  constructor(opts: EdgeOptions) {
    this.deps = opts.deps;
    this.forwarder = opts.forwarder;
    this.log = opts.logger;
    this.metrics = opts.metrics;
    this.maxBody = opts.deps.config.http.maxBodyBytes;
    this.maxAnonymousBody = Math.min(this.maxBody, opts.deps.config.http.anonymousMaxBodyBytes);
    this.maxInflightBody = opts.deps.config.http.maxInflightBodyBytes;
    this.documentLimits = opts.deps.config.documents;
    const limits = opts.deps.config.rateLimits;
    if (limits?.enabled) this.limiter = new RateLimiter(limits, opts.deps.clock);
    const origins = opts.deps.config.http.corsOrigins;
    this.corsAny = origins.includes('*');
    this.corsOrigins = new Set(origins);
    this.app = uWS.App();
    const seen = new Set<string>();
    for (const def of opts.routes) {
      const key = `${def.method} ${def.path}`;
      if (seen.has(key)) throw new Error(`route registered twice: ${key}`);
      seen.add(key);
      this.register(def);
    }
    this.registerMethodNotAllowed(opts.routes);
    if (!seen.has('GET /')) {
      const toReference = (res: HttpResponse, req: HttpRequest) => {
        const ex = this.begin(res, req);
        this.send(res, ex, 302, 'Found: /documentation', 'text/plain; charset=utf-8', { location: '/documentation' });
        this.observe(ex, ex.method, '/', 302);
      };
      this.app.get('/', toReference);
      this.app.head('/', toReference);
    }
    this.app.options('/*', (res, req) => this.preflight(res, req));
    this.app.any('/*', (res, req) => {
      const ex = this.begin(res, req);
      this.fail(res, ex, new AppError('ERR_ROUTE_NOT_FOUND', [ex.method, ex.path]), '404', ex.method);
    });
  }

  /** `headers` and `url`: what the caller already read from `req` (each read is a call into uWS). */
  private begin(res: HttpResponse, req: HttpRequest, headers?: Record<string, string>, url?: string): Exchange {
    const ex: Exchange = {
      aborted: false,
      done: false,
      requestId: callerRequestId(headers ? (headers['x-request-id'] ?? '') : req.getHeader('x-request-id')),
      origin: (headers ? headers['origin'] : req.getHeader('origin')) || undefined,
      started: performance.now(),
      bodyBytes: 0,
      method: req.getCaseSensitiveMethod(),
      path: url ?? req.getUrl(),
      orgid: headers ? (headers['orgid'] ?? '') : req.getHeader('orgid'),
      head: req.getMethod() === 'head',
    };
    this.inflight++;
    res.onAborted(() => {
      ex.aborted = true;
      this.finish(ex);
      ex.onAbort?.();
    });
    return ex;
  }

  private finish(ex: Exchange): void {
    if (ex.done) return;
    ex.done = true;
    this.inflight--;
    if (ex.bodyBytes > 0) {
      this.bodyBytesInFlight -= ex.bodyBytes;
      ex.bodyBytes = 0;
    }
  }

  /** Bytes of request bodies this node holds now (for /metrics and tests). */
  get bodyBytesBuffered(): number {
    return this.bodyBytesInFlight;
  }

  /**
   * Takes `n` more body bytes for `ex` from the node's budget; false when the budget cannot hold
   * them (the request is then answered 503 and its bytes released).
   */
  private holdBody(ex: Exchange, n: number): boolean {
    if (this.bodyBytesInFlight + n > this.maxInflightBody) return false;
    this.bodyBytesInFlight += n;
    ex.bodyBytes += n;
    return true;
  }

  private busy(): AppError {
    const retry = 1;
    return new AppError('ERR_BUSY', [this.maxInflightBody, retry], { headers: { 'retry-after': String(retry) } });
  }

  private corsHeaders(res: HttpResponse, origin: string | undefined): void {
    if (!origin) return;
    if (this.corsAny) res.writeHeader('access-control-allow-origin', '*');
    else if (this.corsOrigins.has(origin)) {
      res.writeHeader('access-control-allow-origin', origin);
      res.writeHeader('vary', 'Origin');
    } else return;
    res.writeHeader('access-control-expose-headers', 'x-request-id, retry-after');
  }

  private preflight(res: HttpResponse, req: HttpRequest): void {
    const ex = this.begin(res, req);
    const reqHeaders = req.getHeader('access-control-request-headers');
    res.cork(() => {
      res.writeStatus(statusLine(204));
      this.corsHeaders(res, ex.origin);
      if (ex.origin && (this.corsAny || this.corsOrigins.has(ex.origin))) {
        res.writeHeader('access-control-allow-methods', 'GET, POST, PUT, PATCH, DELETE, OPTIONS');
        res.writeHeader(
          'access-control-allow-headers',
          reqHeaders || 'authorization, content-type, orgid, x-api-key, x-client-authorization, x-request-id',
        );
        res.writeHeader('access-control-max-age', '600');
      }
      res.writeHeader('x-request-id', ex.requestId);
      writeStandardHeaders(res, undefined, undefined);
      res.endWithoutBody();
    });
    this.finish(ex);
  }

  private send(
    res: HttpResponse,
    ex: Exchange,
    status: number,
    body: string | Buffer,
    type: string,
    headers: Record<string, string> | undefined,
    close = false,
  ): void {
    if (ex.aborted || ex.done) return;
    res.cork(() => {
      res.writeStatus(statusLine(status));
      res.writeHeader(REQUEST_ID, ex.requestId);
      this.corsHeaders(res, ex.origin);
      writeStandardHeaders(res, type, headers);
      if (headers) for (const k in headers) res.writeHeader(k, headers[k]);
      if (ex.head) res.endWithoutBody(typeof body === 'string' ? Buffer.byteLength(body) : body.length, close);
      else res.end(body, close);
    });
    this.finish(ex);
  }

  private fail(res: HttpResponse, ex: Exchange, err: unknown, routeLabel: string, method = '', close = false): number {
    const env = toEnvelope(err);
    if (env.statusCode >= 500) {
      this.log.error({ err, reqId: ex.requestId }, 'request failed');
    }
    let headers = err instanceof AppError ? err.headers : undefined;
    if (env.statusCode === 401) headers = { ...headers, 'www-authenticate': wwwAuthenticate(err) };
    this.send(res, ex, env.statusCode, JSON.stringify(env), JSON_TYPE, headers, close);
    this.observe(ex, method, routeLabel, env.statusCode);
    return env.statusCode;
  }

  private observe(ex: Exchange, method: string, route: string, status: number): void {
    const ms = performance.now() - ex.started;
    this.metrics?.observe(method, route, status, ms / 1000);
    if (this.log.isLevelEnabled('info')) {
      this.log.info(
        { reqId: ex.requestId, method: method || ex.method, path: ex.path, route, status, ms: Math.round(ms * 100) / 100, orgid: ex.orgid || undefined },
        'request',
      );
    }
  }

  private register(def: RouteDef): void {
    const compiled = compileRoute(def);
    const names = paramNames(def.path);
    const hasBody = def.method !== 'GET' && def.method !== 'DELETE';
    // Routes that take no credentials get the small anonymous cap unless they set their own.
    const maxBody = def.maxBodyBytes ?? (def.auth === 'none' ? this.maxAnonymousBody : this.maxBody);
    const handler = (res: HttpResponse, req: HttpRequest) => {
      // Everything from `req` is read now: it is invalid after this callback returns.
      const headers: Record<string, string> = {};
      req.forEach((k, v) => {
        headers[k] = v;
      });
      const url = req.getUrl();
      const ex = this.begin(res, req, headers, url);
      if (!this.accepting) {
        return void this.fail(res, ex, new AppError('ERR_UNAVAILABLE', ['the server is shutting down']), def.path, def.method, true);
      }
      const rawQuery = req.getQuery() ?? '';
      const params: Record<string, string> = {};
      for (let i = 0; i < names.length; i++) params[names[i]] = req.getParameter(i) ?? '';
      if (!hasBody) {
        void this.handle(res, ex, def, compiled, headers, url, rawQuery, params, undefined);
        return;
      }
      let checked: Checked | undefined;
      if (def.auth !== 'none') {
        // The caller is checked from the headers before any of the body is kept, so an anonymous
        // or foreign caller cannot make the server hold bodies. In a cluster only the node that
        // serves the tenant checks: another node's copy of the credentials (an API key created a
        // moment ago) may lag, and the owner checks anyway. What was checked is handed on, so the
        // request is not resolved and authenticated a second time once its body has arrived.
        let org: Org | undefined;
        try {
          org = this.resolveTenant(def, headers);
          const fwd = this.forwarder;
          const serves = !org || fwd === undefined || fwd.isForwarded(headers) || fwd.owns(org.orgId);
          checked = serves ? { org, principal: this.authenticate(def, headers, org ? org.orgId : '') } : undefined;
        } catch (err) {
          return void this.fail(res, ex, org ? this.chargeRefused(res, headers, org, err) : err, def.path, def.method, true);
        }
      }
      const declared = Number(headers['content-length'] ?? '0');
      if (declared > maxBody) {
        return void this.fail(res, ex, new AppError('ERR_PAYLOAD_TOO_LARGE', [maxBody]), def.path, def.method, true);
      }
      // A declared length is reserved whole, up front: a body the node cannot hold is refused
      // before its first byte rather than half-way.
      if (declared > 0 && !this.holdBody(ex, declared)) {
        return void this.fail(res, ex, this.busy(), def.path, def.method, true);
      }
      let chunks: Buffer[] | undefined = [];
      let size = 0;
      res.onData((chunk, isLast) => {
        if (!chunks) return;
        size += chunk.byteLength;
        if (size > maxBody) {
          chunks = undefined;
          this.fail(res, ex, new AppError('ERR_PAYLOAD_TOO_LARGE', [maxBody]), def.path, def.method, true);
          return;
        }
        if (size > ex.bodyBytes && !this.holdBody(ex, size - ex.bodyBytes)) {
          chunks = undefined;
          this.fail(res, ex, this.busy(), def.path, def.method, true);
          return;
        }
        if (chunk.byteLength > 0) chunks.push(Buffer.from(new Uint8Array(chunk)));
        if (isLast) {
          const raw = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
          chunks = undefined;
          void this.handle(res, ex, def, compiled, headers, url, rawQuery, params, raw, checked);
        }
      });
    };
    switch (def.method) {
      case 'GET':
        this.app.get(def.path, handler);
        // HEAD answers what GET would, without the body (a streamed answer has no length to give).
        if (!def.stream) this.app.head(def.path, handler);
        break;
      case 'POST':
        this.app.post(def.path, handler);
        break;
      case 'PUT':
        this.app.put(def.path, handler);
        break;
      case 'PATCH':
        this.app.patch(def.path, handler);
        break;
      case 'DELETE':
        this.app.del(def.path, handler);
        break;
    }
  }

  /**
   * A known path asked with a method it does not serve answers 405 with `Allow`, instead of
   * falling through to a parametric route of that method (`GET /events/checkin` would otherwise
   * reach `GET /events/:id`) or to the 404. Paths are grouped by shape, so `/x/:id` and `/x/:name`
   * are one path.
   */
  private registerMethodNotAllowed(routes: readonly RouteDef[]): void {
    const byShape = new Map<string, { path: string; methods: Set<string>; stream: boolean }>();
    for (const def of routes) {
      const shape = def.path.replace(/:[^/]+/g, ':');
      let entry = byShape.get(shape);
      if (!entry) byShape.set(shape, (entry = { path: def.path, methods: new Set(), stream: false }));
      entry.methods.add(def.method);
      if (def.method === 'GET' && def.stream) entry.stream = true;
    }
    for (const { path, methods, stream } of byShape.values()) {
      const allowed = [...methods];
      if (methods.has('GET') && !stream) allowed.push('HEAD');
      allowed.push('OPTIONS');
      const allow = allowed.join(', ');
      const refuse = (res: HttpResponse, req: HttpRequest) => {
        const ex = this.begin(res, req);
        const err = new AppError('ERR_METHOD_NOT_ALLOWED', [ex.method, path, allow], { headers: { allow } });
        this.fail(res, ex, err, path, ex.method);
      };
      for (const m of METHODS) {
        if (methods.has(m)) continue;
        if (m === 'GET') this.app.get(path, refuse);
        else if (m === 'POST') this.app.post(path, refuse);
        else if (m === 'PUT') this.app.put(path, refuse);
        else if (m === 'PATCH') this.app.patch(path, refuse);
        else this.app.del(path, refuse);
      }
      if (!methods.has('GET') || stream) this.app.head(path, refuse);
    }
  }

  /**
   * A caller of an organisation refused from its headers (no or a bad credential) is charged as
   * anonymous, like one refused after its body (see handle); over that limit the answer is the 429.
   */
  private chargeRefused(res: HttpResponse, headers: Record<string, string>, org: Org, err: unknown): unknown {
    if (!this.limiter) return err;
    const socketIp = Buffer.from(res.getRemoteAddressAsText()).toString();
    const fwd = this.forwarder;
    const ip = fwd !== undefined && fwd.isForwarded(headers) ? fwd.clientIp(headers, socketIp) : socketIp;
    try {
      this.limiter.chargeAnonymous(org.orgId, org.plan, ip);
    } catch (limited) {
      return limited;
    }
    return err;
  }

  /** The organisation named by `orgid`, as the route's tenant mode asks. */
  private resolveTenant(def: RouteDef, headers: Record<string, string>): Org | undefined {
    const mode = def.tenant ?? 'required';
    const orgid = headers['orgid'];
    if (mode === 'none') return undefined;
    if (!orgid) {
      if (mode === 'optional') return undefined;
      throw new AppError('ERR_ORGID_MISSING');
    }
    const org = ORGID.test(orgid) ? this.deps.store.getOrg(orgid) : undefined;
    if (!org) throw new AppError('ERR_ORGID_INVALID', [orgid.length > 64 ? orgid.slice(0, 64) + '…' : orgid]);
    return org;
  }

  private authenticate(def: RouteDef, headers: Record<string, string>, tenant: string): Principal | undefined {
    let principal: Principal | undefined;
    try {
      const authz = headers['authorization'];
      if (authz) {
        const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
        if (!m) throw new AppError('ERR_UNAUTHENTICATED', ['the Authorization header must be "Bearer <token>"']);
        principal = this.deps.tokens.verifyAccess(m[1]);
        const client = headers['x-client-authorization'];
        if (client && (principal.kind === 'app' || principal.roles.includes('System'))) {
          principal = this.relayedCustomer(principal, client);
        }
      }
      for (const resolve of this.deps.credentials) {
        if (principal) break;
        principal = resolve(headers, tenant || undefined);
      }
    } catch (err) {
      // A public route still answers a caller whose token is bad; it just does so anonymously.
      if (def.auth === 'none') return undefined;
      throw err;
    }
    if (def.auth === 'none') {
      return principal && (!tenant || principal.org === tenant) ? principal : undefined;
    }
    if (!principal) throw new AppError('ERR_UNAUTHENTICATED', ['send a bearer token in the Authorization header']);
    if (tenant && principal.org !== tenant) throw new AppError('ERR_WRONG_ORG', [tenant]);
    if (def.auth === 'staff' && !(principal.kind === 'staff' && principal.roles.includes('User'))) {
      throw new AppError('ERR_FORBIDDEN', ['this route needs a staff token']);
    }
    if (def.auth === 'customer' && principal.kind === 'app') {
      throw new AppError('ERR_FORBIDDEN', ['an application token alone does not act for a customer']);
    }
    if (def.roles && def.roles.length > 0 && !def.roles.some((r) => principal!.roles.includes(r))) {
      throw new AppError('ERR_ROLE_REQUIRED', [def.roles.join(', ')]);
    }
    return principal;
  }

  /**
   * An application (or System service) relaying a customer's request: the customer's own token
   * rides in x-client-authorization and becomes the principal (spec: Authentication →
   * Combinations). An application token alone never acts for a customer.
   */
  private relayedCustomer(service: Principal, header: string): Principal {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
    if (!m) throw new AppError('ERR_UNAUTHENTICATED', ['x-client-authorization must be "Bearer <customer token>"']);
    const customer = this.deps.tokens.verifyAccess(m[1]);
    if (customer.kind !== 'customer' || customer.org !== service.org) {
      throw new AppError('ERR_UNAUTHENTICATED', ['x-client-authorization must carry a customer token of the same organisation']);
    }
    return { ...customer, app: service.sub };
  }

  private async handle(
    res: HttpResponse,
    ex: Exchange,
    def: RouteDef,
    compiled: CompiledRoute,
    headers: Record<string, string>,
    url: string,
    rawQuery: string,
    rawParams: Record<string, string>,
    raw: Buffer | undefined,
    checked?: Checked,
  ): Promise<void> {
    // The caller's address is read from the socket when something asks for it: each read is a
    // getpeername system call, and most requests never need it.
    let ip: string | undefined;
    const clientIp = (): string => (ip ??= ex.aborted || ex.done ? '' : Buffer.from(res.getRemoteAddressAsText()).toString());
    try {
      const org = checked ? checked.org : this.resolveTenant(def, headers);
      const tenant = org ? org.orgId : '';
      const fwd = this.forwarder;
      if (fwd !== undefined && tenant !== '') {
        if (fwd.isForwarded(headers)) ip = fwd.clientIp(headers, clientIp());
        else if (!def.stream && !fwd.owns(tenant)) {
          const answer = await fwd.forward(tenant, def.method, url, rawQuery, headers, clientIp(), raw);
          if (answer !== undefined) return this.relay(res, ex, def, answer);
        }
      }
      // Checked before the body when this node serves the tenant (a forwarded request returned above).
      let principal: Principal | undefined;
      if (checked) principal = checked.principal;
      else {
        try {
          principal = this.authenticate(def, headers, tenant);
        } catch (err) {
          // A refused credential is charged as an anonymous caller: never to the organisation's
          // signed-in users' bucket, which a stranger's bad tokens must not spend.
          if (this.limiter && org) this.limiter.chargeAnonymous(tenant, org.plan, clientIp());
          throw err;
        }
      }
      if (this.limiter) {
        if (def.rateLimit === 'address') this.limiter.chargeAddress(clientIp());
        // By principal (edge/rate-limit.ts): a signed-in caller spends the plan, an anonymous one
        // the organisation's anonymous bucket and its own address.
        if (org) {
          if (principal) this.limiter.charge(tenant, org.plan, principal);
          else this.limiter.chargeAnonymous(tenant, org.plan, clientIp());
        }
      }
      def.guard?.({ tenant, principal, deps: this.deps });
      for (const k in rawParams) rawParams[k] = decodeParam(rawParams[k]);
      const params = compiled.params ? compiled.params(rawParams) : rawParams;
      const query = parseQuery(rawQuery);
      if (compiled.query) compiled.query(query);
      let body: unknown;
      if (raw && raw.length > 0) {
        const type = (headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
        const accepts = def.consumes ?? [JSON_TYPE];
        if (type && !accepts.includes(type) && !(type.endsWith('+json') && accepts.includes(JSON_TYPE))) {
          throw new AppError('ERR_UNSUPPORTED_MEDIA_TYPE', [accepts.join(' or ')]);
        }
        if (!type || type === JSON_TYPE || type.endsWith('+json')) {
          if (!isUtf8(raw)) throw new AppError('ERR_INVALID_JSON', ['it is not valid UTF-8']);
          body = parseBoundedJson(raw, this.documentLimits);
        }
      }
      if (compiled.body) {
        if (body === undefined && !(raw && raw.length > 0 && def.consumes)) body = {};
        compiled.body(body);
      }
      const ctx: RequestContext = {
        method: def.method as Method,
        url,
        params,
        query,
        body,
        rawBody: raw,
        headers,
        tenant,
        principal,
        requestId: ex.requestId,
        get ip() {
          return clientIp();
        },
        deps: this.deps,
        status: def.status ?? 200,
        responseHeaders: {},
      };
      if (def.stream) return await this.handleStream(res, ex, def, ctx);
      let result = def.handler(ctx);
      if (result instanceof Promise) result = await result;
      if (ex.aborted) return this.observe(ex, def.method, def.path, 499);
      let out: string | Buffer;
      let type = JSON_TYPE;
      if (ctx.type) {
        type = ctx.type;
        out = typeof result === 'string' || Buffer.isBuffer(result) ? result : String(result ?? '');
      } else if (result === undefined || ctx.status === 204) {
        out = '';
      } else if (ctx.status >= 300) {
        out = JSON.stringify(result);
      } else {
        out = compiled.serialize(result);
      }
      this.send(res, ex, ctx.status, out, type, ctx.responseHeaders);
      this.observe(ex, def.method, def.path, ctx.status);
    } catch (err) {
      this.fail(res, ex, err, def.path, def.method);
    }
  }

  /** Cluster mode: the owner's answer to a forwarded request, written as it is. */
  private relay(res: HttpResponse, ex: Exchange, def: RouteDef, a: ForwardedResponse): void {
    if (!ex.aborted && !ex.done) {
      res.cork(() => {
        res.writeStatus(statusLine(a.status));
        for (const [k, v] of a.headers) res.writeHeader(k, v);
        res.end(a.body);
      });
      this.finish(ex);
    }
    this.observe(ex, def.method, def.path, ex.aborted ? 499 : a.status);
  }

  /**
   * A `stream: true` route: the handler gets ctx.stream and answers through it. An error thrown
   * before the first write is answered with the usual envelope; after it, the stream just ends.
   */
  private async handleStream(res: HttpResponse, ex: Exchange, def: RouteDef, ctx: RequestContext): Promise<void> {
    let started = false;
    let ended = false;
    let waitingWritable = false;
    let drain: Array<() => void> = [];
    let close: Array<() => void> = [];
    const closed = () => {
      const cbs = close;
      close = [];
      drain = [];
      this.streams.delete(stream);
      for (const cb of cbs) cb();
    };
    const head = () => {
      started = true;
      res.writeStatus(statusLine(ctx.status));
      res.writeHeader('x-request-id', ex.requestId);
      writeStandardHeaders(res, ctx.type ?? JSON_TYPE, ctx.responseHeaders);
      this.corsHeaders(res, ex.origin);
      for (const k in ctx.responseHeaders) res.writeHeader(k, ctx.responseHeaders[k]);
    };
    const stream: ResponseStream = {
      get closed() {
        return ended || ex.aborted;
      },
      write: (chunk) => {
        if (ended || ex.aborted) return false;
        let ok = true;
        res.cork(() => {
          if (!started) head();
          ok = res.write(chunk);
        });
        if (!ok && !waitingWritable) {
          waitingWritable = true;
          res.onWritable(() => {
            waitingWritable = false;
            const cbs = drain;
            drain = [];
            for (const cb of cbs) cb();
            return true;
          });
        }
        return ok;
      },
      onDrain: (cb) => {
        if (!ended && !ex.aborted) drain.push(cb);
      },
      onClose: (cb) => {
        if (ended || ex.aborted) queueMicrotask(cb);
        else close.push(cb);
      },
      end: (chunk) => {
        if (ended) return;
        ended = true;
        if (!ex.aborted) {
          res.cork(() => {
            if (!started) head();
            res.end(chunk ?? '');
          });
          this.finish(ex);
          this.observe(ex, def.method, def.path, ctx.status);
        }
        closed();
      },
    };
    (ctx as { stream?: ResponseStream }).stream = stream;
    ex.onAbort = () => {
      if (ended) return;
      ended = true;
      this.observe(ex, def.method, def.path, 499);
      closed();
    };
    this.streams.add(stream);
    try {
      const result = def.handler(ctx);
      if (result instanceof Promise) await result;
    } catch (err) {
      if (started || ended || ex.aborted) {
        this.log.error({ err, reqId: ex.requestId }, 'stream failed');
        stream.end();
      } else {
        ended = true;
        this.streams.delete(stream);
        this.fail(res, ex, err, def.path, def.method);
      }
    }
  }

  listen(host: string, port: number): Promise<number> {
    return new Promise((resolve, reject) => {
      this.app.listen(host, port, (sock) => {
        if (!sock) return reject(new Error(`could not listen on ${host}:${port}`));
        this.listenSocket = sock;
        resolve(uWS.us_socket_local_port(sock));
      });
    });
  }

  get inflightCount(): number {
    return this.inflight;
  }

  /** Stops accepting connections, then waits (up to graceMs) for requests in flight. */
  async close(graceMs: number): Promise<void> {
    this.accepting = false;
    for (const s of [...this.streams]) s.end();
    if (this.listenSocket) {
      uWS.us_listen_socket_close(this.listenSocket);
      this.listenSocket = null;
    }
    const deadline = Date.now() + graceMs;
    while (this.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }
}

function decodeParam(v: string): string {
  if (!v.includes('%')) return v;
  try {
    return decodeURIComponent(v);
  } catch {
    throw new AppError('ERR_BAD_REQUEST', ['a path parameter is not valid percent-encoding']);
  }
}
