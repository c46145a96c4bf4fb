// The answers client reads (a get by id, a small exact find) last wrote for each record, kept per
// tenant as text, so a hot record is neither read from LMDB, decoded nor serialized again. Text,
// not the decoded record: one flat string per record costs the collector nothing to walk, where
// a cached object tree slows every major collection. A record leaves when a commit that writes or
// deletes it lands (lmdb-store.ts forgets the batch's records once LMDB shows the commit, so a
// read between the write and its landing, which LMDB answers from before it, cannot keep the old
// copy past it). Bounded in bytes per tenant (one busy organisation cannot take another's share)
// and in all; the oldest leave first.
import type { ListResult, StoredRecord } from './record.js';

/** A find's page, with `texts` (and no `data`) when its records came as a reader's RecordText (Store.findUpTo's `by`). */
export type TextPage = ListResult & { texts?: string[] };

/** Turns a record into the answer a route sends: the same function on every call of one reader. */
export type RecordText = (rec: StoredRecord) => string;

/** Bytes an entry holds beside its text (the key, the map slot, the queue slot). */
const ENTRY_OVERHEAD = 120;
/** A record is never cached above this share of a bound: one large record does not flush the rest. */
const LARGEST_SHARE = 1 / 16;

interface Cached {
  text: string;
  /** The function that wrote `text`: another reader's function is a miss, never its text. */
  by: RecordText;
  bytes: number;
  seq: number;
}

class TenantTexts {
  readonly byKey = new Map<string, Cached>();
  /** Keys in the order they were cached, with the seq they were cached at (older copies are skipped). */
  queue: Array<[string, number]> = [];
  head = 0;
  bytes = 0;
}

export class RecordCache {
  private readonly tenants = new Map<string, TenantTexts>();
  private total = 0;
  private seq = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly tenantMaxBytes: number,
  ) {}

  private static key(datatype: string, sk: string): string {
    return datatype + '\u0000' + sk;
  }

  get(tenant: string, datatype: string, sk: string, by: RecordText): string | undefined {
    const hit = this.tenants.get(tenant)?.byKey.get(RecordCache.key(datatype, sk));
    return hit && hit.by === by ? hit.text : undefined;
  }

  put(tenant: string, datatype: string, sk: string, text: string, by: RecordText): void {
    // Two bytes a character: a string with any character past Latin-1 is stored so.
    const bytes = 2 * text.length + ENTRY_OVERHEAD;
    if (bytes > this.tenantMaxBytes * LARGEST_SHARE || bytes > this.maxBytes * LARGEST_SHARE) return;
    let t = this.tenants.get(tenant);
    if (!t) {
      t = new TenantTexts();
      this.tenants.set(tenant, t);
    }
    const key = RecordCache.key(datatype, sk);
    this.drop(t, key);
    const seq = ++this.seq;
    t.byKey.set(key, { text, by, bytes, seq });
    t.queue.push([key, seq]);
    // Copies forgotten or replaced leave stale slots: past twice the live entries, only live ones are kept.
    if (t.queue.length - t.head > 2 * t.byKey.size + 1024) {
      t.queue = t.queue.slice(t.head).filter(([k, s]) => t!.byKey.get(k)?.seq === s);
      t.head = 0;
    }
    t.bytes += bytes;
    this.total += bytes;
    while (t.bytes > this.tenantMaxBytes) this.evictOldest(tenant, t);
    // Over the node's bound, every tenant's oldest in turn.
    while (this.total > this.maxBytes) {
      const [first, ft] = this.tenants.entries().next().value as [string, TenantTexts];
      this.evictOldest(first, ft);
      if (this.tenants.get(first) === ft) {
        this.tenants.delete(first);
        this.tenants.set(first, ft);
      }
    }
  }

  /** Drops a record a commit wrote or deleted. */
  forget(tenant: string, datatype: string, sk: string): void {
    const t = this.tenants.get(tenant);
    if (!t) return;
    this.drop(t, RecordCache.key(datatype, sk));
    if (t.byKey.size === 0) this.tenants.delete(tenant);
  }

  /** Bytes a tenant's cached answers are counted at. */
  bytesOf(tenant: string): number {
    return this.tenants.get(tenant)?.bytes ?? 0;
  }

  /** Bytes every tenant's cached answers are counted at. */
  get bytes(): number {
    return this.total;
  }

  private drop(t: TenantTexts, key: string): void {
    const had = t.byKey.get(key);
    if (!had) return;
    t.byKey.delete(key);
    t.bytes -= had.bytes;
    this.total -= had.bytes;
  }

  private evictOldest(tenant: string, t: TenantTexts): void {
    while (t.head < t.queue.length) {
      const [key, seq] = t.queue[t.head++];
      if (t.byKey.get(key)?.seq === seq) {
        this.drop(t, key);
        break;
      }
    }
    // The queue is compacted once its spent head is most of it (each entry moves at most once per halving).
    if (t.head > 1024 && t.head * 2 > t.queue.length) {
      t.queue.splice(0, t.head);
      t.head = 0;
    }
    if (t.byKey.size === 0) this.tenants.delete(tenant);
  }
}
