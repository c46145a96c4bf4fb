// Cluster mode: a tenant's keys copied out of one node's LMDB and into another's (a snapshot,
// core/cluster/snapshots.ts). Every key of a tenant starts with the tenant, except a few in `meta`:
//   records, index, logs, kv   [tenant, ...]
//   meta   ['tindex', tenant, id], ['usage', tenant], ['kcount', datatype, path, tenant]
//          ['applied', tenant]  (the stream position the copy holds: its mark, copied apart)
// The copy travels as binary frames (lmdb-copy-frame.ts). Keys travel as their stored bytes, and so
// do the values of index, kv and meta (plain msgpack, the same on every node): the node taking a
// tenant over writes them through binary handles, with no key or value encoding and no object per
// key, which is what a takeover of a million records spends its time on (93% of the keys are
// derived: index entries, listings, counts). Records and log entries travel decoded: they are
// encoded against msgpack structures each node keeps for itself (lmdb-encoding.ts), so one node's
// bytes mean nothing to another's decoder. Derived keys are copied as they are, so the copy is
// exactly the source's state at its mark and needs no rebuild.
import * as lmdb from 'lmdb';
import type { Database, Key, RootDatabase, Transaction } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
import { CopyDb, CopyFrameWriter, CopyValue, decodeCopyValue, encodeCopyValue, readCopyFrame } from './lmdb-copy-frame.js';

export { CopyDb } from './lmdb-copy-frame.js';

// lmdb-js's own key encoding (ordered-binary), which it exports but does not declare.
export const { keyValueToBuffer, bufferToKeyValue } = lmdb as unknown as { keyValueToBuffer(key: Key): Buffer; bufferToKeyValue(bytes: Buffer): Key };

/** One key of a tenant as a value: [database, key, decoded value] (a copy made from values, not read from LMDB). */
export type CopyEntry = [db: CopyDb, key: Key, value: unknown];

export interface TenantDbs {
  root: RootDatabase;
  records: Database<unknown, Key>;
  index: Database<unknown, Key>;
  logs: Database<unknown, Key>;
  kv: Database<unknown, Key>;
  meta: Database<unknown, Key>;
  /** The same databases with keys and values as their stored bytes (RAW_KEYS), by CopyDb. */
  raw: ReadonlyArray<Database<Buffer, Buffer>>;
}

/** The names of the databases a copy touches, by CopyDb (to open binary handles on them). */
export const COPY_DB_NAMES = ['records', 'index', 'logs', 'kv', 'meta'] as const;

/**
 * Keys as their stored bytes, for a handle on a database lmdb-js opened with its own key encoding.
 * Not `keyEncoding: 'binary'`: lmdb-js compares such a database's keys with a comparator that
 * reads a given key four bytes at a time and relies on the zeros ordered-binary writes after it
 * (null termination); a binary key leaves whatever bytes the buffer held, and ranges and writes
 * then compare garbage (a range of the index ended after one key). This writes the same zeros.
 */
export const RAW_KEYS = {
  enableNullTermination(): void {},
  writeKey(key: Uint8Array, target: Uint8Array, start: number): number {
    target.set(key, start);
    const end = start + key.length;
    target[end] = target[end + 1] = target[end + 2] = target[end + 3] = 0;
    return end;
  },
  // A view of lmdb-js's key buffer, valid until its next read: a copy's reader frames it at once.
  readKey(source: Buffer, start: number, end: number): Buffer {
    return source.subarray(start, end);
  },
};

/**
 * Values as their stored bytes, as a view of lmdb-js's read buffer valid until its next read (as
 * RAW_KEYS): `encoding: 'binary'` would copy each value into a buffer of its own.
 */
export const RAW_VALUES = {
  encode: (value: Uint8Array): Uint8Array => value,
  // A range passes the value's size; a get passes its options, and gives lmdb-js's shared buffer
  // with a `length` of the value's size that the buffer's own methods do not know: a view of it.
  decode: (bytes: Buffer, size: unknown): Buffer => bytes.subarray(0, typeof size === 'number' ? size : bytes.length),
};

/** The databases a copy's entries name; a platform copy's also name the organisations. */
export type CopyDbs = Pick<TenantDbs, 'records' | 'index' | 'logs' | 'kv' | 'meta'> & { orgs?: Database<unknown, Key> };

/** The database an entry names (its number was checked against what its copy may name). */
export function dbOf(dbs: CopyDbs, db: CopyDb): Database<unknown, Key> {
  switch (db) {
    case CopyDb.Records:
      return dbs.records;
    case CopyDb.Index:
      return dbs.index;
    case CopyDb.Logs:
      return dbs.logs;
    case CopyDb.Kv:
      return dbs.kv;
    case CopyDb.Meta:
      return dbs.meta;
    default:
      if (!dbs.orgs) throw new Error(`a copy entry names database ${db}, which this copy has not`);
      return dbs.orgs;
  }
}

