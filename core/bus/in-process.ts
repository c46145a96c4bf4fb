// The single-node bus: everything stays in this process, but the semantics are the wire's, so
// code that works here works unchanged over NATS (test/bus/contract.ts runs against both):
// - payloads are copied through JSON text, exactly what NATS carries (a Date arrives as a string,
//   `undefined` fields vanish, a BigInt or a cycle throws in the sender);
// - responder errors cross as toWire/fromWire, so the asker gets an AppError with the same code
//   and never a stack;
// - events are delivered later (one microtask), never inside publish().
//
// Several responders may match one subject. NATS gives the request to one member of the queue
// group; here the rule is deterministic: the most recently registered matching responder answers
// (so a re-registered actor takes over from the one it replaces).
import { AppError, appError, fromWire, toWire } from '../errors.js';
import { silentLogger, type Logger } from '../log.js';
import type { AskOptions, Bus, Listener, Responder, Unsubscribe } from './bus.js';
import { assertPattern, assertSubject, hasWildcard, SubjectPattern } from './subject.js';

const DEFAULT_TIMEOUT_MS = 5000;
/** Distinct subjects whose matches are remembered; past this the cache starts over. */
const CACHE_LIMIT = 10_000;

/** JSON text of a payload; `undefined` (and anything else JSON drops) travels as ''. */
function encode(value: unknown): string {
  return JSON.stringify(value) ?? '';
}

function decode(text: string): unknown {
  return text === '' ? undefined : JSON.parse(text);
}

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return typeof (v as PromiseLike<unknown> | null)?.then === 'function';
}

interface Entry {
  readonly seq: number;
  readonly pattern: string;
  active: boolean;
}
interface SubEntry extends Entry {
  readonly listener: Listener;
}
interface RespEntry extends Entry {
  readonly responder: Responder;
}

const NONE: readonly never[] = [];

/**
 * Who listens on what. Exact patterns are a Map hit; wildcard patterns are compiled once. The
 * answer for a subject is cached (arrays are never mutated, so a cached or in-flight array stays
 * valid) and the cache is dropped whenever a registration changes.
 */
class Registry<E extends Entry> {
  private readonly exact = new Map<string, readonly E[]>();
  private wild: ReadonlyArray<{ readonly entry: E; readonly pattern: SubjectPattern }> = [];
  private readonly cache = new Map<string, readonly E[]>();

  add(e: E): void {
    if (hasWildcard(e.pattern)) {
      this.wild = [...this.wild, { entry: e, pattern: new SubjectPattern(e.pattern) }];
    } else {
      this.exact.set(e.pattern, [...(this.exact.get(e.pattern) ?? NONE), e]);
    }
    this.cache.clear();
  }

  remove(e: E): void {
    e.active = false;
    const list = this.exact.get(e.pattern);
    if (list?.includes(e)) {
      const rest = list.filter((x) => x !== e);
      if (rest.length === 0) this.exact.delete(e.pattern);
      else this.exact.set(e.pattern, rest);
    } else {
      this.wild = this.wild.filter((w) => w.entry !== e);
    }
    this.cache.clear();
  }

  /** Every entry matching `subject`, oldest registration first. Throws on an invalid subject. */
  match(subject: string): readonly E[] {
    const hit = this.cache.get(subject);
    if (hit !== undefined) return hit;
    assertSubject(subject);
    const exact = this.exact.get(subject) ?? NONE;
    let out: readonly E[] = exact;
    if (this.wild.length > 0) {
      const tokens = subject.split('.');
      const found = [...exact];
      for (const w of this.wild) if (w.pattern.matchTokens(tokens)) found.push(w.entry);
      if (found.length > exact.length) {
        if (exact.length > 0) found.sort((x, y) => x.seq - y.seq);
        out = found;
      }
    }
    if (this.cache.size >= CACHE_LIMIT) this.cache.clear();
    this.cache.set(subject, out);
    return out;
  }

  clear(): void {
    for (const list of this.exact.values()) for (const e of list) e.active = false;
    for (const w of this.wild) w.entry.active = false;
    this.exact.clear();
    this.wild = [];
    this.cache.clear();
  }
}

interface Pending {
  readonly subs: readonly SubEntry[];
  readonly subject: string;
  readonly json: string;
}

export interface InProcessBusOptions {
  /** Where listener and responder failures are logged. Default: silent. */
  logger?: Logger;
}

export class InProcessBus implements Bus {
  private readonly log: Logger;
  private readonly subs = new Registry<SubEntry>();
  private readonly resps = new Registry<RespEntry>();
  private seq = 0;
  /** Published events waiting for the delivery microtask, in publish order. */
  private queue: Pending[] = [];
  private scheduled = false;
  private closed = false;
  private closing: Promise<void> | undefined;

  constructor(opts: InProcessBusOptions = {}) {
    this.log = opts.logger ?? silentLogger;
  }

