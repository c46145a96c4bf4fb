// Storage usage per tenant in the LMDB store (usage.ts): counters in `meta` under ['usage', tenant]
// kept in each batch's transaction, the quota checked as they grow, and the one-time count of data
// stored before counting began.
import type { Database, Key, RootDatabase } from 'lmdb';
import { AppError } from '../errors.js';
import { HIGH } from './lmdb-encoding.js';
import type { Org } from './store.js';
import type { QuotaPolicy, StorageUsage, UsageCounter, UsageDelta } from './usage.js';

export class LmdbUsage {
  constructor(
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, Key>,
    /** The tenant's organisation, read in the transaction (a batch may create it). */
    private readonly orgOf: (tenant: string) => Org | undefined,
    private readonly quota: QuotaPolicy | undefined,
  ) {}

  /**
   * Adds one tenant's changes to its stored counter, in the batch's transaction; growth past a
   * quota throws ERR_STORAGE_QUOTA, which rolls the batch back (see LmdbStore.write).
   */
  count(d: UsageDelta): void {
    if (d.records === 0 && d.media === 0 && d.mediaCounted === undefined) return;
    const tenant = d.tenant!;
    const key = ['usage', tenant];
    const c = (this.meta.get(key) as UsageCounter | undefined) ?? [0, 0, 0];
    const records = c[0] + d.records;
    const media = (d.mediaCounted ?? c[1]) + d.media;
    if (this.quota && (d.enforced > 0 || d.media > 0)) {
      const limits = this.quota.limitsOf(tenant, this.orgOf(tenant));
      if (limits) {
        if (d.enforced > 0 && limits.recordBytes !== null && records > limits.recordBytes) {
          throw new AppError('ERR_STORAGE_QUOTA', [d.records, 'record bytes', records, limits.plan, limits.recordBytes, c[0], limits.plan]);
        }
        if (d.media > 0 && limits.mediaBytes !== null && media > limits.mediaBytes) {
          throw new AppError('ERR_STORAGE_QUOTA', [d.media, 'media bytes', media, limits.plan, limits.mediaBytes, c[1], limits.plan]);
        }
      }
    }
    this.meta.put(key, [records, media, d.mediaCounted !== undefined ? 1 : c[2]] satisfies UsageCounter);
  }

  usage(tenant: string): StorageUsage & { mediaCounted: boolean } {
    const c = this.meta.get(['usage', tenant]) as UsageCounter | undefined;
    return { recordBytes: c?.[0] ?? 0, mediaBytes: c?.[1] ?? 0, mediaCounted: c?.[2] === 1 };
  }

  usages(): Array<{ tenant: string } & StorageUsage> {
    const out: Array<{ tenant: string } & StorageUsage> = [];
    for (const { key, value } of this.meta.getRange({ start: ['usage'], end: ['usage', HIGH] })) {
      const c = value as UsageCounter;
      out.push({ tenant: (key as [string, string])[1], recordBytes: c[0], mediaBytes: c[1] });
    }
    return out;
  }

  /**
   * A tenant's record bytes counted from scratch, by walking what it stores (no decoding): what the
   * counter must equal. For checks and tests; the counter is what requests read.
   */
  measureRecordBytes(tenant: string): number {
    let bytes = 0;
    for (const name of ['records', 'logs', 'kv']) {
      const db = this.root.openDB<Buffer, Key>({ name, encoding: 'binary' });
      for (const { value } of db.getRange({ start: [tenant], end: [tenant, HIGH] })) bytes += value.length;
    }
    return bytes;
  }

  /**
   * Counts the record bytes of data stored before usage was counted, once per data directory: one
   * pass over the stored values' sizes (no decoding) in one transaction, so no write lands between
   * the count and the counters. Run at start-up before the server takes requests, after the write
   * journal was replayed. Answers what it counted, or undefined when the count ran before.
   */
  backfill(): { tenants: number; entries: number } | undefined {
    if (this.meta.get(['usage-counted']) !== undefined) return undefined;
    const raw = ['records', 'logs', 'kv'].map((name) => this.root.openDB<Buffer, Key>({ name, encoding: 'binary' }));
    return this.root.transactionSync(() => {
      const totals = new Map<string, number>();
      let entries = 0;
      for (const db of raw) {
        for (const { key, value } of db.getRange({})) {
          const tenant = (key as string[])[0];
          totals.set(tenant, (totals.get(tenant) ?? 0) + value.length);
          entries++;
        }
      }
      // Counters written by earlier commits of this run hold the same bytes; only media is kept.
      for (const { key } of this.meta.getRange({ start: ['usage'], end: ['usage', HIGH] })) {
        const tenant = (key as [string, string])[1];
        if (!totals.has(tenant)) totals.set(tenant, 0);
      }
      for (const [tenant, bytes] of totals) {
        const c = this.meta.get(['usage', tenant]) as UsageCounter | undefined;
        this.meta.put(['usage', tenant], [bytes, c?.[1] ?? 0, c?.[2] ?? 0] satisfies UsageCounter);
      }
      this.meta.put(['usage-counted'], { at: new Date().toISOString() });
      return { tenants: totals.size, entries };
    });
  }
}
