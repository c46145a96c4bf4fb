// Declared listings (listing-plan.ts) in the LMDB index database:
//   entries [tenant, datatype, "\u0002" + key, ...equalValues, sortValue, sk] → 1
//   counts  [tenant, datatype, "\u0003" + key, ...equalValues]             → records
//           [tenant, datatype, "\u0004" + key, ...equalValues, sortValue's first 13 chars] → records
//           [tenant, datatype, "\u0005" + key, ...equalValues, sortValue's first 16 chars] → records
//   meta    ['listing', datatype, name] → { equals, sort, builtAt, irregular?, missingFirst?, building? }
// (`key`: the shape's short name, listing-plan.ts listingKey.)
// All are kept in the transaction of every record write, so a page is one range read and `total`
// the sum of a few counts, whatever the listing's size. A cursor seeks. A page number is found on
// the counts of sort-value prefixes (for a timestamp: its hour, then its minute: 13 and 16
// characters), then skipped natively on the keys of one minute: a skip of 100,000 keys costs
// ~3 ms, a few dozen counts ~30 µs. Records sharing one minute by the hundred thousand (a bulk
// import) make that last skip long again; it is still keys only. A record without a sort value
// (missing or null) is an entry keyed '', first as the store's sort puts it. A listing that ever
// met a record it cannot order as the store's sort does (an array at an equality path, a sort
// value that is not a plain string) is marked irregular and read the usual way from then on.
// A listing declared over existing records is built in bounded steps (lmdb-listing-builder.ts):
// until it is built, finds read the usual way, and a write keeps it only for records the build
// has passed (it reads the others as they are when it gets there).
import type { Database, Key, RootDatabase } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
import { indexValues, type IndexValue } from './index-values.js';
import { listingKey, listingName, sortKeyOf, type ListingCursor, type ListingRead, type ListingShape } from './listing-plan.js';
import { getPath } from './query.js';
import type { StoredRecord } from './record.js';

interface ListingMeta {
  equals: string[];
  sort: string;
  builtAt: string;
  irregular?: true;
  /** Records without a sort value are entries (keyed ''); a listing built before holds none, and was irregular once it met one. */
  missingFirst?: true;
  /** Set while the listing is built in steps (absent once built). */
  building?: ListingBuild;
}

/**
 * How far a listing's build got: records are built tenant by tenant in id order, `at` is the last
 * one built (['t', ''] once tenant t is reached, none of its records yet). `rebuild`: the
 * listing held entries before (irregular once), each tenant's are cleared when the build reaches it.
 */
export interface ListingBuild {
  at?: [tenant: string, sk: string];
  /** The tenant whose old entries are being cleared (a rebuild), before its records are built. */
  clearing?: string;
  rebuild?: true;
  done: number;
}

/** Where a page starts: after a cursor, or at an offset. */
export type PageStart = { after: ListingCursor } | { offset: number };

/** One page's ids, the listing's exact total, the last key read (the next cursor), keys read. */
export interface ListingPage {
  sks: string[];
  total: number;
  hasNext: boolean;
  last?: ListingCursor;
  keysExamined: number;
}

const ENTRY = '\u0002';
const COUNT = '\u0003';
/** Counts per sort-value prefix, coarse then fine: [marker, prefix length]. */
const BUCKETS: ReadonlyArray<readonly [string, number]> = [
  ['\u0004', 13],
  ['\u0005', 16],
];

export class LmdbListings {
  private readonly shapes = new Map<string, ListingShape[]>();
  /** `datatype\0name` already marked irregular by this thread. */
  private readonly irregularSeen = new Set<string>();
  /**
   * Count changes of the batch being applied, summed per key and written once at its end
   * (flush): a batch of a thousand tickets of one event moves a handful of counts, not thousands.
   */
  private readonly pending = new Map<string, { key: Key; by: number }>();

  constructor(
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, Key>,
    private readonly index: Database<number, Key>,
  ) {}

  /** Reads the declared shapes from `meta` (again when another thread declared one). */
  load(): void {
    for (const { key, value } of this.meta.getRange({ start: ['listing'], end: ['listing', HIGH] })) {
      const [, datatype] = key as [string, string, string];
      const m = value as ListingMeta;
      if (m.building) this.buildingAny = true;
      this.add({ datatype, equals: m.equals, sort: m.sort });
    }
  }

