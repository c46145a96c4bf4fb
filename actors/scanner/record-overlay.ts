// Records this actor wrote whose commit may not have landed yet. The runtime commits a message's
// batch after the handler returns (many messages fold into one LMDB transaction), so a later
// message in the same turn would read the older committed version from the store. Reads go through
// here: the newer of the pending and the stored version wins, and entries whose write is visible in
// the store are dropped. Correct because this actor is the only writer of these records.
//
// Knowing what has landed costs a read per record, unless the write was tagged with the sequence
// of a log entry committed in the same batch: then one look at the log's last sequence settles
// every such write at once.
import type { StoredRecord } from '../../core/store/record.js';
import type { Store, WriteBatch } from '../../core/store/store.js';

const MIN_SWEEP = 512;

interface Pending {
  rec: StoredRecord;
  /** Sequence of a log entry written in the same batch (see `landed`). */
  mark: number | undefined;
}

export class RecordOverlay {
  private readonly pending = new Map<string, Pending>();
  private readonly inBatch = new WeakMap<WriteBatch, Set<string>>();
  private sweepAt = MIN_SWEEP;

  /** `landed`: the last sequence of the log whose entries tag writes (see put's `mark`). */
  constructor(
    private readonly store: Store,
    private readonly tenant: string,
    private readonly landed?: () => number,
  ) {}

  get(datatype: string, sk: string): StoredRecord | undefined {
    const stored = this.store.getRecord(this.tenant, datatype, sk);
    if (this.pending.size === 0) return stored;
    const key = datatype + '\u0000' + sk;
    const p = this.pending.get(key);
    if (p === undefined) return stored;
    if (!stored || stored.version < p.rec.version) return p.rec;
    this.pending.delete(key);
    return stored;
  }

  /**
   * Queues the write in `batch` and makes it visible to later reads of this actor. A batch checks
   * every version against the store before writing anything, so only the first write of a record
   * in one batch carries the check; a second one (two scans of a ticket in one offline upload)
   * follows from it.
   */
  put(batch: WriteBatch, rec: StoredRecord, ifVersion: number, mark?: number): void {
    const key = rec.datatype + '\u0000' + rec.sk;
    let keys = this.inBatch.get(batch);
    if (!keys) this.inBatch.set(batch, (keys = new Set()));
    if (keys.has(key)) batch.putRecord(rec);
    else {
      keys.add(key);
      batch.putRecord(rec, ifVersion);
    }
    // Re-inserted at the end, so the map stays in write order (see sweep).
    this.pending.delete(key);
    this.pending.set(key, { rec, mark });
    if (this.pending.size >= this.sweepAt) this.sweep();
  }

  /** Queues a delete; the record is no longer pending (a pending entry is always a put). */
  delete(batch: WriteBatch, rec: StoredRecord): void {
    batch.deleteRecord(rec.pk, rec.datatype, rec.sk, rec.version);
    this.pending.delete(rec.datatype + '\u0000' + rec.sk);
  }

  /**
   * Drops what has landed. One actor's batches commit in the order they were queued, so once an
   * entry is seen in the store, every older one has landed too (even one deleted since, which the
   * store can no longer show). A run of entries still in flight ends the sweep.
   */
  private sweep(): void {
    const watermark = this.landed?.() ?? 0;
    const unsure: string[] = [];
    for (const [key, p] of this.pending) {
      let landed: boolean;
      if (p.mark !== undefined) {
        if (p.mark > watermark) break;
        landed = true;
      } else {
        const stored = this.store.getRecord(this.tenant, p.rec.datatype, p.rec.sk);
        landed = stored !== undefined && stored.version >= p.rec.version;
      }
      if (landed) {
        for (const k of unsure) this.pending.delete(k);
        unsure.length = 0;
        this.pending.delete(key);
      } else {
        unsure.push(key);
        if (unsure.length >= 8) break;
      }
    }
    this.sweepAt = this.pending.size + MIN_SWEEP;
  }

  get size(): number {
    return this.pending.size;
  }
}