/** The databases whose tenant keys are one range [tenant] .. [tenant, HIGH]. */
const RANGED: CopyDb[] = [CopyDb.Records, CopyDb.Index, CopyDb.Logs, CopyDb.Kv];

/** Values stored with this node's own msgpack structures: they travel decoded. */
function carriesStructures(db: CopyDb): boolean {
  return db === CopyDb.Records || db === CopyDb.Logs;
}

/** The tenant's keys in `meta` (bounded: declarations, one usage counter, a count per indexed path). */
function metaKeys(dbs: TenantDbs, tenant: string, transaction?: Transaction): Key[] {
  const out: Key[] = [];
  for (const key of dbs.meta.getKeys({ start: ['tindex', tenant], end: ['tindex', tenant, HIGH], transaction })) out.push(key);
  if (dbs.meta.get(['usage', tenant], { transaction }) !== undefined) out.push(['usage', tenant]);
  for (const key of dbs.meta.getKeys({ start: ['kcount'], end: ['kcount', HIGH], transaction })) {
    if ((key as unknown[])[3] === tenant) out.push(key);
  }
  return out;
}

/** One entry read and not yet framed (it did not fit in the last frame). */
interface Pending {
  db: CopyDb;
  kind: CopyValue;
  key: Uint8Array;
  value: Uint8Array;
}

/** A frame of a copy: its bytes (with the carrier's room at the start) and how many entries. */
export interface CopyFrame {
  frame: Buffer;
  entries: number;
}

/**
 * A consistent read of one tenant, taken in frames: every frame comes from the same LMDB read
 * transaction, so the copy is the tenant exactly at `mark`, whatever commits land meanwhile. Each
 * `next` call is synchronous and bounded (`maxEntries`, `maxBytes` of frame), so the caller yields
 * to the event loop between frames. `close` ends the read transaction (LMDB cannot reuse pages a
 * reader still sees: do not hold one longer than the copy takes).
 */
export class TenantExport {
  /** The tenant's stream mark at the read ([0, 0] when it has none) and whether it had one. */
  readonly mark: [number, number];
  readonly hadMark: boolean;
  private readonly txn: Transaction;
  private readonly lo: Buffer;
  private readonly hi: Buffer;
  private stage = 0;
  private after: Buffer | undefined;
  private meta: Key[] | undefined;
  private metaAt = 0;
  private pending: Pending | undefined;
  private closed = false;

  constructor(
    private readonly dbs: TenantDbs,
    readonly tenant: string,
  ) {
    this.txn = dbs.root.useReadTransaction();
    const m = dbs.meta.get(['applied', tenant], { transaction: this.txn }) as [number, number] | undefined;
    this.hadMark = m !== undefined;
    this.mark = m ?? [0, 0];
    this.lo = keyValueToBuffer([tenant]);
    this.hi = keyValueToBuffer([tenant, HIGH]);
  }

  /**
   * The next frame, or undefined once every key was given. `room` bytes are left at the frame's
   * start for the carrier's header. A single entry larger than `maxBytes` throws.
   */
  next(maxEntries: number, maxBytes: number, room: number): CopyFrame | undefined {
    if (this.closed) return undefined;
    const w = new CopyFrameWriter(room, maxBytes, maxBytes);
    const take = (e: Pending): boolean => {
      if (!w.fits(e.key.length, e.value.length)) {
        if (w.entries === 0) throw new Error(`a key of tenant ${this.tenant} takes ${e.key.length + e.value.length} bytes, more than a chunk's ${maxBytes}`);
        // Its own bytes: what a range gives may be lmdb-js's buffers, reused by the next read.
        this.pending = { ...e, key: Buffer.from(e.key), value: Buffer.from(e.value) };
        return false;
      }
      w.add(e.db, e.kind, e.key, e.value);
      // The range goes on from here (a view of the writer's last key: copied where a range starts).
      if (e.db !== CopyDb.Meta) this.after = w.lastKey();
      return w.entries < maxEntries;
    };
    if (this.pending) {
      const p = this.pending;
      this.pending = undefined;
      if (!take(p)) return this.frame(w);
    }
    this.meta ??= metaKeys(this.dbs, this.tenant, this.txn);
    while (this.metaAt < this.meta.length) {
      const kb = keyValueToBuffer(this.meta[this.metaAt++]);
      const value = this.dbs.raw[CopyDb.Meta].get(kb, { transaction: this.txn });
      if (value && !take({ db: CopyDb.Meta, kind: CopyValue.Stored, key: kb, value })) return this.frame(w);
    }
    while (this.stage < RANGED.length) {
      const db = RANGED[this.stage];
      const range = {
        start: this.after ? Buffer.from(this.after) : this.lo,
        end: this.hi,
        exclusiveStart: this.after !== undefined,
        // One more than fits: a range that gives fewer is done.
        limit: maxEntries - w.entries + 1,
        transaction: this.txn,
      };
      let got = 0;
      let full = false;
      if (carriesStructures(db)) {
        for (const { key, value } of dbOf(this.dbs, db).getRange({ ...range, start: bufferToKeyValue(range.start), end: [this.tenant, HIGH] })) {
          got++;
          const kb = keyValueToBuffer(key);
          if (!take({ db, kind: CopyValue.Decoded, key: kb, value: encodeCopyValue(value) })) {
            full = true;
            break;
          }
        }
      } else {
        for (const { key, value } of this.dbs.raw[db].getRange(range)) {
          got++;
          if (!take({ db, kind: CopyValue.Stored, key, value })) {
            full = true;
            break;
          }
        }
      }
      if (full) return this.frame(w);
      if (got < range.limit) {
        this.stage++;
        this.after = undefined;
      }
    }
    if (w.entries === 0) {
      this.close();
      return undefined;
    }
    return this.frame(w);
  }

