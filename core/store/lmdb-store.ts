// The Store on LMDB: one environment per node, values in msgpack (msgpackr, lmdb's default
// encoding), keys as ordered-binary tuples that start with the tenant, so a tenant's datatype is
// one contiguous range and no read can cross into another tenant's keys.
//
//   records  [tenant, datatype, sk]                → StoredRecord
//   index    [tenant, datatype, path, value, sk]   → 1   (declared paths only)
//   logs     [tenant, log, seq]                    → entry
//   kv       [tenant, ns, key]                     → value
//   orgs     orgId                                 → Org
//   meta     ['index', datatype, path]             → { builtAt }
//            ['tindex', tenant, id], ['index-version'] (indexes a tenant declares: lmdb-tenant-indexes.ts)
//            ['applied', key]                      → [seq, n]  (cluster mode: see AppliedMark)
//            ['usage', tenant]                     → UsageCounter (see usage.ts)
//            ['usage-counted']                     → { at }  (the one-time count of earlier data ran)
//
// This file opens the environment and commits batches (through the write journal when one is
// open); its parts each hold one idea: lmdb-records.ts (reads), lmdb-indexes.ts, lmdb-logs.ts,
// lmdb-kv.ts, lmdb-orgs.ts, lmdb-usage.ts, applied-mark.ts, lmdb-batch-apply.ts (a batch's writes
// in its transaction) and lmdb-encoding.ts.
import type { ListingShape } from './listing-plan.js';
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from '../document-limits.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import { ALREADY_APPLIED, appliedMark, type AppliedMark } from './applied-mark.js';
import { storePages } from './compact.js';
import { DiskFloor } from './disk-floor.js';
import { journalBatch, journalOps } from './journal-ops.js';
import { BatchApplier, type Conflict, type RecordsRead } from './lmdb-batch-apply.js';
import { EncodedSize, forgetSavedStructures, sharedStructures } from './lmdb-encoding.js';
import { SyncCommits } from './lmdb-sync-commits.js';
import { IndexBuilder } from './lmdb-index-builder.js';
import { ListingBuilder } from './lmdb-listing-builder.js';
import { CountBuilder } from './lmdb-key-counts.js';
import { LmdbIndexes } from './lmdb-indexes.js';
import { KvWatch, type KvWatcher } from './kv-watch.js';
import { LmdbKv } from './lmdb-kv.js';
import { LmdbLogs } from './lmdb-logs.js';
import { LmdbOrgs } from './lmdb-orgs.js';
import { LmdbRecords } from './lmdb-records.js';
import { RecordCache, type RecordText, type TextPage } from './record-cache.js';
import { LmdbTenantIndexes, type DeclaredIndex } from './lmdb-tenant-indexes.js';
import { clearTenantSome, COPY_DB_NAMES, putTenantEntries, RAW_KEYS, putTenantFrame, RAW_VALUES, TenantExport, type CopyEntry, type TenantDbs } from './lmdb-tenant-copy.js';
import { clearPlatformSome, PlatformExport, PLATFORM_MARK, putPlatformEntries, putPlatformFrame, type PlatformDbs } from './lmdb-platform-copy.js';
import { needsStreamCheck, streamRefusal } from './lmdb-stream-checks.js';
import { LmdbUsage } from './lmdb-usage.js';
import type { FindExplain, FindOptions, Filter, PageLimits } from './query.js';
import type { StoredRecord } from './record.js';
import type { KvRange, LogEntry, Org, Store, WriteBatch } from './store.js';
import type { BuiltInIndex, TenantIndex, TenantIndexSpec } from './tenant-indexes.js';
import { usageDelta, type QuotaPolicy, type StorageUsage } from './usage.js';
import { WriteJournal, type WriteJournalOptions } from './write-journal.js';

export type { AppliedMark } from './applied-mark.js';

