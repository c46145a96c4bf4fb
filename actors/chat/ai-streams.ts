// AI output streams of this node. Each AI answer (a reply in a chat, or an agent-assist draft)
// is a stream: its chunks are kept as they arrive, so a reader that comes late (GET
// /ai/stream/:streamId) still gets the whole answer, then `done`. A finished stream stays readable
// for `aiStreamTtlMs`; one that never finishes is dropped after the same time.
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

export class AiStreams {
  private readonly streams = new Map<string, AiStream>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  create(chatId: string, purpose: AiStream['purpose'], audience: StreamAudience): AiStream {
    const s: AiStream = {
      id: newId(this.now()),
      chatId,
      purpose,
      audience,
      chunks: [],
      done: false,
      end: undefined,
      createdAt: this.now(),
      finishedAt: undefined,
      listeners: new Set(),
    };
    this.streams.set(s.id, s);
    return s;
  }

  get(id: string): AiStream | undefined {
    return this.streams.get(id);
  }

  push(s: AiStream, chunk: string): void {
    if (s.done) return;
    s.chunks.push(chunk);
    for (const l of [...s.listeners]) l();
  }

  finish(s: AiStream, end: StreamEnd): void {
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
        if (!s.done) this.finish(s, { error: 'the stream timed out' });
        this.streams.delete(id);
      }
    }
  }

  get size(): number {
    return this.streams.size;
  }
}
