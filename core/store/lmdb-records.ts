// Reading records from the LMDB store: one by id, a datatype's range (index-narrowed when a
// filter allows), listings and counts. A record whose bytes cannot be decoded fails only the read
// that names it, and listings skip it (reported and counted).
import type { Database, Key } from 'lmdb';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import { HIGH } from './lmdb-encoding.js';
import type { LmdbIndexes } from './lmdb-indexes.js';
import { exactOrderedRead, planFilter, type IndexCatalog } from './find-plan.js';
import { exactStringKey } from './index-values.js';
import { equalityKey, type ExactMatches } from './exact-ids-cache.js';
import { decodeCursor, encodeCursor, listingName, listingRead, NARROWED_LISTING_MAX, narrowingListings, type ListingCursor, type ListingRead } from './listing-plan.js';
import { before } from './lmdb-listings.js';
import type { ChosenPlan, ExplainedStage, PlanRunner } from './lmdb-plan-run.js';
import { compileFilter, getPath, resolvePaging, runQuery, type Filter, type FindExplain, type FindOptions, type PageLimits } from './query.js';
import type { CachedText, RecordCache, RecordText, TextPage } from './record-cache.js';
import type { ListResult, StoredRecord } from './record.js';

/** One find's run, observed for explain. */
interface FindRun {
  runner: PlanRunner;
  plan?: ChosenPlan;
  docsExamined: number;
  /** Set when a declared listing answered the find. */
  listing?: { read: ListingRead; keysExamined: number };
}

export class LmdbRecords {
  /** Undecodable records met by reads since start (for /metrics). */
  unreadableSeen = 0;

  constructor(
    private readonly records: Database<StoredRecord, Key>,
    private readonly indexes: LmdbIndexes,
    private readonly limits: PageLimits,
    private readonly logger: Logger | undefined,
    /** The answers client reads wrote lately (record-cache.ts); none in a query worker, which sees no commits land. */
    readonly cache?: RecordCache,
  ) {}

  /**
   * A record, or ERR_RECORD_UNREADABLE (409) when its bytes cannot be decoded (a document nested
   * deeper than msgpack's decoder can recurse, written before the document limits existed): such a
   * record fails only the request that names it, and can still be deleted (see BatchApplier).
   */
  get(tenant: string, datatype: string, sk: string): StoredRecord | undefined {
    try {
      return this.records.get([tenant, datatype, sk]);
    } catch (err) {
      this.unreadable(tenant, datatype, sk, err);
      throw new AppError('ERR_RECORD_UNREADABLE', [`${datatype} ${sk}`]);
    }
  }

  /**
   * A record as `by` writes it, for a client's read (a get by id, an exact small find): the cached
   * text while no commit has changed the record since, else read (as get, or as read when
   * `strict` is false), written and kept. Undefined when there is no such record.
   */
  text(tenant: string, datatype: string, sk: string, by: RecordText, strict: boolean): string | undefined {
    const cache = this.cache;
    const hit = cache?.get(tenant, datatype, sk, by);
    if (hit !== undefined) return hit;
    const r = strict ? this.get(tenant, datatype, sk) : this.read(tenant, datatype, sk);
    if (!r) return undefined;
    const text = by(r);
    cache?.put(tenant, datatype, sk, text, by);
    return text;
  }

  /** A record for a listing: undefined (reported, counted) when it cannot be decoded. */
  read(tenant: string, datatype: string, sk: string): StoredRecord | undefined {
    try {
      return this.records.get([tenant, datatype, sk]);
    } catch (err) {
      this.unreadable(tenant, datatype, sk, err);
      return undefined;
    }
  }

  private unreadable(tenant: string, datatype: string, sk: string, err: unknown): void {
    this.unreadableSeen++;
    this.logger?.warn({ tenant, datatype, sk, err: (err as Error)?.message }, 'stored record cannot be decoded; skipped (DELETE it through /repository)');
  }

  /** Every [tenant, sk] of a datatype across tenants (keys only), for building an index. */
  *keysOf(datatype: string): Iterable<[string, string]> {
    for (const key of this.records.getKeys({})) {
      const [tenant, dt, sk] = key as [string, string, string];
      if (dt === datatype) yield [tenant, sk];
    }
  }

