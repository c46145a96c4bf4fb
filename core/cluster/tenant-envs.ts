// The store of a cluster node (DESIGN: Cluster mode): the platform data (organisations, `_` tenants,
// the cluster's marks) in the node's own LMDB environment at DATA_DIR, and each tenant the node
// holds in an environment of its own:
//
//   DATA_DIR/                           the platform's environment (as a single node's)
//   DATA_DIR/tenants/<tenant>/<gen>/    one tenant's environment; <gen> is replaced whole when the
//                                       tenant is loaded from a snapshot (install)
//   DATA_DIR/tenants/.work/             copies being written or received (cleared at open)
//   DATA_DIR/tenants/.none/             what a tenant not held here reads: nothing
//   DATA_DIR/tenants/.boot, .clean      the machine boot the environments were opened in, and
//                                       whether they were closed (flushed) since
//
// Tenant environments are not flushed to disk per commit (LmdbStore `unflushed`): the commit stream
// holds every acknowledged write and a tenant's environment is rebuilt from it, so flushing each
// environment at each commit (a node holding four busy tenants flushed four times a turn) would buy
// nothing but CPU. A killed process loses nothing (the OS holds the pages). A machine that went down
// may have left them damaged: a node that finds it was opened in another boot (Linux's boot id)
// without having closed them deletes every tenant environment and takes its tenants back from
// their snapshots and the stream. Where the boot id cannot be read, they are flushed as usual.
//
// A tenant's snapshot is then its environment's file (LMDB's copy of it, made off the event loop;
// not compacted: a compacted copy aborts the process at a later write) and a takeover writes that
// file and opens it: no work per key on either side, which is what a tenant of a million records
// needs to be served again within seconds (snapshots.ts). Dropping a tenant is deleting its
// directory.
//
// Reads and writes of a tenant go to its environment; a tenant without one here (this node does
// not hold it) reads as empty (an environment that is never written, `tenants/.none`).
// Tenants written into the platform's environment by an older version (one environment per node)
// are not read: the node takes them over from snapshots and the stream, and clears those keys as
// a let-go tenant's (clearTenantSome).
//
// Query workers open the same layout with `follow`: each job looks up the tenant's current
// generation on disk, so a worker never reads a replaced environment past the job that saw it go.
import { randomBytes } from 'node:crypto';
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { AppliedMark } from '../store/applied-mark.js';
import type { ListingShape } from '../store/listing-plan.js';
import { LmdbStore, type LmdbStoreOptions } from '../store/lmdb-store.js';
import type { CopyEntry, TenantExport } from '../store/lmdb-tenant-copy.js';
import type { FindOptions, Filter } from '../store/query.js';
import type { RecordText } from '../store/record-cache.js';
import { opTenant, type KvRange, type LogEntry, type Org, type Store, type WriteBatch } from '../store/store.js';
import type { TenantIndex, TenantIndexSpec } from '../store/tenant-indexes.js';
import type { StorageUsage } from '../store/usage.js';
import { isSystemTenant, tenantToken, tokenTenant } from './names.js';

/** What every tenant environment opens with besides its path (the platform's options, as a rule). */
export type TenantEnvOptions = Omit<LmdbStoreOptions, 'path' | 'recordCache' | 'cache' | 'orgOf' | 'mapSizeGiB' | 'floor'>;

export interface TenantEnvsOptions {
  dataDir: string;
  /** The platform's store, opened by the caller at dataDir (closed with this). */
  platform: LmdbStore;
  env: TenantEnvOptions;
  /** Query workers: read only, each tenant's generation looked up again after resetReadTxn. */
  follow?: boolean;
  /** The machine's boot (tests); default Linux's boot id, null where it cannot be read (then environments are flushed per commit). */
  bootId?: string | null;
  logger?: Logger;
}

/** A tenant environment's first map (lmdb-js grows it as it fills): small, as most tenants are. */
const TENANT_MAP_GIB = 1;
const WORK = '.work';
const BOOT = '.boot';
const CLEAN = '.clean';
const NONE = '.none';
/** Keys of an older version's copy deleted per transaction (clearLegacy). */
const LEGACY_CLEAR_STEP = 5_000;
/** Generation names: fixed width, so the newest sorts last. */
const GEN_WIDTH = 12;

