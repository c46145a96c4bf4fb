// The HTTP edge on uWebSockets.js. Every route of the table becomes one uWS route; a request is
// read synchronously (headers, url, query, parameters: uWS frees `req` at the first await), its
// body collected chunk by chunk (http/body-reader.ts), then passed through the pipeline's stages
// as plain calls: tenant (http/tenant.ts), cluster forwarding, credentials (http/authenticate.ts),
// rate limits (http/rate-charge.ts), input (http/request-input.ts), the handler, and the answer
// (http/answer.ts; streamed ones in http/stream.ts). Writes after an await happen inside
// `res.cork`, and nothing is written to a response the client has aborted.
import uWS from 'uWebSockets.js';
import type { Principal } from '../core/auth/tokens.js';
import type { DocumentLimits } from '../core/document-limits.js';
import { AppError } from '../core/errors.js';
import type { Logger } from '../core/log.js';
import type { Org } from '../core/store/store.js';
import { routeKey, type EdgeForwarder, type ForwardedRequest, type ForwardedResponse } from './cluster-forward.js';
import { compileRoute, type CompiledRoute } from './compile.js';
import type { AppDeps } from './deps.js';
import { JSON_TYPE } from './http/answer-headers.js';
import { Answers } from './http/answer.js';
import { CapturedAnswer } from './http/captured-answer.js';
import { authenticate } from './http/authenticate.js';
import { BodyBudget } from './http/body-budget.js';
import { readBody } from './http/body-reader.js';
import { Cors } from './http/cors.js';
import { Exchanges, type Exchange } from './http/exchange.js';
import { registerMethodNotAllowed } from './http/method-not-allowed.js';
import { chargeRefused, chargeRequest } from './http/rate-charge.js';
import { decodeParam, parseBody, parseQuery } from './http/request-input.js';
import { serveStream } from './http/stream.js';
import { hintedTenant, resolveTenant } from './http/tenant.js';
import type { HttpMetrics } from './metrics.js';
import { RateLimiter } from './rate-limit.js';
import { paramNames, type Method, type RequestContext, type ResponseStream, type RouteDef } from './route.js';

export type HttpResponse = uWS.HttpResponse;
export type HttpRequest = uWS.HttpRequest;
export type TemplatedApp = uWS.TemplatedApp;

/** The tenant and caller a request was checked for from its headers, before its body. */
interface Checked {
  org: Org | undefined;
  principal: Principal | undefined;
}

/** A route as registered: what a forwarded request naming it is served with. */
interface Registered {
  def: RouteDef;
  compiled: CompiledRoute;
  maxBody: number;
}

export interface EdgeOptions {
  deps: AppDeps;
  routes: RouteDef[];
  metrics?: HttpMetrics;
  logger: Logger;
  /** Cluster mode: sends requests for tenants this node does not own to their owner. */
  forwarder?: EdgeForwarder;
}

/**
 * A request's context. A class, not an object literal: the caller's address is a getter (read
 * from the socket only when asked), and a literal with a getter is built through V8's slow path,
 * ~2 µs on every request.
 */
class Context implements RequestContext {
  readonly responseHeaders: Record<string, string> = {};
  type?: string;

  constructor(
    readonly method: Method,
    readonly url: string,
    // As RequestContext's defaults: each route's schemas type them for its handler.
    readonly params: any,
    readonly query: any,
    readonly body: any,
    readonly rawBody: Buffer | undefined,
    readonly headers: Readonly<Record<string, string>>,
    readonly tenant: string,
    readonly principal: Principal | undefined,
    readonly requestId: string,
    private readonly clientIp: () => string,
    readonly deps: AppDeps,
    public status: number,
  ) {}

  get ip(): string {
    return this.clientIp();
  }
}

export class HttpEdge {
  readonly app: TemplatedApp;
  private listenSocket: uWS.us_listen_socket | null = null;
  private accepting = true;
  private readonly deps: AppDeps;
  private readonly maxBody: number;
  private readonly maxAnonymousBody: number;
  private readonly bodies: BodyBudget;
  private readonly exchanges: Exchanges;
  private readonly answers: Answers;
  private readonly documentLimits: DocumentLimits;
  /** Streamed answers still open; ended on close() so shutdown does not wait on them. */
  private readonly streams = new Set<ResponseStream>();
  /** The organisations' rate limits (off: undefined); socket events are charged to it too. */
  readonly limiter?: RateLimiter;
  private readonly forwarder?: EdgeForwarder;
  /** Routes by routeKey, for requests other nodes forward here. */
  private readonly registered = new Map<string, Registered>();