export interface LmdbStoreOptions {
  path: string;
  mapSizeGiB?: number;
  limits?: PageLimits;
  /**
   * When a commit resolves: `flush` (default) once the transaction is on disk, `commit` once it is
   * committed and visible. LMDB flushes it right after, overlapped with later transactions; a
   * killed process loses nothing either way (the OS holds the pages), power loss may lose the last
   * unflushed commits in `commit` mode.
   */
  durability?: 'flush' | 'commit';
  /**
   * Commits are not flushed to disk at all (LMDB's MDB_NOSYNC), only at close: for an environment
   * that can be rebuilt from elsewhere (a cluster node's copy of a tenant, rebuilt from the commit
   * stream: core/cluster/tenant-envs.ts). A killed process loses nothing (the OS holds the pages);
   * after the machine itself went down the environment may be damaged, so its owner drops it then.
   */
  unflushed?: boolean;
  /**
   * Largest encoded record, log entry or kv value a commit may write (bytes, default 400 KiB as
   * DynamoDB's item): a larger one fails its own batch with ERR_RECORD_TOO_LARGE (413).
   */
  maxRecordBytes?: number;
  /**
   * The document limits every record is held to before it commits, whatever built it (a partial
   * update's dotted path, a merge, an area's own code): past them its batch fails with
   * ERR_DOCUMENT_LIMIT (400). A record nested thousands of levels deep could be written but never
   * decoded again, or overflow the stack while encoding. Default: DEFAULT_DOCUMENT_LIMITS.
   */
  documentLimits?: DocumentLimits;
  /** Where undecodable records met by reads are reported (warn). */
  logger?: Logger;
  /**
   * Keeps the answers client reads wrote lately (record-cache.ts), at most `maxBytes` in all and
   * `tenantMaxBytes` per tenant. Only for the handle that commits: a query worker's would never
   * see a commit land.
   */
  recordCache?: { maxBytes: number; tenantMaxBytes: number };
  /** A record cache shared with other stores (a cluster node's tenant environments share the platform's), in place of `recordCache`. */
  cache?: RecordCache;
  /**
   * Where a tenant's organisation is read for its quota, when not in this environment (a cluster
   * node's tenant environment reads the platform's). Default: this environment's organisations.
   */
  orgOf?: (tenant: string) => Org | undefined;
  /** Storage quotas per tenant (usage.ts); without it usage is counted and nothing is refused. */
  quota?: QuotaPolicy;
  /**
   * Free bytes the disk under `path` keeps (0: no floor): below it a commit that adds data fails
   * with ERR_INSUFFICIENT_STORAGE (507) before LMDB is asked; deletes still commit.
   */
  minFreeDiskBytes?: number;
  /** A floor shared with other stores on the same disk (a cluster node's tenant environments share the platform's), in place of `minFreeDiskBytes`; closed by its owner. */
  floor?: DiskFloor;
  /** Records a background build of an index or listing handles per step (STORE_INDEX_BUILD_STEP; default 500). */
  indexBuildStep?: number;
}

export const DEFAULT_MAX_RECORD_BYTES = 400 * 1024;

export class LmdbStore implements Store {
  private readonly root: RootDatabase;
  private readonly records: Database<StoredRecord, Key>;
  private readonly index: Database<number, Key>;
  private readonly logs: Database<unknown, Key>;
  private readonly kv: Database<unknown, Key>;
  private readonly orgs: Database<Org, Key>;
  private readonly meta: Database<unknown, Key>;
  /** The same records database without decoding: repairs and tests write and read raw bytes. */
  private readonly rawRecords: Database<Buffer, Key>;
  private readonly maxRecordBytes: number;
  private readonly logger?: Logger;
  private readonly floor?: DiskFloor;
  /** This store made its floor (minFreeDiskBytes) and closes it. */
  private readonly ownFloor: boolean;
  private readonly indexes: LmdbIndexes;
  private readonly reads: LmdbRecords;
  private readonly logReads: LmdbLogs;
  private readonly kvReads: LmdbKv;
  private readonly orgReads: LmdbOrgs;
  private readonly kvWatch = new KvWatch();
  private readonly usageCounters: LmdbUsage;
  private readonly applier: BatchApplier;
  private readonly declared: LmdbTenantIndexes;
  private readonly builder: IndexBuilder;
  private readonly listingBuilder: ListingBuilder;
  private readonly countBuilder: CountBuilder;
  /** This node makes missing index counts (it started the builds: the writer). */
  private counting = false;
  private closed = false;
  private readonly unflushed: boolean;
  /** How an unflushed environment commits its batches (lmdb-sync-commits.ts). */
  private readonly syncCommits?: SyncCommits;
  /** Journaled batches' writes until they are in LMDB (openJournal; single node only). */
  private journal?: WriteJournal;

