// Writing an answer: a body with its headers, an error as the spec's envelope, a forwarded
// owner's answer as it is; then the metrics and the access log. Writes happen inside `res.cork`,
// and nothing is written to an exchange that is aborted or already answered.
import type uWS from 'uWebSockets.js';
import { AppError, toEnvelope } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { ForwardedResponse } from '../cluster-forward.js';
import type { HttpMetrics } from '../metrics.js';
import { JSON_TYPE, REQUEST_ID, statusLine, writeStandardHeaders } from './answer-headers.js';
import type { Cors } from './cors.js';
import type { Exchange, Exchanges } from './exchange.js';

/** 401 answers carry the scheme a client should use (RFC 6750); a bad token also says so. */
const TOKEN_ERRORS = new Set(['ERR_TOKEN_INVALID', 'ERR_TOKEN_REFUSED', 'ERR_TOKEN_EXPIRED']);

function wwwAuthenticate(err: unknown): string {
  return err instanceof AppError && TOKEN_ERRORS.has(err.code) ? 'Bearer error="invalid_token"' : 'Bearer';
}

export class Answers {
  constructor(
    readonly exchanges: Exchanges,
    readonly cors: Cors,
    readonly log: Logger,
    private readonly metrics: HttpMetrics | undefined,
  ) {}

  send(
    res: uWS.HttpResponse,
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
      this.cors.headers(res, ex.origin);
      writeStandardHeaders(res, type, headers);
      if (headers) for (const k in headers) res.writeHeader(k, headers[k]);
      if (ex.head) res.endWithoutBody(typeof body === 'string' ? Buffer.byteLength(body) : body.length, close);
      else res.end(body, close);
    });
    this.exchanges.finish(ex);
  }

  fail(res: uWS.HttpResponse, ex: Exchange, err: unknown, routeLabel: string, method = '', close = false): number {
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

  /** Cluster mode: the owner's answer to a forwarded request, written as it is. */
  relay(res: uWS.HttpResponse, ex: Exchange, method: string, route: string, a: ForwardedResponse): void {
    if (!ex.aborted && !ex.done) {
      res.cork(() => {
        res.writeStatus(statusLine(a.status));
        for (const [k, v] of a.headers) res.writeHeader(k, v);
        res.end(a.body);
      });
      this.exchanges.finish(ex);
    }
    this.observe(ex, method, route, ex.aborted ? 499 : a.status);
  }

  observe(ex: Exchange, method: string, route: string, status: number): void {
    const ms = performance.now() - ex.started;
    this.metrics?.observe(method, route, status, ms / 1000);
    if (this.log.isLevelEnabled('info')) {
      this.log.info(
        { reqId: ex.requestId, method: method || ex.method, path: ex.path, route, status, ms: Math.round(ms * 100) / 100, orgid: ex.orgid || undefined },
        'request',
      );
    }
  }
}