/** What a copy of a tenant's environment holds (backupTenant). */
export interface TenantCopy {
  /** The copy's data file. */
  file: string;
  /** Its directory, removed by the caller once sent. */
  dir: string;
  mark: [number, number];
  entries: number;
  bytes: number;
}

interface Declared {
  indexes: Array<[string, string]>;
  listings: ListingShape[];
  builds?: { step?: number };
  watchers: Array<{ ns: string; fn: (tenant: string) => void; ends: Array<() => void> }>;
}

export class TenantEnvs implements Store {
  readonly platform: LmdbStore;
  /** What a tenant without an environment here reads (never written). */
  private readonly none: LmdbStore;
  private readonly root: string;
  private readonly work: string;
  private readonly stores = new Map<string, { gen: string; store: LmdbStore }>();
  /** Stores opening (withStore): a close waits for them, so it closes (and flushes) them too. */
  private readonly opening = new Set<Promise<void>>();
  /** Calls waiting for a tenant's store to open (withStore). */
  private readonly waiting = new Map<string, Array<{ run: (store: LmdbStore) => void; fail: (err: unknown) => void }>>();
  private readonly declared: Declared = { indexes: [], listings: [], watchers: [] };
  /** follow: the tenants whose generation this job looked up already. */
  private readonly looked = new Set<string>();
  /** Tenants whose keys an older version left in the platform's environment are being cleared (clearLegacy). */
  private readonly legacy = new Map<string, Promise<void>>();
  private closed = false;
  /** Tenant environments are not flushed per commit (see the top of this file): nor need a received one be. */
  readonly unflushed: boolean;

  private constructor(private readonly opts: TenantEnvsOptions) {
    this.platform = opts.platform;
    this.root = join(opts.dataDir, 'tenants');
    this.work = join(this.root, WORK);
    this.unflushed = (opts.bootId === undefined ? currentBoot() : opts.bootId) !== null;
    this.none = new LmdbStore({ ...opts.env, path: join(this.root, NONE), mapSizeGiB: TENANT_MAP_GIB, minFreeDiskBytes: undefined });
  }

  /** Opens the layout: every tenant environment found is opened (the tenants this node held before it stopped). */
  static async open(opts: TenantEnvsOptions): Promise<TenantEnvs> {
    const envs = new TenantEnvs(opts);
    if (opts.follow) return envs;
    mkdirSync(envs.root, { recursive: true });
    rmSync(envs.work, { recursive: true, force: true });
    mkdirSync(envs.work, { recursive: true });
    envs.checkBoot(opts.bootId === undefined ? currentBoot() : opts.bootId);
    for (const token of readdirSync(envs.root)) {
      if (token.startsWith('.')) continue;
      const tenant = tokenTenant(token);
      const gens = envs.gensOf(tenant);
      if (gens.length === 0) continue;
      // Older generations left by a stop during an install go; the newest is the tenant's.
      for (const old of gens.slice(0, -1)) rmSync(join(envs.dirOf(tenant), old), { recursive: true, force: true });
      await envs.openGen(tenant, gens[gens.length - 1]);
    }
    return envs;
  }

  /**
   * Before any tenant environment opens: when they were last opened in another boot of the machine
   * and not closed since, they may be damaged (unflushed), so every one is deleted (their tenants
   * are taken back from snapshots and the stream). Then this boot is written down, durably, and the
   * mark of a clean close removed, before any commit can leave one unflushed.
   */
  private checkBoot(boot: string | null): void {
    const bootFile = join(this.root, BOOT);
    const cleanFile = join(this.root, CLEAN);
    const last = existsSync(bootFile) ? readFileSync(bootFile, 'utf8').trim() : undefined;
    if (last !== undefined && last !== boot && !existsSync(cleanFile)) {
      const dropped = readdirSync(this.root).filter((t) => !t.startsWith('.'));
      for (const token of dropped) rmSync(join(this.root, token), { recursive: true, force: true });
      this.opts.logger?.warn({ tenants: dropped.map(tokenTenant), lastBoot: last, boot }, 'cluster: the machine went down with tenant environments open and unflushed; they are dropped, and taken back from snapshots and the commit stream');
    }
    rmSync(cleanFile, { force: true });
    if (boot === null) rmSync(bootFile, { force: true });
    else writeDurably(bootFile, boot);
    fsyncDir(this.root);
  }

