// Secondary indexes of the LMDB store: declared paths per datatype (built online over every
// tenant's records), entries [tenant, datatype, path, value, sk] kept in the transaction of the
// record's write, and what the planner (find-plan.ts) knows of them: which paths are complete,
// and which hold arrays (multikey). The planner narrows a query's candidates with them. Indexes
// an organisation declares (lmdb-tenant-indexes.ts) are kept in the same writes and read by the
// same planner, for that organisation only, once built.
import type { Database, Key, RootDatabase } from 'lmdb';
import type { IndexCatalog } from './find-plan.js';
import { HIGH } from './lmdb-encoding.js';
import { PlanRunner, type ExplainedStage } from './lmdb-plan-run.js';
import type { LmdbTenantIndexes } from './lmdb-tenant-indexes.js';
import { KeyCounts } from './lmdb-key-counts.js';
import { LmdbListings } from './lmdb-listings.js';
import type { ListingShape } from './listing-plan.js';
import { indexValues, type IndexValue } from './index-values.js';
import { getPath } from './query.js';
import type { StoredRecord } from './record.js';

/** An index's entry in `meta`. Without `tracked` (built before multikey was kept) it counts as multikey. */
interface IndexMeta {
  builtAt: string;
  tracked?: true;
  multikey?: boolean;
}

export class LmdbIndexes {
  private readonly paths = new Map<string, string[]>();
  /** `datatype\0path` of indexes this thread saw an array written to (before its commit: the safe side). */
  private readonly multikeyPaths = new Set<string>();
  /** Listings the modules declared (lmdb-listings.ts), kept in the same writes. */
  readonly listings: LmdbListings;
  /** Counts of the records and keys of the modules' index paths (lmdb-key-counts.ts), kept in the same writes. */
  readonly counts: KeyCounts;
  /**
   * Told of each index key a write puts or removes (a module's or a declared one), while the store
   * applies a batch: the exact finds' matches of those values are voided once it lands.
   */
  moved: ((tenant: string, datatype: string, path: string, value: IndexValue) => void) | undefined;

  constructor(
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, Key>,
    private readonly index: Database<number, Key>,
    readonly declared: LmdbTenantIndexes,
    records: Database<StoredRecord, Key>,
  ) {
    this.listings = new LmdbListings(root, meta, index);
    this.counts = new KeyCounts(meta, index, records, (tenant, datatype, path) => (path === '' ? this.indexed(tenant, datatype) : this.pathsOf(datatype).includes(path)) || this.declared.readyOf(tenant, datatype).some((d) => d.path === path));
    // A declaration no write keeps any more: its count ends, and the datatype's when nothing indexes it now.
    declared.onDropped = (d) => {
      this.counts.drop(d.tenant, d.datatype, d.path, false);
      if (!this.indexed(d.tenant, d.datatype)) this.counts.drop(d.tenant, d.datatype, '', false);
    };
    this.loadBuiltIn();
  }

  private loadBuiltIn(): void {
    this.listings.load();
    for (const { key } of this.meta.getRange({ start: ['index'], end: ['index', HIGH] })) {
      const [, datatype, path] = key as [string, string, string];
      this.addPath(datatype, path);
    }
  }

  /**
   * The listings a find of `datatype` may read (again from \`meta\` when another thread declared one).
   * `refreshed`: the caller has just read the catalog in the same synchronous call, which looked.
   */
  listingsOf(datatype: string, refreshed = false): ReturnType<LmdbListings['of']> {
    if (!refreshed && this.declared.refresh()) this.loadBuiltIn();
    return this.listings.of(datatype);
  }

  private addPath(datatype: string, path: string): void {
    const list = this.paths.get(datatype) ?? [];
    if (!list.includes(path)) list.push(path);
    this.paths.set(datatype, list);
  }

  pathsOf(datatype: string): readonly string[] {
    return this.paths.get(datatype) ?? [];
  }