  constructor(opts: LmdbStoreOptions) {
    mkdirSync(opts.path, { recursive: true });
    this.root = open({
      path: opts.path,
      maxDbs: 16,
      mapSize: Math.floor((opts.mapSizeGiB ?? 64) * 1024 ** 3),
      compression: false,
      // Always a directory: lmdb-js would otherwise take a path whose last part has a dot in it
      // (`mktemp -d` gives `tmp.AbC123`) for a single-file database.
      noSubdir: false,
      separateFlushed: opts.durability === 'commit',
      noSync: opts.unflushed === true,
    });
    this.meta = this.root.openDB({ name: 'meta' });
    this.records = this.root.openDB({ name: 'records', ...sharedStructures(this.root, this.meta, 'records') });
    this.rawRecords = this.root.openDB({ name: 'records', encoding: 'binary' });
    this.index = this.root.openDB({ name: 'index' });
    this.logs = this.root.openDB({ name: 'logs', ...sharedStructures(this.root, this.meta, 'logs') });
    this.kv = this.root.openDB({ name: 'kv' });
    this.orgs = this.root.openDB({ name: 'orgs' });
    this.unflushed = opts.unflushed === true;
    // Unflushed: batches commit on this thread, a turn's in one transaction (lmdb-sync-commits.ts).
    if (this.unflushed) this.syncCommits = new SyncCommits(this.root);
    this.maxRecordBytes = opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    const documentLimits: DocumentLimits = opts.documentLimits ?? DEFAULT_DOCUMENT_LIMITS;
    this.logger = opts.logger;
    this.ownFloor = !opts.floor && Boolean(opts.minFreeDiskBytes);
    this.floor = opts.floor ?? (opts.minFreeDiskBytes ? new DiskFloor(opts.path, opts.minFreeDiskBytes) : undefined);
    const encoded = new EncodedSize();
    for (const db of [this.records, this.logs, this.kv]) encoded.tap(db);
    this.declared = new LmdbTenantIndexes(this.root, this.meta, this.index, this.records);
    this.indexes = new LmdbIndexes(this.root, this.meta, this.index, this.declared, this.records);
    const limits: PageLimits = opts.limits ?? { defaultPageSize: 20, maxPageSize: 200 };
    const cache = opts.cache ?? (opts.recordCache && opts.recordCache.maxBytes > 0 ? new RecordCache(opts.recordCache.maxBytes, opts.recordCache.tenantMaxBytes) : undefined);
    this.reads = new LmdbRecords(this.records, this.indexes, limits, opts.logger, cache);
    this.logReads = new LmdbLogs(this.logs);
    this.kvReads = new LmdbKv(this.kv);
    this.orgReads = new LmdbOrgs(this.orgs);
    this.usageCounters = new LmdbUsage(this.root, this.meta, opts.orgOf ?? ((t) => this.orgs.get(t)), opts.quota);
    const dbs = { meta: this.meta, records: this.records, logs: this.logs, kv: this.kv, orgs: this.orgs };
    this.applier = new BatchApplier(dbs, this.reads, this.indexes, this.usageCounters, encoded, opts.quota, this.maxRecordBytes, documentLimits);
    this.builder = new IndexBuilder(this.root, this.index, this.records, this.declared, this.usageCounters, (t, d, sk) => this.reads.read(t, d, sk), opts.logger);
    this.listingBuilder = new ListingBuilder(this.root, this.records, this.indexes.listings, (t, d, sk) => this.reads.read(t, d, sk), opts.logger);
    this.countBuilder = new CountBuilder(this.root, this.records, this.indexes.counts, () => this.indexes.builtIn(), () => this.declared.allReady(), opts.logger);
    this.builder.onDone = () => {
      if (this.counting) this.countBuilder.kick();
    };
    if (opts.indexBuildStep !== undefined) {
      this.builder.setStep(opts.indexBuildStep);
      this.listingBuilder.setStep(opts.indexBuildStep);
    }
  }

  indexedPaths(datatype: string, tenant?: string): readonly string[] {
    return tenant === undefined ? this.indexes.pathsOf(datatype) : this.indexes.readablePaths(tenant, datatype);
  }

  async declareTenantIndex(tenant: string, spec: TenantIndexSpec, max: number): Promise<TenantIndex> {
    const d = await this.declared.declare(tenant, spec, max, this.indexes.pathsOf(spec.datatype));
    this.builder.kick();
    return shown(d);
  }

  tenantIndexes(tenant: string): { declared: TenantIndex[]; builtIn: BuiltInIndex[] } {
    return {
      declared: this.declared.stored(tenant).filter((d) => !d.dropped).map(shown),
      builtIn: this.indexes.builtIn().map(([datatype, path]) => ({ datatype, path, builtIn: true as const })),
    };
  }

  tenantIndex(tenant: string, id: string): TenantIndex | undefined {
    const d = this.declared.get(tenant, id);
    return d && !d.dropped ? shown(d) : undefined;
  }

  async dropTenantIndex(tenant: string, id: string): Promise<void> {
    await this.declared.drop(tenant, id);
    this.builder.kick();
  }

  startIndexBuilds(opts: { step?: number } = {}): void {
    if (opts.step !== undefined) {
      this.builder.setStep(opts.step);
      this.listingBuilder.setStep(opts.step);
    }
    this.builder.kick();
    this.listingBuilder.kick();
    this.counting = true;
    this.countBuilder.kick();
  }

  /** Resolves once no index or listing build, nor index removal, is left (tests and tools). */
  async indexBuildsIdle(): Promise<void> {
    await this.builder.idle();
    await this.listingBuilder.idle();
    await this.countBuilder.idle();
  }

  declareIndex(datatype: string, path: string): Promise<void> {
    return this.indexes.declare(
      datatype,
      path,
      this.reads.keysOf(datatype),
      (tenant, sk) => this.reads.read(tenant, datatype, sk),
      (tenant, bytes) => {
        this.logger?.warn({ tenant, datatype, path }, "a module now indexes a path this organisation declared an index on: its declaration ends (a unique one no longer refuses duplicates)");
        this.usageCounters.count(usageDelta(tenant, -bytes));
      },
    );
  }

