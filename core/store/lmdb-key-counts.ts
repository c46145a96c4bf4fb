// Counts kept per tenant of an indexed datatype: its records, and the keys of each built index
// path (a module's, or one the organisation declared, once ready), so a read of a whole index in
// order (an unfiltered sort by index, lmdb-records.ts indexOrdered) reads its `total` and its
// check that every record holds one key there, where it counted both on keys each page (tens of
// ms at 200,000 records).
//   meta  ['kcount', datatype, path, tenant] → n   (path '': the records)
// A count is kept in the transaction of every write that moves it (summed per batch, written at
// its end), but only once it exists: it is made in the background (at start, once an
// organisation's index is built, or for a first write that was a large batch), or by the write
// itself while the range is small. Until then, reads count as before. It ends in the transaction
// that stops writes keeping it (an organisation's index dropped; the datatype's record count once
// nothing indexes it).
//
// A count in the background is made in bounded steps (a native count of one range at 1,000,000
// keys held the event loop ~200 ms): a transaction marks it under way, with a delta that writes
// move from then on,
//   meta  ['kmake', datatype, path, tenant] → delta
// then the keys are counted in steps of a few ms in one read snapshot taken after that mark, the
// loop free between steps; a last transaction writes the count as the snapshot's keys plus what
// the delta moved since the snapshot. Exact whatever lands between steps: a write in the snapshot
// is in its keys and in the delta read there; one after it, only in the delta's change.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database, Key, RootDatabase, Transaction } from 'lmdb';
import type { Logger } from '../log.js';
import { HIGH } from './lmdb-encoding.js';
import { nextTenant } from './lmdb-listing-builder.js';
import type { StoredRecord } from './record.js';
import { BackgroundRun } from './background-run.js';

/** A missing count a write makes itself while its range holds at most this many keys. */
const SMALL = 1_000;
/** A step of a count made in the background ends about this long after it began. */
const STEP_MS = 2;
/** The keys a count's first step reads; the next ones are sized from the time it took. */
const FIRST_STEP = 2_000;

/** Where one count's keys are: the records of the datatype, or the keys of one index path. */
function rangeOf(tenant: string, datatype: string, path: string): { start: Key; end: Key } {
  return path === '' ? { start: [tenant, datatype], end: [tenant, datatype, HIGH] } : { start: [tenant, datatype, path], end: [tenant, datatype, `${path}\u0000`] };
}

export class KeyCounts {
  private readonly pending = new Map<string, { datatype: string; path: string; tenant: string; by: number }>();
  /** Counts a write found missing over a large range: the builder makes them. */
  readonly wanted = new Set<string>();

  constructor(
    private readonly meta: Database<unknown, Key>,
    private readonly index: Database<number, Key>,
    private readonly records: Database<StoredRecord, Key>,
    /** Whether a path's keys are all written (an organisation's index being built is not): only then may a count be made. */
    private readonly complete: (tenant: string, datatype: string, path: string) => boolean,
  ) {}

  /** A kept count, or undefined when it is not kept (yet). */
  read(tenant: string, datatype: string, path: string): number | undefined {
    return this.meta.get(['kcount', datatype, path, tenant]) as number | undefined;
  }

  bump(tenant: string, datatype: string, path: string, by: number): void {
    if (by === 0) return;
    const id = `${datatype}\0${path}\0${tenant}`;
    const p = this.pending.get(id);
    if (p) p.by += by;
    else this.pending.set(id, { datatype, path, tenant, by });
  }

  /** Forgets count changes of a batch that did not commit (the applier calls it first). */
  discard(): void {
    this.pending.clear();
  }

