// The cluster bus: the Bus contract over core NATS (nats.js v3). Kept behaviourally identical to
// InProcessBus by test/bus/contract.ts.
//
// Wire format: JSON text (an `undefined` payload is an empty message). A reply is
// `{"ok": value}` or `{"err": WireError}`, so a responder's AppError reaches the asker with the same
// code, status and message; any other failure becomes ERR_INTERNAL (the stack stays in the
// responder's log).
//
// Namespaces: events travel on `<prefix>.ev.<subject>` and requests on `<prefix>.rq.<subject>`.
// Keeping them apart gives the in-process semantics: a publish never wakes a responder, an ask
// never reaches a listener, a listener on `>` never sees request inboxes or JetStream traffic,
// and a subject with only listeners still answers an ask with "no responder" at once.
//
// Responders subscribe in one queue group, so when several nodes (or several overlapping patterns)
// serve a subject the server hands each request to exactly one of them.
import {
  connect as natsConnect,
  RequestError,
  TimeoutError,
  type ConnectionOptions,
  type Msg,
  type NatsConnection,
  type Subscription,
} from '@nats-io/transport-node';
import { AppError, appError, fromWire, toWire, type WireError } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import type { AskOptions, Bus, Listener, Responder, Unsubscribe } from './bus.js';
import { assertPattern, assertSubject } from './subject.js';

const DEFAULT_TIMEOUT_MS = 5000;
const QUEUE_GROUP = 'bus';

export interface NatsBusOptions {
  logger?: Logger;
  /** Connection name shown by the server's monitoring. */
  name?: string;
  /** First token of every bus subject, so several deployments can share one server. */
  prefix?: string;
  /** Passed to nats.js `connect` over our defaults (for example credentials or TLS). */
  connectOptions?: Partial<ConnectionOptions>;
}

function encode(value: unknown): string {
  return JSON.stringify(value) ?? '';
}

function decode(msg: Msg): unknown {
  return msg.data.length === 0 ? undefined : msg.json();
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as PromiseLike<unknown> | null)?.then === 'function';
}

interface Reply {
  ok?: unknown;
  err?: WireError;
}

export class NatsBus implements Bus {
  private readonly nc: NatsConnection;
  private readonly log: Logger;
  private readonly ev: string;
  private readonly rq: string;
  /** Our subscriptions, drained first on close so no new request arrives while we finish. */
  private readonly subs = new Set<Subscription>();
  /** Answers being computed; close() waits for them so their askers get a reply. */
  private readonly answering = new Set<Promise<void>>();
  /** Our own asks in flight; close() lets them finish (each is bounded by its timeout). */
  private readonly asking = new Set<Promise<Msg>>();
  private closed = false;
  private closing: Promise<void> | undefined;

  /**
   * Connects to `url` (a comma-separated list is several seed servers). Reconnects forever by
   * default: a node outlives a NATS restart, and asks made meanwhile time out or fail fast.
   */
  static async connect(url: string, opts: NatsBusOptions = {}): Promise<NatsBus> {
    const servers = url.split(',').map((s) => s.trim()).filter((s) => s.length > 0);
    let nc: NatsConnection;
    try {
      nc = await natsConnect({
        servers,
        name: opts.name,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 500,
        ...opts.connectOptions,
      });
    } catch (err) {
      throw new Error(`cannot connect to NATS at ${url}: ${(err as Error).message}`, { cause: err });
    }
    return new NatsBus(nc, opts);
  }

  private constructor(nc: NatsConnection, opts: NatsBusOptions) {
    this.nc = nc;
    this.log = opts.logger ?? silentLogger;
    const prefix = opts.prefix ?? 'bus';
    assertSubject(prefix);
    this.ev = `${prefix}.ev.`;
    this.rq = `${prefix}.rq.`;
    void this.watch();
  }

