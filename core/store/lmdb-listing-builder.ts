// Builds declared listings (lmdb-listings.ts) over the records already stored, in bounded steps:
// each step puts the next `step` records of the datatype (fewer once it has run STEP_MS), tenant
// by tenant in id order, in a transaction of its own, then yields to the event loop. A node
// upgraded on a large data directory so starts serving at once; until a listing is built, finds
// read the usual way (LmdbListings.readable).
//
// No write is missed or counted twice: a write keeps a listing being built only for records the
// build has passed (LmdbListings.maintain reads the progress in the write's transaction); a record
// ahead is read by a later step as it then is. The progress is stored with each step's entries, so
// a build interrupted by a restart resumes where its last step ended.
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Key, RootDatabase, Database } from 'lmdb';
import type { Logger } from '../log.js';
import { HIGH } from './lmdb-encoding.js';
import { DEFAULT_INDEX_BUILD_STEP } from './lmdb-index-builder.js';
import type { ListingBuild, LmdbListings } from './lmdb-listings.js';
import type { ListingShape } from './listing-plan.js';
import type { StoredRecord } from './record.js';
import { BackgroundRun } from './background-run.js';

/** A step also ends once it has run this long: the event loop waits no longer. */
const STEP_MS = 2;

export class ListingBuilder {
  private readonly run = new BackgroundRun(
    () => this.loop(),
    (err) => this.logger?.error({ err: (err as Error)?.message }, 'listing build stopped; it resumes at the next start'),
  );
  private step = DEFAULT_INDEX_BUILD_STEP;

  constructor(
    private readonly root: RootDatabase,
    private readonly records: Database<StoredRecord, Key>,
    private readonly listings: LmdbListings,
    private readonly read: (tenant: string, datatype: string, sk: string) => StoredRecord | undefined,
    private readonly logger?: Logger,
  ) {}

  /** Records (or old keys to clear) per step. */
  setStep(step: number): void {
    this.step = Math.max(1, Math.floor(step));
  }

  /** The rest of a listing's build in the background, when its first step (in its declaration) left any. */
  begin(shape: ListingShape): void {
    if (this.listings.building(shape)) this.kick();
  }

  /** Runs the builds still to do (after a declaration, or at start). */
  kick(): void {
    this.run.kick();
  }

  /** Stops after the step under way (the store is closing); the rest resumes at the next start. */
  stop(): Promise<void> {
    return this.run.stop();
  }

  /** Resolves once no build is left (for tests and tools). */
  idle(): Promise<void> {
    return this.run.idle();
  }

  private get stopped(): boolean {
    return this.run.stopped;
  }

  private async loop(): Promise<void> {
    for (;;) {
      const work = this.listings.unbuilt();
      if (work.length === 0) {
        this.listings.buildingAny = false;
        return;
      }
      for (const shape of work) {
        if (this.stopped) return;
        await this.buildStep(shape);
        await nextTurn();
      }
    }
  }

  private buildStep(shape: ListingShape): Promise<unknown> {
    return this.root.childTransaction(() => this.stepIn(shape));
  }

  /** One step, in the caller's write transaction (a declaration runs the first in its own). */
  stepIn(shape: ListingShape): void {
    const b = this.listings.building(shape);
    if (!b) return;
    this.listings.discard();
    const next = this.advance(shape, b);
    this.listings.flush();
    this.listings.setBuilding(shape, next);
  }

  /** Builds up to a step's worth from `b`; the progress after it, or undefined once built. */
  private advance(shape: ListingShape, b: ListingBuild): ListingBuild | undefined {
    const { datatype } = shape;
    const started = performance.now();
    let n = 0;
    let at = b.at;
    let clearing = b.clearing;
    let done = b.done;
    const spent = () => n >= this.step || (n > 0 && performance.now() - started > STEP_MS);
    for (;;) {
      if (at === undefined || (at[1] === HIGH)) {
        const tenant = nextTenant(this.records, datatype, at?.[0]);
        if (tenant === undefined) return undefined;
        n++;
        at = [tenant, ''];
        clearing = b.rebuild ? tenant : undefined;
      }
      if (clearing !== undefined) {
        const left = this.step - n;
        const removed = left > 0 ? this.listings.clearSome(shape, clearing, left) : 0;
        n += removed;
        if (removed === left) return { ...b, at, clearing, done };
        clearing = undefined;
      }
      const tenant = at[0];
      let more = false;
      for (const key of this.records.getKeys({ start: [tenant, datatype, at[1]], end: [tenant, datatype, HIGH] })) {
        const sk = (key as string[])[2];
        if (sk === at[1]) continue;
        if (spent()) {
          more = true;
          break;
        }
        n++;
        done++;
        at = [tenant, sk];
        const r = this.read(tenant, datatype, sk);
        if (r) this.listings.place(shape, tenant, sk, r);
      }
      // This tenant's records are all in: the next one's start.
      if (!more) at = [tenant, HIGH];
      if (spent()) return { ...b, at, clearing: undefined, done };
    }
  }
}

/**
 * The first tenant after `after` (from the first without it) holding records of `datatype`: one
 * seek per tenant passed.
 */
export function nextTenant(records: Database<StoredRecord, Key>, datatype: string, after: string | undefined): string | undefined {
  let from: Key | undefined = after === undefined ? undefined : [after, HIGH];
  for (;;) {
    let tenant: string | undefined;
    for (const key of records.getKeys(from === undefined ? { limit: 1 } : { start: from, limit: 1 })) tenant = (key as string[])[0];
    if (tenant === undefined) return undefined;
    for (const _ of records.getKeys({ start: [tenant, datatype], end: [tenant, datatype, HIGH], limit: 1 })) return tenant;
    from = [tenant, HIGH];
  }
}