  private add(shape: ListingShape): void {
    const list = this.shapes.get(shape.datatype) ?? [];
    if (list.some((s) => listingName(s) !== listingName(shape) && listingKey(s) === listingKey(shape))) {
      throw new Error(`listings ${listingName(shape)} and another of ${shape.datatype} share a key name: rename one`);
    }
    if (!list.some((s) => listingName(s) === listingName(shape))) list.push(shape);
    this.shapes.set(shape.datatype, list);
  }

  of(datatype: string): readonly ListingShape[] {
    return this.shapes.get(datatype) ?? [];
  }

  /**
   * Declares a listing: kept as it is when built (or being built) already; otherwise stored as
   * building, from its first record, and `firstStep` run in the same transaction (a datatype of
   * few records is then built; lmdb-listing-builder.ts runs the other steps). Whether it was new.
   */
  async declare(shape: ListingShape, firstStep?: (shape: ListingShape) => void): Promise<boolean> {
    const name = listingName(shape);
    const key = ['listing', shape.datatype, name];
    let added = false;
    if (needsBuild(this.meta.get(key) as ListingMeta | undefined)) {
      await this.root.transaction(() => {
        const was = this.meta.get(key) as ListingMeta | undefined;
        if (!needsBuild(was)) return;
        added = true;
        this.irregularSeen.delete(`${shape.datatype}\0${name}`);
        const building: ListingBuild = { done: 0, ...(was ? { rebuild: true as const } : {}) };
        this.meta.put(key, { equals: [...shape.equals], sort: shape.sort, builtAt: new Date().toISOString(), missingFirst: true, building } satisfies ListingMeta);
        firstStep?.(shape);
      });
    }
    this.add(shape);
    if (this.building(shape)) this.buildingAny = true;
    return added;
  }

  /** How far a listing's build got, while it is being built (read in the caller's transaction). */
  building(shape: ListingShape): ListingBuild | undefined {
    return (this.meta.get(['listing', shape.datatype, listingName(shape)]) as ListingMeta | undefined)?.building;
  }

  /** The listings of any datatype still being built. */
  unbuilt(): ListingShape[] {
    const out: ListingShape[] = [];
    for (const list of this.shapes.values()) for (const s of list) if (this.building(s)) out.push(s);
    return out;
  }

  /** Records a build step's progress, or (undefined) that the listing is built: from then on finds read it. */
  setBuilding(shape: ListingShape, building: ListingBuild | undefined): void {
    const key = ['listing', shape.datatype, listingName(shape)];
    const m = this.meta.get(key) as ListingMeta | undefined;
    if (!m) return;
    const { building: _, ...rest } = m;
    this.meta.put(key, (building ? { ...rest, building } : { ...rest, builtAt: new Date().toISOString() }) satisfies ListingMeta);
  }

  /** Puts one record into a listing being built (a build step; the record is not in it yet). */
  place(shape: ListingShape, tenant: string, sk: string, r: StoredRecord): void {
    this.move(shape, listingKey(shape), tenant, sk, undefined, r);
  }

  /**
   * Removes up to `max` of one tenant's old keys of a listing being built again; how many. Fewer
   * than `max`: none is left.
   */
  clearSome(shape: ListingShape, tenant: string, max: number): number {
    const name = listingKey(shape);
    let n = 0;
    for (const mark of [ENTRY, COUNT, ...BUCKETS.map(([m]) => m)]) {
      for (const key of this.index.getKeys({ start: [tenant, shape.datatype, mark + name], end: [tenant, shape.datatype, mark + name, HIGH], limit: max - n })) {
        this.index.remove(key);
        n++;
      }
      if (n >= max) return n;
    }
    return n;
  }

  /** Moves one record's entries in every listing of its datatype, in the write's transaction. */
  maintain(tenant: string, datatype: string, sk: string, before: StoredRecord | undefined, after: StoredRecord | undefined): void {
    for (const shape of this.of(datatype)) {
      if (this.buildingAny) {
        // A record the build has not reached is read by the build as it is then.
        const b = this.building(shape);
        if (b && !builtPast(b, tenant, sk)) continue;
      }
      this.move(shape, listingKey(shape), tenant, sk, before, after);
    }
  }

  /**
   * Whether some listing may still be building (set by a declaration or a load that found one,
   * cleared by the builder once none is): writes look up the build's progress only then.
   */
  buildingAny = false;

