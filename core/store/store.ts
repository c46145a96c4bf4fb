// What actors and routes know of storage: this interface, never LMDB itself.
import type { ListingShape } from './listing-plan.js';
import type { FindExplain, FindOptions, Filter } from './query.js';
import type { RecordText, TextPage } from './record-cache.js';
import type { ListResult, StoredRecord } from './record.js';
import type { Org } from './org.js';
import type { BuiltInIndex, TenantIndex, TenantIndexSpec } from './tenant-indexes.js';
import type { StorageUsage } from './usage.js';

export type { Org } from './org.js';

export type WriteOp =
  | { op: 'putRecord'; record: StoredRecord; ifVersion?: number }
  | { op: 'deleteRecord'; tenant: string; datatype: string; sk: string; ifVersion?: number }
  | { op: 'append'; tenant: string; log: string; seq: number; entry: unknown }
  /** `fresh`: the key was minted for this write (a new id), so nothing is stored under it and its size need not be read. */
  | { op: 'putKv'; tenant: string; ns: string; key: string; value: unknown; fresh?: true }
  | { op: 'deleteKv'; tenant: string; ns: string; key: string }
  | { op: 'putOrg'; org: Org }
  | { op: 'patchOrg'; orgId: string; fields: Record<string, unknown> }
  /** Media bytes of a tenant: `bytes` added (negative: taken off), or the whole count when `counted`. */
  | { op: 'media'; tenant: string; bytes: number; counted?: true }
  /**
   * Cluster mode: an index the tenant declared (tenant-indexes.ts), carried in the commit stream
   * so every node that applies the tenant builds it. Checked by the owner before it is appended
   * (`max`: the most the tenant may declare); applying it stores the declaration once.
   */
  | { op: 'declareIndex'; tenant: string; id: string; datatype: string; path: string; unique: boolean; createdAt: string; max: number }
  /** Cluster mode: a declared index deleted (its entries go in the background on every node). */
  | { op: 'dropIndex'; tenant: string; id: string };

/** The tenant an op writes (undefined: an organisation itself, platform data). */
export function opTenant(o: WriteOp): string | undefined {
  switch (o.op) {
    case 'putRecord':
      return o.record.pk;
    case 'putOrg':
    case 'patchOrg':
      return undefined;
    default:
      return o.tenant;
  }
}

/**
 * A set of writes committed atomically: all of them or none. `ifVersion` on a record write is the
 * version the writer read (0: the record must not exist yet); a mismatch fails the whole batch with
 * ERR_VERSION_CONFLICT (409) and writes nothing.
 */
export class WriteBatch {
  readonly ops: WriteOp[] = [];
  /** See journal(). */
  journaled = false;

  /**
   * Chat writes (CHAT_DURABILITY): the batch may be acknowledged once the store's write journal
   * holds it (core/store/write-journal.ts) rather than after its own transaction. Only a batch of
   * log appends and kv writes is journaled; any other batch commits as usual.
   */
  journal(): this {
    this.journaled = true;
    return this;
  }

  /** Marked journal() and holding only log appends and kv writes: what a store's journal takes. */
  get viaJournal(): boolean {
    return this.journaled && this.ops.every((o) => o.op === 'append' || o.op === 'putKv' || o.op === 'deleteKv');
  }