  /**
   * Every record of a datatype in id order. A record that cannot be decoded is skipped (reported
   * and counted) and the range resumes after it, so one bad record never hides the others.
   */
  private *datatypeRecords(tenant: string, datatype: string): Iterable<StoredRecord> {
    const end = [tenant, datatype, HIGH];
    let start: Key = [tenant, datatype];
    for (;;) {
      let last: string | undefined;
      try {
        for (const { key, value } of this.records.getRange({ start, end })) {
          last = (key as [string, string, string])[2];
          yield value;
        }
        return;
      } catch (err) {
        // The entry after `last` (or the first one) failed to decode: find its key and the next
        // one without decoding, and resume there.
        const keys: string[] = [];
        const from = last === undefined ? start : [tenant, datatype, last];
        for (const key of this.records.getKeys({ start: from, end, limit: 3 })) keys.push((key as [string, string, string])[2]);
        if (last !== undefined && keys[0] === last) keys.shift();
        const bad = keys[0];
        if (bad === undefined) throw err;
        this.unreadable(tenant, datatype, bad, err);
        if (keys[1] === undefined) return;
        start = [tenant, datatype, keys[1]];
      }
    }
  }

  /** The plan of a find: its index reads chosen (lmdb-plan-run.ts), or a scan of the datatype. */
  private plan(tenant: string, datatype: string, filter: Filter | undefined, runner: PlanRunner): ChosenPlan | undefined {
    const node = planFilter(filter, this.indexes.catalog(tenant, datatype));
    if (!node) return undefined;
    // One read needs no choosing (and no counting).
    if (node.stage === 'IXSCAN') return node;
    return runner.choose(node).plan;
  }

  private *candidates(tenant: string, datatype: string, filter: Filter | undefined, run?: FindRun): Iterable<StoredRecord> {
    const runner = run?.runner ?? this.indexes.runner(tenant, datatype);
    const plan = this.plan(tenant, datatype, filter, runner);
    if (run) run.plan = plan;
    if (plan) {
      yield* this.planned(tenant, datatype, plan, runner, run);
      return;
    }
    for (const r of this.datatypeRecords(tenant, datatype)) {
      if (run) run.docsExamined++;
      yield r;
    }
  }

  /** The records a chosen plan names, in id order. */
  private *planned(tenant: string, datatype: string, plan: ChosenPlan, runner: PlanRunner, run?: FindRun): Iterable<StoredRecord> {
    for (const sk of runner.sks(plan)) {
      if (run) run.docsExamined++;
      const r = this.read(tenant, datatype, sk);
      if (r) yield r;
    }
  }

  /**
   * A find an index narrows to at most `max` candidates, counted on keys, run now; undefined when
   * none narrows it or it has more (then only keys were read). Deciding and running share one
   * plan: the ids counted are the ones read, so a small find reads its index keys once. Answers
   * what find() answers; with `by`, a find one index read answers exactly answers its page as `by`
   * writes each record instead (exactTexts).
   */
  findUpTo(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, max: number, by?: RecordText): TextPage | undefined {
    const catalog = this.indexes.catalog(tenant, datatype);
    const node = planFilter(filter, catalog);
    if (!node) return undefined;
    // An exact equality answered before, its datatype unchanged since: its matches without a key read.
    const exact = by && this.exactOf(tenant, datatype, filter, opts, catalog);
    const known = exact && this.cache!.exact.matches(tenant, datatype, exact.key, exact.paths);
    if (known) {
      if (known.ids.length > max) return undefined;
      const res = this.listed(tenant, datatype, filter, opts, undefined, true) ?? this.indexOrdered(tenant, datatype, filter, opts);
      if (res) return res;
      noCursor(opts);
      const texts = this.textPage(tenant, datatype, known, opts, by!);
      if (texts) return texts;
    }
    const runner = this.indexes.runner(tenant, datatype);
    const { plan, estimate } = runner.choose(node, max + 1);
    if (estimate > max) return undefined;
    const res = this.listed(tenant, datatype, filter, opts, undefined, true) ?? this.indexOrdered(tenant, datatype, filter, opts);
    if (res) return res;
    noCursor(opts);
    const texts = exact && plan.stage === 'IXSCAN' ? this.exactTexts(tenant, datatype, exact, opts, runner, plan, by!) : undefined;
    if (texts) return texts;
    return runQuery(this.planned(tenant, datatype, plan, runner), filter, opts, this.limits);
  }

