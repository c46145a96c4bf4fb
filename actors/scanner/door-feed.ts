// The scanner's part of the door feed (GET /events/:id/door-feed, actors/events/door-feed.ts): a
// change log of the event's tickets and lists, and the door state of tickets from memory.
//
// The scanner actor is the single writer of its event's tickets and lists, so it writes each
// change's log entry in the batch of the change itself: the log's last committed sequence is a
// watermark, and a reader that has seen every entry up to it has seen every change committed
// before it, whatever raced its pages. Scans write no entry (a scan's one write is its scan log
// entry, and the feed reads that log for door changes: actors/events/door-feed.ts).
//
// Bounded: one entry per ticket and one per list. When a ticket changes again its older entry is
// deleted in the same batch (a pointer per ticket says where it is), so the log holds at most as
// many entries as the event has tickets and lists; its sequences have gaps, which readers skip.
//
//   kv `door-feed:<eventId>`     sequence (decimal) → FeedEntry
//   kv `door-feed-at:<eventId>`  `t:<ticketId>` | `l:<listId>` → FeedPointer
//   kv `door-feed-seq`           eventId → last sequence written
import type { Store, WriteBatch } from '../../core/store/store.js';
import type { DoorState } from './door-state.js';

export const FEED_SEQ_NS = 'door-feed-seq';
export const feedNs = (eventId: string): string => `door-feed:${eventId}`;
const pointerNs = (eventId: string): string => `door-feed-at:${eventId}`;

/** A ticket's last transfer as the feed reports it (reason `transferred`) to readers behind it. */
export interface FeedTransfer {
  seq: number;
  at: number;
}

export interface FeedEntry {
  /** A ticket changed… */
  t?: string;
  /** …or a list did. */
  l?: string;
  /** When (epoch ms). */
  at: number;
  /** The ticket's latest transfer, carried from entry to entry so it is not lost when its entry is replaced. */
  tr?: FeedTransfer;
}

interface FeedPointer {
  s: number;
  tr?: FeedTransfer;
}

/** Pointers remembered in memory (the ones this activation wrote, some maybe not committed yet). */
const POINTERS_KEPT = 50_000;

export class FeedLog {
  /** Last sequence written (committed or in a batch on its way). */
  private seq: number;
  private readonly pointers = new Map<string, FeedPointer>();
  /** The watermark's write in each batch: a materialize step of 50 tickets writes it once, at its last value. */
  private readonly seqOps = new WeakMap<WriteBatch, { value: unknown }>();

  constructor(
    private readonly store: Store,
    private readonly tenant: string,
    private readonly eventId: string,
  ) {
    this.seq = store.getKv<number>(tenant, FEED_SEQ_NS, eventId) ?? 0;
  }

  /** Ticket `id` changed; `fresh`: it was just created (no older entry to look for); `transferAt`: by a transfer. */
  ticket(batch: WriteBatch, id: string, now: number, opts: { fresh?: boolean; transferAt?: number } = {}): void {
    this.write(batch, 't:' + id, { t: id, at: now }, opts.fresh === true, opts.transferAt);
  }

  list(batch: WriteBatch, id: string, now: number): void {
    this.write(batch, 'l:' + id, { l: id, at: now }, false, undefined);
  }

  private write(batch: WriteBatch, key: string, e: FeedEntry, fresh: boolean, transferAt: number | undefined): void {
    const prev = fresh ? undefined : (this.pointers.get(key) ?? this.store.getKv<FeedPointer>(this.tenant, pointerNs(this.eventId), key));
    const seq = ++this.seq;
    const ns = feedNs(this.eventId);
    if (prev) batch.deleteKv(this.tenant, ns, String(prev.s));
    const tr = transferAt !== undefined ? { seq, at: transferAt } : prev?.tr;
    if (tr) e.tr = tr;
    batch.putKv(this.tenant, ns, String(seq), e);
    const p: FeedPointer = tr ? { s: seq, tr } : { s: seq };
    batch.putKv(this.tenant, pointerNs(this.eventId), key, p);
    this.noteSeq(batch, seq);
    this.pointers.delete(key);
    this.pointers.set(key, p);
    if (this.pointers.size > POINTERS_KEPT) {
      // The oldest go: long committed, the store has them.
      let n = POINTERS_KEPT / 5;
      for (const k of this.pointers.keys()) {
        if (n-- <= 0) break;
        this.pointers.delete(k);
      }
    }
  }

  /** The watermark is the batch's last sequence (a batch is built whole before it commits). */
  private noteSeq(batch: WriteBatch, seq: number): void {
    const op = this.seqOps.get(batch);
    if (op) {
      op.value = seq;
      return;
    }
    batch.putKv(this.tenant, FEED_SEQ_NS, this.eventId, seq);
    this.seqOps.set(batch, batch.ops[batch.ops.length - 1] as { value: unknown });
  }
}

/** A ticket's door on one list, as the feed answers it. */
export interface FeedListDoor {
  entries: number;
  inside: boolean;
}

/** What the scanner answers the feed of a page's tickets (`door-of`). */
export interface DoorsOf {
  lists: Record<string, Record<string, FeedListDoor>>;
  fields: Record<string, { status: string; checkedIn: boolean }>;
}

/** The lists each of `ids` entered on, with its entries and whether it is inside there now. */
export function listDoorsOf(door: DoorState, ids: readonly string[]): Record<string, Record<string, FeedListDoor>> {
  const out: Record<string, Record<string, FeedListDoor>> = {};
  for (const id of ids) {
    const lists: Record<string, FeedListDoor> = {};
    for (const [listId, ld] of door.lists) {
      const entries = ld.entries.get(id) ?? 0;
      const inside = ld.inside.has(id);
      if (entries > 0 || inside) lists[listId] = { entries, inside };
    }
    out[id] = lists;
  }
  return out;
}
