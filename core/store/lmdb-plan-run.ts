// Runs a find plan (find-plan.ts) on the LMDB index: chooses among the reads of an `$and` by
// counting their keys (no further than a cap), reads the candidates' ids, and says what it did in
// the terms of MongoDB's explain (a stage tree, keys and documents examined).
import type { Database, Key } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
import type { IndexRead, KeyRange, PlanNode } from './find-plan.js';
import type { IndexValue } from './index-values.js';
import { numericString } from './listing-plan.js';

/** Keys an `$and`'s reads are counted to before one is chosen: past it a read counts as "many". */
export const PLAN_COUNT_CAP = 10_000;
/**
 * Keys one plan may count in all, however many reads its filter names (an `$or` of a thousand
 * `$and`s): past it every read counts as "many", so a find chosen on the event loop goes to a
 * worker, and choosing never holds the loop more than a few ms.
 */
export const PLAN_COUNT_BUDGET = 20_000;

/** A plan with its `$and`s decided: what will be read. */
export type ChosenPlan =
  /** `ids`: every id the read names, kept when counting read them all (below the cap), so they are not read twice. */
  | { stage: 'IXSCAN'; read: IndexRead; counted?: number; ids?: string[] }
  | { stage: 'AND_INTERSECT'; inputs: ChosenPlan[] }
  | { stage: 'OR'; inputs: ChosenPlan[] };

/** A page of an ordered read: its keys [value, sk] in order, the read's keys in all, and whether more follow. */
export interface OrderedPage {
  entries: Array<[IndexValue, string]>;
  total: number;
  hasNext: boolean;
}

/** What a plan's run examined (MongoDB's executionStats). */
export interface PlanStats {
  keysExamined: number;
  /** Keys counted while choosing (not part of the read). */
  keysCounted: number;
}

/** The stage tree as explain answers it. */
export interface ExplainedStage {
  stage: string;
  /** `id`: an index the organisation declared (GET /repository/indexes); none for a built-in one. */
  index?: { datatype: string; path: string; id?: string; listing?: string };
  /** `values` of an equality or `$in`, or a range `{type, low, high}` of keys read. */
  keys?: unknown;
  keysExamined?: number;
  inputStages?: ExplainedStage[];
  /** Keys counted when an `$and` chose its reads (counting stops at PLAN_COUNT_CAP). */
  keysCounted?: number;
}

export class PlanRunner {
  constructor(
    private readonly index: Database<number, Key>,
    private readonly tenant: string,
    private readonly datatype: string,
    readonly stats: PlanStats = { keysExamined: 0, keysCounted: 0 },
  ) {}

  /** Decides every `$and` of the plan; returns it with an estimate of its candidates (≤ cap). */
  choose(node: PlanNode, cap = PLAN_COUNT_CAP): { plan: ChosenPlan; estimate: number } {
    switch (node.stage) {
      case 'IXSCAN': {
        const ids: string[] = [];
        const counted = this.countUpTo(node.read, cap, ids);
        return { plan: counted < cap ? { stage: 'IXSCAN', read: node.read, counted, ids } : { stage: 'IXSCAN', read: node.read, counted }, estimate: counted };
      }
      case 'OR': {
        const inputs: ChosenPlan[] = [];
        let estimate = 0;
        for (const input of node.inputs) {
          const c = this.choose(input, Math.max(1, cap - estimate));
          inputs.push(c.plan);
          estimate = Math.min(cap, estimate + c.estimate);
        }
        return { plan: { stage: 'OR', inputs }, estimate };
      }
      case 'AND': {
        const options = node.inputs.map((input) => this.choose(input, cap)).sort((a, b) => a.estimate - b.estimate);
        const best = options[0];
        // Intersecting costs a read of each input's keys: worth it for inputs about as small as
        // the best (a few times its size), not for one of thousands beside one of ten.
        const kept = options.filter((o, i) => i === 0 || (o.estimate < cap && o.estimate <= 4 * best.estimate + 16));
        if (kept.length === 1) return best;
        return { plan: { stage: 'AND_INTERSECT', inputs: kept.map((o) => o.plan) }, estimate: best.estimate };
      }
    }
  }

  /** The ids the plan reads, once each, in id order. */
  sks(plan: ChosenPlan): string[] {
    const out = [...this.idSet(plan)];
    out.sort();
    return out;
  }

