// Requests between the nodes of a cluster (forwarded HTTP requests, asks, commits), folded: the
// frames one node sends one owner in a turn of the event loop travel as one NATS message, and the
// answers an owner has for one sender in a turn travel back as one. Under load a forwarded scan
// then costs a share of a NATS message each way instead of a whole one (nats-server routes fewer,
// each side parses fewer), and no inbox, timer or Error is built per request: each node has one
// reply subscription and one sweep timer.
//
//   request  to <prefix>.node.<owner>.<what>, reply <inbox>.<batch>:  msgpack [id, frame, ...]
//   answer   to <inbox>.<batch>:                                      msgpack [id, frame, ...]
//
// Each frame is encoded once by its sender (a retry sends the same bytes again). An owner with no
// subscriber on the subject (dead, or not up yet) makes nats-server answer the batch's reply
// subject with a no-responders status: every frame of the batch is `gone` (never delivered, safe
// to send elsewhere). A frame unanswered within the timeout is `timeout`, and one whose owner
// stops beating meanwhile is `lost`: both may have run, so neither is sent again.
import { randomBytes } from 'node:crypto';
import type { Msg, NatsConnection, Subscription } from '@nats-io/transport-node';
import type { Logger } from '../log.js';
import { decode, encode } from './codec.js';
import type { ClusterNames } from './names.js';

export type What = 'http' | 'ask' | 'commit';

/** How a frame sent to another node ended. */
export type Outcome = { kind: 'answer'; frame: Uint8Array } | { kind: 'gone' } | { kind: 'lost' } | { kind: 'timeout' };

/** Bytes a frame adds to its batch besides its own (array slot, id, binary header), rounded up. */
export const FRAME_OVERHEAD = 32;
/** How often waiting frames are checked for their deadline and their owner's heartbeats. */
const SWEEP_MS = 100;
/** A request batch sent to the same subject less than this long ago means a burst: the next may linger. */
const LINGER_BURST_MS = 20;
/** A request batch holding this many frames goes without lingering. */
const LINGER_FULL = 64;

interface Waiting {
  owner: string;
  batch: number;
  deadline: number;
  resolve: (o: Outcome) => void;
}

/** Frames bound for one subject in this turn. */
interface Outgoing {
  subject: string;
  /** A request batch: its number (its reply subject is <inbox>.<batch>); 0 for answers. */
  batch: number;
  /** Ids of the request frames (to settle them if the batch cannot be sent). */
  ids: number[];
  items: Array<number | Uint8Array>;
  bytes: number;
  /** It waits for the linger timer (armLinger). */
  lingering?: true;
}

export interface NodeRequestsOptions {
  nc: NatsConnection;
  names: ClusterNames;
  logger: Logger;
  /** How long a frame waits for its answer. */
  timeoutMs: number;
  /** Whether a node still beats (membership). */
  isLive: (node: string) => boolean;
  /**
   * While requests to an owner come in a burst (a batch to it left within the last 20 ms), how
   * long the next batch waits for more frames to fold into the same message (0: never waits; a
   * lone request never waits). Answers never wait.
   */
  lingerMs?: number;
}

