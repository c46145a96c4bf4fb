// Indexes organisations declare (tenant-indexes.ts) in the LMDB store. Their entries share the
// `index` database and key layout with the modules' indexes ([tenant, datatype, path, value, sk]),
// so the tenant prefix keeps them to their organisation; their declarations live in `meta`:
//
//   ['tindex', tenant, id]   → DeclaredIndex
//   ['index-version']        → number, raised whenever the indexes a write or a plan must see change
//
// The thread that writes keeps the table of declarations in memory, changed inside the
// transaction that changes `meta` (so a write's transaction, run after it, keeps the new index).
// A query worker's store checks the version per plan and reloads the table when it moved.
import { randomBytes } from 'node:crypto';
import type { Database, Key, RootDatabase } from 'lmdb';
import { AppError } from '../errors.js';
import { HIGH } from './lmdb-encoding.js';
import { exactStringKey, indexValues, type IndexValue } from './index-values.js';
import type { StoredRecord } from './record.js';
import { assertIndexPath, leavesAtPath, type TenantIndex, type TenantIndexSpec } from './tenant-indexes.js';

/** A declaration as stored. */
export interface DeclaredIndex extends TenantIndex {
  tenant: string;
  /** Some record holds several values at the path (an array on the way or at the end). */
  multikey: boolean;
  /** The last record id the build indexed. */
  cursor?: string;
  /** Deleted by its organisation: gone from every list, its entries still being removed. */
  dropped?: true;
  /** Entries remain to be removed (after a delete or a failed build). */
  clearing?: true;
}

const VERSION_KEY = ['index-version'];

/**
 * Bytes an entry adds to its organisation's stored bytes: its key's parts and a few bytes of
 * framing, a stable figure the write and the count from scratch agree on.
 */
export function entryBytes(tenant: string, datatype: string, path: string, v: IndexValue, sk: string): number {
  const value = typeof v === 'number' ? 9 : Buffer.byteLength(v, 'utf8') + 1;
  return 8 + Buffer.byteLength(tenant, 'utf8') + Buffer.byteLength(datatype, 'utf8') + Buffer.byteLength(path, 'utf8') + value + Buffer.byteLength(sk, 'utf8');
}

/** The index keys of a record at a declared path, each with the scalar it came from. */
function keysOf(record: StoredRecord, path: string): { keys: Map<IndexValue, unknown>; crossed: boolean } {
  const { leaves, crossed } = leavesAtPath(record, path);
  const keys = new Map<IndexValue, unknown>();
  for (const leaf of leaves) for (const k of indexValues(leaf)) if (!keys.has(k)) keys.set(k, leaf);
  return { keys, crossed };
}

/** Whether a key names one scalar alone (a long string's key is its prefix; booleans share a form with strings). */
function exactKey(k: IndexValue): boolean {
  return typeof k === 'number' || exactStringKey(k);
}

export class LmdbTenantIndexes {
  private version = -1;
  /** Declarations kept by writes (building or ready), per tenant and datatype. */
  private kept = new Map<string, Map<string, DeclaredIndex[]>>();

  constructor(
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, Key>,
    private readonly index: Database<number, Key>,
    private readonly records: Database<StoredRecord, Key>,
  ) {
    this.refresh();
  }

  /**
   * Reloads the table when the stored version moved past the one loaded (a query worker, per
   * plan); answers whether it did.
   */
  refresh(): boolean {
    const v = (this.meta.get(VERSION_KEY) as number | undefined) ?? 0;
    if (v <= this.version) return false;
    this.load(v);
    return true;
  }

  private load(version: number): void {
    const kept = new Map<string, Map<string, DeclaredIndex[]>>();
    for (const { value } of this.meta.getRange({ start: ['tindex'], end: ['tindex', HIGH] })) {
      const d = value as DeclaredIndex;
      if (d.dropped || (d.state !== 'building' && d.state !== 'ready')) continue;
      let byType = kept.get(d.tenant);
      if (!byType) kept.set(d.tenant, (byType = new Map()));
      const list = byType.get(d.datatype) ?? [];
      list.push(d);
      byType.set(d.datatype, list);
    }
    this.kept = kept;
    this.version = version;
  }

  /** Called in the transaction that drops a declaration, once no write keeps it (its counts end: lmdb-key-counts.ts). */
  onDropped?: (d: DeclaredIndex) => void;