  private move(shape: ListingShape, name: string, tenant: string, sk: string, before: StoredRecord | undefined, after: StoredRecord | undefined): void {
    const was = before ? this.placeOf(shape, before) : undefined;
    const now = after ? this.placeOf(shape, after) : undefined;
    if (was && now && was.sort === now.sort && sameTuple(was.tuple, now.tuple)) return;
    const base = [tenant, shape.datatype];
    if (was) {
      this.index.remove([...base, ENTRY + name, ...was.tuple, was.sort, sk]);
      this.count(base, name, was.tuple, was.sort, -1);
    }
    if (now) {
      this.index.put([...base, ENTRY + name, ...now.tuple, now.sort, sk], 1);
      this.count(base, name, now.tuple, now.sort, 1);
    }
  }

  /** The tuple's count and its sort value's bucket counts, moved by `by`. */
  private count(base: Key[], name: string, tuple: IndexValue[], sort: string, by: number): void {
    this.bump([...base, COUNT + name, ...tuple], by);
    for (const [mark, len] of BUCKETS) this.bump([...base, mark + name, ...tuple, sort.slice(0, len)], by);
  }

  private bump(key: Key[], by: number): void {
    let id = '';
    for (const part of key) id += (typeof part === 'string' ? part : `\u0001${String(part)}`) + '\u0000';
    const p = this.pending.get(id);
    if (p) p.by += by;
    else this.pending.set(id, { key, by });
  }

  /** Writes the batch's count changes, inside its transaction (the batch applier calls it last). */
  flush(): void {
    for (const { key, by } of this.pending.values()) {
      if (by === 0) continue;
      const n = (this.index.get(key) ?? 0) + by;
      if (n > 0) this.index.put(key, n);
      else this.index.remove(key);
    }
    this.pending.clear();
  }

  /** Forgets count changes of a batch that did not commit (the applier calls it first). */
  discard(): void {
    this.pending.clear();
  }

  /**
   * Where a record stands in a listing: its equality values and sort value, or undefined when it
   * is in no tuple (a path missing, an object there, a string too long to be a key: no equality
   * the listing answers can match it). One it cannot order marks the listing irregular.
   */
  private placeOf(shape: ListingShape, r: StoredRecord): { tuple: IndexValue[]; sort: string } | undefined {
    const tuple: IndexValue[] = [];
    for (const path of shape.equals) {
      const v = getPath(r, path);
      if (Array.isArray(v)) return this.irregular(shape);
      const keys = indexValues(v);
      if (keys.length !== 1 || (typeof v === 'string' && keys[0] !== v)) return undefined;
      tuple.push(keys[0]);
    }
    const sort = sortKeyOf(getPath(r, shape.sort));
    if (sort === undefined) return this.irregular(shape);
    return { tuple, sort };
  }

  private irregular(shape: ListingShape): undefined {
    const name = listingName(shape);
    const seen = `${shape.datatype}\0${name}`;
    if (this.irregularSeen.has(seen)) return undefined;
    this.irregularSeen.add(seen);
    const key = ['listing', shape.datatype, name];
    const m = this.meta.get(key) as ListingMeta | undefined;
    if (m && !m.irregular) this.meta.put(key, { ...m, irregular: true } satisfies ListingMeta);
    return undefined;
  }

  /** Whether a listing still orders as the store's sort does (read from `meta`: a query worker sees it in its snapshot). */
  readable(shape: ListingShape): boolean {
    const m = this.meta.get(['listing', shape.datatype, listingName(shape)]) as ListingMeta | undefined;
    return m !== undefined && !m.irregular && !m.building;
  }

  /** The records of a listing in its tuples: the kept counts summed. */
  total(tenant: string, read: ListingRead): number {
    const name = listingKey(read.shape);
    let n = 0;
    for (const t of read.tuples) n += this.index.get([tenant, read.shape.datatype, COUNT + name, ...t]) ?? 0;
    return n;
  }