  /** The underlying connection, for the JetStream and KV users inside core/. */
  get connection(): NatsConnection {
    return this.nc;
  }

  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      switch (s.type) {
        case 'disconnect':
          this.log.warn({ server: s.server }, 'nats disconnected');
          break;
        case 'reconnect':
          this.log.info({ server: s.server }, 'nats reconnected');
          break;
        case 'error':
          this.log.error({ err: s.error }, 'nats error');
          break;
        case 'slowConsumer':
          this.log.warn({ subject: s.sub.getSubject(), pending: s.pending }, 'nats slow consumer');
          break;
        default:
          break;
      }
    }
  }

  async ask<R = unknown>(subject: string, msg: unknown, opts?: AskOptions): Promise<R> {
    if (this.closed) throw closedError();
    const timeout = opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    checkTimeout(timeout);
    assertSubject(subject);
    const data = encode(msg); // an unencodable message is the caller's bug: let it throw as is
    let res: Msg;
    const req = this.nc.request(this.rq + subject, data, { timeout });
    this.asking.add(req);
    try {
      res = await req;
    } catch (err) {
      throw this.requestError(err, subject);
    } finally {
      this.asking.delete(req);
    }
    const reply = decode(res) as Reply | undefined;
    if (reply?.err !== undefined) throw fromWire(reply.err);
    return reply?.ok as R;
  }

  private requestError(err: unknown, subject: string): AppError {
    if (err instanceof TimeoutError) return timedOut(subject);
    if (err instanceof RequestError && err.isNoResponders()) return noResponder(subject);
    if (this.closed || this.nc.isClosed()) return closedError();
    this.log.error({ err, subject }, 'nats request failed');
    return new AppError('ERR_UNAVAILABLE', [`bus request to "${subject}" failed`], { cause: err });
  }

  respond(subject: string, responder: Responder): Unsubscribe {
    this.assertOpen();
    assertPattern(subject);
    const skip = this.rq.length;
    return this.track(
      this.nc.subscribe(this.rq + subject, {
        queue: QUEUE_GROUP,
        callback: (err, msg) => {
          if (err) return this.log.error({ err, subject }, 'nats responder subscription failed');
          if (!msg.reply) return; // a stray publish on a request subject: nobody waits for it
          const p = this.answer(msg, msg.subject.slice(skip), responder);
          this.answering.add(p);
          void p.finally(() => this.answering.delete(p));
        },
      }),
    );
  }

  private async answer(msg: Msg, subject: string, responder: Responder): Promise<void> {
    let body: string;
    try {
      const out = await responder(decode(msg), subject);
      body = JSON.stringify({ ok: out });
    } catch (err) {
      if (!(err instanceof AppError)) this.log.error({ err, subject }, 'bus responder failed');
      body = JSON.stringify({ err: toWire(err) });
    }
    try {
      msg.respond(body);
    } catch (err) {
      this.log.warn({ err, subject }, 'bus reply not sent');
    }
  }

  publish(subject: string, event: unknown): void {
    this.assertOpen();
    assertSubject(subject);
    this.nc.publish(this.ev + subject, encode(event));
  }

  subscribe(pattern: string, listener: Listener): Unsubscribe {
    this.assertOpen();
    assertPattern(pattern);
    const skip = this.ev.length;
    return this.track(
      this.nc.subscribe(this.ev + pattern, {
        callback: (err, msg) => {
          if (err) return this.log.error({ err, pattern }, 'nats subscription failed');
          const subject = msg.subject.slice(skip);
          try {
            const r: unknown = listener(decode(msg), subject);
            if (isThenable(r)) r.then(undefined, (e: unknown) => this.listenerFailed(e, subject));
          } catch (e) {
            this.listenerFailed(e, subject);
          }
        },
      }),
    );
  }

  private listenerFailed(err: unknown, subject: string): void {
    this.log.error({ err, subject }, 'bus listener failed');
  }

  private track(sub: Subscription): Unsubscribe {
    this.subs.add(sub);
    return () => {
      if (!this.subs.delete(sub)) return;
      try {
        sub.unsubscribe();
      } catch {
        // The connection is closed: the server already dropped the subscription.
      }
    };
  }

  /** A round trip to the server: what we published (and subscribed) before has been processed. */
  async flush(): Promise<void> {
    if (this.closed || this.nc.isClosed()) return;
    await this.nc.flush();
  }

  /**
   * Stops taking requests and events (draining what the server already sent), lets running
   * responders reply and our own pending asks settle, then drains the connection so everything
   * published is delivered.
   */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    this.closed = true;
    if (this.nc.isClosed()) return;
    const subs = [...this.subs];
    this.subs.clear();
    await Promise.allSettled(subs.map((s) => s.drain()));
    while (this.answering.size > 0) await Promise.allSettled([...this.answering]);
    await Promise.allSettled([...this.asking]);
    try {
      await this.nc.drain();
    } catch (err) {
      // Already closed (for example by the server going away for good): nothing left to drain.
      if (!this.nc.isClosed()) throw err;
    }
  }

  private assertOpen(): void {
    if (this.closed) throw closedError();
  }
}

function checkTimeout(ms: number): void {
  if (!(ms > 0) || !Number.isFinite(ms)) {
    throw new RangeError(`timeoutMs must be a positive finite number, got ${ms}`);
  }
}

// Same texts as InProcessBus: callers and tests cannot tell the buses apart.
function closedError(): AppError {
  return appError('ERR_UNAVAILABLE', 'the bus is closed');
}

function noResponder(subject: string): AppError {
  return appError('ERR_UNAVAILABLE', `no responder for subject "${subject}"`);
}

function timedOut(subject: string): AppError {
  return appError('ERR_TIMEOUT', `bus request to "${subject}"`);
}