  ask<R = unknown>(subject: string, msg: unknown, opts?: AskOptions): Promise<R> {
    if (this.closed) return Promise.reject(closedError());
    const timeoutMs = opts?.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    let json: string;
    let r: RespEntry | undefined;
    try {
      checkTimeout(timeoutMs);
      const resps = this.resps.match(subject);
      r = resps[resps.length - 1];
      json = encode(msg);
    } catch (err) {
      return Promise.reject(err);
    }
    if (r === undefined) return Promise.reject(noResponder(subject));
    const entry = r;
    return new Promise<R>((resolve, reject) => {
      // The responder runs later, as it would behind a socket: the asker never sees its
      // synchronous side effects before ask() returns.
      queueMicrotask(() => this.answer(entry, subject, json, timeoutMs, resolve, reject));
    });
  }

  private answer<R>(
    r: RespEntry,
    subject: string,
    json: string,
    timeoutMs: number,
    resolve: (v: R) => void,
    reject: (e: unknown) => void,
  ): void {
    if (!r.active) return reject(noResponder(subject));
    const reply = (value: unknown): void => {
      try {
        resolve(decode(encode(value)) as R);
      } catch (err) {
        reject(this.remoteError(err, subject));
      }
    };
    let out: unknown;
    try {
      out = r.responder(decode(json), subject);
    } catch (err) {
      return reject(this.remoteError(err, subject));
    }
    // Only an asynchronous answer needs a timer; a synchronous one is already here.
    if (!isThenable(out)) return reply(out);
    let done = false;
    const timer = setTimeout(() => {
      done = true;
      reject(timedOut(subject));
    }, timeoutMs);
    out.then(
      (value) => {
        if (done) return;
        clearTimeout(timer);
        reply(value);
      },
      (err: unknown) => {
        if (done) return;
        clearTimeout(timer);
        reject(this.remoteError(err, subject));
      },
    );
  }

  /** What the asker sees of a responder failure: the same as after a trip over the wire. */
  private remoteError(err: unknown, subject: string): AppError {
    if (!(err instanceof AppError)) this.log.error({ err, subject }, 'bus responder failed');
    return fromWire(toWire(err));
  }

  respond(subject: string, responder: Responder): Unsubscribe {
    this.assertOpen();
    assertPattern(subject);
    const e: RespEntry = { seq: ++this.seq, pattern: subject, responder, active: true };
    this.resps.add(e);
    return () => {
      if (e.active) this.resps.remove(e);
    };
  }

  publish(subject: string, event: unknown): void {
    this.assertOpen();
    const subs = this.subs.match(subject);
    // Encode even with no subscriber: an unencodable event must fail here as it does over NATS.
    const json = encode(event);
    if (subs.length === 0) return;
    this.queue.push({ subs, subject, json });
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(this.drain);
    }
  }

  private readonly drain = (): void => {
    const q = this.queue;
    // Events published by listeners during the drain are appended and delivered in this loop.
    for (let i = 0; i < q.length; i++) {
      const { subs, subject, json } = q[i];
      for (const s of subs) if (s.active) this.deliver(s, subject, json);
    }
    this.queue = [];
    this.scheduled = false;
  };

  private deliver(s: SubEntry, subject: string, json: string): void {
    try {
      // Each listener gets its own copy, as each NATS subscriber decodes its own.
      const r: unknown = s.listener(decode(json), subject);
      if (isThenable(r)) r.then(undefined, (err: unknown) => this.listenerFailed(err, subject));
    } catch (err) {
      this.listenerFailed(err, subject);
    }
  }

  private listenerFailed(err: unknown, subject: string): void {
    this.log.error({ err, subject }, 'bus listener failed');
  }

  subscribe(pattern: string, listener: Listener): Unsubscribe {
    this.assertOpen();
    assertPattern(pattern);
    const e: SubEntry = { seq: ++this.seq, pattern, listener, active: true };
    this.subs.add(e);
    return () => {
      if (e.active) this.subs.remove(e);
    };
  }

  flush(): Promise<void> {
    // The delivery microtask, when one is pending, was queued before this one.
    return new Promise((resolve) => queueMicrotask(resolve));
  }

  /** Refuses new work, delivers what was already published, then drops every registration. */
  close(): Promise<void> {
    if (this.closing === undefined) {
      this.closed = true;
      this.closing = this.flush().then(() => {
        this.subs.clear();
        this.resps.clear();
      });
    }
    return this.closing;
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

function closedError(): AppError {
  return appError('ERR_UNAVAILABLE', 'the bus is closed');
}

function noResponder(subject: string): AppError {
  return appError('ERR_UNAVAILABLE', `no responder for subject "${subject}"`);
}

function timedOut(subject: string): AppError {
  return appError('ERR_TIMEOUT', `bus request to "${subject}"`);
}