  /** Declares a listing: built now when its datatype holds few records, else in the background (finds read the usual way meanwhile). */
  async declareListing(shape: ListingShape): Promise<void> {
    await this.indexes.declareListing(shape, (s) => this.listingBuilder.stepIn(s));
    this.listingBuilder.begin(shape);
  }

  pagesByIndex(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions): boolean {
    return this.reads.listingOf(tenant, datatype, filter, opts) !== undefined;
  }

  /** A record, or ERR_RECORD_UNREADABLE (409) when its bytes cannot be decoded (lmdb-records.ts). */
  getRecord(tenant: string, datatype: string, sk: string): StoredRecord | undefined {
    return this.reads.get(tenant, datatype, sk);
  }

  recordText(tenant: string, datatype: string, sk: string, by: RecordText): string | undefined {
    return this.reads.text(tenant, datatype, sk, by, true);
  }

  /** The free-space floor this store's commits keep, if any (shared with others through `floor`). */
  get diskFloor(): DiskFloor | undefined {
    return this.floor;
  }

  /** The record cache of this store's reads (shared with others through `cache`), if it keeps one. */
  get recordCache(): RecordCache | undefined {
    return this.reads.cache;
  }

  /**
   * A copy of the environment as it is now, written to `dir`/data.mdb by LMDB in a
   * thread of its own from one read transaction (cluster mode: a tenant's snapshot, tenant-envs.ts).
   */
  backup(dir: string): Promise<void> {
    // Not compacting: a compacted copy aborts the process at a later write (see README, `npm run
    // compact`: an LMDB assertion in mdb_page_alloc), as the takeover bench found again here.
    return this.root.backup(dir, false);
  }

  /** Undecodable records met by reads since start (for /metrics). */
  unreadableRecords(): number {
    return this.reads.unreadableSeen;
  }

  /** Adds undecodable records met by another handle on this environment (a query worker's). */
  noteUnreadable(n: number): void {
    this.reads.unreadableSeen += n;
  }

  /**
   * Drops this thread's cached read snapshot, so the next read sees every commit made so far
   * (lmdb-js renews it on a timer of its own; a query worker needs it per job).
   */
  resetReadTxn(): void {
    this.root.resetReadTxn();
  }

  /**
   * Writes a record's bytes as they are, without encoding or indexing. For repair tools and for
   * tests that need a record this build cannot decode.
   */
  async putRawRecord(tenant: string, datatype: string, sk: string, bytes: Buffer): Promise<void> {
    await this.root.transaction(() => {
      this.rawRecords.put([tenant, datatype, sk], bytes);
      // Written past the counts: its datatype's record count is made again.
      this.indexes.counts.drop(tenant, datatype, '');
    });
    this.reads.cache?.forget(tenant, datatype, sk);
  }

  candidatesUpTo(tenant: string, datatype: string, filter: Filter | undefined, cap: number): number {
    return this.reads.candidatesUpTo(tenant, datatype, filter, cap);
  }

  findUpTo(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, max: number, by?: RecordText): TextPage | undefined {
    return this.reads.findUpTo(tenant, datatype, filter, opts, max, by);
  }

  find(tenant: string, datatype: string, filter?: Filter, opts: FindOptions = {}) {
    return this.reads.find(tenant, datatype, filter, opts);
  }

  explain(tenant: string, datatype: string, filter?: Filter, opts: FindOptions = {}): FindExplain {
    return this.reads.explain(tenant, datatype, filter, opts);
  }

  scan(tenant: string, datatype: string, filter?: Filter): StoredRecord[] {
    return this.reads.scan(tenant, datatype, filter);
  }

  count(tenant: string, datatype: string, filter?: Filter): number {
    return this.reads.count(tenant, datatype, filter);
  }

  idsByIndex(tenant: string, datatype: string, path: string, value: string, after: string | undefined, limit: number): string[] {
    return this.indexes.idsAfter(tenant, datatype, path, value, after, limit);
  }

  /**
   * Opens the write journal (replaying what a killed process left into LMDB first): from then on
   * batches marked `journal()` are acknowledged once journaled, and reads see them at once.
   * Resolves with the number of writes replayed.
   */
  async openJournal(opts: Pick<WriteJournalOptions, 'dir' | 'sync' | 'intervalMs'>): Promise<number> {
    const { journal, replayed } = await WriteJournal.open({
      ...opts,
      logger: this.logger,
      materialize: async (ops) => {
        await this.write(journalBatch(ops), undefined, true);
        // The next read must see the transaction just committed, not an older snapshot.
        this.root.resetReadTxn();
      },
    });
    this.setJournal(journal);
    return replayed;
  }