  /**
   * Whether a find is an exact one (find-plan.ts exactOrderedRead: one equality to a number or a
   * short string, on an indexed path that never held an array), unsorted and paged by number: its
   * ids are its matches, and what identifies it in the exact-ids cache. Only with the record cache.
   */
  private exactOf(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, catalog: IndexCatalog): { key: string; paths: string } | undefined {
    if (!this.cache || opts.sort || opts.skip !== undefined || opts.limit !== undefined || opts.after !== undefined) return undefined;
    const cond = filter && onlyCondition(filter);
    const path = cond && Object.keys(cond)[0];
    const read = path ? exactOrderedRead(cond, path, catalog) : undefined;
    if (!read || !('values' in read) || read.values.length !== 1) return undefined;
    const v = read.values[0];
    if (typeof v !== 'string' && typeof v !== 'number') return undefined;
    return { key: equalityKey(read.path, v), paths: this.indexes.readableKey(tenant, datatype, catalog.paths) };
  }

  /**
   * An exact find (exactOf) read by its index: its ids are its matches, so `total` is their count
   * and only the page's records are read, each as `by` writes it (from the cache while unchanged),
   * with no filter to test; the ids are kept for the next such find (exact-ids-cache.ts).
   * Undefined when a record of the page cannot be read (the usual way then reports it).
   */
  private exactTexts(tenant: string, datatype: string, exact: { key: string; paths: string }, opts: FindOptions, runner: PlanRunner, plan: ChosenPlan, by: RecordText): TextPage | undefined {
    const ids = runner.sks(plan);
    const kept = this.cache!.exact.put(tenant, datatype, exact.key, exact.paths, ids);
    return this.textPage(tenant, datatype, kept ?? { ids, slots: [] }, opts, by);
  }

  /**
   * The page `opts` asks of an exact find's matches, as texts; undefined when one cannot be read.
   * A text read before comes from its slot while the record cache still holds it (no map read).
   */
  private textPage(tenant: string, datatype: string, matches: ExactMatches, opts: FindOptions, by: RecordText): TextPage | undefined {
    const { ids, slots } = matches;
    const cache = this.cache!;
    const { page, pageSize, offset } = resolvePaging(opts, this.limits);
    const texts: string[] = [];
    for (let i = offset; i < Math.min(ids.length, offset + pageSize); i++) {
      const slot = slots[i] as CachedText | undefined;
      if (slot !== undefined && slot.live && slot.by === by) {
        texts.push(slot.text);
        continue;
      }
      let entry = cache.entry(tenant, datatype, ids[i], by);
      if (!entry) {
        const r = this.read(tenant, datatype, ids[i]);
        if (!r) return undefined;
        const text = by(r);
        entry = cache.put(tenant, datatype, ids[i], text, by);
        if (!entry) {
          texts.push(text);
          continue;
        }
      }
      slots[i] = entry;
      texts.push(entry.text);
    }
    return { data: [], texts, total: ids.length, hasNext: offset + texts.length < ids.length, page, pageSize };
  }

  /** Candidates a find with `filter` reads, counted on keys, no further than `cap`. */
  candidatesUpTo(tenant: string, datatype: string, filter: Filter | undefined, cap: number): number {
    const node = planFilter(filter, this.indexes.catalog(tenant, datatype));
    if (node) return this.indexes.runner(tenant, datatype).choose(node, cap).estimate;
    let n = 0;
    for (const _ of this.records.getKeys({ start: [tenant, datatype], end: [tenant, datatype, HIGH], limit: cap })) n++;
    return n;
  }

