// Reading records from the LMDB store: one by id, a datatype's range (index-narrowed when a
// filter allows), listings and counts. A record whose bytes cannot be decoded fails only the read
// that names it, and listings skip it (reported and counted).
import type { Database, Key } from 'lmdb';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import { HIGH } from './lmdb-encoding.js';
import type { LmdbIndexes } from './lmdb-indexes.js';
import { compileFilter, runQuery, type Filter, type FindOptions, type PageLimits } from './query.js';
import type { StoredRecord } from './record.js';

export class LmdbRecords {
  /** Undecodable records met by reads since start (for /metrics). */
  unreadableSeen = 0;

  constructor(
    private readonly records: Database<StoredRecord, Key>,
    private readonly indexes: LmdbIndexes,
    private readonly limits: PageLimits,
    private readonly logger: Logger | undefined,
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

  private *candidates(tenant: string, datatype: string, filter?: Filter): Iterable<StoredRecord> {
    const lookup = this.indexes.lookupFor(datatype, filter);
    if (lookup) {
      for (const sk of this.indexes.sks(tenant, datatype, lookup)) {
        const r = this.read(tenant, datatype, sk);
        if (r) yield r;
      }
      return;
    }
    yield* this.datatypeRecords(tenant, datatype);
  }

  candidatesUpTo(tenant: string, datatype: string, filter: Filter | undefined, cap: number): number {
    // The same choice as candidates(): the first indexed path the filter names by equality.
    const lookup = this.indexes.lookupFor(datatype, filter);
    if (lookup) return this.indexes.countUpTo(tenant, datatype, lookup, cap);
    let n = 0;
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
}