export class NodeRequests {
  private readonly inbox = `_INBOX.${randomBytes(12).toString('hex')}`;
  private readonly replies: Subscription;
  private readonly served: Subscription[] = [];
  private readonly waiting = new Map<number, Waiting>();
  /** Frames of each batch still waiting, so a no-responders status settles them all. */
  private readonly batches = new Map<number, number[]>();
  private readonly outgoing = new Map<string, Outgoing>();
  private readonly answering = new Set<Promise<void>>();
  private readonly sweeper: NodeJS.Timeout;
  private nextId = 0;
  private nextBatch = 0;
  private flushQueued = false;
  /** When a request batch last left, by subject (one per owner node and kind of request). */
  private readonly lastSent = new Map<string, number>();
  private lingerTimer: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly opts: NodeRequestsOptions) {
    this.replies = opts.nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (!err) this.onAnswers(msg);
      },
    });
    this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
    this.sweeper.unref();
  }

  private get maxPayload(): number {
    return this.opts.nc.info?.max_payload ?? 1024 * 1024;
  }

  /** The largest frame a batch can carry. */
  get maxFrame(): number {
    return this.maxPayload - FRAME_OVERHEAD;
  }

  /** Sends one request frame to `owner`'s `what` subject; resolves how it ended. */
  send(owner: string, what: What, frame: Uint8Array): Promise<Outcome> {
    // After close nothing would wait for an answer: never sent, so safe to send elsewhere.
    if (this.closed) return Promise.resolve({ kind: 'gone' });
    return new Promise<Outcome>((resolve) => {
      const id = ++this.nextId;
      const subject = this.opts.names.nodeSubject(owner, what);
      let out = this.outgoing.get(subject);
      if (out && out.bytes + frame.length + FRAME_OVERHEAD > this.maxPayload) {
        this.publish(out);
        out = undefined;
      }
      if (!out) {
        const batch = ++this.nextBatch;
        out = { subject, batch, ids: [], items: [], bytes: 16 };
        this.outgoing.set(subject, out);
      }
      // (Again when every frame so far was settled before the batch left: more join it now.)
      this.batches.set(out.batch, out.ids);
      out.ids.push(id);
      out.items.push(id, frame);
      out.bytes += frame.length + FRAME_OVERHEAD;
      this.waiting.set(id, { owner, batch: out.batch, deadline: Date.now() + this.opts.timeoutMs, resolve });
      this.queueFlush();
    });
  }

  /** Answers frames sent to this node's `what` subject with `handler`'s encoded answer. */
  serve(nodeId: string, what: What, handler: (frame: Uint8Array) => Promise<Uint8Array>): void {
    const sub = this.opts.nc.subscribe(this.opts.names.nodeSubject(nodeId, what), {
      callback: (err, msg) => {
        if (err || !msg.reply) return;
        let items: unknown[];
        try {
          items = decode<unknown[]>(msg.data);
        } catch (e) {
          this.opts.logger.warn({ err: e }, 'cluster: undecodable request batch dropped');
          return;
        }
        const reply = msg.reply;
        for (let i = 0; i + 1 < items.length; i += 2) {
          const id = items[i] as number;
          const p = handler(items[i + 1] as Uint8Array).then(
            (answer) => this.answer(reply, id, answer),
            (e: unknown) => this.opts.logger.error({ err: e }, 'cluster: serving a forwarded request failed'),
          );
          this.answering.add(p);
          void p.finally(() => this.answering.delete(p));
        }
      },
    });
    this.served.push(sub);
  }

  private answer(reply: string, id: number, frame: Uint8Array): void {
    let out = this.outgoing.get(reply);
    if (out && out.bytes + frame.length + FRAME_OVERHEAD > this.maxPayload) {
      this.publish(out);
      out = undefined;
    }
    if (!out) {
      out = { subject: reply, batch: 0, ids: [], items: [], bytes: 16 };
      this.outgoing.set(reply, out);
    }
    out.items.push(id, frame);
    out.bytes += frame.length + FRAME_OVERHEAD;
    this.queueFlush();
  }

  private queueFlush(): void {
    if (this.flushQueued) return;
    this.flushQueued = true;
    // The end of the turn: every frame queued by the callbacks of this turn goes in one message,
    // but a request batch in a burst may wait a little longer for more (lingers).
    setImmediate(() => {
      this.flushQueued = false;
      const now = performance.now();
      for (const out of [...this.outgoing.values()]) {
        // A lingering batch waits for its timer, unless it filled up meanwhile.
        if (out.lingering ? out.ids.length < LINGER_FULL : this.lingers(out, now)) this.armLinger();
        else this.publish(out);
      }
    });
  }

  /** Whether a request batch waits for the linger rather than leave at the end of this turn. */
  private lingers(out: Outgoing, now: number): boolean {
    const ms = this.opts.lingerMs ?? 0;
    if (ms <= 0 || out.batch === 0 || out.ids.length >= LINGER_FULL) return false;
    const last = this.lastSent.get(out.subject);
    if (last === undefined || now - last >= LINGER_BURST_MS) return false;
    out.lingering = true;
    return true;
  }

  /** One timer for every batch lingering meanwhile: they all leave in its callback. */
  private armLinger(): void {
    if (this.lingerTimer) return;
    this.lingerTimer = setTimeout(() => {
      this.lingerTimer = undefined;
      for (const out of [...this.outgoing.values()]) if (out.lingering) this.publish(out);
    }, this.opts.lingerMs);
  }

  private publish(out: Outgoing): void {
    this.outgoing.delete(out.subject);
    if (out.batch > 0) this.lastSent.set(out.subject, performance.now());
    try {
      this.opts.nc.publish(out.subject, encode(out.items), out.batch > 0 ? { reply: `${this.inbox}.${out.batch}` } : undefined);
    } catch (err) {
      // Closed or draining: a request batch was not sent (safe to send elsewhere); an answer is
      // lost, and its asker times out or sees this node stop beating.
      if (out.batch === 0) this.opts.logger.warn({ err }, 'cluster: answers not sent');
      for (const id of [...out.ids]) this.settle(id, { kind: 'gone' });
    }
  }

  private onAnswers(msg: Msg): void {
    const batch = Number(msg.subject.slice(this.inbox.length + 1));
    if (msg.data.length === 0) {
      // nats-server's no-responders status: nobody serves the subject the batch went to.
      if (msg.headers?.code === 503) for (const id of [...(this.batches.get(batch) ?? [])]) this.settle(id, { kind: 'gone' });
      return;
    }
    let items: unknown[];
    try {
      items = decode<unknown[]>(msg.data);
    } catch (err) {
      this.opts.logger.warn({ err }, 'cluster: undecodable answer batch dropped');
      return;
    }
    for (let i = 0; i + 1 < items.length; i += 2) this.settle(items[i] as number, { kind: 'answer', frame: items[i + 1] as Uint8Array });
  }

  private settle(id: number, o: Outcome): void {
    const w = this.waiting.get(id);
    if (!w) return;
    this.waiting.delete(id);
    const ids = this.batches.get(w.batch);
    if (ids) {
      const at = ids.indexOf(id);
      if (at >= 0) ids.splice(at, 1);
      if (ids.length === 0) this.batches.delete(w.batch);
    }
    w.resolve(o);
  }

  private sweep(): void {
    // A subject quiet for longer than a burst needs no entry.
    if (this.lastSent.size > 0) {
      const quiet = performance.now() - LINGER_BURST_MS;
      for (const [key, at] of this.lastSent) if (at < quiet) this.lastSent.delete(key);
    }
    if (this.waiting.size === 0) return;
    const now = Date.now();
    for (const [id, w] of this.waiting) {
      if (now >= w.deadline) this.settle(id, { kind: 'timeout' });
      else if (!this.opts.isLive(w.owner)) this.settle(id, { kind: 'lost' });
    }
  }

  /** Stops taking requests, waits for the answers under way and sends them; then stops waiting. */
  async close(): Promise<void> {
    await Promise.allSettled(this.served.map((s) => s.drain()));
    while (this.answering.size > 0) await Promise.allSettled([...this.answering]);
    for (const out of this.outgoing.values()) this.publish(out);
    this.closed = true;
    clearInterval(this.sweeper);
    clearTimeout(this.lingerTimer);
    for (const id of [...this.waiting.keys()]) this.settle(id, { kind: 'lost' });
    this.replies.unsubscribe();
  }
}