  private frame(w: CopyFrameWriter): CopyFrame {
    return { frame: w.finish(), entries: w.entries };
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.txn.done();
  }
}

/** Deletes up to `max` of a tenant's keys in one transaction; how many it deleted (0: none left). */
export async function clearTenantSome(dbs: TenantDbs, tenant: string, max: number): Promise<number> {
  let n = 0;
  const lo = keyValueToBuffer([tenant]);
  const hi = keyValueToBuffer([tenant, HIGH]);
  await dbs.root.transaction(() => {
    if (n === 0) {
      // The mark first: a node stopped half-way through holds no claim to any position.
      void dbs.meta.remove(['applied', tenant]);
      for (const key of metaKeys(dbs, tenant)) {
        void dbs.meta.remove(key);
        n++;
      }
    }
    for (const db of RANGED) {
      if (n >= max) break;
      for (const key of dbs.raw[db].getKeys({ start: lo, end: hi, limit: max - n })) {
        void dbs.raw[db].remove(key);
        n++;
      }
    }
  });
  return n;
}

/** Writes entries made from values in one transaction (a copy that was not read from LMDB). */
export async function putTenantEntries(dbs: TenantDbs, entries: CopyEntry[]): Promise<void> {
  await dbs.root.transaction(() => {
    for (const [db, key, value] of entries) void dbOf(dbs, db).put(key, value);
  });
}

/** Frames entries made from values (each as Decoded), for a carrier that sends frames. */
export function frameTenantEntries(entries: CopyEntry[], room: number, maxBytes: number): CopyFrame {
  const w = new CopyFrameWriter(room, Number.MAX_SAFE_INTEGER);
  for (const [db, key, value] of entries) w.add(db, CopyValue.Decoded, keyValueToBuffer(key), encodeCopyValue(value));
  if (w.bytes > maxBytes) throw new Error(`${entries.length} entries take ${w.bytes} bytes, more than a chunk's ${maxBytes}`);
  return { frame: w.finish(), entries: w.entries };
}

/**
 * Writes one frame of a copy in one transaction (checked whole first: a malformed frame writes
 * nothing; a value that does not decode stops it half-way, and lmdb-js's `transaction` keeps what
 * was put before a throw: harmless, since a load clears the tenant's mark first and a failed load
 * leaves it without one, so the next takeover clears and loads it again). Every key and each
 * Stored value goes through binary handles as its bytes; Decoded values are stored through the
 * database's own encoding (records' and logs' structures are this node's). A transaction run on this thread, not puts queued to lmdb-js's write thread: measured
 * on 100,000 tickets (1,400,030 keys), queued puts took 9.6 s and 7.3 CPU s (lmdb-js's
 * per-put instruction buffers and their garbage cost more than the B-tree work they moved away),
 * a transaction per frame 4.8 s and 4.1 CPU s. A frame of ~8,000 keys holds the thread ~25 ms.
 */
export function putTenantFrame(dbs: TenantDbs, frame: Uint8Array, entries: number, format?: number): Promise<unknown> {
  return dbs.root.transaction(() => {
    readCopyFrame(
      frame,
      entries,
      (db, kind, key, value) => {
        if (kind === CopyValue.Stored) void dbs.raw[db].putSync(key as Buffer, value as Buffer);
        else void dbOf(dbs, db).putSync(bufferToKeyValue(key as Buffer), decodeCopyValue(value));
      },
      CopyDb.Meta,
      format,
    );
  });
}