  find(tenant: string, datatype: string, filter?: Filter, opts: FindOptions = {}): ListResult {
    const res = this.listed(tenant, datatype, filter, opts) ?? this.indexOrdered(tenant, datatype, filter, opts);
    if (res) return res;
    noCursor(opts);
    return runQuery(this.candidates(tenant, datatype, filter), filter, opts, this.limits);
  }

  /**
   * The declared listing that answers a find in order (listing-plan.ts), when one does and is
   * readable: exactly, or else narrowed (a superset, every record tested) by the one whose kept
   * count is smallest, while that count is at most NARROWED_LISTING_MAX.
   */
  listingOf(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, refreshed = false): ListingRead | undefined {
    if (opts.skip !== undefined || opts.limit !== undefined) return undefined;
    const shapes = this.indexes.listingsOf(datatype, refreshed);
    const read = listingRead(filter, opts.sort, shapes);
    if (read) return this.indexes.listings.readable(read.shape) ? read : undefined;
    let best: { read: ListingRead; total: number } | undefined;
    for (const r of narrowingListings(filter, opts.sort, shapes)) {
      if (!this.indexes.listings.readable(r.shape)) continue;
      const total = this.indexes.listings.total(tenant, r);
      if (total <= NARROWED_LISTING_MAX && (!best || total < best.total)) best = { read: r, total };
    }
    return best?.read;
  }

  /**
   * A find a declared listing answers: one page read in its order (after a cursor, or skipping on
   * keys to a page number), `total` from the kept counts, and `next` for the page after. Every
   * record read is still tested against the filter; without a cursor, should one fail, the find
   * runs the usual way. A cursor on a find no listing answers is a 400: it could not be honoured.
   */
  private listed(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, run?: FindRun, refreshed = false): ListResult | undefined {
    const read = this.listingOf(tenant, datatype, filter, opts, refreshed);
    if (!read) return undefined;
    const cursor = opts.after !== undefined ? decodeCursor(opts.after) : undefined;
    // A listing's sort values are strings: a number is another read's cursor.
    if (cursor && typeof cursor.value !== 'string') noCursor(opts, true);
    const after = cursor as ListingCursor | undefined;
    if (read.narrowed) return this.narrowed(tenant, datatype, read, filter!, opts, after, run);
    const { page, pageSize, offset } = resolvePaging(opts, this.limits);
    const got = this.indexes.listings.page(tenant, read, opts.sortType === 'desc', after ? { after } : { offset }, pageSize);
    const q = filter && Object.keys(filter).length > 0 ? compileFilter(filter) : undefined;
    const data: StoredRecord[] = [];
    for (const sk of got.sks) {
      if (run) run.docsExamined++;
      const r = this.read(tenant, datatype, sk);
      if (r && (!q || q.test(r))) data.push(r);
      else if (!after) return undefined;
    }
    if (run) run.listing = { read, keysExamined: got.keysExamined };
    return indexPage(data, got.total, got.hasNext, opts, after !== undefined, page, pageSize, got.last);
  }

  /**
   * A find a listing holds a superset of (listingOf: its kept count is small): the listing read
   * whole in order, each record tested against the filter, then paged. `total` is exact (every
   * candidate tested) and a cursor lands after its entry even when that record has since left.
   */
  private narrowed(tenant: string, datatype: string, read: ListingRead, filter: Filter, opts: FindOptions, after: ListingCursor | undefined, run?: FindRun): ListResult {
    const desc = opts.sortType === 'desc';
    const { page, pageSize, offset } = resolvePaging(opts, this.limits);
    // The count bounded the read when it was chosen; a write since may have added a few.
    const { entries, keysExamined } = this.indexes.listings.entries(tenant, read, desc, 2 * NARROWED_LISTING_MAX);
    const q = compileFilter(filter);
    const matched: Array<[string, string]> = [];
    const records: StoredRecord[] = [];
    for (const e of entries) {
      if (run) run.docsExamined++;
      const r = this.read(tenant, datatype, e[1]);
      if (r && q.test(r)) {
        matched.push(e);
        records.push(r);
      }
    }
    let start = offset;
    if (after) {
      const c: [string, string] = [after.value, after.sk];
      start = matched.findIndex((e) => before(c, e, desc));
      if (start < 0) start = matched.length;
    }
    const data = records.slice(start, start + pageSize);
    const hasNext = start + data.length < matched.length;
    const last = matched[start + data.length - 1];
    if (run) run.listing = { read, keysExamined };
    return indexPage(data, matched.length, hasNext, opts, after !== undefined, page, pageSize, last && { value: last[0], sk: last[1] });
  }

