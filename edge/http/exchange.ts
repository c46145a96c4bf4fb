// One exchange (a request and its answer) from the moment uWS hands it over until it is answered
// or aborted, and the node's count of exchanges in flight.
import { randomBytes } from 'node:crypto';
import type uWS from 'uWebSockets.js';
import type { BodyBudget } from './body-budget.js';

/** State of one exchange that outlives the synchronous part of the uWS callback. */
export interface Exchange {
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

// Request ids: a random per-process prefix and a counter (unique without a syscall per request).
// A caller's own x-request-id is kept when it is a plain token, so it can never inject into logs
// or headers.
const ID_PREFIX = randomBytes(4).toString('hex');
let idSeq = 0;
const CALLER_ID = /^[A-Za-z0-9._:-]{1,128}$/;
function newRequestId(): string {
  return ID_PREFIX + (++idSeq).toString(36).padStart(8, '0');
}

function callerRequestId(given: string): string {
  return given && CALLER_ID.test(given) ? given : newRequestId();
}

export class Exchanges {
  /** Exchanges begun and not yet answered or aborted. */
  inflight = 0;

  constructor(private readonly bodies: BodyBudget) {}

  /** `headers` and `url`: what the caller already read from `req` (each read is a call into uWS). */
  begin(res: uWS.HttpResponse, req: uWS.HttpRequest, headers?: Record<string, string>, url?: string): Exchange {
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

  /** Cluster mode: a request another node forwarded here, answered into `res` (a captured answer). */
  beginForwarded(method: string, url: string, headers: Record<string, string>): Exchange {
    this.inflight++;
    return {
      aborted: false,
      done: false,
      requestId: callerRequestId(headers['x-request-id'] ?? ''),
      origin: headers['origin'] || undefined,
      started: performance.now(),
      bodyBytes: 0,
      method,
      path: url,
      orgid: headers['orgid'] ?? '',
      head: false,
    };
  }

  finish(ex: Exchange): void {
    if (ex.done) return;
    ex.done = true;
    this.inflight--;
    this.bodies.release(ex);
  }
}