  constructor(opts: EdgeOptions) {
    this.deps = opts.deps;
    this.forwarder = opts.forwarder;
    this.maxBody = opts.deps.config.http.maxBodyBytes;
    this.maxAnonymousBody = Math.min(this.maxBody, opts.deps.config.http.anonymousMaxBodyBytes);
    this.bodies = new BodyBudget(opts.deps.config.http.maxInflightBodyBytes);
    this.exchanges = new Exchanges(this.bodies);
    const cors = new Cors(opts.deps.config.http.corsOrigins);
    this.answers = new Answers(this.exchanges, cors, opts.logger, opts.metrics);
    this.documentLimits = opts.deps.config.documents;
    const limits = opts.deps.config.rateLimits;
    if (limits?.enabled) this.limiter = new RateLimiter(limits, opts.deps.clock);
    this.app = uWS.App();
    const seen = new Set<string>();
    for (const def of opts.routes) {
      const key = `${def.method} ${def.path}`;
      if (seen.has(key)) throw new Error(`route registered twice: ${key}`);
      seen.add(key);
      this.register(def);
    }
    registerMethodNotAllowed(this.app, opts.routes, this.answers);
    if (!seen.has('GET /')) {
      const toReference = (res: HttpResponse, req: HttpRequest) => {
        const ex = this.exchanges.begin(res, req);
        this.answers.send(res, ex, 302, 'Found: /documentation', 'text/plain; charset=utf-8', { location: '/documentation' });
        this.answers.observe(ex, ex.method, '/', 302);
      };
      this.app.get('/', toReference);
      this.app.head('/', toReference);
    }
    this.app.options('/*', (res, req) => cors.preflight(res, req, this.exchanges));
    this.app.any('/*', (res, req) => {
      const ex = this.exchanges.begin(res, req);
      this.answers.fail(res, ex, new AppError('ERR_ROUTE_NOT_FOUND', [ex.method, ex.path]), '404', ex.method);
    });
  }

  /** Bytes of request bodies this node holds now (for /metrics and tests). */
  get bodyBytesBuffered(): number {
    return this.bodies.bytes;
  }