  /**
   * A find whose filter one index read answers exactly, sorted on the same path
   * (find-plan.ts exactOrderedRead): one page read in index order (from a page number, skipped
   * natively on keys, or after a cursor), `total` counted on keys. A string range or no filter
   * reads the index whole: trusted only when it orders as the store's sort does (every record holds
   * one key there when nothing filters, no boolean, the strings not all numeric), and each page's
   * strings are short and below U+D800 (elsewhere the orders differ only among such strings, which
   * keeps every other page's place). Every record read is still tested against the filter; should
   * one fail any of this (or be unreadable), the find runs the usual way. Undefined when the find
   * is not of that kind.
   */
  private indexOrdered(tenant: string, datatype: string, filter: Filter | undefined, opts: FindOptions, run?: FindRun): ListResult | undefined {
    // No sort, nothing to read in order: the catalog (a read of `meta`) is not needed.
    if (!filter || !opts.sort) return undefined;
    const read = exactOrderedRead(filter, opts.sort, this.indexes.catalog(tenant, datatype));
    if (!read) return undefined;
    const runner = run?.runner ?? this.indexes.runner(tenant, datatype);
    const whole = 'range' in read && read.range.type !== 'number';
    if (whole && !runner.ordersAsStore(read)) return undefined;
    const after = opts.after !== undefined ? decodeCursor(opts.after) : undefined;
    const { page, pageSize, offset } = resolvePaging(opts, this.limits);
    // Unfiltered: every record must hold one key at the path (as many keys as records), both read
    // from the counts kept for a built index (lmdb-key-counts.ts), else counted.
    const every = whole && 'range' in read && read.range.type === 'any';
    const counts = this.indexes.counts;
    const got = runner.orderedPage(read, opts.sortType === 'desc', after ? { after } : { offset }, pageSize, every ? counts.read(tenant, datatype, read.path) : undefined);
    if (every && got.total !== (counts.read(tenant, datatype, '') ?? this.records.getKeysCount({ start: [tenant, datatype], end: [tenant, datatype, HIGH] }))) return undefined;
    const q = filter && Object.keys(filter).length > 0 ? compileFilter(filter) : undefined;
    const data: StoredRecord[] = [];
    for (const [, sk] of got.entries) {
      if (run) run.docsExamined++;
      const r = this.read(tenant, datatype, sk);
      if (!r || (q && !q.test(r)) || (whole && !orderedAsKey(getPath(r, read.path)))) return undefined;
      data.push(r);
    }
    if (run) run.plan = { stage: 'IXSCAN', read };
    const last = got.entries[got.entries.length - 1];
    return indexPage(data, got.total, got.hasNext, opts, after !== undefined, page, pageSize, last && { value: last[0], sk: last[1] });
  }

  /** Runs a find and answers how (MongoDB's explain with executionStats) instead of its records. */
  explain(tenant: string, datatype: string, filter?: Filter, opts: FindOptions = {}): FindExplain {
    const started = performance.now();
    let run: FindRun = { runner: this.indexes.runner(tenant, datatype), docsExamined: 0 };
    const listed = this.listed(tenant, datatype, filter, opts, run);
    if (listed && run.listing) return this.explainListing(datatype, opts, run, listed, started);
    run = { runner: this.indexes.runner(tenant, datatype), docsExamined: 0 };
    let res = this.indexOrdered(tenant, datatype, filter, opts, run);
    const byIndex = res !== undefined;
    if (!res) {
      noCursor(opts);
      run = { runner: this.indexes.runner(tenant, datatype), docsExamined: 0 };
      res = runQuery(this.candidates(tenant, datatype, filter, run), filter, opts, this.limits);
    }
    const stats = run.runner.stats;
    const plan: ExplainedStage = run.plan ? this.indexes.nameDeclared(tenant, datatype, run.runner.describe(run.plan)) : { stage: 'COLLSCAN' };
    return {
      plan,
      ...(opts.sort ? { sort: { path: opts.sort, order: opts.sortType ?? 'asc', by: byIndex ? ('index' as const) : ('memory' as const) } } : {}),
      keysExamined: stats.keysExamined,
      keysCounted: stats.keysCounted,
      docsExamined: run.docsExamined,
      nReturned: res.data.length,
      total: res.total,
      executionTimeMillis: Math.round((performance.now() - started) * 1000) / 1000,
    };
  }

