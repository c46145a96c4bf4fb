// The Store of a cluster node: reads come from the local LMDB, which holds the platform data (kept
// current by the commit log's applier) and the tenants this node holds (commit-log.ts), so a
// tenant's data is read on its owner: a caller on another node asks there. Every commit goes
// through the commit log, so it is in the stream before the writer hears it succeeded. A tenant's
// batch is appended by the tenant's owner only: here when this node holds the tenant, else on the
// owner through `remote` (which also waits until this node has applied the batch's platform writes,
// so the writer reads them here afterwards).
import { randomBytes } from 'node:crypto';
import type { ListingShape } from '../store/listing-plan.js';
import type { FindOptions, Filter } from '../store/query.js';
import type { TenantEnvs } from './tenant-envs.js';
import type { RecordText } from '../store/record-cache.js';
import { WriteBatch, type KvRange, type LogEntry, type Org, type Store } from '../store/store.js';
import { assertIndexPath, type TenantIndex, type TenantIndexSpec } from '../store/tenant-indexes.js';
import { classify, type CommitLog } from './commit-log.js';

/** Commits `batch` of `tenant` on the tenant's owner (this node included, once it took it). */
export type RemoteCommit = (tenant: string, batch: WriteBatch, mixed: boolean) => Promise<void>;

export class ReplicatedStore implements Store {
  constructor(
    readonly local: TenantEnvs,
    private readonly log: CommitLog,
    private readonly remote: RemoteCommit,
  ) {}

  commit(batch: WriteBatch): Promise<void> {
    if (batch.size === 0) return Promise.resolve();
    let where: ReturnType<typeof classify>;
    try {
      where = classify(batch);
    } catch (err) {
      return Promise.reject(err);
    }
    const { kind, tenant } = where;
    if (kind === 'g') return this.log.commitGlobal(batch);
    if (this.log.isOwned(tenant)) return this.log.commitOwned(tenant, batch, kind === 'x');
    return this.remote(tenant, batch, kind === 'x');
  }

  declareIndex(datatype: string, path: string): Promise<void> {
    return this.local.declareIndex(datatype, path);
  }
  declareListing(shape: ListingShape): Promise<void> {
    return this.local.declareListing(shape);
  }
  pagesByIndex(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions): boolean {
    return this.local.pagesByIndex(tenant, datatype, filter, opts);
  }
  indexedPaths(datatype: string, tenant?: string): readonly string[] {
    return this.local.indexedPaths(datatype, tenant);
  }
  /**
   * Carried in the commit stream (a `declareIndex` op of the tenant), so the owner checks it and
   * every node that applies the tenant, or takes it over, builds the index.
   */
  async declareTenantIndex(tenant: string, spec: TenantIndexSpec, max: number): Promise<TenantIndex> {
    assertIndexPath(spec.path);
    const id = randomBytes(12).toString('hex');
    const op = { op: 'declareIndex' as const, tenant, id, datatype: spec.datatype, path: spec.path, unique: spec.unique === true, createdAt: new Date().toISOString(), max };
    const batch = new WriteBatch();
    batch.ops.push(op);
    await this.commit(batch);
    // Applied here once the commit resolves (on the owner, or waited for when sent to it).
    return (
      this.local.tenantIndex(tenant, id) ?? { id, datatype: op.datatype, path: op.path, unique: op.unique, state: 'building', progress: { done: 0, total: 0 }, createdAt: op.createdAt }
    );
  }
  tenantIndexes(tenant: string) {
    return this.local.tenantIndexes(tenant);
  }
  tenantIndex(tenant: string, id: string) {
    return this.local.tenantIndex(tenant, id);
  }
  /** Carried in the commit stream like a declaration: every node clears the index's entries. */
  dropTenantIndex(tenant: string, id: string): Promise<void> {
    const batch = new WriteBatch();
    batch.ops.push({ op: 'dropIndex', tenant, id });
    return this.commit(batch);
  }
  startIndexBuilds(opts?: { step?: number }): void {
    this.local.startIndexBuilds(opts);
  }
  getRecord(tenant: string, datatype: string, sk: string) {
    return this.local.getRecord(tenant, datatype, sk);
  }
  recordText(tenant: string, datatype: string, sk: string, by: RecordText) {
    return this.local.recordText(tenant, datatype, sk, by);
  }
  find(tenant: string, datatype: string, filter?: Filter, opts?: FindOptions) {
    return this.local.find(tenant, datatype, filter, opts);
  }
  explain(tenant: string, datatype: string, filter?: Filter, opts?: FindOptions) {
    return this.local.explain(tenant, datatype, filter, opts);
  }
  scan(tenant: string, datatype: string, filter?: Filter) {
    return this.local.scan(tenant, datatype, filter);
  }
  count(tenant: string, datatype: string, filter?: Filter): number {
    return this.local.count(tenant, datatype, filter);
  }
  idsByIndex(tenant: string, datatype: string, path: string, value: string, after: string | undefined, limit: number): string[] {
    return this.local.idsByIndex(tenant, datatype, path, value, after, limit);
  }
  candidatesUpTo(tenant: string, datatype: string, filter: Filter | undefined, cap: number): number {
    return this.local.candidatesUpTo(tenant, datatype, filter, cap);
  }

  findUpTo(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, max: number, by?: RecordText) {
    return this.local.findUpTo(tenant, datatype, filter, opts, max, by);
  }
  readLog<T = unknown>(tenant: string, log: string, fromSeq?: number, limit?: number): LogEntry<T>[] {
    return this.local.readLog<T>(tenant, log, fromSeq, limit);
  }
  lastLogSeq(tenant: string, log: string): number {
    return this.local.lastLogSeq(tenant, log);
  }
  getKv<T = unknown>(tenant: string, ns: string, key: string): T | undefined {
    return this.local.getKv<T>(tenant, ns, key);
  }
  listKv<T = unknown>(tenant: string, ns: string): Array<{ key: string; value: T }> {
    return this.local.listKv<T>(tenant, ns);
  }

  rangeKv<T = unknown>(tenant: string, ns: string, range: KvRange): Array<{ key: string; value: T }> {
    return this.local.rangeKv<T>(tenant, ns, range);
  }
  getOrg(orgId: string): Org | undefined {
    return this.local.getOrg(orgId);
  }
  listOrgs(): Org[] {
    return this.local.listOrgs();
  }
  /** The owner's lane and the applier land batches through the local store's commitApplied. */
  watchKv(ns: string, fn: (tenant: string) => void): () => void {
    return this.local.watchKv(ns, fn);
  }
  listOrgIds(): readonly string[] {
    return this.local.listOrgIds();
  }
  usage(tenant: string) {
    return this.local.usage(tenant);
  }
  usages() {
    return this.local.usages();
  }
  sizeBytes(): number {
    return this.local.sizeBytes();
  }

  freePages(): number {
    return this.local.freePages();
  }

  unreadableRecords(): number {
    return this.local.unreadableRecords();
  }

  resetReadTxn(): void {
    this.local.resetReadTxn();
  }
  /** The local LMDB is closed by its opener (the app), after the cluster node. */
  close(): Promise<void> {
    return this.local.close();
  }
  /** See LmdbStore.digest (tests). */
  digest(): string {
    return this.local.digest();
  }
}