  /** Writes the batch's count changes inside its transaction, after its writes (the applier calls it last). */
  flush(): void {
    for (const p of this.pending.values()) {
      if (p.by === 0) continue;
      const key = ['kcount', p.datatype, p.path, p.tenant];
      const n = this.meta.get(key) as number | undefined;
      if (n !== undefined) this.meta.put(key, n + p.by);
      else if (this.moveMaking(p.tenant, p.datatype, p.path, p.by)) continue;
      else if (!this.wanted.has(`${p.datatype}\0${p.path}\0${p.tenant}`) && this.complete(p.tenant, p.datatype, p.path)) {
        // Counted after this batch's writes, in its transaction: exact from here on.
        const small = this.countUpTo(p.tenant, p.datatype, p.path, SMALL + 1);
        if (small <= SMALL) this.meta.put(key, small);
        else this.wanted.add(`${p.datatype}\0${p.path}\0${p.tenant}`);
      }
    }
    this.pending.clear();
  }

  private db(path: string): Database<unknown, Key> {
    return (path === '' ? this.records : this.index) as Database<unknown, Key>;
  }

  private countUpTo(tenant: string, datatype: string, path: string, cap: number): number {
    let n = 0;
    for (const _ of this.db(path).getKeys({ ...rangeOf(tenant, datatype, path), limit: cap })) n++;
    return n;
  }

  /** Moves the delta of a count being made, in the write's transaction; false when none is. */
  private moveMaking(tenant: string, datatype: string, path: string, by: number): boolean {
    const key = ['kmake', datatype, path, tenant];
    const d = this.meta.get(key) as number | undefined;
    if (d === undefined) return false;
    this.meta.put(key, d + by);
    return true;
  }

  /** Marks a missing count under way (its delta at 0), in the caller's write transaction; false when it need not or cannot be made. */
  begin(tenant: string, datatype: string, path: string): boolean {
    if (this.meta.get(['kcount', datatype, path, tenant]) !== undefined || !this.complete(tenant, datatype, path)) return false;
    this.meta.put(['kmake', datatype, path, tenant], 0);
    return true;
  }

  /**
   * Counts a count's keys in `snapshot` (a read transaction taken after begin() committed), in
   * steps of about STEP_MS, yielding between; the keys and the delta the snapshot saw, or
   * undefined when it was abandoned (dropped meanwhile, or the store stopping).
   */
  async countInSteps(tenant: string, datatype: string, path: string, snapshot: Transaction, stopped: () => boolean): Promise<{ keys: number; delta: number } | undefined> {
    const delta = this.meta.get(['kmake', datatype, path, tenant], { transaction: snapshot }) as number | undefined;
    // The snapshot is older than the mark: its keys could not be told apart from the delta's.
    if (delta === undefined) return undefined;
    const db = this.db(path);
    const { start, end } = rangeOf(tenant, datatype, path);
    let after: Key | undefined;
    let keys = 0;
    let step = FIRST_STEP;
    for (;;) {
      if (stopped()) return undefined;
      const began = performance.now();
      const from = { start: after ?? start, exclusiveStart: after !== undefined, end, transaction: snapshot };
      // The step's last key, skipped to natively: the step counts `step` keys without decoding them.
      let last: Key | undefined;
      for (const k of db.getKeys({ ...from, offset: step - 1, limit: 1 })) last = k;
      if (last === undefined) return { keys: keys + db.getKeysCount(from), delta };
      keys += step;
      after = last;
      const took = performance.now() - began;
      step = Math.max(100, Math.min(1_000_000, Math.floor(took > 0 ? (step * STEP_MS) / took : step * 2)));
      await nextTurn();
    }
  }

  /** Writes a count made in steps, in the caller's write transaction, unless it was dropped meanwhile. */
  finish(tenant: string, datatype: string, path: string, made: { keys: number; delta: number }): void {
    const mark = ['kmake', datatype, path, tenant];
    const now = this.meta.get(mark) as number | undefined;
    if (now === undefined) return;
    this.meta.remove(mark);
    const key = ['kcount', datatype, path, tenant];
    if (this.meta.get(key) === undefined) this.meta.put(key, made.keys + now - made.delta);
  }