  /** Stores a declaration and raises the version, inside the caller's transaction. */
  put(d: DeclaredIndex): void {
    this.meta.put(['tindex', d.tenant, d.id], d);
    this.bump();
    if (d.dropped || d.state === 'failed') this.onDropped?.(d);
  }

  /** Every ready declaration, as [tenant, datatype, path]. */
  allReady(): Array<[string, string, string]> {
    const out: Array<[string, string, string]> = [];
    for (const [tenant, byType] of this.kept) for (const [datatype, list] of byType) for (const d of list) if (d.state === 'ready') out.push([tenant, datatype, d.path]);
    return out;
  }

  /** Raises the version (inside the caller's transaction): every store reloads what plans see. */
  bump(): void {
    const v = Math.max(this.version, (this.meta.get(VERSION_KEY) as number | undefined) ?? 0) + 1;
    this.meta.put(VERSION_KEY, v);
    this.load(v);
  }

  /** Removes a declaration (its entries gone), inside the caller's transaction. */
  remove(d: DeclaredIndex): void {
    this.meta.remove(['tindex', d.tenant, d.id]);
  }

  /** The declarations a write of `tenant`'s `datatype` keeps (building or ready), or undefined. */
  keptBy(tenant: string, datatype: string): readonly DeclaredIndex[] | undefined {
    return this.kept.get(tenant)?.get(datatype);
  }

  /** Built declarations of a tenant's datatype: what the planner may read. */
  readyOf(tenant: string, datatype: string): DeclaredIndex[] {
    const list = this.keptBy(tenant, datatype);
    return list ? list.filter((d) => d.state === 'ready') : [];
  }

  /** Every declaration of a tenant, as stored (dropped ones included). */
  stored(tenant: string): DeclaredIndex[] {
    const out: DeclaredIndex[] = [];
    for (const { value } of this.meta.getRange({ start: ['tindex', tenant], end: ['tindex', tenant, HIGH] })) out.push(value as DeclaredIndex);
    return out;
  }

  /** Declarations with work left for the builder (building, or entries to clear). */
  pending(): DeclaredIndex[] {
    const out: DeclaredIndex[] = [];
    for (const { value } of this.meta.getRange({ start: ['tindex'], end: ['tindex', HIGH] })) {
      const d = value as DeclaredIndex;
      if (d.clearing || (d.state === 'building' && !d.dropped)) out.push(d);
    }
    return out;
  }

  get(tenant: string, id: string): DeclaredIndex | undefined {
    return this.meta.get(['tindex', tenant, id]) as DeclaredIndex | undefined;
  }

  /**
   * Declares an index (to be built in the background): 409 when the path is indexed already (by
   * a module or by the organisation), while an earlier index on it is still being removed, or
   * beyond `max` indexes.
   */
  declare(tenant: string, spec: TenantIndexSpec, max: number, builtIn: readonly string[]): Promise<DeclaredIndex> {
    assertIndexPath(spec.path);
    return this.root.childTransaction(() => {
      if (builtIn.includes(spec.path)) throw new AppError('ERR_CONFLICT', [`${spec.datatype} ${spec.path} is indexed already (a built-in index)`]);
      const all = this.stored(tenant);
      const same = all.find((d) => d.datatype === spec.datatype && d.path === spec.path);
      if (same?.dropped) throw new AppError('ERR_CONFLICT', [`the deleted index on ${spec.datatype} ${spec.path} is still being removed; retry in a moment`]);
      if (same) throw new AppError('ERR_CONFLICT', [`${spec.datatype} ${spec.path} is indexed already (index ${same.id})`]);
      if (all.filter((d) => !d.dropped).length >= max) {
        throw new AppError('ERR_CONFLICT', [`an organisation declares at most ${max} indexes (STORE_MAX_TENANT_INDEXES): delete one first`]);
      }
      const total = this.records.getKeysCount({ start: [tenant, spec.datatype], end: [tenant, spec.datatype, HIGH] });
      const d: DeclaredIndex = {
        id: randomBytes(12).toString('hex'),
        tenant,
        datatype: spec.datatype,
        path: spec.path,
        unique: spec.unique === true,
        state: 'building',
        progress: { done: 0, total },
        createdAt: new Date().toISOString(),
        multikey: false,
      };
      this.put(d);
      return d;
    }) as Promise<DeclaredIndex>;
  }