  private idSet(plan: ChosenPlan): Set<string> {
    switch (plan.stage) {
      case 'IXSCAN':
        return new Set(this.ids(plan));
      case 'OR': {
        const set = new Set<string>();
        for (const input of plan.inputs) for (const sk of this.idSet(input)) set.add(sk);
        return set;
      }
      case 'AND_INTERSECT': {
        let set = this.idSet(plan.inputs[0]);
        for (const input of plan.inputs.slice(1)) {
          if (set.size === 0) break;
          const next = new Set<string>();
          for (const sk of this.ids(input)) if (set.has(sk)) next.add(sk);
          set = next;
        }
        return set;
      }
    }
  }

  /** The ids a plan reads, streamed from the index when it is one read. */
  private *ids(plan: ChosenPlan): Iterable<string> {
    if (plan.stage !== 'IXSCAN') {
      yield* this.idSet(plan);
      return;
    }
    if (plan.ids) {
      this.stats.keysExamined += plan.ids.length;
      yield* plan.ids;
      return;
    }
    for (const r of this.ranges(plan.read)) {
      for (const key of this.index.getKeys(r)) {
        this.stats.keysExamined++;
        yield (key as IndexValue[])[4] as string;
      }
    }
  }

  /** Keys the read names, counted up to `cap` (keys only); their ids go to `ids` when given. */
  countUpTo(read: IndexRead, cap: number, ids?: string[]): number {
    if (this.stats.keysCounted >= PLAN_COUNT_BUDGET) return cap;
    let n = 0;
    for (const r of this.ranges(read)) {
      // Keys only, stopping at the cap (lmdb-js's getKeysCount takes no limit). Each key comes
      // decoded anyway: keeping its id costs a push.
      if (ids) {
        for (const key of this.index.getKeys({ ...r, limit: cap - n })) {
          ids.push((key as IndexValue[])[4] as string);
          n++;
        }
      } else for (const _ of this.index.getKeys({ ...r, limit: cap - n })) n++;
      if (n >= cap) break;
    }
    this.stats.keysCounted += n;
    return n;
  }

  private ranges(read: IndexRead): Array<{ start: Key; end: Key }> {
    const { tenant, datatype } = this;
    const path = read.path;
    if ('values' in read) return read.values.map((v) => ({ start: [tenant, datatype, path, v], end: [tenant, datatype, path, v, HIGH] }));
    return [keyRange(tenant, datatype, path, read.range)];
  }

  /**
   * One page of an exact read (find-plan.ts exactOrderedRead) in index order, from an offset
   * (skipped natively on keys) or after a cursor (a seek), and how many keys the read has in all
   * (counted on keys). Descending, equal values stay in id order, as the store's sort keeps them:
   * each run of equal values is found from the top and read upwards.
   */
  orderedPage(read: IndexRead, desc: boolean, start: { offset: number } | { after: { value: IndexValue; sk: string } }, size: number, kept?: number): OrderedPage {
    const [r] = this.ranges(read);
    // `kept`: the read's keys as counted in every write (lmdb-key-counts.ts). A copy of the range: getKeysCount marks the options it is given as a count.
    const total = kept ?? this.index.getKeysCount({ ...r });
    if (kept === undefined) this.stats.keysCounted += total;
    const entries: Array<[IndexValue, string]> = [];
    let hasNext = false;
    const it = desc ? this.descKeys(r, start) : this.ascKeys(r, start);
    for (const e of it) {
      if (entries.length === size) {
        hasNext = true;
        break;
      }
      entries.push(e);
    }
    it.return?.(undefined);
    return { entries, total, hasNext };
  }

  /**
   * Whether a whole-index read (a string range, or every key of the path) orders as the store's
   * sort: no boolean at the path (the index keeps booleans among the strings, the sort after
   * them), and not every string numeric (then the sort reads them as numbers): the last key of
   * the read, its greatest string when it has any, is not numeric.
   */
  ordersAsStore(read: IndexRead): boolean {
    const [r] = this.ranges(read);
    const base = [this.tenant, this.datatype, read.path];
    for (const b of ['\u0001false', '\u0001true']) for (const _ of this.index.getKeys({ start: [...base, b], end: [...base, b, HIGH], limit: 1 })) return false;
    for (const key of this.index.getKeys({ start: r.end, end: r.start, reverse: true, limit: 1 })) {
      this.stats.keysExamined++;
      if (numericString((key as IndexValue[])[3])) return false;
    }
    return true;
  }

