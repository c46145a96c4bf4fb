// Cluster mode: the platform-wide data every node's applier materialises (core/cluster/commit-log.ts),
// copied out of one node's LMDB and into another's: a platform snapshot
// (core/cluster/platform-snapshots.ts), so the stream's platform subjects can be purged. It is
//   orgs                       every organisation
//   records, index, logs, kv   the keys of the `_` tenants: [tenant, ...] with tenant from '_' up to '`'
//   meta                       the `_` tenants' ['tindex', t, id], ['usage', t], ['kcount', dt, path, t]
// and its mark is the platform's stream mark (['applied', '_g'], the last platform batch applied).
// One LMDB read transaction gives every chunk, so the copy is the platform exactly at its mark.
// It travels in the frames of a tenant's copy (lmdb-copy-frame.ts), every value Decoded (the data is
// small next to a tenant's, and records of the `_` tenants carry this node's msgpack structures),
// with the organisations as database CopyDb.Orgs.
import type { Database, Key, RootDatabase, Transaction } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
import { CopyDb, CopyFrameWriter, CopyValue, decodeCopyValue, encodeCopyValue, readCopyFrame } from './lmdb-copy-frame.js';
import { bufferToKeyValue, dbOf, keyValueToBuffer, type CopyDbs, type CopyEntry, type CopyFrame } from './lmdb-tenant-copy.js';

/** The platform mark's key in ['applied', key] (commit-log.ts GLOBAL_MARK). */
export const PLATFORM_MARK = '_g';

export type PlatformDbs = CopyDbs & { root: RootDatabase; orgs: Database<unknown, Key> };

/** Ranged databases, in the order a copy reads them, and each one's range. */
const RANGES: Array<[CopyDb, Key, Key]> = [
  [CopyDb.Orgs, '', HIGH],
  [CopyDb.Records, ['_'], ['`']],
  [CopyDb.Index, ['_'], ['`']],
  [CopyDb.Logs, ['_'], ['`']],
  [CopyDb.Kv, ['_'], ['`']],
];

function isSystem(tenant: unknown): boolean {
  return typeof tenant === 'string' && tenant.charCodeAt(0) === 95; // '_'
}

/** The `_` tenants' keys in `meta` (bounded: declarations, a usage counter each, a count per indexed path). */
function metaEntries(dbs: PlatformDbs, transaction?: Transaction): CopyEntry[] {
  const out: CopyEntry[] = [];
  for (const { key, value } of dbs.meta.getRange({ start: ['tindex', '_'], end: ['tindex', '`'], transaction })) out.push([CopyDb.Meta, key, value]);
  for (const { key, value } of dbs.meta.getRange({ start: ['usage', '_'], end: ['usage', '`'], transaction })) out.push([CopyDb.Meta, key, value]);
  for (const { key, value } of dbs.meta.getRange({ start: ['kcount'], end: ['kcount', HIGH], transaction })) {
    if (isSystem((key as unknown[])[3])) out.push([CopyDb.Meta, key, value]);
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
  /** Entries read and not framed yet (the meta keys, an entry the last frame had no room for). */
  private queued: CopyEntry[] = [];

  constructor(private readonly dbs: PlatformDbs) {
    this.txn = dbs.root.useReadTransaction();
    this.mark = (dbs.meta.get(['applied', PLATFORM_MARK], { transaction: this.txn }) as [number, number] | undefined) ?? [0, 0];
  }

  /** The next frame: up to `maxEntries` entries in at most `maxBytes`, with `room` bytes free at its start; undefined once every key was given. */
  next(maxEntries: number, maxBytes: number, room: number): CopyFrame | undefined {
    if (this.closed) return undefined;
    const w = new CopyFrameWriter(room, maxBytes);
    const add = ([db, key, value]: CopyEntry): boolean => {
      const k = keyValueToBuffer(key);
      const v = encodeCopyValue(value);
      if (!w.fits(k.length, v.length)) {
        if (w.entries === 0) throw new Error(`a platform key of ${k.length + v.length} bytes does not fit in a chunk of ${maxBytes}`);
        return false;
      }
      w.add(db, CopyValue.Decoded, k, v);
      return true;
    };
    if (!this.metaDone) {
      this.metaDone = true;
      this.queued = metaEntries(this.dbs, this.txn);
    }
    // Entries read and not yet framed first (the meta keys; an entry the last frame had no room for).
    while (this.queued.length > 0 && w.entries < maxEntries && add(this.queued[0])) this.queued.shift();
    let full = this.queued.length > 0;
    while (!full && this.stage < RANGES.length && w.entries < maxEntries) {
      const [db, start, end] = RANGES[this.stage];
      const range = dbOf(this.dbs, db).getRange({ start: this.after ?? start, end, exclusiveStart: this.after !== undefined, limit: maxEntries - w.entries, transaction: this.txn });
      let got = 0;
      for (const { key, value } of range) {
        got++;
        this.after = key;
        const entry: CopyEntry = [db, key, value];
        if (!add(entry)) {
          this.queued.push(entry);
          full = true;
          break;
        }
      }
      if (!full && (got === 0 || w.entries < maxEntries)) {
        this.stage++;
        this.after = undefined;
      }
    }
    if (w.entries === 0) {
      this.close();
      return undefined;
    }
    return { frame: w.finish(), entries: w.entries };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.txn.done();
  }
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

/** Writes entries of a platform copy made from values, in one transaction. */
export async function putPlatformEntries(dbs: PlatformDbs, entries: CopyEntry[]): Promise<void> {
  await dbs.root.transaction(() => {
    for (const [db, key, value] of entries) void dbOf(dbs, db).put(key, value);
  });
}

/** Writes one frame of a platform copy in one transaction (checked whole first: a malformed frame writes nothing). */
export function putPlatformFrame(dbs: PlatformDbs, frame: Uint8Array, entries: number, format?: number): Promise<unknown> {
  return dbs.root.transaction(() => {
    readCopyFrame(frame, entries, (db, kind, key, value) => {
      if (kind !== CopyValue.Decoded) throw new Error('a platform copy carries decoded values only');
      void dbOf(dbs, db).putSync(bufferToKeyValue(key as Buffer), decodeCopyValue(value));
    }, CopyDb.Orgs, format);
  });
}
