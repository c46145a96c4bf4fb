// Builds declared indexes (lmdb-tenant-indexes.ts) in the background, in bounded steps: each step
// indexes the next `step` records of the datatype in id order (fewer once it has run STEP_MS) in a
// transaction of its own, then yields to the event loop, so requests and the organisation's writes go on meanwhile.
//
// No write is missed: from the transaction that declared the index on, every write keeps it
// (LmdbTenantIndexes.maintain), and a step reads the records in its own write transaction, after
// every write committed before it. A record written behind the cursor was indexed by its write; one
// ahead of it is read by a later step as it is then; a step skips entries a write already put.
// The cursor and progress are stored with each step's entries, so a build interrupted by a restart
// resumes where its last step ended. Entries of a deleted index, or of a failed build, are removed
// the same way.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database, Key, RootDatabase } from 'lmdb';
import type { Logger } from '../log.js';
import { HIGH } from './lmdb-encoding.js';
import type { LmdbUsage } from './lmdb-usage.js';
import { entryBytes, type DeclaredIndex, type LmdbTenantIndexes } from './lmdb-tenant-indexes.js';
import type { IndexValue } from './index-values.js';
import type { StoredRecord } from './record.js';
import { usageDelta } from './usage.js';
import { BackgroundRun } from './background-run.js';

export const DEFAULT_INDEX_BUILD_STEP = 500;
/** A step also ends once it has run this long (large records, many values each): the event loop waits no longer. */
const STEP_MS = 2;

export class IndexBuilder {
  private readonly run = new BackgroundRun(
    () => this.loop(),
    (err) => this.logger?.error({ err: (err as Error)?.message }, 'index build stopped; it resumes at the next start'),
  );
  private step = DEFAULT_INDEX_BUILD_STEP;

  constructor(
    private readonly root: RootDatabase,
    private readonly index: Database<number, Key>,
    private readonly records: Database<StoredRecord, Key>,
    private readonly declared: LmdbTenantIndexes,
    private readonly usage: LmdbUsage,
    private readonly read: (tenant: string, datatype: string, sk: string) => StoredRecord | undefined,
    private readonly logger?: Logger,
  ) {}

  /** Records (or entries to remove) per step. */
  setStep(step: number): void {
    this.step = Math.max(1, Math.floor(step));
  }

  /** Runs the builds and removals still to do (after a declaration, a delete, or at start). */
  kick(): void {
    this.run.kick();
  }

  /** Stops after the step under way (the store is closing); the rest resumes at the next start. */
  stop(): Promise<void> {
    return this.run.stop();
  }

  /** Resolves once no build or removal is left (for tests and tools). */
  idle(): Promise<void> {
    return this.run.idle();
  }

  private get stopped(): boolean {
    return this.run.stopped;
  }

  /** Called whenever no build or removal is left (the store then makes the new indexes' counts). */
  onDone?: () => void;

  private async loop(): Promise<void> {
    for (;;) {
      const work = this.declared.pending();
      if (work.length === 0) {
        this.onDone?.();
        return;
      }
      for (const d of work) {
        if (this.stopped) return;
        await (d.clearing ? this.clearStep(d) : this.buildStep(d));
        await nextTurn();
      }
    }
  }

  private buildStep(at: DeclaredIndex): Promise<unknown> {
    return this.root.childTransaction(() => {
      const d = this.declared.get(at.tenant, at.id);
      if (!d || d.dropped || d.state !== 'building') return;
      const { tenant, datatype, path } = d;
      const start = d.cursor === undefined ? [tenant, datatype] : [tenant, datatype, d.cursor];
      let bytes = 0;
      let n = 0;
      let cursor = d.cursor;
      let multikey = d.multikey;
      let failed: string | undefined;
      let more = false;
      const started = performance.now();
      for (const key of this.records.getKeys({ start, end: [tenant, datatype, HIGH], limit: this.step + 2 })) {
        const sk = (key as string[])[2];
        // The range starts at the cursor, indexed by the step before: one more key to read.
        if (sk === d.cursor) continue;
        if (n === this.step || (n > 0 && performance.now() - started > STEP_MS)) {
          more = true;
          break;
        }
        n++;
        cursor = sk;
        const rec = this.read(tenant, datatype, sk);
        if (!rec) continue;
        const { keys, crossed } = this.declared.keysOf(rec, path);
        if (crossed) multikey = true;
        for (const [k, leaf] of keys) {
          const entry = [tenant, datatype, path, k, sk];
          if (this.index.doesExist(entry)) continue;
          if (d.unique) {
            const other = this.declared.holder(d, tenant, datatype, k as IndexValue, leaf, sk);
            if (other !== undefined) {
              failed = `records ${other} and ${sk} both hold ${JSON.stringify(leaf).slice(0, 80)} at ${path}: remove the duplicates and declare the index again`;
              break;
            }
          }
          this.index.put(entry, 1);
          bytes += entryBytes(tenant, datatype, path, k, sk);
        }
        if (failed) break;
      }
      const done = d.progress.done + n;
      if (failed) this.declared.put({ ...d, state: 'failed', reason: failed, clearing: true, cursor: undefined, progress: { done, total: d.progress.total } });
      else if (more) this.declared.put({ ...d, cursor, multikey, progress: { done, total: Math.max(done, d.progress.total) } });
      else this.declared.put({ ...d, state: 'ready', readyAt: new Date().toISOString(), cursor: undefined, multikey, progress: { done, total: done } });
      this.count(tenant, bytes);
    });
  }

  private clearStep(at: DeclaredIndex): Promise<unknown> {
    return this.root.childTransaction(() => {
      const d = this.declared.get(at.tenant, at.id);
      if (!d || !d.clearing) return;
      const { tenant, datatype, path } = d;
      let bytes = 0;
      let n = 0;
      for (const key of this.index.getKeys({ start: [tenant, datatype, path], end: [tenant, datatype, `${path}\u0000`], limit: this.step })) {
        const k = key as IndexValue[];
        this.index.remove(key);
        bytes -= entryBytes(tenant, datatype, path, k[3], k[4] as string);
        n++;
      }
      if (n < this.step) {
        if (d.dropped) this.declared.remove(d);
        else this.declared.put({ ...d, clearing: undefined });
      }
      this.count(tenant, bytes);
    });
  }

  private count(tenant: string, bytes: number): void {
    if (bytes !== 0) this.usage.count(usageDelta(tenant, bytes));
  }
}
