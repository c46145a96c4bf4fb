// Appends to the commit stream without nats.js's JetStream publish. `js.publish` makes a request
// per append: a new inbox token, a timer, an Error built up front for its stack, and a parse of the
// PubAck through its general JSON API path. At a few appends per scan that was a visible share of
// a cluster node's CPU. Here every append is a plain publish with a reply subject under one inbox
// this node subscribes once; the PubAck is read by hand and one sweep timer fails the appends whose
// acknowledgement is overdue. A publish leaves in the connection's next flush (nats.js flushes once
// per microtask checkpoint), so appends made in one turn share one socket write.
//
// Reply subjects are reused: an append's reply id goes back to a free list once its one
// acknowledgement arrived, so a node appending at a steady rate sends a few dozen distinct reply
// subjects, not a new one each time. nats-server caches subject matches per subject, and a fresh
// subject per append missed that cache on every acknowledgement: about 1 µs of the server's CPU an
// append of its 20 or so (bench/store/append-replies.ts). An id whose append timed out is never
// reused: its late acknowledgement, if one comes, must not settle another append.
//
// The guarantees stay the server's: the expected-last-subject-sequence header is checked by
// JetStream exactly as before, and an append resolves only on the stream's acknowledgement.
import { randomBytes } from 'node:crypto';
import { headers, type Msg, type NatsConnection, type Subscription } from '@nats-io/transport-node';

/** Header JetStream checks against the subject's last sequence. */
const EXPECTED_LAST_SUBJECT_SEQUENCE = 'Nats-Expected-Last-Subject-Sequence';
/** Longest interval between deadline checks. */
const SWEEP_MS = 100;

/** Why an append failed: JetStream's own error (`code` is its err_code), a timeout, or no stream. */
export class AppendError extends Error {
  constructor(
    message: string,
    readonly code?: number,
  ) {
    super(message);
  }
}

interface Waiting {
  deadline: number;
  resolve(seq: number): void;
  reject(err: unknown): void;
}

const utf8 = new TextDecoder();

/** The sequence of a successful PubAck, or undefined when it is not one (an error, or malformed). */
export function ackSequence(data: Uint8Array): number | undefined {
  // {"stream":"NAME","seq":123} (optionally "domain" and "duplicate"): a JSON object without
  // "error". Read without JSON.parse; anything unusual goes through the full parse.
  const text = utf8.decode(data);
  if (text.includes('"error"')) return undefined;
  const at = text.indexOf('"seq":');
  if (at < 0) return undefined;
  let seq = 0;
  let i = at + 6;
  while (text.charCodeAt(i) === 32) i++;
  const start = i;
  for (let c = text.charCodeAt(i); c >= 48 && c <= 57; c = text.charCodeAt(++i)) seq = seq * 10 + (c - 48);
  return i > start && Number.isSafeInteger(seq) && seq > 0 ? seq : undefined;
}

/** The error a reply that is not a successful PubAck stands for. */
function ackError(msg: Msg): AppendError {
  if (msg.headers?.hasError) {
    const code = msg.headers.code;
    return new AppendError(code === 503 ? 'no stream answered the append (no responders)' : `append failed: ${code} ${msg.headers.description}`);
  }
  try {
    const body = JSON.parse(utf8.decode(msg.data)) as { error?: { err_code?: number; code?: number; description?: string } };
    if (body.error) return new AppendError(body.error.description ?? 'append refused', body.error.err_code);
  } catch {
    // below
  }
  return new AppendError('invalid acknowledgement of an append');
}

export class StreamAppends {
  private readonly inbox = `_INBOX.${randomBytes(12).toString('hex')}`;
  private readonly replies: Subscription;
  private readonly waiting = new Map<number, Waiting>();
  private readonly sweeper: NodeJS.Timeout;
  private nextId = 0;
  /** Reply ids whose acknowledgement came back: free for another append. */
  private readonly free: number[] = [];
  /** The reply subject of each id (built once). */
  private readonly subjects: string[] = [];
  private closed = false;

  constructor(
    private readonly nc: NatsConnection,
    private readonly timeoutMs: number,
  ) {
    this.replies = nc.subscribe(`${this.inbox}.*`, {
      callback: (err, msg) => {
        if (!err) this.onReply(msg);
      },
    });
    this.sweeper = setInterval(() => this.sweep(), Math.max(10, Math.min(SWEEP_MS, timeoutMs >> 2)));
    this.sweeper.unref();
  }

  /**
   * Publishes `data` to the stream subject `subject`; resolves the stream sequence it was stored
   * at. With `lastSubjectSequence`, JetStream stores it only when that is the subject's last
   * sequence (else it fails with code 10071).
   */
  append(subject: string, data: Uint8Array, lastSubjectSequence?: number): Promise<number> {
    if (this.closed) return Promise.reject(new AppendError('the connection to the commit stream is closed'));
    const id = this.free.pop() ?? ++this.nextId;
    const opts: { reply: string; headers?: ReturnType<typeof headers> } = { reply: (this.subjects[id] ??= `${this.inbox}.${id}`) };
    if (lastSubjectSequence !== undefined) {
      const h = headers();
      h.set(EXPECTED_LAST_SUBJECT_SEQUENCE, String(lastSubjectSequence));
      opts.headers = h;
    }
    return new Promise<number>((resolve, reject) => {
      try {
        this.nc.publish(subject, data, opts);
      } catch (err) {
        // Nothing was sent under the id: it is free again.
        this.free.push(id);
        reject(err);
        return;
      }
      this.waiting.set(id, { deadline: performance.now() + this.timeoutMs, resolve, reject });
    });
  }

  private onReply(msg: Msg): void {
    const dot = msg.subject.lastIndexOf('.');
    const id = Number(msg.subject.slice(dot + 1));
    const w = this.waiting.get(id);
    if (!w) return; // timed out already (its id is retired) or not ours
    this.waiting.delete(id);
    // Its one acknowledgement came: the id may serve another append.
    this.free.push(id);
    const seq = msg.headers?.hasError ? undefined : ackSequence(msg.data);
    if (seq !== undefined) w.resolve(seq);
    else w.reject(ackError(msg));
    this.teardownIfIdle();
  }

  private sweep(): void {
    if (this.waiting.size === 0) return;
    const now = performance.now();
    for (const [id, w] of this.waiting) {
      if (w.deadline > now) continue;
      this.waiting.delete(id);
      w.reject(new AppendError(`the append was not acknowledged within ${this.timeoutMs} ms`));
    }
    this.teardownIfIdle();
  }

  /**
   * Takes no more appends. Those in flight still end as the stream answers them (or time out),
   * so a graceful stop does not fail a write the stream may have stored; then the inbox goes.
   */
  close(): void {
    this.closed = true;
    this.teardownIfIdle();
  }

  private teardownIfIdle(): void {
    if (!this.closed || this.waiting.size > 0) return;
    clearInterval(this.sweeper);
    try {
      this.replies.unsubscribe();
    } catch {
      // the connection is already gone
    }
  }
}