  /**
   * One page of a listing in the store's sort order (ascending: value then id; descending: value
   * down, equal values still by id up, as the store's stable sort keeps them). A page number skips
   * on keys (natively, when one tuple holds records); a cursor seeks. Cost: the page's keys, plus
   * the skip, never a record.
   */
  page(tenant: string, read: ListingRead, desc: boolean, start: PageStart, size: number): ListingPage {
    const name = listingKey(read.shape);
    const total = this.total(tenant, read);
    const stats = { keys: 0 };
    const held: IndexValue[][] = [];
    for (const t of read.tuples) {
      if (read.tuples.length === 1 || (this.index.get([tenant, read.shape.datatype, COUNT + name, ...t]) ?? 0) > 0) held.push(t);
    }
    const prefixes: Key[][] = held.map((t) => [tenant, read.shape.datatype, ENTRY + name, ...t]);
    let streams: Array<Iterator<[string, string]>>;
    let skip = 0;
    if ('after' in start) {
      streams = prefixes.map((p) => (desc ? this.desc(p, stats, { value: start.after.value, afterSk: start.after.sk }) : this.asc(p, stats, start.after)));
    } else if (prefixes.length === 1) {
      const counts = [tenant, read.shape.datatype, name, ...held[0]];
      streams = [desc ? this.descAt(prefixes[0], counts, stats, start.offset) : this.ascAt(prefixes[0], counts, stats, start.offset)];
    } else {
      // Several tuples hold records: the bucket found on their counts together, then their keys
      // merged from there and skipped within it (no native skip across ranges).
      const counts = held.map((t) => [tenant, read.shape.datatype, name, ...t]);
      const at = start.offset > 0 ? this.locate(counts, start.offset, desc, stats) : { whole: false, within: 0 };
      if (start.offset > 0 && at.bucket === undefined) streams = [];
      else if (at.bucket === undefined) streams = prefixes.map((p) => (desc ? this.desc(p, stats) : this.asc(p, stats)));
      else {
        const b = at.bucket;
        streams = prefixes.map((p) => (desc ? this.desc(p, stats, undefined, at.whole ? [...p, b, HIGH] : [...p, b + HIGH]) : this.asc(p, stats, undefined, 0, b)));
      }
      skip = at.within;
    }
    const merged = merge(streams, desc);
    const sks: string[] = [];
    let last: [string, string] | undefined;
    let hasNext = false;
    for (let e = merged.next(); !e.done; e = merged.next()) {
      if (skip > 0) {
        skip--;
        continue;
      }
      if (sks.length === size) {
        hasNext = true;
        break;
      }
      sks.push(e.value[1]);
      last = e.value;
    }
    for (const st of streams) st.return?.(undefined);
    return { sks, total, hasNext, ...(last ? { last: { value: last[0], sk: last[1] } } : {}), keysExamined: stats.keys };
  }

  /**
   * The first `max` entries of a listing's tuples together, in the store's sort order, as
   * [sortValue, id] (a narrowed read tests each record, then pages; lmdb-records.ts).
   */
  entries(tenant: string, read: ListingRead, desc: boolean, max: number): { entries: Array<[string, string]>; keysExamined: number } {
    const name = listingKey(read.shape);
    const stats = { keys: 0 };
    const streams = read.tuples.map((t) => {
      const p = [tenant, read.shape.datatype, ENTRY + name, ...t];
      return desc ? this.desc(p, stats) : this.asc(p, stats);
    });
    const merged = merge(streams, desc);
    const entries: Array<[string, string]> = [];
    for (let e = merged.next(); !e.done && entries.length < max; e = merged.next()) entries.push(e.value);
    for (const st of streams) st.return?.(undefined);
    return { entries, keysExamined: stats.keys };
  }

  /**
   * Where position `offset` of the tuples together lies (`reverse`: counted from the end): the
   * finest bucket holding it, found on the bucket counts (summed across tuples), and the position
   * within that bucket.
   */
  private locate(counts: Key[][], offset: number, reverse: boolean, stats: { keys: number }): { bucket?: string; whole: boolean; within: number } {
    let within = offset;
    let bucket: string | undefined;
    for (const [mark, len] of BUCKETS) {
      const lists = counts.map((c) => this.buckets(c, mark, bucket, reverse, stats));
      const heads = lists.map((l) => l.next());
      let found: string | undefined;
      for (;;) {
        // The next bucket of all tuples together (their sort values are below U+D800: string order is the index's).
        let b: string | undefined;
        for (const h of heads) if (!h.done && (b === undefined || (reverse ? h.value[0] > b : h.value[0] < b))) b = h.value[0];
        if (b === undefined) break;
        let n = 0;
        for (let i = 0; i < heads.length; i++) {
          const h = heads[i];
          if (!h.done && h.value[0] === b) {
            n += h.value[1];
            heads[i] = lists[i].next();
          }
        }
        if (within < n) {
          found = b;
          break;
        }
        within -= n;
      }
      // Ends the reads left open (lmdb-js releases a cursor when its iteration returns).
      for (const l of lists) l.return?.(undefined);
      if (found === undefined) return { whole: false, within };
      // Shorter than the prefix: the bucket is one whole sort value.
      if (found.length < len) return { bucket: found, whole: true, within };
      bucket = found;
    }
    return { bucket, whole: false, within };
  }