  /** Where a tool seeds a tenant's environment under `dataDir` before a node opens it (benches). */
  static seedPath(dataDir: string, tenant: string): string {
    return join(dataDir, 'tenants', tenantToken(tenant), '0'.repeat(GEN_WIDTH));
  }

  private dirOf(tenant: string): string {
    const token = tenantToken(tenant);
    if (token.length > 200) throw new AppError('ERR_UNAVAILABLE', [`tenant id of ${tenant.length} characters is too long for a directory name`]);
    return join(this.root, token);
  }

  private gensOf(tenant: string): string[] {
    try {
      return readdirSync(this.dirOf(tenant))
        .filter((g) => g.length === GEN_WIDTH)
        .sort();
    } catch {
      return [];
    }
  }

  /**
   * Opens generation `gen` of `tenant` as its store (declarations and watchers applied), replacing
   * any other; with `expect`, only when it holds that mark (else it is deleted and this throws).
   */
  private async openGen(tenant: string, gen: string, expect?: [number, number]): Promise<LmdbStore> {
    const store = new LmdbStore({
      ...this.opts.env,
      path: join(this.dirOf(tenant), gen),
      mapSizeGiB: TENANT_MAP_GIB,
      unflushed: this.unflushed,
      // One record cache, one disk floor and one set of organisations for the node: the platform's.
      cache: this.platform.recordCache,
      floor: this.platform.diskFloor,
      minFreeDiskBytes: undefined,
      orgOf: (t) => this.platform.getOrg(t),
    });
    if (expect) {
      const held = store.appliedMark(tenant);
      if (held[0] !== expect[0] || held[1] !== expect[1]) {
        await store.close({ discard: true });
        rmSync(join(this.dirOf(tenant), gen), { recursive: true, force: true });
        throw new AppError('ERR_UNAVAILABLE', [`tenant ${tenant}'s snapshot file holds mark ${held.join('/')}, its manifest says ${expect.join('/')}`]);
      }
    }
    if (!this.opts.follow) {
      // Declarations made while these are awaited are taken too (the lists only grow).
      const { indexes, listings } = this.declared;
      for (let i = 0, j = 0; i < indexes.length || j < listings.length; ) {
        if (i < indexes.length) await store.declareIndex(...indexes[i++]);
        else await store.declareListing(listings[j++]);
      }
      if (this.declared.builds) store.startIndexBuilds(this.declared.builds);
      for (const w of this.declared.watchers) w.ends.push(store.watchKv(w.ns, w.fn));
      this.clearLegacy(tenant);
    }
    const before = this.stores.get(tenant);
    this.stores.set(tenant, { gen, store });
    if (before) await this.retire(tenant, before);
    return store;
  }