  private setJournal(journal: WriteJournal | undefined): void {
    this.journal = journal;
    this.logReads.journal = journal;
    this.kvReads.journal = journal;
  }

  /**
   * Replays what a journal in `dir` holds (an earlier run's) into LMDB without keeping a journal:
   * for a start whose settings journal nothing, after a run that did. Resolves with the writes.
   */
  async replayJournal(dir: string): Promise<number> {
    const replayed = await this.openJournal({ dir, sync: 'commit', intervalMs: 60_000 });
    const journal = this.journal!;
    this.setJournal(undefined);
    await journal.close();
    return replayed;
  }

  readLog<T>(tenant: string, log: string, fromSeq = 0, limit?: number): LogEntry<T>[] {
    return this.logReads.read<T>(tenant, log, fromSeq, limit);
  }

  lastLogSeq(tenant: string, log: string): number {
    return this.logReads.lastSeq(tenant, log);
  }

  getKv<T>(tenant: string, ns: string, key: string): T | undefined {
    return this.kvReads.get<T>(tenant, ns, key);
  }

  listKv<T>(tenant: string, ns: string): Array<{ key: string; value: T }> {
    return this.kvReads.list<T>(tenant, ns);
  }

  rangeKv<T>(tenant: string, ns: string, range: KvRange): Array<{ key: string; value: T }> {
    return this.kvReads.range<T>(tenant, ns, range);
  }

  getOrg(orgId: string): Org | undefined {
    return this.orgReads.get(orgId);
  }

  listOrgs(): Org[] {
    return this.orgReads.list();
  }

  listOrgIds(): readonly string[] {
    return this.orgReads.listIds();
  }

  /** The first failed condition of the batch against what is stored now, or null (lmdb-batch-apply.ts). */
  conflictOf(batch: WriteBatch, seen?: RecordsRead): Conflict | null {
    return this.applier.conflictOf(batch, seen);
  }

  /** Cluster mode: the batch's outcome is the owner's to decide before it is appended (lmdb-stream-checks.ts). */
  needsStreamCheck(batch: WriteBatch): boolean {
    return needsStreamCheck(this.declared, batch);
  }

  /** Cluster mode: why the owner refuses the batch before appending it, or null (lmdb-stream-checks.ts). */
  streamRefusal(batch: WriteBatch): AppError | null {
    const failed = this.applier.conflictOf(batch);
    if (failed) return new AppError('ERR_VERSION_CONFLICT', failed);
    return streamRefusal(this.declared, (datatype) => this.indexes.pathsOf(datatype), batch);
  }

  /** The stored mark of `key` as [seq, n] ([0, 0] when nothing was applied). */
  appliedMark(key: string): [number, number] {
    return appliedMark(this.meta, key);
  }

  /** Calls `fn(tenant)` once each batch that puts a key of `ns` lands here (commit or commitApplied). */
  watchKv(ns: string, fn: KvWatcher): () => void {
    return this.kvWatch.add(ns, fn);
  }

  /** Every key with a mark here: the tenants this node holds a copy of, and the cluster's own marks. */
  appliedKeys(): string[] {
    const out: string[] = [];
    for (const key of this.meta.getKeys({ start: ['applied'], end: ['applied', '\uffff'] })) {
      const k = (key as unknown[])[1];
      if (typeof k === 'string') out.push(k);
    }
    return out;
  }

  /** Whether `key` has a mark at all (a tenant this node never applied has none). */
  hasAppliedMark(key: string): boolean {
    return this.meta.get(['applied', key]) !== undefined;
  }

  /** Opened on a node's first copy: binary handles cost a write transaction each to open. */
  private copyDbs?: TenantDbs;

  private get tenantDbs(): TenantDbs {
    if (this.copyDbs) return this.copyDbs;
    const raw = COPY_DB_NAMES.map((name) => this.root.openDB<Buffer, Buffer>({ name, encoding: 'binary', encoder: RAW_VALUES, keyEncoder: RAW_KEYS } as { name: string }));
    this.copyDbs = { root: this.root, records: this.records, index: this.index, logs: this.logs, kv: this.kv, meta: this.meta, raw } as unknown as TenantDbs;
    return this.copyDbs;
  }

  /** Cluster mode: a consistent read of a tenant's keys, in chunks (lmdb-tenant-copy.ts). */
  exportTenant(tenant: string): TenantExport {
    return new TenantExport(this.tenantDbs, tenant);
  }

  /** Cluster mode: deletes up to `max` of a tenant's keys (its mark first); how many (0: none left). */
  clearTenantSome(tenant: string, max: number): Promise<number> {
    return clearTenantSome(this.tenantDbs, tenant, max).finally(() => this.forgetTenant(tenant));
  }

  /** Cluster mode: writes entries made from values (lmdb-tenant-copy.ts). */
  putTenantEntries(tenant: string, entries: CopyEntry[]): Promise<void> {
    return putTenantEntries(this.tenantDbs, entries).finally(() => this.forgetTenant(tenant));
  }

