// CORS: which origins may read answers, and the preflight (OPTIONS) answer.
import type uWS from 'uWebSockets.js';
import { statusLine, writeStandardHeaders } from './answer-headers.js';
import type { Exchanges } from './exchange.js';

export class Cors {
  private readonly any: boolean;
  private readonly origins: Set<string>;

  constructor(origins: readonly string[]) {
    this.any = origins.includes('*');
    this.origins = new Set(origins);
  }

  /** The CORS headers of an answer to `origin` (none when it sent none, or is not allowed). */
  headers(res: uWS.HttpResponse, origin: string | undefined): void {
    if (!origin) return;
    if (this.any) res.writeHeader('access-control-allow-origin', '*');
    else if (this.origins.has(origin)) {
      res.writeHeader('access-control-allow-origin', origin);
      res.writeHeader('vary', 'Origin');
    } else return;
    res.writeHeader('access-control-expose-headers', 'x-request-id, retry-after');
  }

  preflight(res: uWS.HttpResponse, req: uWS.HttpRequest, exchanges: Exchanges): void {
    const ex = exchanges.begin(res, req);
    const reqHeaders = req.getHeader('access-control-request-headers');
    res.cork(() => {
      res.writeStatus(statusLine(204));
      this.headers(res, ex.origin);
      if (ex.origin && (this.any || this.origins.has(ex.origin))) {
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
    exchanges.finish(ex);
  }
}
