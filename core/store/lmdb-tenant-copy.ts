// Cluster mode: a tenant's keys copied out of one node's LMDB and into another's (a snapshot,
// core/cluster/snapshots.ts). Every key of a tenant starts with the tenant, except a few in `meta`:
//   records, index, logs, kv   [tenant, ...]
//   meta   ['tindex', tenant, id], ['usage', tenant], ['kcount', datatype, path, tenant]
//          ['applied', tenant]  (the stream position the copy holds: its mark, copied apart)
// Values travel decoded, never as their stored bytes: records and log entries are encoded against
// msgpack structures each node keeps for itself (lmdb-encoding.ts), so one node's bytes mean
// nothing to another's decoder. Derived keys (index entries, listings, counts) are copied as they
// are, so the copy is exactly the source's state at its mark and needs no rebuild.
import type { Database, Key, RootDatabase, Transaction } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';

/** Which database an entry belongs to (a copy's entries name it by number). */
export const enum CopyDb {
  Records = 0,
  Index = 1,
  Logs = 2,
  Kv = 3,
  Meta = 4,
}

/** One key of a tenant: [database, key, decoded value]. */
export type CopyEntry = [db: CopyDb, key: Key, value: unknown];

export interface TenantDbs {
  root: RootDatabase;
  records: Database<unknown, Key>;
  index: Database<unknown, Key>;
  logs: Database<unknown, Key>;
  kv: Database<unknown, Key>;
  meta: Database<unknown, Key>;
}

function dbOf(dbs: TenantDbs, db: CopyDb): Database<unknown, Key> {
  switch (db) {
    case CopyDb.Records:
      return dbs.records;
    case CopyDb.Index:
      return dbs.index;
    case CopyDb.Logs:
      return dbs.logs;
    case CopyDb.Kv:
      return dbs.kv;
    default:
      return dbs.meta;
  }
}

/** The databases whose tenant keys are one range [tenant] .. [tenant, HIGH]. */
const RANGED: CopyDb[] = [CopyDb.Records, CopyDb.Index, CopyDb.Logs, CopyDb.Kv];

/** The tenant's keys in `meta` (bounded: declarations, one usage counter, a count per indexed path). */
function metaEntries(dbs: TenantDbs, tenant: string, transaction?: Transaction): CopyEntry[] {
  const out: CopyEntry[] = [];
  for (const { key, value } of dbs.meta.getRange({ start: ['tindex', tenant], end: ['tindex', tenant, HIGH], transaction })) out.push([CopyDb.Meta, key, value]);
  const usage = dbs.meta.get(['usage', tenant], { transaction });
  if (usage !== undefined) out.push([CopyDb.Meta, ['usage', tenant], usage]);
  for (const { key, value } of dbs.meta.getRange({ start: ['kcount'], end: ['kcount', HIGH], transaction })) {
    if ((key as unknown[])[3] === tenant) out.push([CopyDb.Meta, key, value]);
  }
  return out;
}

/**
 * A consistent read of one tenant, taken in chunks: every chunk comes from the same LMDB read
 * transaction, so the copy is the tenant exactly at `mark`, whatever commits land meanwhile. Each
 * `next` call is synchronous and bounded (`maxEntries`, `maxBytes` of values roughly), so the
 * caller yields to the event loop between chunks. `close` ends the read transaction (LMDB cannot
 * reuse pages a reader still sees: do not hold one longer than the copy takes).
 */
export class TenantExport {
  /** The tenant's stream mark at the read ([0, 0] when it has none) and whether it had one. */
  readonly mark: [number, number];
  readonly hadMark: boolean;
  private readonly txn: Transaction;
  private stage = 0;
  private after: Key | undefined;
  private metaDone = false;
  private closed = false;

  constructor(
    private readonly dbs: TenantDbs,
    readonly tenant: string,
  ) {
    this.txn = dbs.root.useReadTransaction();
    const m = dbs.meta.get(['applied', tenant], { transaction: this.txn }) as [number, number] | undefined;
    this.hadMark = m !== undefined;
    this.mark = m ?? [0, 0];
  }

  /** The next chunk of entries, or undefined once every key was given. */
  next(maxEntries: number, maxBytes: number): CopyEntry[] | undefined {
    if (this.closed) return undefined;
    const out: CopyEntry[] = [];
    if (!this.metaDone) {
      this.metaDone = true;
      out.push(...metaEntries(this.dbs, this.tenant, this.txn));
    }
    let bytes = 0;
    while (this.stage < RANGED.length && out.length < maxEntries && bytes < maxBytes) {
      const db = RANGED[this.stage];
      const range = dbOf(this.dbs, db).getRange({
        start: this.after ?? [this.tenant],
        end: [this.tenant, HIGH],
        exclusiveStart: this.after !== undefined,
        limit: maxEntries - out.length,
        transaction: this.txn,
      });
      let got = 0;
      for (const { key, value } of range) {
        got++;
        out.push([db, key, value]);
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

/** A size estimate cheap enough to take per entry: strings and records by their text, others small. */
function roughBytes(value: unknown): number {
  if (typeof value === 'string') return value.length + 8;
  if (value !== null && typeof value === 'object') {
    const data = (value as { data?: unknown }).data;
    // A stored record's document dominates; its JSON length is a fair measure only when walked,
    // which would cost more than the copy, so count its top-level fields.
    return 64 + (data && typeof data === 'object' ? Object.keys(data).length * 32 : 64);
  }
  return 16;
}

/** Deletes up to `max` of a tenant's keys in one transaction; how many it deleted (0: none left). */
export async function clearTenantSome(dbs: TenantDbs, tenant: string, max: number): Promise<number> {
  let n = 0;
  await dbs.root.transaction(() => {
    if (n === 0) {
      // The mark first: a node stopped half-way through holds no claim to any position.
      void dbs.meta.remove(['applied', tenant]);
      for (const [, key] of metaEntries(dbs, tenant)) {
        void dbs.meta.remove(key);
        n++;
      }
    }
    for (const db of RANGED) {
      if (n >= max) break;
      for (const key of dbOf(dbs, db).getKeys({ start: [tenant], end: [tenant, HIGH], limit: max - n })) {
        void dbOf(dbs, db).remove(key);
        n++;
      }
    }
  });
  return n;
}

/** Writes one chunk of a copy in one transaction. */
export async function putTenantEntries(dbs: TenantDbs, entries: CopyEntry[]): Promise<void> {
  await dbs.root.transaction(() => {
    for (const [db, key, value] of entries) void dbOf(dbs, db).put(key, value);
  });
}
