// An actor's view of the records it writes. Its writes are committed after its reply is queued, and
// the next message may run before that commit lands, so a plain store read could miss the actor's
// own last write (and a read-check-write would then race itself). The view keeps every record the
// actor wrote until the store has caught up, and otherwise reads the store, so a record changed by
// someone else (the record store routes) is seen as soon as it is committed: of two copies the one
// with the higher `version` wins. Writes carry `ifVersion`, so a lost race is a 409, never a silent
// overwrite.
import { compileFilter, type Filter } from './query.js';
import type { StoredRecord } from './record.js';
import type { Store, WriteBatch } from './store.js';

interface Entry {
  /** undefined: deleted by this actor. */
  rec: StoredRecord | undefined;
  datatype: string;
  sk: string;
  /** Version written (or deleted at). */
  version: number;
}

export class RecordView {
  private readonly mem = new Map<string, Entry>();

  constructor(
    readonly store: Store,
    readonly tenant: string,
  ) {}

  private static key(datatype: string, sk: string): string {
    return `${datatype}\u0000${sk}`;
  }

  /** Drops entries the store has caught up with. Call at the start of each message. */
  prune(): void {
    for (const [k, e] of this.mem) {
      const stored = this.store.getRecord(this.tenant, e.datatype, e.sk);
      if (e.rec ? (stored?.version ?? 0) >= e.version : !stored || stored.version > e.version) this.mem.delete(k);
    }
  }

  get(datatype: string, sk: string): StoredRecord | undefined {
    const e = this.mem.get(RecordView.key(datatype, sk));
    const stored = this.store.getRecord(this.tenant, datatype, sk);
    if (!e) return stored;
    if (stored && stored.version > e.version) return stored;
    return e.rec;
  }

  /** Queues a write; `ifVersion` defaults to the version the new copy was made from. */
  put(batch: WriteBatch, rec: StoredRecord, ifVersion: number = rec.version - 1): StoredRecord {
    batch.putRecord(rec, ifVersion);
    this.mem.set(RecordView.key(rec.datatype, rec.sk), { rec, datatype: rec.datatype, sk: rec.sk, version: rec.version });
    return rec;
  }

  delete(batch: WriteBatch, rec: StoredRecord): void {
    batch.deleteRecord(this.tenant, rec.datatype, rec.sk, rec.version);
    this.mem.set(RecordView.key(rec.datatype, rec.sk), { rec: undefined, datatype: rec.datatype, sk: rec.sk, version: rec.version });
  }

  /**
   * Records of `datatype` matching `filter` (MongoDB language), the store's committed ones merged
   * with this actor's newer copies, in id order.
   */
  scan(datatype: string, filter: Filter = {}): StoredRecord[] {
    const q = Object.keys(filter).length ? compileFilter(filter) : undefined;
    const out = new Map<string, StoredRecord>();
    for (const r of this.store.scan(this.tenant, datatype, filter)) out.set(r.sk, r);
    for (const e of this.mem.values()) {
      if (e.datatype !== datatype) continue;
      const stored = out.get(e.sk) ?? this.store.getRecord(this.tenant, datatype, e.sk);
      if (stored && stored.version > e.version) continue;
      if (!e.rec || (q && !q.test(e.rec))) out.delete(e.sk);
      else out.set(e.sk, e.rec);
    }
    return [...out.values()].sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
  }
}