  /**
   * One tuple's bucket counts at one level, in order, inside the coarser `bucket` when given
   * (finer buckets start with it), read one at a time so a search stops where it finds.
   */
  private *buckets(counts: Key[], mark: string, bucket: string | undefined, reverse: boolean, stats: { keys: number }): Iterator<[string, number]> {
    const [tenant, datatype, name, ...tuple] = counts as [string, string, string, ...IndexValue[]];
    const base = [tenant, datatype, mark + name, ...tuple];
    const low: Key = bucket === undefined ? base : [...base, bucket];
    const high: Key = [...base, bucket === undefined ? HIGH : bucket + HIGH];
    for (const { key, value } of this.index.getRange(reverse ? { start: high, end: low, reverse: true } : { start: low, end: high })) {
      stats.keys++;
      const k = key as IndexValue[];
      yield [k[k.length - 1] as string, value as number];
    }
    // A reverse range leaves out its end: the finer bucket that is the coarse one's whole prefix, the lowest.
    if (reverse && bucket !== undefined) {
      const n = this.index.get(low);
      if (n !== undefined) yield [bucket, n];
    }
  }

  /** Ascending from position `offset` of one tuple: its bucket found on counts, then a native skip within it. */
  private ascAt(prefix: Key[], counts: Key[], stats: { keys: number }, offset: number): Iterator<[string, string]> {
    if (offset === 0) return this.asc(prefix, stats);
    const { bucket, within } = this.locate([counts], offset, false, stats);
    if (bucket === undefined) return [][Symbol.iterator]();
    // Skipped natively, but examined all the same.
    stats.keys += within;
    return this.asc(prefix, stats, undefined, within, bucket);
  }

  /** Ascending keys of one tuple as [sortValue, sk], after a cursor or from an offset (past sort value `from`). */
  private *asc(prefix: Key[], stats: { keys: number }, after?: ListingCursor, offset = 0, from?: string): Iterator<[string, string]> {
    const at = prefix.length;
    const start = after ? [...prefix, after.value, after.sk] : from !== undefined ? [...prefix, from] : prefix;
    for (const key of this.index.getKeys({ start, end: [...prefix, HIGH], ...(offset > 0 ? { offset } : {}) })) {
      const k = key as IndexValue[];
      stats.keys++;
      if (after && k[at] === after.value && k[at + 1] === after.sk) continue;
      yield [k[at] as string, k[at + 1] as string];
    }
  }

  /**
   * Descending keys of one tuple: each run of equal sort values found from the top (one reverse
   * step) and read upwards, so equal values come by id as the store's sort gives them. `from`
   * starts inside one run: after an id (a cursor) or past `skip` of its ids.
   */
  private *desc(prefix: Key[], stats: { keys: number }, from?: { value: string; afterSk?: string; skip?: number }, top?: Key): Iterator<[string, string]> {
    const at = prefix.length;
    let upper: Key = top ?? [...prefix, HIGH];
    if (from) {
      yield* this.run(prefix, from.value, stats, from.afterSk, from.skip);
      upper = [...prefix, from.value];
    }
    for (;;) {
      let value: string | undefined;
      for (const key of this.index.getKeys({ start: upper, end: prefix, reverse: true, limit: 1 })) value = (key as IndexValue[])[at] as string;
      if (value === undefined) return;
      stats.keys++;
      yield* this.run(prefix, value, stats);
      upper = [...prefix, value];
    }
  }

