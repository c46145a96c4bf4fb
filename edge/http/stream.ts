// A `stream: true` route (SSE and the like): the handler gets ctx.stream and answers through it,
// with back-pressure (onDrain) and the client's departure (onClose) passed on. An error thrown
// before the first write is answered with the usual envelope; after it, the stream just ends.
import type uWS from 'uWebSockets.js';
import type { RequestContext, ResponseStream, RouteDef } from '../route.js';
import { JSON_TYPE, statusLine, writeStandardHeaders } from './answer-headers.js';
import type { Answers } from './answer.js';
import type { Exchange } from './exchange.js';

/** `open`: the streams still open, so that shutdown can end them. */
export async function serveStream(
  res: uWS.HttpResponse,
  ex: Exchange,
  def: RouteDef,
  ctx: RequestContext,
  answers: Answers,
  open: Set<ResponseStream>,
): Promise<void> {
  let started = false;
  let ended = false;
  let waitingWritable = false;
  let drain: Array<() => void> = [];
  let close: Array<() => void> = [];
  const closed = () => {
    const cbs = close;
    close = [];
    drain = [];
    open.delete(stream);
    for (const cb of cbs) cb();
  };
  const head = () => {
    started = true;
    res.writeStatus(statusLine(ctx.status));
    res.writeHeader('x-request-id', ex.requestId);
    writeStandardHeaders(res, ctx.type ?? JSON_TYPE, ctx.responseHeaders);
    answers.cors.headers(res, ex.origin);
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
        answers.exchanges.finish(ex);
        answers.observe(ex, def.method, def.path, ctx.status);
      }
      closed();
    },
  };
  (ctx as { stream?: ResponseStream }).stream = stream;
  ex.onAbort = () => {
    if (ended) return;
    ended = true;
    answers.observe(ex, def.method, def.path, 499);
    closed();
  };
  open.add(stream);
  try {
    const result = def.handler(ctx);
    if (result instanceof Promise) await result;
  } catch (err) {
    if (started || ended || ex.aborted) {
      answers.log.error({ err, reqId: ex.requestId }, 'stream failed');
      stream.end();
    } else {
      ended = true;
      open.delete(stream);
      answers.fail(res, ex, err, def.path, def.method);
    }
  }
}