  /** Drops one tenant's count (its keys were written past it): made again by the builder. */
  drop(tenant: string, datatype: string, path: string, again = true): void {
    const making = this.meta.get(['kmake', datatype, path, tenant]) !== undefined;
    if (making) this.meta.remove(['kmake', datatype, path, tenant]);
    if (this.meta.get(['kcount', datatype, path, tenant]) === undefined) {
      if (making && again) this.wanted.add(`${datatype}\0${path}\0${tenant}`);
      return;
    }
    this.meta.remove(['kcount', datatype, path, tenant]);
    if (again) this.wanted.add(`${datatype}\0${path}\0${tenant}`);
  }

  /** Drops every tenant's counts of a datatype's path (its entries were written without them). */
  forget(datatype: string, path: string): void {
    for (const key of this.meta.getKeys({ start: ['kcount', datatype, path], end: ['kcount', datatype, path, HIGH] })) this.meta.remove(key);
    for (const key of this.meta.getKeys({ start: ['kmake', datatype, path], end: ['kmake', datatype, path, HIGH] })) this.meta.remove(key);
  }
}

/**
 * Makes the missing counts of the modules' indexes and the organisations' built ones, one at a
 * time, each in bounded steps (KeyCounts.countInSteps): at start (a data directory from before counts were kept), once an
 * organisation's index is built, and for a tenant whose first write to a datatype was a large batch.
 */
export class CountBuilder {
  private readonly run = new BackgroundRun(
    () => this.loop(),
    (err) => this.logger?.error({ err: (err as Error)?.message }, 'index counts stopped; reads count on keys until the next start'),
  );

  constructor(
    private readonly root: RootDatabase,
    private readonly records: Database<StoredRecord, Key>,
    private readonly counts: KeyCounts,
    private readonly builtIn: () => Array<[datatype: string, path: string]>,
    private readonly tenantReady: () => Array<[tenant: string, datatype: string, path: string]>,
    private readonly logger?: Logger,
  ) {}

  kick(): void {
    this.run.kick();
  }

  stop(): Promise<void> {
    return this.run.stop();
  }

  idle(): Promise<void> {
    return this.run.idle();
  }

  private get stopped(): boolean {
    return this.run.stopped;
  }

  private async loop(): Promise<void> {
    const paths = new Map<string, string[]>();
    for (const [datatype, path] of this.builtIn()) paths.set(datatype, [...(paths.get(datatype) ?? []), path]);
    for (const [datatype, list] of paths) {
      for (let tenant = nextTenant(this.records, datatype, undefined); tenant !== undefined; tenant = nextTenant(this.records, datatype, tenant)) {
        for (const path of ['', ...list]) {
          if (this.stopped) return;
          if (this.counts.read(tenant, datatype, path) !== undefined) continue;
          await this.make(tenant, datatype, path);
        }
      }
    }
    for (const [tenant, datatype, path] of this.tenantReady()) {
      for (const p of ['', path]) {
        if (this.stopped) return;
        if (this.counts.read(tenant, datatype, p) !== undefined) continue;
        await this.make(tenant, datatype, p);
      }
    }
    for (const w of [...this.counts.wanted]) {
      if (this.stopped) return;
      this.counts.wanted.delete(w);
      const [datatype, path, tenant] = w.split('\0');
      await this.make(tenant, datatype, path);
    }
  }

  /** Makes one missing count: marked, counted in steps in a snapshot taken after the mark, written. */
  private async make(tenant: string, datatype: string, path: string): Promise<void> {
    if (!(await this.root.childTransaction(() => this.counts.begin(tenant, datatype, path)))) return;
    // A snapshot from now (lmdb-js would otherwise reuse the one from before the mark until its timer).
    this.root.resetReadTxn();
    const snapshot = this.root.useReadTransaction();
    let made: { keys: number; delta: number } | undefined;
    try {
      made = await this.counts.countInSteps(tenant, datatype, path, snapshot, () => this.stopped);
    } finally {
      snapshot.done();
    }
    // Abandoned: the mark stays until a write drops it or the next run marks it again; reads count on keys meanwhile.
    if (made) await this.root.childTransaction(() => this.counts.finish(tenant, datatype, path, made));
    await nextTurn();
  }
}