  get size(): number {
    return this.ops.length;
  }
  putRecord(record: StoredRecord, ifVersion?: number): this {
    this.ops.push({ op: 'putRecord', record, ifVersion });
    return this;
  }
  deleteRecord(tenant: string, datatype: string, sk: string, ifVersion?: number): this {
    this.ops.push({ op: 'deleteRecord', tenant, datatype, sk, ifVersion });
    return this;
  }
  /** Appends to an ordered log (scan log, chat messages). The writer owns the sequence. */
  append(tenant: string, log: string, seq: number, entry: unknown): this {
    this.ops.push({ op: 'append', tenant, log, seq, entry });
    return this;
  }
  /** `fresh`: the caller minted `key` for this write (see the op), sparing the store a read of what it replaces. */
  putKv(tenant: string, ns: string, key: string, value: unknown, fresh?: 'fresh'): this {
    this.ops.push(fresh ? { op: 'putKv', tenant, ns, key, value, fresh: true } : { op: 'putKv', tenant, ns, key, value });
    return this;
  }
  deleteKv(tenant: string, ns: string, key: string): this {
    this.ops.push({ op: 'deleteKv', tenant, ns, key });
    return this;
  }
  putOrg(org: Org): this {
    this.ops.push({ op: 'putOrg', org });
    return this;
  }
  /**
   * Adds stored media bytes to the tenant's usage (negative when files go). Growth past the
   * tenant's media quota fails the batch with ERR_STORAGE_QUOTA (413) and writes nothing.
   */
  addMediaBytes(tenant: string, bytes: number): this {
    this.ops.push({ op: 'media', tenant, bytes });
    return this;
  }
  /** Sets the tenant's media bytes as counted on disk (the one-time count of files stored before). */
  countedMediaBytes(tenant: string, bytes: number): this {
    this.ops.push({ op: 'media', tenant, bytes, counted: true });
    return this;
  }
  /**
   * Sets top-level fields of an existing organisation, merged into the stored object inside the
   * commit: writers of different fields (security settings, storefront settings) never put back
   * each other's old values, as rewriting a whole object read earlier would. A missing
   * organisation fails the batch (ERR_NOT_FOUND).
   */
  patchOrg(orgId: string, fields: Record<string, unknown>): this {
    this.ops.push({ op: 'patchOrg', orgId, fields });
    return this;
  }
}

/** Which entries of a kv namespace a `rangeKv` reads. */
export interface KvRange {
  /** Entries strictly past this key in the reading order. */
  after?: string;
  /** Entries strictly before this key in the reading order. */
  until?: string;
  limit: number;
  /** Descending key order (newest first for time-ordered keys). */
  reverse?: boolean;
}

export interface LogEntry<T = unknown> {
  seq: number;
  entry: T;
}

export interface Store {
  /** Declares a secondary index on a field path of a datatype (all tenants), built if new. */
  declareIndex(datatype: string, path: string): Promise<void>;
  /**
   * Declares a listing (listing-plan.ts): records of a datatype equal at a few paths, in the order
   * of one more, kept as ordered index entries and a count per tuple of values, built if new. A
   * find it answers reads one page by index at any size, with `total` exact and a cursor.
   */
  declareListing(shape: ListingShape): Promise<void>;
  /** Whether a declared listing answers this find (then a page costs the same at any size). */
  pagesByIndex(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions): boolean;
  /** The paths a find of `datatype` may read: the modules' indexes, and with `tenant` its built ones too. */
  indexedPaths(datatype: string, tenant?: string): readonly string[];

  /**
   * Declares an index of the tenant's own (tenant-indexes.ts), built in the background: 400 on a
   * path it cannot index, 409 when the path is indexed already or the tenant has `max` indexes.
   */
  declareTenantIndex(tenant: string, spec: TenantIndexSpec, max: number): Promise<TenantIndex>;
  /** The tenant's declared indexes, and the modules' (read-only). */
  tenantIndexes(tenant: string): { declared: TenantIndex[]; builtIn: BuiltInIndex[] };
  /** One of the tenant's declared indexes (undefined for another tenant's). */
  tenantIndex(tenant: string, id: string): TenantIndex | undefined;
  /** Deletes a declared index: unused from this call on, its entries removed in the background; 404 when not the tenant's. */
  dropTenantIndex(tenant: string, id: string): Promise<void>;
  /** Starts the index builds and removals left to do (a restart's), with `step` records per transaction. */
  startIndexBuilds(opts?: { step?: number }): void;