  /**
   * Descending from position `offset`: its bucket found on counts, then the key there (a native
   * reverse skip within the bucket) names its run and place in it.
   */
  private descAt(prefix: Key[], counts: Key[], stats: { keys: number }, offset: number): Iterator<[string, string]> {
    if (offset === 0) return this.desc(prefix, stats);
    const at = prefix.length;
    const { bucket, whole, within } = this.locate([counts], offset, true, stats);
    if (bucket === undefined) return [][Symbol.iterator]();
    stats.keys += within;
    let hit: IndexValue[] | undefined;
    // Downwards from the bucket's top: above every value it holds, below every longer value it is a prefix of.
    const top = whole ? [...prefix, bucket, HIGH] : [...prefix, bucket + HIGH];
    for (const key of this.index.getKeys({ start: top, end: prefix, reverse: true, ...(within > 0 ? { offset: within } : {}), limit: 1 })) hit = key as IndexValue[];
    if (!hit) return [][Symbol.iterator]();
    const value = hit[at] as string;
    // Reverse order put the run's ids above `hit` first; upwards they come after it.
    const above = this.index.getKeysCount({ start: [...prefix, value, hit[at + 1]], end: [...prefix, value, HIGH] }) - 1;
    stats.keys += 1 + above;
    return this.desc(prefix, stats, { value, skip: above });
  }

  /** One run of equal sort values, ids upwards, after `afterSk` or past `skip` of them. */
  private *run(prefix: Key[], value: string, stats: { keys: number }, afterSk?: string, skip = 0): Iterable<[string, string]> {
    const at = prefix.length;
    const start = afterSk === undefined ? [...prefix, value] : [...prefix, value, afterSk];
    for (const key of this.index.getKeys({ start, end: [...prefix, value, HIGH], ...(skip > 0 ? { offset: skip } : {}) })) {
      const sk = (key as IndexValue[])[at + 1] as string;
      stats.keys++;
      if (sk === afterSk) continue;
      yield [value, sk];
    }
  }

  /** Removes every entry and count of one record, found by looking (the record cannot be read). */
  unindex(tenant: string, datatype: string, sk: string): void {
    for (const shape of this.of(datatype)) {
      const name = listingKey(shape);
      const prefix = [tenant, datatype, ENTRY + name];
      for (const key of this.index.getKeys({ start: prefix, end: [tenant, datatype, ENTRY + name + '\u0000'] })) {
        const k = key as IndexValue[];
        if (k[k.length - 1] !== sk) continue;
        this.index.remove(key);
        const n = shape.equals.length;
        this.count([tenant, datatype], name, k.slice(3, 3 + n), k[3 + n] as string, -1);
      }
    }
  }
}

/** Whether a listing's meta asks for a build: none yet, or irregular from before records without a sort value were entries. */
function needsBuild(m: ListingMeta | undefined): boolean {
  return m === undefined || (m.irregular === true && !m.missingFirst);
}

/** Whether record (tenant, sk) is one a listing's build has passed (in the order of the records' keys). */
export function builtPast(b: ListingBuild, tenant: string, sk: string): boolean {
  if (!b.at || b.clearing === tenant) return false;
  const t = keyOrder(tenant, b.at[0]);
  return t < 0 || (t === 0 && keyOrder(sk, b.at[1]) <= 0);
}

/** Two key strings in LMDB's order (their UTF-8 bytes), which JS's UTF-16 order differs from above U+D7FF. */
export function keyOrder(a: string, b: string): number {
  if (a === b) return 0;
  return Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
}

function sameTuple(a: IndexValue[], b: IndexValue[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

/** Merges sorted streams of [sortValue, sk]: ascending by value then id, or descending by value then id upwards. */
function* merge(streams: Array<Iterator<[string, string]>>, desc: boolean): Iterator<[string, string]> {
  if (streams.length === 1) {
    yield* { [Symbol.iterator]: () => streams[0] };
    return;
  }
  const heads = streams.map((s) => s.next());
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h.done) continue;
      if (best < 0 || before(h.value, heads[best].value as [string, string], desc)) best = i;
    }
    if (best < 0) return;
    yield heads[best].value as [string, string];
    heads[best] = streams[best].next();
  }
}

/** Whether entry `a` comes before `b` in a listing's order (ascending, or descending with equal values by id up). */
export function before(a: [string, string], b: [string, string], desc: boolean): boolean {
  if (a[0] !== b[0]) return desc ? a[0] > b[0] : a[0] < b[0];
  return a[1] < b[1];
}
