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
//            ['applied', key]                      → [seq, n]  (cluster mode: see AppliedMark)
//            ['usage', tenant]                     → UsageCounter (see usage.ts)
//            ['usage-counted']                     → { at }  (the one-time count of earlier data ran)
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { open, type Database, type Key, type RootDatabase } from 'lmdb';
import { assertDocument, DEFAULT_DOCUMENT_LIMITS, type DocumentLimits } from '../document-limits.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import { storePages } from './compact.js';
import { DiskFloor } from './disk-floor.js';
import { getPath, runQuery, compileFilter, type FindOptions, type Filter, type PageLimits } from './query.js';
import type { StoredRecord } from './record.js';
import { documentBytesOver } from './value-size.js';
import { WriteBatch, type LogEntry, type Org, type Store } from './store.js';
import { UsageDelta, type QuotaPolicy, type StorageUsage, type UsageCounter } from './usage.js';
import { WriteJournal, type JournalOp, type WriteJournalOptions } from './write-journal.js';

/** Sorts after every id, key and sequence we write (ids are hex, keys are short strings). */
const HIGH = '\uffff';

/**
 * Cluster mode (core/cluster/commit-log.ts): the position in the cluster's commit stream that a
 * batch comes from, written in the batch's own transaction. `n` counts the batches of stream
 * message `seq` applied so far (one message may carry several). A batch whose mark is not past
 * the stored one was applied already: it is skipped, so applying a message twice is harmless.
 */
export interface AppliedMark {
  key: string;
  seq: number;
  n: number;
}

const ALREADY_APPLIED = 'already-applied';

const ORG_CACHE_MAX = 10_000;

/** Property names worth a shared structure: identifiers, not ids or numbers used as keys. */
const STRUCTURE_KEY = /^(?![0-9a-f]{24}$)[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;

/** Records a commit read in its transaction, by recordKey: null when there was none. */
type RecordsRead = Map<string, StoredRecord | null>;

function recordKey(tenant: string, datatype: string, sk: string): string {
  return tenant + '\u0000' + datatype + '\u0000' + sk;
}

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
  /** Storage quotas per tenant (usage.ts); without it usage is counted and nothing is refused. */
  quota?: QuotaPolicy;
  /**
   * Free bytes the disk under `path` keeps (0: no floor): below it a commit that adds data fails
   * with ERR_INSUFFICIENT_STORAGE (507) before LMDB is asked; deletes still commit.
   */
  minFreeDiskBytes?: number;
}

export const DEFAULT_MAX_RECORD_BYTES = 400 * 1024;

type IndexValue = string | number;

/**
 * Index keys hold a bounded prefix of strings over 1,000 UTF-8 bytes: LMDB refuses keys over ~2 KB,
 * and the index only narrows candidates (every query filters them again), so a shared prefix costs
 * nothing but a wider range. Writes and lookups go through this one function, so both sides agree.
 */
const INDEX_STRING_MAX_BYTES = 1000;
/** Characters of a long string kept: at most 3 UTF-8 bytes each, so within the byte bound. */
const INDEX_PREFIX_CHARS = Math.floor(INDEX_STRING_MAX_BYTES / 3);

function indexString(v: string): string {
  if (v.length <= INDEX_PREFIX_CHARS || Buffer.byteLength(v, 'utf8') <= INDEX_STRING_MAX_BYTES) return v;
  return v.slice(0, INDEX_PREFIX_CHARS);
}

function indexValues(v: unknown): IndexValue[] {
  if (typeof v === 'string') return [indexString(v)];
  if (typeof v === 'number') return Number.isNaN(v) ? [] : [v];
  if (typeof v === 'boolean') return [v ? '\u0001true' : '\u0001false'];
  if (Array.isArray(v)) return v.flatMap((x) => (Array.isArray(x) ? [] : indexValues(x)));
  return [];
}

/** An equality the index can answer: `{path: v}`, `{path: {$eq: v}}` or `{path: {$in: [...]}}`. */
function equalityValues(cond: unknown): IndexValue[] | undefined {
  if (typeof cond === 'string' || typeof cond === 'number' || typeof cond === 'boolean') return indexValues(cond);
  if (cond && typeof cond === 'object' && !Array.isArray(cond)) {
    const keys = Object.keys(cond);
    if (keys.length !== 1) return undefined;
    const c = cond as Record<string, unknown>;
    if (keys[0] === '$eq') return equalityValues(c.$eq);
    if (keys[0] === '$in' && Array.isArray(c.$in)) {
      const out: IndexValue[] = [];
      for (const x of c.$in) {
        const vs = equalityValues(x);
        if (!vs) return undefined;
        out.push(...vs);
      }
      return out;
    }
  }
  return undefined;
}