  /**
   * Why `spec` cannot be declared now (409), or null: the checks of declare(), for the owner of a
   * tenant in cluster mode before it appends the declaration (replicated-store.ts).
   */
  refusal(tenant: string, spec: TenantIndexSpec, max: number, builtIn: readonly string[]): AppError | null {
    if (builtIn.includes(spec.path)) return new AppError('ERR_CONFLICT', [`${spec.datatype} ${spec.path} is indexed already (a built-in index)`]);
    const all = this.stored(tenant);
    const same = all.find((d) => d.datatype === spec.datatype && d.path === spec.path);
    if (same?.dropped) return new AppError('ERR_CONFLICT', [`the deleted index on ${spec.datatype} ${spec.path} is still being removed; retry in a moment`]);
    if (same) return new AppError('ERR_CONFLICT', [`${spec.datatype} ${spec.path} is indexed already (index ${same.id})`]);
    if (all.filter((d) => !d.dropped).length >= max) {
      return new AppError('ERR_CONFLICT', [`an organisation declares at most ${max} indexes (STORE_MAX_TENANT_INDEXES): delete one first`]);
    }
    return null;
  }

  /**
   * A declaration from the commit stream, inside the batch's transaction: stored once (the owner
   * checked it before appending it), building from here on this node.
   */
  declareFromStream(tenant: string, id: string, spec: Required<TenantIndexSpec>, createdAt: string): void {
    if (this.get(tenant, id)) return;
    const total = this.records.getKeysCount({ start: [tenant, spec.datatype], end: [tenant, spec.datatype, HIGH] });
    this.put({ id, tenant, datatype: spec.datatype, path: spec.path, unique: spec.unique, state: 'building', progress: { done: 0, total }, createdAt, multikey: false });
  }

  /** A deletion from the commit stream, inside the batch's transaction (nothing when already gone). */
  dropFromStream(tenant: string, id: string): void {
    const d = this.get(tenant, id);
    if (d && !d.dropped) this.put({ ...d, dropped: true, clearing: true });
  }

  /**
   * The first value of a batch's records another record holds in a unique index of the tenant
   * (409), or null: what the owner checks before appending, since a node applying the stream does
   * not refuse on its own unique indexes (their builds run at each node's pace).
   */
  uniqueRefusal(ops: readonly { tenant: string; datatype: string; sk: string; record: StoredRecord | undefined }[]): AppError | null {
    const taken = new Map<string, string>();
    for (const o of ops) {
      const list = this.keptBy(o.tenant, o.datatype);
      if (!list || !o.record) continue;
      for (const d of list) {
        if (!d.unique) continue;
        for (const [k, leaf] of keysOf(o.record, d.path).keys) {
          const slot = `${d.id}\u0000${typeof k}\u0000${String(k)}`;
          const other = taken.get(slot) ?? this.holder(d, o.tenant, o.datatype, k, leaf, o.sk);
          if (other !== undefined && other !== o.sk) {
            return new AppError('ERR_CONFLICT', [`${o.datatype} ${d.path} is unique (index ${d.id}): the value ${JSON.stringify(leaf).slice(0, 80)} is held by record ${other}`]);
          }
          taken.set(slot, o.sk);
        }
      }
    }
    return null;
  }

  /** Deletes a declaration: no write keeps it and no plan reads it from this commit on; its entries go in the background. */
  drop(tenant: string, id: string): Promise<void> {
    return this.root.childTransaction(() => {
      const d = this.get(tenant, id);
      if (!d || d.dropped) throw new AppError('ERR_NOT_FOUND', [`index ${id}`]);
      this.put({ ...d, dropped: true, clearing: true });
    }) as Promise<void>;
  }