  /** Cluster mode: writes one frame of a tenant's copy; resolves once it is committed (lmdb-tenant-copy.ts). */
  putTenantFrame(tenant: string, frame: Uint8Array, entries: number, format?: number): Promise<unknown> {
    return putTenantFrame(this.tenantDbs, frame, entries, format).finally(() => this.forgetTenant(tenant));
  }

  /** Cluster mode: a copied tenant is complete: its mark, and its declared indexes read again. */
  async finishTenantImport(tenant: string, mark: [number, number]): Promise<void> {
    await this.root.transaction(() => {
      void this.meta.put(['applied', tenant], mark);
      this.declared.bump();
    });
    this.declared.refresh();
    this.forgetTenant(tenant);
  }

  private get platformDbs(): PlatformDbs {
    return { ...this.tenantDbs, orgs: this.orgs } as unknown as PlatformDbs;
  }

  /** Cluster mode: a consistent read of the platform data (organisations, `_` tenants), in chunks (lmdb-platform-copy.ts). */
  exportPlatform(): PlatformExport {
    return new PlatformExport(this.platformDbs);
  }

  /** Cluster mode: deletes up to `max` of the platform's keys (its mark first); how many (0: none left). */
  clearPlatformSome(max: number): Promise<number> {
    return clearPlatformSome(this.platformDbs, max).finally(() => this.forgetPlatform());
  }

  /** Cluster mode: writes entries of a platform copy made from values. */
  async putPlatformEntries(entries: CopyEntry[]): Promise<void> {
    await putPlatformEntries(this.platformDbs, entries).finally(() => this.forgetPlatform());
  }

  /** Cluster mode: writes one frame of a platform copy; resolves once it is committed. */
  putPlatformFrame(frame: Uint8Array, entries: number, format?: number): Promise<unknown> {
    return putPlatformFrame(this.platformDbs, frame, entries, format).finally(() => this.forgetPlatform());
  }

  /** Cluster mode: a copied platform is complete: its mark, and the declared indexes read again. */
  async finishPlatformImport(mark: [number, number]): Promise<void> {
    await this.root.transaction(() => {
      void this.meta.put(['applied', PLATFORM_MARK], mark);
      this.declared.bump();
    });
    this.declared.refresh();
    this.forgetPlatform();
  }

  /** Cached reads of the platform data, written around the batch path. */
  private forgetPlatform(): void {
    this.orgReads.forgetAll();
    this.reads.cache?.forgetSystemTenants();
  }

  /** Cluster mode: a tenant's copy was cleared whole (clearTenantSome to 0), not loaded again: its declared indexes go too. */
  async tenantCleared(tenant: string): Promise<void> {
    await this.root.transaction(() => this.declared.bump());
    this.declared.refresh();
    this.forgetTenant(tenant);
  }

  /** Cached reads of a tenant whose keys were written around the batch path. */
  private forgetTenant(tenant: string): void {
    this.reads.cache?.forgetTenant(tenant);
  }

  commit(batch: WriteBatch): Promise<void> {
    return this.kvWatch.after(batch, this.commitBatch(batch));
  }

  private commitBatch(batch: WriteBatch): Promise<void> {
    // Only when low: the usual commit reads one flag.
    if (this.floor?.low() && addsData(batch)) {
      try {
        this.floor.assertRoom();
      } catch (err) {
        return Promise.reject(err);
      }
    }
    const journal = this.journal;
    if (journal && !this.closed && (batch.journaled || journal.busy())) {
      // Only a batch of log and kv writes can be journaled or overlap journaled keys.
      const ops = journalOps(batch);
      if (ops) {
        if (batch.viaJournal) {
          let json: string;
          try {
            json = JSON.stringify(ops);
            // Refused now, as the transaction would refuse it: nothing oversized is acknowledged.
            // A value that came from JSON is stored in at most 9 bytes per character of its JSON
            // (see documentBytesOver), so a small batch needs no walk of its values.
            if (json.length * 9 > this.maxRecordBytes) {
              for (const o of batch.ops) if (o.op === 'append') this.applier.assertSize(o.entry, `log ${o.log} entry ${o.seq}`);
              else if (o.op === 'putKv') this.applier.assertSize(o.value, `${o.ns} ${o.key}`);
            }
          } catch (err) {
            return Promise.reject(err);
          }
          return journal.append(ops, json);
        }
        // A key journaled and not yet in LMDB: move it there first, so this later write lands last.
        if (journal.holds(ops)) return journal.drain().then(() => this.write(batch, undefined) as Promise<void>);
      }
    }
    return this.write(batch, undefined) as Promise<void>;
  }

