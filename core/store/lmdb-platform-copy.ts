// Cluster mode: the platform-wide data every node's applier materialises (core/cluster/commit-log.ts),
// copied out of one node's LMDB and into another's: a platform snapshot
// (core/cluster/platform-snapshots.ts), so the stream's platform subjects can be purged. It is
//   orgs                       every organisation
//   records, index, logs, kv   the keys of the `_` tenants: [tenant, ...] with tenant from '_' up to '`'
//   meta                       the `_` tenants' ['tindex', t, id], ['usage', t], ['kcount', dt, path, t]
// and its mark is the platform's stream mark (['applied', '_g'], the last platform batch applied).
// One LMDB read transaction gives every chunk, so the copy is the platform exactly at its mark.
// Entries are [database, key, decoded value], as a tenant's copy (lmdb-tenant-copy.ts), numbered
// as there, plus one number of its own for the organisations.
import type { Database, Key, RootDatabase, Transaction } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
import type { CopyEntry } from './lmdb-tenant-copy.js';

/** The platform mark's key in ['applied', key] (commit-log.ts GLOBAL_MARK). */
export const PLATFORM_MARK = '_g';

/** Databases by number in a platform copy's entries: a tenant copy's numbers, and the organisations. */
const enum PlatformDb {
  Records = 0,
  Index = 1,
  Logs = 2,
  Kv = 3,
  Meta = 4,
  Orgs = 5,
}

export interface PlatformDbs {
  root: RootDatabase;
  records: Database<unknown, Key>;
  index: Database<unknown, Key>;
  logs: Database<unknown, Key>;
  kv: Database<unknown, Key>;
  meta: Database<unknown, Key>;
  orgs: Database<unknown, Key>;
}

function dbOf(dbs: PlatformDbs, db: PlatformDb): Database<unknown, Key> {
  switch (db) {
    case PlatformDb.Records:
      return dbs.records;
    case PlatformDb.Index:
      return dbs.index;
    case PlatformDb.Logs:
      return dbs.logs;
    case PlatformDb.Kv:
      return dbs.kv;
    case PlatformDb.Orgs:
      return dbs.orgs;
    default:
      return dbs.meta;
  }
}

/** Ranged databases, in the order a copy reads them, and each one's range. */
const RANGES: Array<[PlatformDb, Key, Key]> = [
  [PlatformDb.Orgs, '', HIGH],
  [PlatformDb.Records, ['_'], ['`']],
  [PlatformDb.Index, ['_'], ['`']],
  [PlatformDb.Logs, ['_'], ['`']],
  [PlatformDb.Kv, ['_'], ['`']],
];

function isSystem(tenant: unknown): boolean {
  return typeof tenant === 'string' && tenant.charCodeAt(0) === 95; // '_'
}

/** The `_` tenants' keys in `meta` (bounded: declarations, a usage counter each, a count per indexed path). */
function metaEntries(dbs: PlatformDbs, transaction?: Transaction): CopyEntry[] {
  const out: CopyEntry[] = [];
  for (const { key, value } of dbs.meta.getRange({ start: ['tindex', '_'], end: ['tindex', '`'], transaction })) out.push([PlatformDb.Meta as number, key, value] as CopyEntry);
  for (const { key, value } of dbs.meta.getRange({ start: ['usage', '_'], end: ['usage', '`'], transaction })) out.push([PlatformDb.Meta as number, key, value] as CopyEntry);
  for (const { key, value } of dbs.meta.getRange({ start: ['kcount'], end: ['kcount', HIGH], transaction })) {
    if (isSystem((key as unknown[])[3])) out.push([PlatformDb.Meta as number, key, value] as CopyEntry);
  }
  return out;
}

/**
 * A consistent read of the platform data, in chunks (as TenantExport): each `next` is synchronous
 * and bounded, so the caller yields between chunks; `close` ends the read transaction.
 */
export class PlatformExport {
  /** The platform's stream mark at the read ([0, 0] when nothing was applied). */
  readonly mark: [number, number];
  private readonly txn: Transaction;
  private stage = 0;
  private after: Key | undefined;
  private metaDone = false;
  private closed = false;

  constructor(private readonly dbs: PlatformDbs) {
    this.txn = dbs.root.useReadTransaction();
    this.mark = (dbs.meta.get(['applied', PLATFORM_MARK], { transaction: this.txn }) as [number, number] | undefined) ?? [0, 0];
  }

  next(maxEntries: number, maxBytes: number): CopyEntry[] | undefined {
    if (this.closed) return undefined;
    const out: CopyEntry[] = [];
    if (!this.metaDone) {
      this.metaDone = true;
      out.push(...metaEntries(this.dbs, this.txn));
    }
    let bytes = 0;
    while (this.stage < RANGES.length && out.length < maxEntries && bytes < maxBytes) {
      const [db, start, end] = RANGES[this.stage];
      const range = dbOf(this.dbs, db).getRange({ start: this.after ?? start, end, exclusiveStart: this.after !== undefined, limit: maxEntries - out.length, transaction: this.txn });
      let got = 0;
      for (const { key, value } of range) {
        got++;
        out.push([db as number, key, value] as CopyEntry);
        this.after = key;
        bytes += roughBytes(value);
        if (bytes >= maxBytes) break;
      }
      if (got === 0 || (out.length < maxEntries && bytes < maxBytes)) {
        this.stage++;
        this.after = undefined;
      }
    }
    if (out.length === 0) {
      this.close();
      return undefined;
    }
    return out;
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.txn.done();
  }
}

/** A size estimate cheap enough per entry: an organisation or a `_` tenant's value is small. */
function roughBytes(value: unknown): number {
  if (typeof value === 'string') return value.length + 8;
  if (value !== null && typeof value === 'object') return 64 + Object.keys(value).length * 32;
  return 16;
}

/**
 * Deletes up to `max` of the platform's keys in one transaction, its mark first (a node stopped
 * half-way holds no claim to a position); how many it deleted (0: none left).
 */
export async function clearPlatformSome(dbs: PlatformDbs, max: number): Promise<number> {
  let n = 0;
  await dbs.root.transaction(() => {
    if (n === 0) {
      void dbs.meta.remove(['applied', PLATFORM_MARK]);
      for (const [, key] of metaEntries(dbs)) {
        void dbs.meta.remove(key);
        n++;
      }
    }
    for (const [db, start, end] of RANGES) {
      if (n >= max) break;
      for (const key of dbOf(dbs, db).getKeys({ start, end, limit: max - n })) {
        void dbOf(dbs, db).remove(key);
        n++;
      }
    }
  });
  return n;
}

/** Writes one chunk of a platform copy in one transaction. */
export async function putPlatformEntries(dbs: PlatformDbs, entries: CopyEntry[]): Promise<void> {
  await dbs.root.transaction(() => {
    for (const [db, key, value] of entries) void dbOf(dbs, db as number as PlatformDb).put(key, value);
  });
}