  /** Every module's index, as [datatype, path]. */
  builtIn(): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    for (const [datatype, paths] of this.paths) for (const path of paths) out.push([datatype, path]);
    return out;
  }

  /** Whether a write of the tenant's datatype keeps any index. */
  indexed(tenant: string, datatype: string): boolean {
    return this.pathsOf(datatype).length > 0 || this.listings.of(datatype).length > 0 || this.declared.keptBy(tenant, datatype) !== undefined;
  }

  /** The paths a find of the tenant's datatype may read: the modules' and the tenant's built ones. */
  readablePaths(tenant: string, datatype: string): readonly string[] {
    if (this.declared.refresh()) this.loadBuiltIn();
    const ready = this.declared.readyOf(tenant, datatype);
    const builtIn = this.pathsOf(datatype);
    return ready.length === 0 ? builtIn : [...builtIn, ...ready.map((d) => d.path)];
  }

  /** Declares a listing (lmdb-listings.ts; built in steps by lmdb-listing-builder.ts); query workers load it at their next plan. */
  async declareListing(shape: ListingShape, firstStep?: (shape: ListingShape) => void): Promise<void> {
    if (await this.listings.declare(shape, firstStep)) await this.root.transaction(() => this.declared.bump());
  }

  /** Builds the index over every tenant's records of `datatype` in one transaction, then marks it built. */
  async declare(
    datatype: string,
    path: string,
    records: Iterable<[tenant: string, sk: string]>,
    read: (tenant: string, sk: string) => StoredRecord | undefined,
    adopted?: (tenant: string, bytes: number) => void,
  ): Promise<void> {
    if (this.pathsOf(datatype).includes(path)) return;
    await this.root.transaction(() => {
      // Tenants that declared this path hand it over (their entries are what this build writes).
      for (const { tenant, bytes } of this.declared.adopt(datatype, path)) adopted?.(tenant, bytes);
      let multikey = false;
      for (const [tenant, sk] of records) {
        const value = read(tenant, sk);
        if (value === undefined) continue;
        const at = getPath(value, path);
        if (Array.isArray(at)) multikey = true;
        for (const v of indexValues(at)) this.index.put([tenant, datatype, path, v, sk], 1);
      }
      this.meta.put(['index', datatype, path], { builtAt: new Date().toISOString(), tracked: true, multikey } satisfies IndexMeta);
      // Written without counts: made again (lmdb-key-counts.ts CountBuilder).
      this.counts.forget(datatype, path);
      this.counts.forget(datatype, '');
      // A query worker started before this declaration loads it at its next plan.
      this.declared.bump();
    });
    this.addPath(datatype, path);
  }

  /**
   * The complete indexes of a tenant's datatype, for the planner. Whether a path is multikey is
   * read from `meta` at each plan: a query worker's store sees the flag in the same snapshot as
   * the record that set it.
   */
  catalog(tenant: string, datatype: string): IndexCatalog {
    const paths = this.readablePaths(tenant, datatype);
    const builtIn = this.pathsOf(datatype);
    return {
      paths,
      multikey: (path) => {
        if (!builtIn.includes(path)) return this.declared.readyOf(tenant, datatype).find((d) => d.path === path)?.multikey !== false;
        if (this.multikeyPaths.has(`${datatype}\0${path}`)) return true;
        const m = this.meta.get(['index', datatype, path]) as IndexMeta | undefined;
        return !m || m.tracked !== true || m.multikey !== false;
      },
    };
  }

  /** Names the tenant's declared indexes in an explained stage tree (their ids). */
  nameDeclared(tenant: string, datatype: string, stage: ExplainedStage): ExplainedStage {
    const ready = this.declared.readyOf(tenant, datatype);
    if (ready.length === 0) return stage;
    const walk = (s: ExplainedStage): void => {
      const d = s.index && ready.find((r) => r.path === s.index!.path);
      if (d) s.index = { ...s.index!, id: d.id };
      s.inputStages?.forEach(walk);
    };
    walk(stage);
    return stage;
  }

  /** Runs plans over one tenant's datatype (lmdb-plan-run.ts). */
  /** See Store.idsByIndex. */
  idsAfter(tenant: string, datatype: string, path: string, value: string, after: string | undefined, limit: number): string[] {
    if (!this.pathsOf(datatype).includes(path)) throw new Error(`${datatype}.${path} is not a declared index`);
    const [key] = indexValues(value);
    const base: IndexValue[] = [tenant, datatype, path, key];
    const out: string[] = [];
    if (limit <= 0) return out;
    for (const k of this.index.getKeys({ start: after === undefined ? base : [...base, after], end: [...base, HIGH], limit: limit + 1 })) {
      const sk = (k as IndexValue[])[4] as string;
      if (sk === after) continue;
      out.push(sk);
      if (out.length >= limit) break;
    }
    return out;
  }

  runner(tenant: string, datatype: string): PlanRunner {
    return new PlanRunner(this.index, tenant, datatype);
  }

  /** Marks an index multikey, in the write's transaction, the first time a record holds an array there. */
  private sawArray(datatype: string, path: string): void {
    const key = `${datatype}\0${path}`;
    if (this.multikeyPaths.has(key)) return;
    this.multikeyPaths.add(key);
    const m = this.meta.get(['index', datatype, path]) as IndexMeta | undefined;
    if (m && m.tracked === true && m.multikey !== true) this.meta.put(['index', datatype, path], { ...m, multikey: true } satisfies IndexMeta);
  }

  /**
   * Removes every index entry of one record, found by looking (the record cannot be read); answers
   * the bytes of declared entries removed (negative).
   */
  unindex(tenant: string, datatype: string, sk: string): number {
    const paths = this.pathsOf(datatype);
    for (const path of paths) {
      let n = 0;
      for (const key of this.index.getKeys({ start: [tenant, datatype, path], end: [tenant, datatype, `${path}\u0000`] })) {
        if ((key as IndexValue[])[4] !== sk) continue;
        this.index.remove(key);
        this.moved?.(tenant, datatype, path, (key as IndexValue[])[3]);
        n++;
      }
      this.counts.bump(tenant, datatype, path, -n);
    }
    this.counts.bump(tenant, datatype, '', -1);
    this.listings.unindex(tenant, datatype, sk);
    return this.declared.unindex(tenant, datatype, sk, this.declaredMoved(tenant, datatype));
  }

  /**
   * Moves one record's entries in every index of its datatype, in the write's transaction; answers
   * the bytes the tenant's declared indexes grew by (they count in its storage; the modules' do not).
   */
  reindex(tenant: string, datatype: string, sk: string, before: StoredRecord | undefined, after: StoredRecord | undefined, checkUnique = true): number {
    const paths = this.pathsOf(datatype);
    for (const path of paths) {
      const was = before ? getPath(before, path) : undefined;
      const now = after ? getPath(after, path) : undefined;
      // The same value (or the same array, as a shallow copy of `data` keeps it): nothing to move.
      if (before && after && was === now) continue;
      const oldV = before ? indexValues(was) : [];
      const newV = after ? indexValues(now) : [];
      if (Array.isArray(now)) this.sawArray(datatype, path);
      let moved = 0;
      for (const v of oldV) {
        if (newV.includes(v)) continue;
        this.index.remove([tenant, datatype, path, v, sk]);
        this.moved?.(tenant, datatype, path, v);
        moved--;
      }
      for (const v of newV) {
        if (oldV.includes(v)) continue;
        this.index.put([tenant, datatype, path, v, sk], 1);
        this.moved?.(tenant, datatype, path, v);
        moved++;
      }
      this.counts.bump(tenant, datatype, path, moved);
    }
    // Called for every write of an indexed datatype: its record count is kept while anything indexes it.
    if ((before === undefined) !== (after === undefined)) this.counts.bump(tenant, datatype, '', after ? 1 : -1);
    this.listings.maintain(tenant, datatype, sk, before, after);
    const declared = this.declared.keptBy(tenant, datatype);
    return declared ? this.declared.maintain(declared, tenant, datatype, sk, before, after, checkUnique, this.declaredMoved(tenant, datatype)) : 0;
  }

  /** What a declared index's write of a key tells: its count, and the value moved. */
  private declaredMoved(tenant: string, datatype: string): (path: string, by: number, value: IndexValue) => void {
    return (path, by, value) => {
      this.counts.bump(tenant, datatype, path, by);
      this.moved?.(tenant, datatype, path, value);
    };
  }

  /**
   * What an exact find's kept matches were read with (exact-ids-cache.ts): the readable paths, and
   * the ids of the tenant's declared ones, so an index dropped and declared again on the same path
   * (its keys written anew, writes meanwhile not told) never revives them.
   */
  readableKey(tenant: string, datatype: string, paths: readonly string[]): string {
    const ready = this.declared.readyOf(tenant, datatype);
    return ready.length === 0 ? paths.join('\0') : `${paths.join('\0')}\u0001${ready.map((d) => d.id).join('\0')}`;
  }
}
