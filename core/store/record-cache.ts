// The answers client reads (a get by id, a small exact find) last wrote for each record, kept per
// tenant as text, so a hot record is neither read from LMDB, decoded nor serialized again. Text,
// not the decoded record: one flat string per record costs the collector nothing to walk, where
// a cached object tree slows every major collection. A record leaves when a commit that writes or
// deletes it lands (lmdb-store.ts forgets the batch's records once LMDB shows the commit, so a
// read between the write and its landing, which LMDB answers from before it, cannot keep the old
// copy past it). Bounded in bytes per tenant (one busy organisation cannot take another's share)
// and in all; the oldest leave first.
import { ExactIdsCache } from './exact-ids-cache.js';
import type { ListResult, StoredRecord } from './record.js';

/** A find's page, with `texts` (and no `data`) when its records came as a reader's RecordText (Store.findUpTo's `by`). */
export type TextPage = ListResult & { texts?: string[] };

/** Turns a record into the answer a route sends: the same function on every call of one reader. */
export type RecordText = (rec: StoredRecord) => string;

/** Bytes an entry holds beside its text (its id, its object, the map and queue slots). */
const ENTRY_OVERHEAD = 200;
const WIDE = /[^\u0000-\u00ff]/;
/** A record is never cached above this share of a bound: one large record does not flush the rest. */
const LARGEST_SHARE = 1 / 16;

/** One record's kept text. An exact find's matches hold these (exact-ids-cache.ts): `live` says whether it is still the cache's. */
export interface CachedText {
  readonly datatype: string;
  readonly sk: string;
  /** Emptied once it leaves the cache: an exact find's slot holding it then pins no text. */
  text: string;
  /** The function that wrote `text`: another reader's function is a miss, never its text. */
  readonly by: RecordText;
  readonly bytes: number;
  /** Cleared once it leaves the cache (its record written or deleted, replaced, or evicted). */
  live: boolean;
}
type Cached = CachedText;

class TenantTexts {
  /** By datatype, then id: no key to build per lookup (a joined string is hashed anew on every read). */
  readonly byType = new Map<string, Map<string, Cached>>();
  size = 0;
  /** Entries in the order they were cached (one forgotten or replaced since is skipped). */
  queue: Cached[] = [];
  head = 0;
  bytes = 0;
}

export class RecordCache {
  private readonly tenants = new Map<string, TenantTexts>();
  private total = 0;

  constructor(
    private readonly maxBytes: number,
    private readonly tenantMaxBytes: number,
  ) {}

  get(tenant: string, datatype: string, sk: string, by: RecordText): string | undefined {
    return this.entry(tenant, datatype, sk, by)?.text;
  }

  /** The kept text of a record as `by` writes it, as the entry itself. */
  entry(tenant: string, datatype: string, sk: string, by: RecordText): CachedText | undefined {
    const hit = this.tenants.get(tenant)?.byType.get(datatype)?.get(sk);
    return hit && hit.by === by ? hit : undefined;
  }

  /** Keeps a record's text; its entry, or undefined when it is too large to keep. */
  put(tenant: string, datatype: string, sk: string, text: string, by: RecordText): CachedText | undefined {
    // V8 keeps a string of Latin-1 characters in a byte each, any other in two.
    const bytes = (WIDE.test(text) ? 2 : 1) * text.length + ENTRY_OVERHEAD;
    if (bytes > this.tenantMaxBytes * LARGEST_SHARE || bytes > this.maxBytes * LARGEST_SHARE) return undefined;
    let t = this.tenants.get(tenant);
    if (!t) {
      t = new TenantTexts();
      this.tenants.set(tenant, t);
    }
    let ofType = t.byType.get(datatype);
    if (!ofType) {
      ofType = new Map();
      t.byType.set(datatype, ofType);
    }
    this.drop(t, datatype, sk);
    const entry: Cached = { datatype, sk, text, by, bytes, live: true };
    ofType.set(sk, entry);
    t.size++;
    t.queue.push(entry);
    // Copies forgotten or replaced leave stale slots: past twice the live entries, only live ones are kept.
    if (t.queue.length - t.head > 2 * t.size + 1024) {
      const live = t;
      t.queue = t.queue.slice(t.head).filter((e) => live.byType.get(e.datatype)?.get(e.sk) === e);
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
    return entry.live ? entry : undefined;
  }

  /** The matches of exact small finds, valid while their datatype is unchanged (exact-ids-cache.ts). */
  readonly exact = new ExactIdsCache();

  /**
   * Drops a record written or deleted past the indexes, and the exact finds' matches of its
   * datatype (which keys moved is not known).
   */
  forget(tenant: string, datatype: string, sk: string): void {
    this.exact.touched(tenant, datatype);
    this.landed(tenant, datatype, sk);
  }

  /** Drops a record a landed commit wrote or deleted (the exact finds' matches it moved go apart: ExactIdsCache.moved). */
  landed(tenant: string, datatype: string, sk: string): void {
    const t = this.tenants.get(tenant);
    if (!t) return;
    this.drop(t, datatype, sk);
    if (t.size === 0) this.tenants.delete(tenant);
  }

  /** Drops every answer of a tenant and its exact finds' matches (its keys were replaced whole). */
  /** Drops the cached answers of every `_` tenant (the platform's copy was loaded around the batch path). */
  forgetSystemTenants(): void {
    for (const tenant of [...this.tenants.keys()]) if (tenant.charCodeAt(0) === 95) this.forgetTenant(tenant);
  }

  forgetTenant(tenant: string): void {
    this.exact.touchedTenant(tenant);
    const t = this.tenants.get(tenant);
    if (!t) return;
    this.tenants.delete(tenant);
    this.total -= t.bytes;
  }

  /** Bytes a tenant's cached answers are counted at. */
  bytesOf(tenant: string): number {
    return this.tenants.get(tenant)?.bytes ?? 0;
  }

  /** Bytes every tenant's cached answers are counted at. */
  get bytes(): number {
    return this.total;
  }

  private drop(t: TenantTexts, datatype: string, sk: string): void {
    const ofType = t.byType.get(datatype);
    const had = ofType?.get(sk);
    if (!had) return;
    had.live = false;
    had.text = '';
    ofType!.delete(sk);
    if (ofType!.size === 0) t.byType.delete(datatype);
    t.size--;
    t.bytes -= had.bytes;
    this.total -= had.bytes;
  }

  private evictOldest(tenant: string, t: TenantTexts): void {
    while (t.head < t.queue.length) {
      const e = t.queue[t.head++];
      if (t.byType.get(e.datatype)?.get(e.sk) === e) {
        this.drop(t, e.datatype, e.sk);
        break;
      }
    }
    // The queue is compacted once its spent head is most of it (each entry moves at most once per halving).
    if (t.head > 1024 && t.head * 2 > t.queue.length) {
      t.queue.splice(0, t.head);
      t.head = 0;
    }
    if (t.size === 0) this.tenants.delete(tenant);
  }
}