  /**
   * Keys of `tenant` an older version (one environment per node) left in the platform's
   * environment: never read, deleted in the background in bounded steps once the tenant has an
   * environment here.
   */
  private clearLegacy(tenant: string): void {
    if (this.legacy.has(tenant) || !this.platform.hasAppliedMark(tenant)) return;
    const run = async (): Promise<void> => {
      while (!this.closed && (await this.platform.clearTenantSome(tenant, LEGACY_CLEAR_STEP)) > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (!this.closed) await this.platform.tenantCleared(tenant);
    };
    const p = run()
      .catch((err: unknown) => this.opts.logger?.warn({ err, tenant }, 'cluster: clearing the keys an older version left of a tenant failed'))
      .finally(() => this.legacy.delete(tenant));
    this.legacy.set(tenant, p);
  }

  /** Closes a store no longer the tenant's and, on the writing side, deletes its directory. */
  private async retire(tenant: string, s: { gen: string; store: LmdbStore }): Promise<void> {
    await s.store.close({ discard: !this.opts.follow });
    if (!this.opts.follow) rmSync(join(this.dirOf(tenant), s.gen), { recursive: true, force: true });
    this.platform.recordCache?.forgetTenant(tenant);
  }

  /** The tenant's store here, if it has one (follow: its current generation on disk). */
  private held(tenant: string): LmdbStore | undefined {
    if (this.opts.follow && !this.looked.has(tenant)) return this.follow(tenant);
    return this.stores.get(tenant)?.store;
  }

  private follow(tenant: string): LmdbStore | undefined {
    this.looked.add(tenant);
    const gens = this.gensOf(tenant);
    const gen = gens[gens.length - 1];
    const now = this.stores.get(tenant);
    if (now && now.gen === gen) return now.store;
    if (now) {
      this.stores.delete(tenant);
      void now.store.close();
    }
    if (gen === undefined) return undefined;
    const store = new LmdbStore({ ...this.opts.env, path: join(this.dirOf(tenant), gen), mapSizeGiB: TENANT_MAP_GIB, unflushed: this.unflushed });
    this.stores.set(tenant, { gen, store });
    return store;
  }

  /** Where a tenant's reads go: its environment, the platform's (system tenants), or the empty one (tenants not held here). */
  private of(tenant: string): LmdbStore {
    if (isSystemTenant(tenant)) return this.platform;
    return this.held(tenant) ?? this.none;
  }

  /**
   * Runs `fn` on the tenant's store, made when it has none yet. Calls made while it opens run once
   * it has, in the order they came, all in one turn; only then do later calls go to it directly, so
   * no write overtakes one made before it.
   */
  private withStore<T>(tenant: string, fn: (store: LmdbStore) => Promise<T>): Promise<T> {
    const s = this.stores.get(tenant);
    if (s && !this.waiting.has(tenant)) return fn(s.store);
    return new Promise<T>((resolve, reject) => {
      let queue = this.waiting.get(tenant);
      if (!queue) {
        const q: Array<{ run: (store: LmdbStore) => void; fail: (err: unknown) => void }> = (queue = []);
        this.waiting.set(tenant, q);
        const opened = this.closed ? Promise.reject(new AppError('ERR_UNAVAILABLE', ['the store is closed'])) : this.openGen(tenant, newGen());
        const settled = opened.then(noop, noop).finally(() => this.opening.delete(settled));
        this.opening.add(settled);
        opened.then(
          (store) => {
            this.waiting.delete(tenant);
            for (const w of q) w.run(store);
          },
          (err: unknown) => {
            this.waiting.delete(tenant);
            for (const w of q) w.fail(err);
          },
        );
      }
      queue.push({
        run: (store) => {
          try {
            fn(store).then(resolve, reject);
          } catch (err) {
            reject(err);
          }
        },
        fail: reject,
      });
    });
  }

  /** The one tenant a batch writes (cluster mode: a batch writes one at most), or undefined for platform writes only. */
  private tenantOf(batch: WriteBatch): string | undefined {
    for (const o of batch.ops) {
      const t = opTenant(o);
      if (t !== undefined && !isSystemTenant(t)) return t;
    }
    return undefined;
  }

  private forBatch(batch: WriteBatch): LmdbStore {
    const t = this.tenantOf(batch);
    return t === undefined ? this.platform : this.of(t);
  }

  private all(): LmdbStore[] {
    return [this.platform, this.none, ...[...this.stores.values()].map((s) => s.store)];
  }

  // ---- the cluster's writes and marks (commit-log.ts) --------------------------------------

  /** A batch of the commit stream with its mark: a tenant's mark and writes in its environment, the cluster's own in the platform's. */
  commitApplied(batch: WriteBatch, mark: AppliedMark): Promise<boolean> {
    if (isMarkOfPlatform(mark.key)) return this.platform.commitApplied(batch, mark);
    return this.withStore(mark.key, (store) => store.commitApplied(batch, mark));
  }

  appliedMark(key: string): [number, number] {
    if (isMarkOfPlatform(key)) return this.platform.appliedMark(key);
    return this.stores.get(key)?.store.appliedMark(key) ?? [0, 0];
  }

  hasAppliedMark(key: string): boolean {
    if (isMarkOfPlatform(key)) return this.platform.hasAppliedMark(key);
    return this.stores.get(key)?.store.hasAppliedMark(key) ?? false;
  }

  /** The platform's marks, the tenants held here, and tenants an older version left in the platform's environment. */
  appliedKeys(): string[] {
    const keys = new Set(this.platform.appliedKeys());
    for (const tenant of this.stores.keys()) keys.add(tenant);
    return [...keys];
  }

  needsStreamCheck(batch: WriteBatch): boolean {
    return this.forBatch(batch).needsStreamCheck(batch);
  }

  streamRefusal(batch: WriteBatch): AppError | null {
    return this.forBatch(batch).streamRefusal(batch);
  }

  /**
   * Drops what this node holds of a tenant: its environment at once (closed, its directory
   * deleted), then, step by step, keys an older version left in the platform's environment. How
   * many keys went in this step (0: none left).
   */
  async clearTenantSome(tenant: string, max: number): Promise<number> {
    const s = this.stores.get(tenant);
    if (s) {
      this.stores.delete(tenant);
      await this.retire(tenant, s);
      rmSync(this.dirOf(tenant), { recursive: true, force: true });
    }
    return this.platform.clearTenantSome(tenant, max);
  }

  tenantCleared(tenant: string): Promise<void> {
    return this.platform.tenantCleared(tenant);
  }

  /** A consistent read of what this node holds of a tenant, in frames (tests; a tenant's snapshot is its environment's file). */
  exportTenant(tenant: string): TenantExport {
    return this.of(tenant).exportTenant(tenant);
  }

  /** Loads one frame of a snapshot written by an older version (frames of keys) into the tenant's environment. */
  async putTenantFrame(tenant: string, frame: Uint8Array, entries: number, format?: number): Promise<unknown> {
    return this.withStore(tenant, (store) => store.putTenantFrame(tenant, frame, entries, format));
  }

  async putTenantEntries(tenant: string, entries: CopyEntry[]): Promise<void> {
    return this.withStore(tenant, (store) => store.putTenantEntries(tenant, entries));
  }

  async finishTenantImport(tenant: string, mark: [number, number]): Promise<void> {
    return this.withStore(tenant, (store) => store.finishTenantImport(tenant, mark));
  }

  /**
   * A copy of the tenant's environment as it is now, made by LMDB in a thread of its own,
   * with the mark it holds (read from the copy) and its keys; undefined when the tenant has no
   * environment here, or when the copy would take the disk below its floor (STORAGE_MIN_FREE_DISK_BYTES:
   * the copy is as large as the environment, and a full disk would fail every tenant's writes; the
   * snapshot waits, and the stream keeps the tenant's tail meanwhile).
   */
  async backupTenant(tenant: string): Promise<TenantCopy | undefined> {
    const s = this.stores.get(tenant);
    if (!s) return undefined;
    const size = statSync(join(this.dirOf(tenant), s.gen, 'data.mdb')).size;
    if (this.platform.diskFloor?.low(size)) {
      this.opts.logger?.warn({ tenant, bytes: size, freeBytes: this.platform.diskFloor.freeBytes }, 'cluster: no snapshot of the tenant: its copy would take the disk below STORAGE_MIN_FREE_DISK_BYTES');
      return undefined;
    }
    const dir = join(this.work, `copy-${randomBytes(6).toString('hex')}`);
    mkdirSync(dir);
    try {
      await s.store.backup(dir);
      const file = join(dir, 'data.mdb');
      const { mark, entries } = await readCopy(dir, tenant);
      return { file, dir, mark, entries, bytes: statSync(file).size };
    } catch (err) {
      rmSync(dir, { recursive: true, force: true });
      throw err;
    }
  }

  /**
   * A directory for a tenant's environment of `bytes` being received (installTenant moves it in);
   * ERR_INSUFFICIENT_STORAGE (507) when it would take the disk below its floor, before anything is written.
   */
  receiving(bytes = 0): string {
    this.platform.diskFloor?.assertRoom(bytes);
    const dir = join(this.work, `in-${randomBytes(6).toString('hex')}`);
    mkdirSync(dir);
    return dir;
  }

  /**
   * Makes the environment received in `dir` (its data.mdb) the tenant's: moved in as a new
   * generation and opened, and kept only when it holds `mark`; the one it replaces is closed and
   * deleted then. The file is opened once, by the store that serves it: LMDB must never have one
   * file open twice in a process (a second handle's close drops the first one's locks). Keys an
   * older version left in the platform's environment stay unread (clearTenantSome clears them).
   */
  async installTenant(tenant: string, dir: string, mark: [number, number]): Promise<void> {
    try {
      if (!existsSync(join(dir, 'data.mdb'))) throw new AppError('ERR_UNAVAILABLE', [`no environment file was received for tenant ${tenant}`]);
      rmSync(join(dir, 'lock.mdb'), { force: true });
      // A store still opening for it opens first (its waiting writes land there, then this replaces it).
      if (this.waiting.has(tenant)) await this.withStore(tenant, async () => undefined).catch(() => undefined);
      const gen = newGen();
      mkdirSync(this.dirOf(tenant), { recursive: true });
      renameSync(dir, join(this.dirOf(tenant), gen));
      await this.openGen(tenant, gen, mark);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** Removes a copy's or a reception's directory. */
  discard(dir: string): void {
    rmSync(dir, { recursive: true, force: true });
  }

  // ---- the Store -----------------------------------------------------------------------------

  async declareIndex(datatype: string, path: string): Promise<void> {
    this.declared.indexes.push([datatype, path]);
    for (const s of this.all()) await s.declareIndex(datatype, path);
  }
  async declareListing(shape: ListingShape): Promise<void> {
    this.declared.listings.push(shape);
    for (const s of this.all()) await s.declareListing(shape);
  }
  pagesByIndex(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions): boolean {
    return this.of(tenant).pagesByIndex(tenant, datatype, filter, opts);
  }
  indexedPaths(datatype: string, tenant?: string): readonly string[] {
    return tenant === undefined ? this.platform.indexedPaths(datatype) : this.of(tenant).indexedPaths(datatype, tenant);
  }
  /** Tenant indexes are declared through the commit stream in cluster mode (replicated-store.ts). */
  declareTenantIndex(tenant: string, spec: TenantIndexSpec, max: number): Promise<TenantIndex> {
    return this.of(tenant).declareTenantIndex(tenant, spec, max);
  }
  tenantIndexes(tenant: string) {
    return this.of(tenant).tenantIndexes(tenant);
  }
  tenantIndex(tenant: string, id: string) {
    return this.of(tenant).tenantIndex(tenant, id);
  }
  dropTenantIndex(tenant: string, id: string): Promise<void> {
    return this.of(tenant).dropTenantIndex(tenant, id);
  }
  startIndexBuilds(opts: { step?: number } = {}): void {
    this.declared.builds = opts;
    for (const s of this.all()) s.startIndexBuilds(opts);
  }
  getRecord(tenant: string, datatype: string, sk: string) {
    return this.of(tenant).getRecord(tenant, datatype, sk);
  }
  recordText(tenant: string, datatype: string, sk: string, by: RecordText) {
    return this.of(tenant).recordText(tenant, datatype, sk, by);
  }
  find(tenant: string, datatype: string, filter?: Filter, opts?: FindOptions) {
    return this.of(tenant).find(tenant, datatype, filter, opts);
  }
  explain(tenant: string, datatype: string, filter?: Filter, opts?: FindOptions) {
    return this.of(tenant).explain(tenant, datatype, filter, opts);
  }
  scan(tenant: string, datatype: string, filter?: Filter) {
    return this.of(tenant).scan(tenant, datatype, filter);
  }
  count(tenant: string, datatype: string, filter?: Filter): number {
    return this.of(tenant).count(tenant, datatype, filter);
  }
  idsByIndex(tenant: string, datatype: string, path: string, value: string, after: string | undefined, limit: number): string[] {
    return this.of(tenant).idsByIndex(tenant, datatype, path, value, after, limit);
  }
  candidatesUpTo(tenant: string, datatype: string, filter: Filter | undefined, cap: number): number {
    return this.of(tenant).candidatesUpTo(tenant, datatype, filter, cap);
  }
  findUpTo(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, max: number, by?: RecordText) {
    return this.of(tenant).findUpTo(tenant, datatype, filter, opts, max, by);
  }
  readLog<T = unknown>(tenant: string, log: string, fromSeq?: number, limit?: number): LogEntry<T>[] {
    return this.of(tenant).readLog<T>(tenant, log, fromSeq, limit);
  }
  lastLogSeq(tenant: string, log: string): number {
    return this.of(tenant).lastLogSeq(tenant, log);
  }
  getKv<T = unknown>(tenant: string, ns: string, key: string): T | undefined {
    return this.of(tenant).getKv<T>(tenant, ns, key);
  }
  listKv<T = unknown>(tenant: string, ns: string): Array<{ key: string; value: T }> {
    return this.of(tenant).listKv<T>(tenant, ns);
  }
  rangeKv<T = unknown>(tenant: string, ns: string, range: KvRange): Array<{ key: string; value: T }> {
    return this.of(tenant).rangeKv<T>(tenant, ns, range);
  }
  getOrg(orgId: string): Org | undefined {
    return this.platform.getOrg(orgId);
  }
  listOrgs(): Org[] {
    return this.platform.listOrgs();
  }
  listOrgIds(): readonly string[] {
    return this.platform.listOrgIds();
  }
  /** Watches every environment, the tenants' opened later included. */
  watchKv(ns: string, fn: (tenant: string) => void): () => void {
    const w = { ns, fn, ends: this.all().map((s) => s.watchKv(ns, fn)) };
    this.declared.watchers.push(w);
    return () => {
      for (const end of w.ends) end();
      this.declared.watchers = this.declared.watchers.filter((x) => x !== w);
    };
  }
  /** Cluster mode commits through the commit stream (commitApplied); this writes the batch where it belongs, with no mark. */
  async commit(batch: WriteBatch): Promise<void> {
    const t = this.tenantOf(batch);
    return t === undefined ? this.platform.commit(batch) : this.withStore(t, (store) => store.commit(batch));
  }
  usage(tenant: string): StorageUsage & { mediaCounted: boolean } {
    return this.of(tenant).usage(tenant);
  }
  usages(): Array<{ tenant: string } & StorageUsage> {
    const out = this.platform.usages().filter((u) => isSystemTenant(u.tenant));
    for (const [tenant, s] of this.stores) out.push(...s.store.usages().filter((u) => u.tenant === tenant));
    return out;
  }
  sizeBytes(): number {
    return this.all().reduce((n, s) => n + s.sizeBytes(), 0);
  }
  freePages(): number {
    return this.all().reduce((n, s) => n + s.freePages(), 0);
  }
  unreadableRecords(): number {
    return this.all().reduce((n, s) => n + s.unreadableRecords(), 0);
  }
  /** follow: also looks each tenant's generation up again at its next read. */
  resetReadTxn(): void {
    this.looked.clear();
    for (const s of this.all()) s.resetReadTxn();
  }
  /** A tenant's record bytes counted from scratch, in its environment (tests: which tenants a node holds). */
  measureRecordBytes(tenant: string): number {
    return this.of(tenant).measureRecordBytes(tenant);
  }
  /** See LmdbStore.digest (tests): every environment's, in a fixed order. */
  digest(): string {
    return [this.platform.digest(), ...[...this.stores.keys()].sort().map((t) => `${t}:${this.stores.get(t)!.store.digest()}`)].join(',');
  }
  /** The tenants with an environment here. */
  tenants(): string[] {
    return [...this.stores.keys()];
  }
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.allSettled([...this.legacy.values(), ...this.opening]);
    for (const s of this.stores.values()) await s.store.close();
    this.stores.clear();
    await this.none.close();
    // Every tenant environment is flushed now: a reboot before the next start keeps them.
    if (this.unflushed && !this.opts.follow) {
      writeDurably(join(this.root, CLEAN), new Date().toISOString());
      fsyncDir(this.root);
    }
    await this.platform.close();
  }
}

/** The cluster's own marks and the platform's live in the platform's environment. */
function isMarkOfPlatform(key: string): boolean {
  return isSystemTenant(key);
}

function noop(): void {}

let genSeq = 0;
/** A new generation's name: time-ordered, fixed width, unique within the process. */
function newGen(): string {
  return (Date.now() * 64 + (genSeq++ % 64)).toString(36).padStart(GEN_WIDTH, '0');
}

/**
 * The mark and key count of a copy of `tenant`'s environment in `dir`, read from the copy itself
 * (closed before this resolves: the copy is never opened again in this process).
 */
async function readCopy(dir: string, tenant: string): Promise<{ mark: [number, number]; entries: number }> {
  const env = open({ path: dir, readOnly: true, noSubdir: false, maxDbs: 16 });
  try {
    const meta = env.openDB({ name: 'meta' });
    const mark = (meta.get(['applied', tenant]) as [number, number] | undefined) ?? [0, 0];
    let entries = 0;
    for (const name of ['records', 'index', 'logs', 'kv', 'meta']) entries += (env.openDB({ name }).getStats() as { entryCount?: number }).entryCount ?? 0;
    return { mark, entries };
  } finally {
    await env.close();
  }
}

/** This boot of the machine (Linux's boot id), or null where it cannot be read. */
function currentBoot(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}

/** Writes a small file and flushes it to disk. */
function writeDurably(file: string, text: string): void {
  const fd = openSync(file, 'w');
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/** Flushes a directory's entries (a file made, renamed or removed in it) to disk. */
function fsyncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
