// Storage each organisation uses, counted by the store in the transaction of every write (issue 29):
// record bytes are the stored (encoded) size of its records, log entries and key-value entries;
// media bytes the size of its stored files, added and taken off by the media store. Keys and
// the modules' secondary indexes are not counted; the entries of indexes an organisation declares are
// (lmdb-tenant-indexes.ts entryBytes). The counter lives in LMDB beside the data it counts, so it
// survives a restart and can never disagree with a commit that landed.
import type { Org } from './org.js';

export interface StorageUsage {
  recordBytes: number;
  mediaBytes: number;
}

/** A tenant's quotas: null is no limit. */
export interface StorageLimits {
  plan: string;
  recordBytes: number | null;
  mediaBytes: number | null;
}

/** What the store refuses, decided outside it (plans are configuration, datatypes the modules'). */
export interface QuotaPolicy {
  /** The tenant's quotas, or undefined when none apply (platform data, quotas off). */
  limitsOf(tenant: string, org: Org | undefined): StorageLimits | undefined;
  /**
   * Datatypes whose record writes the quota never refuses (they still count): the service's own
   * bookkeeping, such as a sign-in's security record or an outbox message marked sent, which an
   * organisation over its quota must keep writing to sign in, delete and be told so.
   */
  readonly exemptDatatypes: ReadonlySet<string>;
}

/** The stored counter: [recordBytes, mediaBytes, media counted (1) or still to count from disk (0)]. */
export type UsageCounter = [number, number, 0 | 1];

/** A plan's quotas from a table of plans, as the rate limits pick a plan (Org.plan, else the default). */
export function planLimits(
  plans: Readonly<Record<string, { recordBytes: number | null; mediaBytes: number | null }>>,
  defaultPlan: string,
  org: Org | undefined,
): StorageLimits | undefined {
  const name = org?.plan !== undefined && plans[org.plan] ? org.plan : defaultPlan;
  const p = plans[name];
  return p ? { plan: name, recordBytes: p.recordBytes, mediaBytes: p.mediaBytes } : undefined;
}

/**
 * One batch's usage changes, per tenant. An apply runs synchronously and alone, so the store keeps
 * one of these and clears it per batch: nearly every batch touches one tenant, held without a map.
 */
export class UsageDelta {
  tenant: string | undefined;
  records = 0;
  media = 0;
  /** Growth from writes the quota may refuse (records outside the exempt datatypes). */
  enforced = 0;
  /** Media bytes counted on disk, replacing the counter's (WriteBatch.countedMediaBytes). */
  mediaCounted: number | undefined;
  private more: Map<string, UsageDelta> | undefined;

  clear(): void {
    this.tenant = undefined;
    this.records = this.media = this.enforced = 0;
    this.mediaCounted = undefined;
    this.more = undefined;
  }

  /** The entry of `tenant` (created on first use). */
  of(tenant: string): UsageDelta {
    if (this.tenant === undefined || this.tenant === tenant) {
      this.tenant = tenant;
      return this;
    }
    this.more ??= new Map();
    let d = this.more.get(tenant);
    if (!d) this.more.set(tenant, (d = new UsageDelta()));
    d.tenant = tenant;
    return d;
  }

  *entries(): Iterable<UsageDelta> {
    if (this.tenant === undefined) return;
    yield this;
    if (this.more) yield* this.more.values();
  }
}

/** One tenant's change of record bytes, outside a batch (index builds and removals). */
export function usageDelta(tenant: string, bytes: number): UsageDelta {
  const d = new UsageDelta();
  d.of(tenant).records += bytes;
  return d;
}