  private register(def: RouteDef): void {
    const compiled = compileRoute(def, this.deps.config.http.compileAtStart);
    const names = paramNames(def.path);
    const hasBody = def.method !== 'GET' && def.method !== 'DELETE';
    // Routes that take no credentials get the small anonymous cap unless they set their own.
    const maxBody = def.maxBodyBytes ?? (def.auth === 'none' ? this.maxAnonymousBody : this.maxBody);
    this.registered.set(routeKey(def), { def, compiled, maxBody });
    const handler = (res: HttpResponse, req: HttpRequest) => {
      // Everything from `req` is read now: it is invalid after this callback returns.
      const headers: Record<string, string> = {};
      req.forEach((k, v) => {
        headers[k] = v;
      });
      const url = req.getUrl();
      const ex = this.exchanges.begin(res, req, headers, url);
      if (!this.accepting) {
        return void this.answers.fail(res, ex, new AppError('ERR_UNAVAILABLE', ['the server is shutting down']), def.path, def.method, true);
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
          org = resolveTenant(this.deps.store, def, headers);
          const fwd = this.forwarder;
          const serves = !org || fwd === undefined || fwd.owns(org.orgId);
          checked = serves ? { org, principal: authenticate(this.deps, def, headers, org ? org.orgId : '') } : undefined;
        } catch (err) {
          const refused = org ? chargeRefused(this.limiter, res, org, err) : err;
          return void this.answers.fail(res, ex, refused, def.path, def.method, true);
        }
      }
      readBody(res, ex, def, headers, maxBody, this.bodies, this.answers, (raw) => {
        void this.handle(res, ex, def, compiled, headers, url, rawQuery, params, raw, checked);
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
   * Cluster mode: serves a request another node forwarded here (it matched `req.route` there)
   * through the same stages as a request of this node's own: the same caps on its body, tenant,
   * credentials (checked here: the forwarding node's copy may lag), rate limits charged to the
   * caller's address, input, handler and answer. Only the socket is missing: the answer is
   * collected and relayed by the forwarding node.
   */
  serveForwarded(req: ForwardedRequest): Promise<ForwardedResponse> {
    const sink = new CapturedAnswer();
    const res = sink.response;
    const ex = this.exchanges.beginForwarded(req.method, req.url, req.headers);
    const r = this.registered.get(req.route);
    if (r === undefined) {
      this.answers.fail(res, ex, new AppError('ERR_ROUTE_NOT_FOUND', [req.method, req.url]), '404', req.method);
      return sink.answer;
    }
    const { def, compiled, maxBody } = r;
    if (!this.accepting) {
      this.answers.fail(res, ex, new AppError('ERR_UNAVAILABLE', ['the server is shutting down']), def.path, def.method, true);
      return sink.answer;
    }
    const raw = req.body && req.body.length > 0 ? Buffer.from(req.body.buffer, req.body.byteOffset, req.body.byteLength) : undefined;
    if (raw && raw.length > maxBody) {
      this.answers.fail(res, ex, new AppError('ERR_PAYLOAD_TOO_LARGE', [maxBody]), def.path, def.method, true);
      return sink.answer;
    }
    if (raw && !this.bodies.hold(ex, raw.length)) {
      this.answers.fail(res, ex, this.bodies.busy(), def.path, def.method, true);
      return sink.answer;
    }
    void this.handle(res, ex, def, compiled, req.headers, req.url, req.query, { ...req.params }, raw, undefined, req.ip);
    return sink.answer;
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
    forwardedFrom?: string,
  ): Promise<void> {
    // The caller's address is read from the socket when something asks for it: each read is a
    // getpeername system call, and most requests never need it. A forwarded request brings the
    // address the first node saw.
    let ip: string | undefined = forwardedFrom;
    const clientIp = (): string => (ip ??= ex.aborted || ex.done ? '' : Buffer.from(res.getRemoteAddressAsText()).toString());
    try {
      const org = checked ? checked.org : resolveTenant(this.deps.store, def, headers);
      const tenant = org ? org.orgId : '';
      const fwd = this.forwarder;
      // A forwarded request is served here, whoever owns the tenant now: never forwarded twice.
      if (fwd !== undefined && forwardedFrom === undefined) {
        if (tenant === '' && def.tenantHint !== undefined) {
          const named = hintedTenant(this.deps.store, def.tenantHint, headers, raw);
          if (named !== undefined && !fwd.owns(named)) {
            const answer = await fwd.forward(named, def, url, rawQuery, rawParams, { ...headers, orgid: named }, clientIp(), raw);
            if (answer !== undefined) return this.answers.relay(res, ex, def.method, def.path, answer);
          }
        } else if (tenant !== '' && !def.stream && !fwd.owns(tenant)) {
          const answer = await fwd.forward(tenant, def, url, rawQuery, rawParams, headers, clientIp(), raw);
          if (answer !== undefined) return this.answers.relay(res, ex, def.method, def.path, answer);
        }
      }
      // Checked before the body when this node serves the tenant (a forwarded request returned above).
      let principal: Principal | undefined;
      if (checked) principal = checked.principal;
      else {
        try {
          principal = authenticate(this.deps, def, headers, tenant);
        } catch (err) {
          // A refused credential is charged as an anonymous caller: never to the organisation's
          // signed-in users' bucket, which a stranger's bad tokens must not spend.
          if (this.limiter && org) this.limiter.chargeAnonymous(tenant, org.plan, clientIp());
          throw err;
        }
      }
      if (this.limiter) chargeRequest(this.limiter, def, org, principal, clientIp);
      def.guard?.({ tenant, principal, deps: this.deps });
      for (const k in rawParams) rawParams[k] = decodeParam(rawParams[k]);
      const params = compiled.params ? compiled.params(rawParams) : rawParams;
      const query = parseQuery(rawQuery);
      if (compiled.query) compiled.query(query);
      let body = parseBody(def, headers, raw, this.documentLimits);
      if (compiled.body) {
        if (body === undefined && !(raw && raw.length > 0 && def.consumes)) body = {};
        compiled.body(body);
      }
      const ctx = new Context(def.method as Method, url, params, query, body, raw, headers, tenant, principal, ex.requestId, clientIp, this.deps, def.status ?? 200);
      if (def.stream) return await serveStream(res, ex, def, ctx, this.answers, this.streams);
      let result = def.handler(ctx);
      if (result instanceof Promise) result = await result;
      if (ex.aborted) return this.answers.observe(ex, def.method, def.path, 499);
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
      this.answers.send(res, ex, ctx.status, out, type, ctx.responseHeaders);
      this.answers.observe(ex, def.method, def.path, ctx.status);
    } catch (err) {
      this.answers.fail(res, ex, err, def.path, def.method);
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
    return this.exchanges.inflight;
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
    while (this.exchanges.inflight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  }
}
