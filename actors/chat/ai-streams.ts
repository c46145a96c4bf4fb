// AI output streams of this node. Each AI answer (a reply in a chat, or an agent-assist draft)
// is a stream: its chunks are kept as they arrive, so a reader that comes late (GET
// /ai/stream/:streamId) still gets the whole answer, then `done`. A finished stream stays readable
// for `aiStreamTtlMs`; one that never finishes is dropped after the same time.
//
// Cluster mode: a reader's GET may reach any node, so the node making an answer tells the others
// (`relay`, over the bus) and each keeps a copy (`mirror`) from the stream's first event on. A node
// that heard a stream only from its middle (it started meanwhile) keeps none: a reader there gets
// 404 rather than half an answer. Copies are bounded in number (MAX_MIRRORED) and by the same TTL.
import { newId } from '../../core/ids.js';

export interface StreamAudience {
  tenant: string;
  /** The customer this answer is for (a reply in their chat); staff of the tenant may read too. */
  customerId: string | null;
  /** Staff only (an agent-assist draft). */
  staffOnly: boolean;
}

export interface StreamEnd {
  messageId?: string;
  seq?: number;
  handover?: boolean;
  error?: string;
}

export interface AiStream {
  readonly id: string;
  readonly chatId: string;
  readonly purpose: 'reply' | 'assist';
  readonly audience: StreamAudience;
  readonly chunks: string[];
  done: boolean;
  end: StreamEnd | undefined;
  readonly createdAt: number;
  finishedAt: number | undefined;
  /** Told after each new chunk and at the end. */
  readonly listeners: Set<() => void>;
}

/** What a node tells the others of its streams, in order. */
export type StreamEvent =
  | { t: 'open'; id: string; chatId: string; purpose: AiStream['purpose']; audience: StreamAudience }
  | { t: 'chunk'; id: string; index: number; chunk: string }
  | { t: 'end'; id: string; end: StreamEnd };

/** Other nodes' streams this node keeps a copy of at most. */
const MAX_MIRRORED = 10_000;

export class AiStreams {
  private readonly streams = new Map<string, AiStream>();
  private readonly copies = new Set<string>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
    private readonly relay?: (ev: StreamEvent) => void,
  ) {}

  create(chatId: string, purpose: AiStream['purpose'], audience: StreamAudience): AiStream {
    const s = this.open(newId(this.now()), chatId, purpose, audience);
    this.relay?.({ t: 'open', id: s.id, chatId, purpose, audience });
    return s;
  }

  /** Another node's stream event (cluster mode): kept as that node keeps the stream. */
  mirror(ev: StreamEvent): void {
    if (ev.t === 'open') {
      if (this.streams.has(ev.id) || this.copies.size >= MAX_MIRRORED) return;
      this.copies.add(ev.id);
      this.open(ev.id, ev.chatId, ev.purpose, ev.audience);
      return;
    }
    const s = this.copies.has(ev.id) ? this.streams.get(ev.id) : undefined;
    if (!s) return;
    if (ev.t === 'end') return this.close(s, ev.end);
    // A chunk out of order (a lost event): the copy cannot be whole, so it is dropped.
    if (ev.index !== s.chunks.length) return this.drop(s.id);
    this.append(s, ev.chunk);
  }

  get(id: string): AiStream | undefined {
    return this.streams.get(id);
  }

  push(s: AiStream, chunk: string): void {
    if (s.done) return;
    this.append(s, chunk);
    this.relay?.({ t: 'chunk', id: s.id, index: s.chunks.length - 1, chunk });
  }

  finish(s: AiStream, end: StreamEnd): void {
    if (s.done) return;
    this.close(s, end);
    this.relay?.({ t: 'end', id: s.id, end });
  }

  /** A new, empty stream kept under `id` (this node's, or a copy of another's). */
  private open(id: string, chatId: string, purpose: AiStream['purpose'], audience: StreamAudience): AiStream {
    const s: AiStream = { id, chatId, purpose, audience, chunks: [], done: false, end: undefined, createdAt: this.now(), finishedAt: undefined, listeners: new Set() };
    this.streams.set(id, s);
    return s;
  }

  private append(s: AiStream, chunk: string): void {
    if (s.done) return;
    s.chunks.push(chunk);
    for (const l of [...s.listeners]) l();
  }

  private close(s: AiStream, end: StreamEnd): void {
    if (s.done) return;
    s.done = true;
    s.end = end;
    s.finishedAt = this.now();
    for (const l of [...s.listeners]) l();
  }

  /** Drops streams past their time (called by the module's sweep). */
  sweep(): void {
    const now = this.now();
    for (const [id, s] of this.streams) {
      if (now - (s.finishedAt ?? s.createdAt) > this.ttlMs) {
        if (!s.done) this.close(s, { error: 'the stream timed out' });
        this.drop(id);
      }
    }
  }

  private drop(id: string): void {
    const s = this.streams.get(id);
    if (s && !s.done) this.close(s, { error: 'the stream was lost on its way to this node' });
    this.streams.delete(id);
    this.copies.delete(id);
  }

  get size(): number {
    return this.streams.size;
  }
}