export class LmdbStore implements Store {
  private readonly root: RootDatabase;
  private readonly records: Database<StoredRecord, Key>;
  private readonly index: Database<number, Key>;
  private readonly logs: Database<unknown, Key>;
  private readonly kv: Database<unknown, Key>;
  private readonly orgs: Database<Org, Key>;
  private readonly meta: Database<unknown, Key>;
  private readonly indexes = new Map<string, string[]>();
  private readonly limits: PageLimits;
  private readonly maxRecordBytes: number;
  private readonly documentLimits: DocumentLimits;
  private readonly logger?: Logger;
  /** The same records database without decoding: repairs and tests write and read raw bytes. */
  private readonly rawRecords: Database<Buffer, Key>;
  private readonly quota?: QuotaPolicy;
  private readonly floor?: DiskFloor;
  /** The encoded size of the value the last put wrote (see tapEncodedSize). */
  private encodedBytes = 0;
  /** The usage changes of the batch being applied (apply runs synchronously, one at a time). */
  private readonly delta = new UsageDelta();
  /** Undecodable records met by reads since start (for /metrics). */
  private unreadableSeen = 0;
  private closed = false;
  /** Journaled batches' writes until they are in LMDB (openJournal; single node only). */
  private journal?: WriteJournal;
  /**
   * Organisations as committed, read on every request (the edge resolves `orgid`). Entries are
   * dropped once a commit that writes the organisation has landed, so a read never sees a write
   * before it is durable. Misses are not kept (unknown ids are the caller's to choose).
   */
  private readonly orgCache = new Map<string, Org>();

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
    });
    this.meta = this.root.openDB({ name: 'meta' });
    this.records = this.root.openDB({ name: 'records', ...this.sharedStructures('records') });
    this.rawRecords = this.root.openDB({ name: 'records', encoding: 'binary' });
    this.index = this.root.openDB({ name: 'index' });
    this.logs = this.root.openDB({ name: 'logs', ...this.sharedStructures('logs') });
    this.kv = this.root.openDB({ name: 'kv' });
    this.orgs = this.root.openDB({ name: 'orgs' });
    this.limits = opts.limits ?? { defaultPageSize: 20, maxPageSize: 200 };
    this.maxRecordBytes = opts.maxRecordBytes ?? DEFAULT_MAX_RECORD_BYTES;
    this.documentLimits = opts.documentLimits ?? DEFAULT_DOCUMENT_LIMITS;
    this.logger = opts.logger;
    this.quota = opts.quota;
    if (opts.minFreeDiskBytes) this.floor = new DiskFloor(opts.path, opts.minFreeDiskBytes);
    for (const db of [this.records, this.logs, this.kv]) this.tapEncodedSize(db);
    for (const { key } of this.meta.getRange({ start: ['index'], end: ['index', HIGH] })) {
      const [, datatype, path] = key as [string, string, string];
      this.addIndexPath(datatype, path);
    }
  }

  /**
   * msgpackr record structures shared by every value of a database, kept in `meta` under
   * ['structures', name] and written in the transaction of the first value that uses a new one.
   * Without them each value carries its own key lists and every read parses them again (a ticket
   * read took ~3 µs to decode instead of ~0.8 µs, and took 450 bytes instead of 250). Values
   * written before (own structures) still decode. Objects keyed by ids (maps of counts and the
   * like) are not shared, so dynamic keys cannot use up the slots.
   */
  private sharedStructures(name: string): object {
    const key = ['structures', name];
    return {
      maxSharedStructures: 512,
      shouldShareStructure: (keys: string[]) => keys.length <= 64 && keys.every((k) => STRUCTURE_KEY.test(k)),
      getStructures: () => this.meta.get(key),
      saveStructures: (structures: unknown[], isCompatible: boolean | ((existing: unknown) => boolean)) =>
        // Inside a write transaction this runs in it (flags without ABORTABLE), like lmdb-js's own.
        this.root.transactionSync(() => {
          const existing = this.meta.get(key) as unknown[] | undefined;
          const compatible = typeof isCompatible === 'function' ? isCompatible(existing) : !existing || existing.length === (isCompatible as unknown);
          if (!compatible) return false;
          void this.meta.put(key, structures);
          return true;
        }, 0x10000),
    };
  }

  /**
   * Keeps the size of every value `db` encodes in `encodedBytes`, read right after a put: the
   * exact stored size at no cost, where encoding again or reading the value back would cost a
   * second pass on every write. lmdb-js encodes a put's value synchronously inside the put.
   */
  private tapEncodedSize(db: Database<unknown, Key>): void {
    const encoder = (db as unknown as { encoder?: { encode(value: unknown, mode?: number): Buffer & { start?: number; end?: number } } }).encoder;
    if (!encoder) throw new Error('lmdb-js has no encoder on a database: the usage counter cannot measure writes');
    const encode = encoder.encode;
    encoder.encode = (value: unknown, mode?: number) => {
      const buf = encode.call(encoder, value, mode);
      // lmdb-js's own reading of the size: a reused buffer has start and end.
      this.encodedBytes = buf.start !== undefined && buf.start > -1 ? buf.end! - buf.start : buf.length;
      return buf;
    };
  }

  /** The stored size of a value in the current transaction (0: none), without decoding it. */
  private storedBytes(db: Database<unknown, Key>, key: Key): number {
    return db.getBinaryFast(key)?.length ?? 0;
  }

  private addIndexPath(datatype: string, path: string): void {
    const list = this.indexes.get(datatype) ?? [];
    if (!list.includes(path)) list.push(path);
    this.indexes.set(datatype, list);
  }

  indexedPaths(datatype: string): readonly string[] {
    return this.indexes.get(datatype) ?? [];
  }

  async declareIndex(datatype: string, path: string): Promise<void> {
    if (this.indexedPaths(datatype).includes(path)) return;
    // Build over every tenant's records of this datatype in one transaction, then mark it built.
    await this.root.transaction(() => {
      for (const key of this.records.getKeys({})) {
        const [tenant, dt, sk] = key as [string, string, string];
        if (dt !== datatype) continue;
        const value = this.readRecord(tenant, dt, sk);
        if (value === undefined) continue;
        for (const v of indexValues(getPath(value, path))) this.index.put([tenant, datatype, path, v, sk], 1);
      }
      this.meta.put(['index', datatype, path], { builtAt: new Date().toISOString() });
    });
    this.addIndexPath(datatype, path);
  }

  /**
   * A record, or ERR_RECORD_UNREADABLE (409) when its bytes cannot be decoded (a document nested
   * deeper than msgpack's decoder can recurse, written before the document limits existed): such a
   * record fails only the request that names it, and can still be deleted (see apply).
   */
  getRecord(tenant: string, datatype: string, sk: string): StoredRecord | undefined {
    try {
      return this.records.get([tenant, datatype, sk]);
    } catch (err) {
      this.unreadable(tenant, datatype, sk, err);
      throw new AppError('ERR_RECORD_UNREADABLE', [`${datatype} ${sk}`]);
    }
  }

  /** A record for a listing: undefined (reported, counted) when it cannot be decoded. */
  private readRecord(tenant: string, datatype: string, sk: string): StoredRecord | undefined {
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

  /** Undecodable records met by reads since start (for /metrics). */
  unreadableRecords(): number {
    return this.unreadableSeen;
  }

  /** Adds undecodable records met by another handle on this environment (a query worker's). */
  noteUnreadable(n: number): void {
    this.unreadableSeen += n;
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
    await this.rawRecords.put([tenant, datatype, sk], bytes);
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

  private *candidates(tenant: string, datatype: string, filter?: Filter): Iterable<StoredRecord> {
    if (filter) {
      for (const path of this.indexedPaths(datatype)) {
        if (!(path in filter)) continue;
        const values = equalityValues(filter[path]);
        if (!values) continue;
        const seen = new Set<string>();
        const sks: string[] = [];
        for (const v of values) {
          for (const key of this.index.getKeys({
            start: [tenant, datatype, path, v],
            end: [tenant, datatype, path, v, HIGH],
          })) {
            const sk = (key as IndexValue[])[4] as string;
            if (!seen.has(sk)) {
              seen.add(sk);
              sks.push(sk);
            }
          }
        }
        sks.sort();
        for (const sk of sks) {
          const r = this.readRecord(tenant, datatype, sk);
          if (r) yield r;
        }
        return;
      }
    }
    yield* this.datatypeRecords(tenant, datatype);
  }

  candidatesUpTo(tenant: string, datatype: string, filter: Filter | undefined, cap: number): number {
    let n = 0;
    // The same choice as candidates(): the first indexed path the filter names by equality.
    if (filter) {
      for (const path of this.indexedPaths(datatype)) {
        if (!(path in filter)) continue;
        const values = equalityValues(filter[path]);
        if (!values) continue;
        for (const v of values) {
          // Keys only, stopping at the cap (lmdb-js's getKeysCount takes no limit).
          for (const _ of this.index.getKeys({ start: [tenant, datatype, path, v], end: [tenant, datatype, path, v, HIGH], limit: cap - n })) n++;
          if (n >= cap) return cap;
        }
        return n;
      }
    }
    for (const _ of this.records.getKeys({ start: [tenant, datatype], end: [tenant, datatype, HIGH], limit: cap })) n++;
    return n;
  }

  find(tenant: string, datatype: string, filter?: Filter, opts: FindOptions = {}) {
    return runQuery(this.candidates(tenant, datatype, filter), filter, opts, this.limits);
  }

  scan(tenant: string, datatype: string, filter?: Filter): StoredRecord[] {
    const q = filter && Object.keys(filter).length ? compileFilter(filter) : undefined;
    const out: StoredRecord[] = [];
    for (const r of this.candidates(tenant, datatype, filter)) if (!q || q.test(r)) out.push(r);
    return out;
  }

  count(tenant: string, datatype: string, filter?: Filter): number {
    if (!filter || Object.keys(filter).length === 0) {
      return this.records.getKeysCount({ start: [tenant, datatype], end: [tenant, datatype, HIGH] });
    }
    return this.scan(tenant, datatype, filter).length;
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
    this.journal = journal;
    return replayed;
  }

  /**
   * Replays what a journal in `dir` holds (an earlier run's) into LMDB without keeping a journal:
   * for a start whose settings journal nothing, after a run that did. Resolves with the writes.
   */
  async replayJournal(dir: string): Promise<number> {
    const replayed = await this.openJournal({ dir, sync: 'commit', intervalMs: 60_000 });
    const journal = this.journal!;
    this.journal = undefined;
    await journal.close();
    return replayed;
  }

  readLog<T>(tenant: string, log: string, fromSeq = 0, limit?: number): LogEntry<T>[] {
    const journaled = this.journal?.logEntries(tenant, log, fromSeq);
    if (journaled && journaled.length > 0) {
      // Journaled entries are the newest, but LMDB may hold some of them already: merge by seq.
      const bySeq = new Map<number, unknown>();
      for (const e of this.readLogStored(tenant, log, fromSeq, limit)) bySeq.set(e.seq, e.entry);
      for (const e of journaled) bySeq.set(e.seq, e.entry);
      const out = [...bySeq].sort((a, b) => a[0] - b[0]).map(([seq, entry]) => ({ seq, entry: entry as T }));
      return limit === undefined ? out : out.slice(0, limit);
    }
    return this.readLogStored(tenant, log, fromSeq, limit);
  }

  private readLogStored<T>(tenant: string, log: string, fromSeq: number, limit?: number): LogEntry<T>[] {
    const out: LogEntry<T>[] = [];
    for (const { key, value } of this.logs.getRange({
      start: [tenant, log, fromSeq],
      end: [tenant, log, Number.MAX_SAFE_INTEGER],
      limit,
    })) {
      out.push({ seq: (key as [string, string, number])[2], entry: value as T });
    }
    return out;
  }

  lastLogSeq(tenant: string, log: string): number {
    const journaled = this.journal?.lastSeq(tenant, log) ?? 0;
    return Math.max(journaled, this.lastStoredSeq(tenant, log));
  }

  private lastStoredSeq(tenant: string, log: string): number {
    for (const key of this.logs.getKeys({
      start: [tenant, log, Number.MAX_SAFE_INTEGER],
      end: [tenant, log, 0],
      reverse: true,
      limit: 1,
    })) {
      return (key as [string, string, number])[2];
    }
    return 0;
  }

  getKv<T>(tenant: string, ns: string, key: string): T | undefined {
    const journaled = this.journal?.kv(tenant, ns, key);
    if (journaled) return journaled.deleted ? undefined : (journaled.value as T);
    return this.kv.get([tenant, ns, key]) as T | undefined;
  }

  listKv<T>(tenant: string, ns: string): Array<{ key: string; value: T }> {
    const out: Array<{ key: string; value: T }> = [];
    const journaled = this.journal?.kvEntries(tenant, ns);
    for (const { key, value } of this.kv.getRange({ start: [tenant, ns], end: [tenant, ns, HIGH] })) {
      const k = (key as string[])[2];
      if (journaled?.has(k)) continue;
      out.push({ key: k, value: value as T });
    }
    if (journaled && journaled.size > 0) {
      for (const [key, p] of journaled) if (!p.deleted) out.push({ key, value: p.value as T });
      // LMDB's order: keys by their UTF-8 bytes.
      out.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
    }
    return out;
  }

  getOrg(orgId: string): Org | undefined {
    const hit = this.orgCache.get(orgId);
    if (hit !== undefined) return hit;
    const org = this.orgs.get(orgId);
    if (org !== undefined) {
      if (this.orgCache.size >= ORG_CACHE_MAX) this.orgCache.clear();
      this.orgCache.set(orgId, org);
    }
    return org;
  }

  listOrgs(): Org[] {
    return [...this.orgs.getRange({}).map(({ value }) => value)];
  }

  /**
   * The first failed condition of the batch against what is stored now, or null. `seen` (see
   * RecordsRead) keeps the records it read, so a commit does not read them again to re-index.
   */
  conflictOf(batch: WriteBatch, seen?: RecordsRead): [string, number, number] | null {
    for (const o of batch.ops) {
      if (o.op === 'putRecord' && o.ifVersion !== undefined) {
        const r = o.record;
        const rec = this.getRecord(r.pk, r.datatype, r.sk);
        seen?.set(recordKey(r.pk, r.datatype, r.sk), rec ?? null);
        const stored = rec?.version ?? 0;
        if (stored !== o.ifVersion) return [`${r.datatype} ${r.sk}`, o.ifVersion, stored];
      } else if (o.op === 'deleteRecord' && o.ifVersion !== undefined) {
        const rec = this.getRecord(o.tenant, o.datatype, o.sk);
        seen?.set(recordKey(o.tenant, o.datatype, o.sk), rec ?? null);
        const stored = rec?.version ?? 0;
        if (stored !== o.ifVersion) return [`${o.datatype} ${o.sk}`, o.ifVersion, stored];
      }
    }
    return null;
  }

  /** A record as the current transaction holds it, through `seen` when the batch read it already. */
  private recordIn(seen: RecordsRead, tenant: string, datatype: string, sk: string): StoredRecord | undefined {
    const hit = seen.get(recordKey(tenant, datatype, sk));
    if (hit !== undefined) return hit ?? undefined;
    return this.records.get([tenant, datatype, sk]);
  }

  /** The stored mark of `key` as [seq, n] ([0, 0] when nothing was applied). */
  appliedMark(key: string): [number, number] {
    return (this.meta.get(['applied', key]) as [number, number] | undefined) ?? [0, 0];
  }

  commit(batch: WriteBatch): Promise<void> {
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
              for (const o of batch.ops) if (o.op === 'append') this.assertSize(o.entry, `log ${o.log} entry ${o.seq}`);
              else if (o.op === 'putKv') this.assertSize(o.value, `${o.ns} ${o.key}`);
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
    return (await this.write(batch, mark)) !== ALREADY_APPLIED;
  }

  /** `replay`: the batch's log appends may be in LMDB already (a journal's, see apply). */
  private async write(batch: WriteBatch, mark: AppliedMark | undefined, replay = false): Promise<void | typeof ALREADY_APPLIED> {
    if (this.closed) throw new AppError('ERR_UNAVAILABLE', ['the store is closed']);
    if (batch.size === 0 && mark === undefined) return;
    // A child transaction, so a batch that throws half-way (a key LMDB refuses, say) is rolled
    // back whole instead of leaving its first writes in the shared transaction. A batch of one
    // unconditional append or kv put (a door scan's log entry) cannot fail half-way: it runs in the
    // turn's transaction as it is, sparing LMDB a child transaction begun and merged per batch.
    const single = mark === undefined && batch.ops.length === 1 && (batch.ops[0].op === 'append' || batch.ops[0].op === 'putKv');
    const writes = () => {
      try {
        return this.apply(batch, mark, replay);
      } catch (err) {
        // Structures msgpack saved in the rolled-back child are gone from `meta`: make the encoders
        // load them again rather than write values that point at structures never stored.
        for (const db of [this.records, this.logs]) {
          const st = (db as unknown as { encoder?: { structures?: { uninitialized?: boolean } } }).encoder?.structures;
          if (st) st.uninitialized = true;
        }
        throw err;
      }
    };
    const transaction = single ? this.root.transactionAsync(writes) : this.root.childTransaction(writes);
    let conflict: Awaited<typeof transaction>;
    try {
      conflict = await transaction;
    } finally {
      // Landed (or failed): the next read of a written organisation goes to the store.
      if (this.orgCache.size > 0) {
        for (const o of batch.ops) {
          if (o.op === 'putOrg') this.orgCache.delete(o.org.orgId);
          else if (o.op === 'patchOrg') this.orgCache.delete(o.orgId);
        }
      }
    }
    if (conflict === ALREADY_APPLIED) return conflict;
    if (conflict) throw new AppError('ERR_VERSION_CONFLICT', conflict);
  }

  /** The writes of one batch, inside its transaction: the failed condition, or null when written. */
  private apply(batch: WriteBatch, mark: AppliedMark | undefined, replay = false): [string, number, number] | typeof ALREADY_APPLIED | null {
    if (mark !== undefined) {
      const [seq, n] = this.appliedMark(mark.key);
      if (seq > mark.seq || (seq === mark.seq && n >= mark.n)) return ALREADY_APPLIED;
      this.meta.put(['applied', mark.key], [mark.seq, mark.n]);
    }
    // Check every condition first so a conflicting batch writes nothing.
    const seen: RecordsRead = new Map();
    const failed = this.conflictOf(batch, seen);
    if (failed) return failed;
    const delta = this.delta;
    delta.clear();
    for (const o of batch.ops) {
      switch (o.op) {
        case 'putRecord': {
          const r = o.record;
          this.assertSize(r, `${r.datatype} ${r.sk}`);
          assertDocument(r, this.documentLimits, `record ${r.datatype} ${r.sk}`);
          // The record it replaces matters only to re-index it (read once, see conflictOf).
          if (this.indexedPaths(r.datatype).length > 0) this.reindex(r.pk, r.datatype, r.sk, this.recordIn(seen, r.pk, r.datatype, r.sk), r);
          const key = [r.pk, r.datatype, r.sk];
          const was = this.storedBytes(this.records, key);
          this.records.put(key, r);
          const grew = this.encodedBytes - was;
          const d = delta.of(r.pk);
          d.records += grew;
          if (this.quota && !this.quota.exemptDatatypes.has(r.datatype)) d.enforced += grew;
          if (seen.size > 0) seen.set(recordKey(r.pk, r.datatype, r.sk), r);
          break;
        }
        case 'deleteRecord': {
          let old: StoredRecord | undefined;
          try {
            old = this.recordIn(seen, o.tenant, o.datatype, o.sk);
          } catch {
            // Undecodable: its index entries cannot be derived from it, so look them up.
            this.unindex(o.tenant, o.datatype, o.sk);
          }
          if (old) this.reindex(o.tenant, o.datatype, o.sk, old, undefined);
          const key = [o.tenant, o.datatype, o.sk];
          const was = this.storedBytes(this.records, key);
          if (was > 0) delta.of(o.tenant).records -= was;
          this.records.remove(key);
          if (seen.size > 0) seen.set(recordKey(o.tenant, o.datatype, o.sk), null);
          break;
        }
        case 'append': {
          this.assertSize(o.entry, `log ${o.log} entry ${o.seq}`);
          // A log's writer owns its sequence, so an append adds an entry (the door's hot path skips
          // a lookup); only a journal's replay may write one LMDB holds already, whose size comes off.
          const key = [o.tenant, o.log, o.seq];
          const was = replay ? this.storedBytes(this.logs, key) : 0;
          this.logs.put(key, o.entry);
          delta.of(o.tenant).records += this.encodedBytes - was;
          break;
        }
        case 'putKv': {
          this.assertSize(o.value, `${o.ns} ${o.key}`);
          const key = [o.tenant, o.ns, o.key];
          const was = this.storedBytes(this.kv, key);
          this.kv.put(key, o.value);
          delta.of(o.tenant).records += this.encodedBytes - was;
          break;
        }
        case 'deleteKv': {
          const key = [o.tenant, o.ns, o.key];
          const was = this.storedBytes(this.kv, key);
          if (was > 0) delta.of(o.tenant).records -= was;
          this.kv.remove(key);
          break;
        }
        case 'media': {
          const d = delta.of(o.tenant);
          if (o.counted) {
            d.mediaCounted = o.bytes;
            d.media = 0;
          } else d.media += o.bytes;
          break;
        }
        case 'putOrg':
          this.orgs.put(o.org.orgId, o.org);
          break;
        case 'patchOrg': {
          // Read inside the transaction: the organisation as every earlier commit (and earlier
          // ops of this batch) left it.
          const org = this.orgs.get(o.orgId);
          if (!org) throw new AppError('ERR_NOT_FOUND', [`organisation ${o.orgId}`]);
          this.orgs.put(o.orgId, { ...org, ...o.fields, orgId: org.orgId });
          break;
        }
      }
    }
    for (const d of delta.entries()) this.countUsage(d);
    return null;
  }

  /**
   * Adds one tenant's changes to its stored counter, in the batch's transaction; growth past a
   * quota throws ERR_STORAGE_QUOTA, which rolls the batch back (see write).
   */
  private countUsage(d: UsageDelta): void {
    if (d.records === 0 && d.media === 0 && d.mediaCounted === undefined) return;
    const tenant = d.tenant!;
    const key = ['usage', tenant];
    const c = (this.meta.get(key) as UsageCounter | undefined) ?? [0, 0, 0];
    const records = c[0] + d.records;
    const media = (d.mediaCounted ?? c[1]) + d.media;
    if (this.quota && (d.enforced > 0 || d.media > 0)) {
      // Read in the transaction, not through the cache: a batch may create the organisation.
      const limits = this.quota.limitsOf(tenant, this.orgs.get(tenant));
      if (limits) {
        if (d.enforced > 0 && limits.recordBytes !== null && records > limits.recordBytes) {
          throw new AppError('ERR_STORAGE_QUOTA', [d.records, 'record bytes', records, limits.plan, limits.recordBytes, c[0], limits.plan]);
        }
        if (d.media > 0 && limits.mediaBytes !== null && media > limits.mediaBytes) {
          throw new AppError('ERR_STORAGE_QUOTA', [d.media, 'media bytes', media, limits.plan, limits.mediaBytes, c[1], limits.plan]);
        }
      }
    }
    this.meta.put(key, [records, media, d.mediaCounted !== undefined ? 1 : c[2]] satisfies UsageCounter);
  }

  usage(tenant: string): StorageUsage & { mediaCounted: boolean } {
    const c = this.meta.get(['usage', tenant]) as UsageCounter | undefined;
    return { recordBytes: c?.[0] ?? 0, mediaBytes: c?.[1] ?? 0, mediaCounted: c?.[2] === 1 };
  }

  usages(): Array<{ tenant: string } & StorageUsage> {
    const out: Array<{ tenant: string } & StorageUsage> = [];
    for (const { key, value } of this.meta.getRange({ start: ['usage'], end: ['usage', HIGH] })) {
      const c = value as UsageCounter;
      out.push({ tenant: (key as [string, string])[1], recordBytes: c[0], mediaBytes: c[1] });
    }
    return out;
  }

  /**
   * A tenant's record bytes counted from scratch, by walking what it stores (no decoding): what the
   * counter must equal. For checks and tests; the counter is what requests read.
   */
  measureRecordBytes(tenant: string): number {
    let bytes = 0;
    for (const name of ['records', 'logs', 'kv']) {
      const db = this.root.openDB<Buffer, Key>({ name, encoding: 'binary' });
      for (const { value } of db.getRange({ start: [tenant], end: [tenant, HIGH] })) bytes += value.length;
    }
    return bytes;
  }

  /**
   * Counts the record bytes of data stored before usage was counted, once per data directory: one
   * pass over the stored values' sizes (no decoding) in one transaction, so no write lands between
   * the count and the counters. Run at start-up before the server takes requests, after the write
   * journal was replayed. Answers what it counted, or undefined when the count ran before.
   */
  backfillUsage(): { tenants: number; entries: number } | undefined {
    if (this.meta.get(['usage-counted']) !== undefined) return undefined;
    const raw = ['records', 'logs', 'kv'].map((name) => this.root.openDB<Buffer, Key>({ name, encoding: 'binary' }));
    return this.root.transactionSync(() => {
      const totals = new Map<string, number>();
      let entries = 0;
      for (const db of raw) {
        for (const { key, value } of db.getRange({})) {
          const tenant = (key as string[])[0];
          totals.set(tenant, (totals.get(tenant) ?? 0) + value.length);
          entries++;
        }
      }
      // Counters written by earlier commits of this run hold the same bytes; only media is kept.
      for (const { key } of this.meta.getRange({ start: ['usage'], end: ['usage', HIGH] })) {
        const tenant = (key as [string, string])[1];
        if (!totals.has(tenant)) totals.set(tenant, 0);
      }
      for (const [tenant, bytes] of totals) {
        const c = this.meta.get(['usage', tenant]) as UsageCounter | undefined;
        this.meta.put(['usage', tenant], [bytes, c?.[1] ?? 0, c?.[2] ?? 0] satisfies UsageCounter);
      }
      this.meta.put(['usage-counted'], { at: new Date().toISOString() });
      return { tenants: totals.size, entries };
    });
  }

  /** Refuses a value whose encoding would pass maxRecordBytes (see documentBytesOver). */
  private assertSize(value: unknown, what: string): void {
    if (documentBytesOver(value, this.maxRecordBytes) > this.maxRecordBytes) {
      throw new AppError('ERR_RECORD_TOO_LARGE', [what, this.maxRecordBytes]);
    }
  }

  /** Removes every index entry of one record, found by looking (the record cannot be read). */
  private unindex(tenant: string, datatype: string, sk: string): void {
    for (const path of this.indexedPaths(datatype)) {
      for (const key of this.index.getKeys({ start: [tenant, datatype, path], end: [tenant, datatype, path, HIGH] })) {
        if ((key as IndexValue[])[4] === sk) this.index.remove(key);
      }
    }
  }

  private reindex(
    tenant: string,
    datatype: string,
    sk: string,
    before: StoredRecord | undefined,
    after: StoredRecord | undefined,
  ): void {
    for (const path of this.indexedPaths(datatype)) {
      const was = before ? getPath(before, path) : undefined;
      const now = after ? getPath(after, path) : undefined;
      // The same value (or the same array, as a shallow copy of `data` keeps it): nothing to move.
      if (before && after && was === now) continue;
      const oldV = before ? indexValues(was) : [];
      const newV = after ? indexValues(now) : [];
      for (const v of oldV) if (!newV.includes(v)) this.index.remove([tenant, datatype, path, v, sk]);
      for (const v of newV) if (!oldV.includes(v)) this.index.put([tenant, datatype, path, v, sk], 1);
    }
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

  async close(): Promise<void> {
    if (this.closed) return;
    await this.journal?.close();
    this.floor?.close();
    this.closed = true;
    await this.root.flushed;
    await this.root.close();
  }
}

/** Whether a batch writes anything beyond deletes (which a full disk must still take). */
function addsData(batch: WriteBatch): boolean {
  return batch.ops.some((o) => o.op !== 'deleteRecord' && o.op !== 'deleteKv' && !(o.op === 'media' && o.bytes <= 0));
}

/** A batch's log and kv writes as journal ops (undefined if it writes anything else). */
function journalOps(batch: WriteBatch): JournalOp[] | undefined {
  const ops: JournalOp[] = [];
  for (const o of batch.ops) {
    if (o.op === 'append') ops.push(['a', o.tenant, o.log, o.seq, o.entry]);
    else if (o.op === 'putKv') ops.push(['k', o.tenant, o.ns, o.key, o.value]);
    else if (o.op === 'deleteKv') ops.push(['d', o.tenant, o.ns, o.key]);
    else return undefined;
  }
  return ops;
}

/** Journal ops back as one batch for LMDB. */
function journalBatch(ops: JournalOp[]): WriteBatch {
  const batch = new WriteBatch();
  for (const op of ops) {
    if (op[0] === 'a') batch.append(op[1], op[2], op[3], op[4]);
    else if (op[0] === 'k') batch.putKv(op[1], op[2], op[3], op[4]);
    else batch.deleteKv(op[1], op[2], op[3]);
  }
  return batch;
}