  /**
   * Cluster mode: commits a batch of the commit stream with its mark written in the same
   * transaction, even when a condition fails (the stream position was consumed either way, and a
   * replay on the same state fails the same way). Resolves false when the mark shows the batch was
   * applied already, so nothing was written.
   */
  async commitApplied(batch: WriteBatch, mark: AppliedMark): Promise<boolean> {
    const applied = (await this.write(batch, mark)) !== ALREADY_APPLIED;
    if (applied) this.kvWatch.tell(batch);
    // An index declared or deleted through the stream is built or cleared here too.
    if (applied && batch.ops.some((o) => o.op === 'declareIndex' || o.op === 'dropIndex')) this.builder.kick();
    return applied;
  }

  /** `replay`: the batch's log appends may be in LMDB already (a journal's, see apply). */
  private async write(batch: WriteBatch, mark: AppliedMark | undefined, replay = false): Promise<void | typeof ALREADY_APPLIED> {
    if (this.closed) throw new AppError('ERR_UNAVAILABLE', ['the store is closed']);
    if (batch.size === 0 && mark === undefined) return;
    // A child transaction, so a batch that throws half-way (a key LMDB refuses, say) is rolled
    // back whole instead of leaving its first writes in the shared transaction. A batch that cannot
    // fail half-way (a door scan's log entry, with its webhook event when an endpoint listens) runs
    // in the turn's transaction as it is, sparing LMDB a child transaction begun and merged per
    // batch. A commit stream mark is written after it (applied-mark.ts), so that holds in cluster
    // mode too. An unflushed environment takes a turn's batches in one transaction made on this
    // thread, each of the others in a child transaction of its own (lmdb-sync-commits.ts).
    const single = cannotFailHalfway(batch);
    const cache = this.reads.cache;
    // The index keys the batch moves: the exact finds' matches of those values go once it lands.
    const moved: Array<[string, string, string, string | number]> = [];
    const writes = () => {
      if (cache) this.indexes.moved = (tenant, datatype, path, value) => moved.push([tenant, datatype, path, value]);
      try {
        return this.applier.apply(batch, mark, replay);
      } catch (err) {
        // Structures msgpack saved in the rolled-back child are gone from `meta`: make the encoders
        // load them again rather than write values that point at structures never stored.
        forgetSavedStructures([this.records, this.logs] as Database<unknown, Key>[]);
        throw err;
      } finally {
        this.indexes.moved = undefined;
      }
    };
    const transaction = this.syncCommits ? this.syncCommits.add(writes, !single) : single ? this.root.transactionAsync(writes) : this.root.childTransaction(writes);
    let conflict: Awaited<typeof transaction>;
    try {
      conflict = await transaction;
    } catch (err) {
      // Failed: the batch threw (its rollback forgot them already) or the whole transaction did
      // (a commit LMDB refused). Either way structures msgpack saved in it are not in `meta`.
      forgetSavedStructures([this.records, this.logs] as Database<unknown, Key>[]);
      throw err;
    } finally {
      // Landed (or failed): the next read of a written organisation or record goes to the store.
      // Not before: until LMDB shows the commit, a read would cache the copy from before it again.
      this.orgReads.forget(batch);
      if (cache) forgetRecords(cache, batch, moved);
    }
    // A tenant's first write of a large batch to an indexed datatype: its counts are made apart.
    if (this.counting && this.indexes.counts.wanted.size > 0) this.countBuilder.kick();
    if (conflict === ALREADY_APPLIED) return conflict;
    if (conflict) throw new AppError('ERR_VERSION_CONFLICT', conflict);
  }

  usage(tenant: string): StorageUsage & { mediaCounted: boolean } {
    return this.usageCounters.usage(tenant);
  }

  usages(): Array<{ tenant: string } & StorageUsage> {
    return this.usageCounters.usages();
  }

  /** A tenant's record bytes counted from scratch (lmdb-usage.ts): what the counter must equal. */
  measureRecordBytes(tenant: string): number {
    return this.usageCounters.measureRecordBytes(tenant) + this.declared.measureBytes(tenant);
  }

  /** Counts the record bytes of data stored before usage was counted, once per data directory (lmdb-usage.ts). */
  backfillUsage(): { tenants: number; entries: number } | undefined {
    return this.usageCounters.backfill();
  }

  /**
   * A hash of every record, index entry, log entry and org: two equal digests mean nothing stored
   * changed in between. For tests that prove rejected requests write nothing.
   */
  digest(): string {
    const h = createHash('sha256');
    for (const db of [this.records, this.index, this.logs, this.orgs] as Database<unknown, Key>[]) {
      for (const { key, value } of db.getRange({})) h.update(JSON.stringify(key)).update(JSON.stringify(value) ?? '');
    }
    return h.digest('hex');
  }

  sizeBytes(): number {
    const s = this.root.getStats() as { pageSize?: number; lastPageNumber?: number };
    return (s.pageSize ?? 4096) * ((s.lastPageNumber ?? 0) + 1);
  }

  freePages(): number {
    return this.pages().free;
  }