  /** Explain of a find a declared listing answered: one IXSCAN of the listing, sorted by it. */
  private explainListing(datatype: string, opts: FindOptions, run: FindRun, res: ListResult, started: number): FindExplain {
    const { read, keysExamined } = run.listing!;
    // `narrowed`: the listing held more than the find's records, and each record read was tested.
    const plan: ExplainedStage & { narrowed?: true } = {
      stage: 'IXSCAN',
      ...(read.narrowed ? { narrowed: true as const } : {}),
      index: { datatype, path: read.shape.sort, listing: listingName(read.shape) },
      keys: { equals: Object.fromEntries(read.shape.equals.map((p, i) => [p, read.tuples.map((t) => t[i])])), ...(opts.after !== undefined ? { after: opts.after } : {}) },
      keysExamined,
    };
    return {
      plan,
      sort: { path: read.shape.sort, order: opts.sortType ?? 'asc', by: 'index' },
      keysExamined,
      keysCounted: 0,
      docsExamined: run.docsExamined,
      nReturned: res.data.length,
      total: res.total,
      executionTimeMillis: Math.round((performance.now() - started) * 1000) / 1000,
    };
  }

  scan(tenant: string, datatype: string, filter?: Filter): StoredRecord[] {
    const q = filter && Object.keys(filter).length ? compileFilter(filter) : undefined;
    const out: StoredRecord[] = [];
    for (const r of this.candidates(tenant, datatype, filter)) if (!q || q.test(r)) out.push(r);
    return out;
  }

  count(tenant: string, datatype: string, filter?: Filter): number {
    if (!filter || Object.keys(filter).length === 0) {
      return this.indexes.counts.read(tenant, datatype, '') ?? this.records.getKeysCount({ start: [tenant, datatype], end: [tenant, datatype, HIGH] });
    }
    return this.scan(tenant, datatype, filter).length;
  }
}

/** The filter's one field condition, also when written as the one condition of an `$and` (the same filter). */
function onlyCondition(filter: Filter): Filter | undefined {
  let only: string | undefined;
  for (const k in filter) {
    if (only !== undefined) return undefined;
    only = k;
  }
  if (only === undefined) return undefined;
  if (only !== '$and') return only.startsWith('$') ? undefined : filter;
  const all = filter.$and;
  return Array.isArray(all) && all.length === 1 && all[0] !== null && typeof all[0] === 'object' && !Array.isArray(all[0]) ? onlyCondition(all[0] as Filter) : undefined;
}

/** A cursor on a find no index order answers is a 400: it could not be honoured. */
function noCursor(opts: FindOptions, always = false): void {
  if (always || opts.after !== undefined) throw new AppError('ERR_VALIDATION', ['after: this listing is not read by index (a cursor needs one); page by number']);
}

/** A page's sort value whose index key orders it as the store's sort does: a number, or a short string below U+D800. */
function orderedAsKey(v: unknown): boolean {
  if (typeof v === 'number') return true;
  return typeof v === 'string' && exactStringKey(v) && !/[\ud800-\uffff]/.test(v);
}

/** A page read in index order; `next` (a cursor after its last entry) only while more follow. */
function indexPage(data: StoredRecord[], total: number, hasNext: boolean, opts: FindOptions, byCursor: boolean, page: number, pageSize: number, last: Parameters<typeof encodeCursor>[0] | undefined): ListResult {
  return {
    data,
    total,
    hasNext,
    page: byCursor ? Math.max(1, Math.floor(opts.page ?? 1)) : page,
    pageSize,
    ...(hasNext && last ? { next: encodeCursor(last) } : {}),
  };
}