  /** Keys [value, sk] of a range upwards, past `offset` of them or after a cursor. */
  private *ascKeys(r: { start: Key; end: Key }, start: { offset: number } | { after: { value: IndexValue; sk: string } }): Generator<[IndexValue, string]> {
    const after = 'after' in start ? start.after : undefined;
    const from: Key = after ? [this.tenant, this.datatype, (r.start as Key[])[2], after.value, after.sk] : r.start;
    const offset = 'offset' in start ? start.offset : 0;
    if (offset > 0) this.stats.keysExamined += offset;
    for (const key of this.index.getKeys({ start: from, end: r.end, ...(offset > 0 ? { offset } : {}) })) {
      const k = key as IndexValue[];
      this.stats.keysExamined++;
      if (after && k[3] === after.value && k[4] === after.sk) continue;
      yield [k[3], k[4] as string];
    }
  }

  /**
   * Keys [value, sk] of a range in the store's descending order: values down, equal values by id
   * up. From an offset, a native reverse skip names the run and the place in it; after a cursor,
   * its run goes on past its id.
   */
  private *descKeys(r: { start: Key; end: Key }, start: { offset: number } | { after: { value: IndexValue; sk: string } }): Generator<[IndexValue, string]> {
    const base = [this.tenant, this.datatype, (r.start as Key[])[2]];
    let upper: Key = r.end;
    if ('after' in start) {
      yield* this.run(base, start.after.value, start.after.sk, 0);
      upper = [...base, start.after.value];
    } else if (start.offset > 0) {
      let hit: IndexValue[] | undefined;
      for (const key of this.index.getKeys({ start: r.end, end: r.start, reverse: true, offset: start.offset, limit: 1 })) hit = key as IndexValue[];
      this.stats.keysExamined += start.offset;
      if (!hit) return;
      // Reverse order put the run's ids above `hit` first; upwards they come after it.
      const above = this.index.getKeysCount({ start: [...base, hit[3], hit[4]], end: [...base, hit[3], HIGH] }) - 1;
      yield* this.run(base, hit[3], undefined, above);
      upper = [...base, hit[3]];
    }
    for (;;) {
      let value: IndexValue | undefined;
      for (const key of this.index.getKeys({ start: upper, end: r.start, reverse: true, limit: 1 })) value = (key as IndexValue[])[3];
      if (value === undefined) return;
      yield* this.run(base, value, undefined, 0);
      upper = [...base, value];
    }
  }

  /** One run of equal values, ids upwards, after `afterSk` or past `skip` of them. */
  private *run(base: Key[], value: IndexValue, afterSk: string | undefined, skip: number): Generator<[IndexValue, string]> {
    const start = afterSk === undefined ? [...base, value] : [...base, value, afterSk];
    for (const key of this.index.getKeys({ start, end: [...base, value, HIGH], ...(skip > 0 ? { offset: skip } : {}) })) {
      const sk = (key as IndexValue[])[4] as string;
      this.stats.keysExamined++;
      if (sk === afterSk) continue;
      yield [value, sk];
    }
  }

  /** The chosen plan as explain shows it. */
  describe(plan: ChosenPlan): ExplainedStage {
    switch (plan.stage) {
      case 'IXSCAN': {
        const keys = 'values' in plan.read ? { values: plan.read.values.filter((v) => !Object.is(v, -0)).map(shown) } : { range: plan.read.range };
        return { stage: 'IXSCAN', index: { datatype: this.datatype, path: plan.read.path }, keys, ...(plan.counted !== undefined ? { keysCounted: plan.counted } : {}) };
      }
      case 'OR':
      case 'AND_INTERSECT':
        return { stage: plan.stage, inputStages: plan.inputs.map((p) => this.describe(p)) };
    }
  }
}

/** A key as the filter named it (booleans are stored as marked strings, index-values.ts). */
function shown(v: IndexValue): unknown {
  return v === '\u0001true' ? true : v === '\u0001false' ? false : v;
}

/**
 * The index keys of a range: a bound's own entries ([value, sk]) are in when it is inclusive.
 * Numbers end at ±Infinity; strings start at '' and end where the path's keys end (ordered-binary
 * sorts every string after every number, and `path` + U+0000 after every key of `path`).
 */
function keyRange(tenant: string, datatype: string, path: string, r: KeyRange): { start: Key; end: Key } {
  const base = [tenant, datatype, path];
  const start: Key = r.low
    ? r.low.inclusive
      ? [...base, r.low.key]
      : [...base, r.low.key, HIGH]
    : r.type === 'any'
      ? base
      : [...base, r.type === 'number' ? -Infinity : ''];
  const end: Key = r.high
    ? r.high.inclusive
      ? [...base, r.high.key, HIGH]
      : [...base, r.high.key]
    : r.type === 'number'
      ? [...base, Infinity, HIGH]
      : [tenant, datatype, `${path}\u0000`];
  return { start, end };
}
