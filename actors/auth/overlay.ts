// An actor's view of the records it owns: the store, overlaid with the writes this actor made
// whose commits may not have landed yet (the runtime commits a message's batch after the handler
// returns, so the next message can run before the store shows it). Every write carries the
// version it was based on, so a record changed behind the actor's back fails the batch with 409
// and the runtime reloads the actor, instead of being overwritten silently.
import type { Filter } from '../../core/store/query.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store, WriteBatch } from '../../core/store/store.js';

interface Pending {
  /** The record written, or undefined for a delete. */
  rec?: StoredRecord;
  /** Version written (put) or version deleted (delete). */
  version: number;
}

export class RecordOverlay {
  private readonly pending = new Map<string, Pending>();

  constructor(
    private readonly store: Store,
    private readonly tenant: string,
  ) {}

  private key(datatype: string, sk: string): string {
    return `${datatype}\u0000${sk}`;
  }

  get(datatype: string, sk: string): StoredRecord | undefined {
    const k = this.key(datatype, sk);
    const stored = this.store.getRecord(this.tenant, datatype, sk);
    const p = this.pending.get(k);
    if (!p) return stored;
    if (p.rec) {
      if (stored && stored.version >= p.version) {
        this.pending.delete(k);
        return stored;
      }
      return p.rec;
    }
    if (!stored || stored.version !== p.version) {
      this.pending.delete(k);
      return stored;
    }
    return undefined;
  }

  /** Queues a write of `rec` based on what this overlay shows now (0: must not exist). */
  put(batch: WriteBatch, rec: StoredRecord): StoredRecord {
    const prev = this.get(rec.datatype, rec.sk);
    batch.putRecord(rec, prev?.version ?? 0);
    this.pending.set(this.key(rec.datatype, rec.sk), { rec, version: rec.version });
    return rec;
  }

  delete(batch: WriteBatch, datatype: string, sk: string): boolean {
    const prev = this.get(datatype, sk);
    if (!prev) return false;
    batch.deleteRecord(this.tenant, datatype, sk, prev.version);
    this.pending.set(this.key(datatype, sk), { version: prev.version });
    return true;
  }

  /** Records of `datatype` matching the store filter and `pred`, pending writes included. */
  find(datatype: string, filter: Filter, pred: (r: StoredRecord) => boolean): StoredRecord[] {
    const out = new Map<string, StoredRecord>();
    for (const r of this.store.scan(this.tenant, datatype, filter)) {
      const cur = this.get(datatype, r.sk);
      if (cur && pred(cur)) out.set(cur.sk, cur);
    }
    for (const p of this.pending.values()) {
      if (!p.rec || p.rec.datatype !== datatype || out.has(p.rec.sk)) continue;
      const cur = this.get(datatype, p.rec.sk);
      if (cur && pred(cur)) out.set(cur.sk, cur);
    }
    return [...out.values()];
  }
}