  getRecord(tenant: string, datatype: string, sk: string): StoredRecord | undefined;
  /**
   * A record as `by` writes it (GET /repository/get's answer), or undefined when there is none:
   * kept while no commit changes the record (core/store/record-cache.ts), so `by` must be one
   * function, and write from nothing but the record. Throws as getRecord does.
   */
  recordText(tenant: string, datatype: string, sk: string, by: RecordText): string | undefined;
  /** Filter (MongoDB language), sort and page one datatype of one tenant. */
  find(tenant: string, datatype: string, filter?: Filter, opts?: FindOptions): ListResult;
  /** Runs a find and answers how it ran (its plan, keys and records examined) instead of its records. */
  explain(tenant: string, datatype: string, filter?: Filter, opts?: FindOptions): FindExplain;
  /** Every record of a datatype matching `filter`, unpaged, in id order (for actor activation). */
  scan(tenant: string, datatype: string, filter?: Filter): StoredRecord[];
  count(tenant: string, datatype: string, filter?: Filter): number;
  /**
   * Ids of the records of `datatype` whose indexed `path` holds the string `value`, in id order,
   * after `after` (exclusive), at most `limit`: a keyset page read on index keys alone, so a page
   * costs the same at the start of a million matches as at their end (a find's page counts them
   * all). `path` must be an index the modules declare.
   */
  idsByIndex(tenant: string, datatype: string, path: string, value: string, after: string | undefined, limit: number): string[];
  /**
   * How many records a find with `filter` would read (the candidates its index or the datatype
   * gives, before filtering), counted on keys alone and no further than `cap`: the cost of the
   * find, known before it runs.
   */
  candidatesUpTo(tenant: string, datatype: string, filter: Filter | undefined, cap: number): number;
  /**
   * `find` when an index narrows it to at most `max` candidates (counted on keys, as
   * candidatesUpTo counts them); undefined, having read keys only, when none does or they are
   * more. One plan decides and reads: the small find on the event loop reads its keys once. With
   * `by`, a find one index read answers exactly (one equality) answers `texts`, its page's records
   * as `by` writes them (as recordText), and no `data`.
   */
  findUpTo(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, max: number, by?: RecordText): TextPage | undefined;

  readLog<T = unknown>(tenant: string, log: string, fromSeq?: number, limit?: number): LogEntry<T>[];
  lastLogSeq(tenant: string, log: string): number;

  getKv<T = unknown>(tenant: string, ns: string, key: string): T | undefined;
  listKv<T = unknown>(tenant: string, ns: string): Array<{ key: string; value: T }>;
  /** A page of a kv namespace in key order (KvRange): its cost is the page's, not the namespace's. */
  rangeKv<T = unknown>(tenant: string, ns: string, range: KvRange): Array<{ key: string; value: T }>;

  getOrg(orgId: string): Org | undefined;
  listOrgs(): Org[];
  /** Every organisation's id, without reading the organisations (for loops that visit each). */
  listOrgIds(): readonly string[];

  /**
   * Calls `fn(tenant)` once a batch that puts a key of kv namespace `ns` of `tenant` has landed in
   * this node's store (its own commits, and in cluster mode the tenants it applies). Answers a
   * function that ends the watch.
   */
  watchKv(ns: string, fn: (tenant: string) => void): () => void;

  /** Commits the batch atomically; resolves after the commit is durable against a process crash. */
  commit(batch: WriteBatch): Promise<void>;
  /**
   * What the tenant stores (see core/store/usage.ts), with `mediaCounted` false while files stored
   * before media were counted have not been counted yet.
   */
  usage(tenant: string): StorageUsage & { mediaCounted: boolean };
  /** Every tenant's usage (for /metrics). */
  usages(): Array<{ tenant: string } & StorageUsage>;
  /** Bytes used by the data file (for /metrics). */
  sizeBytes(): number;
  /**
   * Pages on the storage engine's free list (for /metrics): a large list, left by bulk writes,
   * slows every commit until the store is compacted (`npm run compact`).
   */
  freePages(): number;
  /** Stored records that reads found undecodable and skipped since start (for /metrics). */
  unreadableRecords(): number;
  /**
   * Drops this thread's cached read snapshot, so the next read sees every commit made so far. A
   * read right after a commit resolved may otherwise still see the snapshot from before it.
   */
  resetReadTxn(): void;
  close(): Promise<void>;
}