  /**
   * Keeps a tenant's declared indexes for one record's write, in its transaction: answers the
   * bytes its entries grew by (negative when they shrank). A unique index holding a value of
   * another record refuses the write (409).
   */
  maintain(
    list: readonly DeclaredIndex[],
    tenant: string,
    datatype: string,
    sk: string,
    before: StoredRecord | undefined,
    after: StoredRecord | undefined,
    checkUnique = true,
    moved?: (path: string, by: number, value: IndexValue) => void,
  ): number {
    let bytes = 0;
    for (const d of list) {
      const was = before ? keysOf(before, d.path).keys : new Map<IndexValue, unknown>();
      const nowOf = after ? keysOf(after, d.path) : undefined;
      const now = nowOf?.keys ?? new Map<IndexValue, unknown>();
      if (nowOf?.crossed && !d.multikey) this.put({ ...(this.get(tenant, d.id) ?? d), multikey: true });
      for (const k of was.keys()) {
        if (now.has(k)) continue;
        const key = [tenant, datatype, d.path, k, sk];
        // A building index may not hold the record yet.
        if (this.index.doesExist(key)) {
          this.index.remove(key);
          bytes -= entryBytes(tenant, datatype, d.path, k, sk);
          moved?.(d.path, -1, k);
        }
      }
      for (const [k, leaf] of now) {
        const key = [tenant, datatype, d.path, k, sk];
        if (this.index.doesExist(key)) continue;
        if (d.unique && checkUnique) {
          const other = this.holder(d, tenant, datatype, k, leaf, sk);
          if (other !== undefined) {
            throw new AppError('ERR_CONFLICT', [`${datatype} ${d.path} is unique (index ${d.id}): the value ${JSON.stringify(leaf).slice(0, 80)} is held by record ${other}`]);
          }
        }
        this.index.put(key, 1);
        bytes += entryBytes(tenant, datatype, d.path, k, sk);
        moved?.(d.path, 1, k);
      }
    }
    return bytes;
  }

  /** Another record holding `leaf` at the index's path, found on its key; undefined when none. */
  holder(d: DeclaredIndex, tenant: string, datatype: string, k: IndexValue, leaf: unknown, sk: string): string | undefined {
    for (const key of this.index.getKeys({ start: [tenant, datatype, d.path, k], end: [tenant, datatype, d.path, k, HIGH] })) {
      const other = (key as IndexValue[])[4] as string;
      if (other === sk) continue;
      if (exactKey(k)) return other;
      // A shared key: the values may differ past a long string's prefix, or be a string and a boolean.
      const rec = this.records.get([tenant, datatype, other]);
      if (rec && leavesAtPath(rec, d.path).leaves.some((x) => x === leaf)) return other;
    }
    return undefined;
  }

  /**
   * A module now indexes `path` of `datatype` for every tenant: the tenants' own declarations of it
   * end (in the caller's transaction), their entries stay as the module's, and each tenant is
   * answered the bytes that no longer count as its own.
   */
  adopt(datatype: string, path: string): Array<{ tenant: string; bytes: number }> {
    const out: Array<{ tenant: string; bytes: number }> = [];
    for (const { value } of this.meta.getRange({ start: ['tindex'], end: ['tindex', HIGH] })) {
      const d = value as DeclaredIndex;
      if (d.datatype !== datatype || d.path !== path) continue;
      let bytes = 0;
      for (const key of this.index.getKeys({ start: [d.tenant, datatype, path], end: [d.tenant, datatype, `${path}\u0000`] })) {
        const k = key as IndexValue[];
        bytes += entryBytes(d.tenant, datatype, path, k[3], k[4] as string);
      }
      this.remove(d);
      out.push({ tenant: d.tenant, bytes });
    }
    if (out.length > 0) this.bump();
    return out;
  }

  /** Removes every entry of one record whose bytes cannot be decoded, found by looking; answers the bytes removed. */
  unindex(tenant: string, datatype: string, sk: string, moved?: (path: string, by: number, value: IndexValue) => void): number {
    let bytes = 0;
    for (const d of this.keptBy(tenant, datatype) ?? []) {
      for (const key of this.index.getKeys({ start: [tenant, datatype, d.path], end: [tenant, datatype, `${d.path}\u0000`] })) {
        const k = key as IndexValue[];
        if (k[4] !== sk) continue;
        this.index.remove(key);
        bytes -= entryBytes(tenant, datatype, d.path, k[3], sk);
        moved?.(d.path, -1, k[3]);
      }
    }
    return bytes;
  }

  /** The bytes of a tenant's declared index entries counted from scratch (what usage must hold). */
  measureBytes(tenant: string): number {
    let bytes = 0;
    for (const d of this.stored(tenant)) {
      for (const key of this.index.getKeys({ start: [tenant, d.datatype, d.path], end: [tenant, d.datatype, `${d.path}\u0000`] })) {
        const k = key as IndexValue[];
        bytes += entryBytes(tenant, d.datatype, d.path, k[3], k[4] as string);
      }
    }
    return bytes;
  }

  /** The index keys of a record at a declared path (for the builder). */
  keysOf(record: StoredRecord, path: string): { keys: Map<IndexValue, unknown>; crossed: boolean } {
    return keysOf(record, path);
  }
}