  /** Pages on the free list and in the file (see core/store/compact.ts). */
  pages(): { free: number; total: number } {
    return storePages(this.root, [this.meta, this.records, this.index, this.logs, this.kv, this.orgs] as Database<unknown, Key>[]);
  }

  /** `discard`: the environment is deleted right after, so an unflushed one is not flushed first. */
  async close(opts: { discard?: boolean } = {}): Promise<void> {
    if (this.closed) return;
    // Batches queued this turn commit before anything closes.
    this.syncCommits?.flush();
    await this.builder.stop();
    await this.listingBuilder.stop();
    await this.countBuilder.stop();
    await this.journal?.close();
    if (this.ownFloor) this.floor?.close();
    this.closed = true;
    await this.root.flushed;
    // Unflushed: what the commits left in the OS's cache goes to disk now, once.
    // (`sync` is lmdb-js's mdb_env_sync in a thread; its typings omit it.)
    if (this.unflushed && !opts.discard) await new Promise<void>((resolve, reject) => (this.root as unknown as { sync(cb: (err?: unknown) => void): void }).sync((err) => (err ? reject(err) : resolve())));
    await this.root.close();
  }
}

/** Whether a batch writes anything beyond deletes (which a full disk must still take). */
/** Writes of a batch LMDB takes in the turn's transaction as they are (cannotFailHalfway). */
const UNFAILING_MAX_OPS = 8;
/** Characters of a key's parts: far under LMDB's 1,978-byte key limit even at 3 bytes a character. */
const UNFAILING_KEY_CHARS = 600;
/** Nodes of a value looked at to know it is plain data the encoder always takes. */
const UNFAILING_VALUE_NODES = 256;

/**
 * Whether every write of `batch` is certain to be taken, so no write can fail after another one
 * landed: one unconditional log append or kv put (failing alone is failing whole), or a few appends
 * and kv writes whose keys are short and whose values are plain data (strings, finite numbers,
 * booleans, null, plain objects and arrays) of bounded size. Anything else gets a child transaction.
 */
function cannotFailHalfway(batch: WriteBatch): boolean {
  const ops = batch.ops;
  if (ops.length === 1) return ops[0].op === 'append' || ops[0].op === 'putKv';
  if (ops.length > UNFAILING_MAX_OPS) return false;
  for (const o of ops) {
    if (o.op === 'append') {
      if (o.tenant.length + o.log.length > UNFAILING_KEY_CHARS || !plainData(o.entry)) return false;
    } else if (o.op === 'putKv' || o.op === 'deleteKv') {
      if (o.tenant.length + o.ns.length + o.key.length > UNFAILING_KEY_CHARS) return false;
      if (o.op === 'putKv' && !plainData(o.value)) return false;
    } else return false;
  }
  return true;
}

function plainData(v: unknown): boolean {
  let budget = UNFAILING_VALUE_NODES;
  const walk = (x: unknown, depth: number): boolean => {
    if (--budget < 0 || depth > 8) return false;
    if (x === null || x === undefined || typeof x === 'string' || typeof x === 'boolean') return true;
    if (typeof x === 'number') return Number.isFinite(x);
    if (Array.isArray(x)) return x.every((e) => walk(e, depth + 1));
    if (typeof x !== 'object') return false;
    const proto = Object.getPrototypeOf(x);
    if (proto !== Object.prototype && proto !== null) return false;
    for (const k in x) if (!walk((x as Record<string, unknown>)[k], depth + 1)) return false;
    return true;
  };
  try {
    return walk(v, 0);
  } catch {
    // A getter that throws: the encoder would too, so the batch gets its child transaction.
    return false;
  }
}

function addsData(batch: WriteBatch): boolean {
  return batch.ops.some((o) => o.op !== 'deleteRecord' && o.op !== 'deleteKv' && !(o.op === 'media' && o.bytes <= 0));
}

/** A declaration as the API answers it. */
function shown(d: DeclaredIndex): TenantIndex {
  const out: TenantIndex = { id: d.id, datatype: d.datatype, path: d.path, unique: d.unique, state: d.state, progress: d.progress, createdAt: d.createdAt };
  if (d.readyAt) out.readyAt = d.readyAt;
  if (d.reason) out.reason = d.reason;
  return out;
}

/**
 * Drops the records a batch writes or deletes from the cache, and the exact finds' matches of the
 * index values it moved (after it landed, see write()).
 */
function forgetRecords(cache: RecordCache, batch: WriteBatch, moved: ReadonlyArray<[string, string, string, string | number]>): void {
  for (const o of batch.ops) {
    if (o.op === 'putRecord') cache.landed(o.record.pk, o.record.datatype, o.record.sk);
    else if (o.op === 'deleteRecord') cache.landed(o.tenant, o.datatype, o.sk);
  }
  for (const [tenant, datatype, path, value] of moved) cache.exact.moved(tenant, datatype, path, value);
}
