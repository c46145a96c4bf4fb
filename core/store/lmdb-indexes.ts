// Secondary indexes of the LMDB store: declared paths per datatype (built online over every
// tenant's records), entries [tenant, datatype, path, value, sk] kept in the transaction of the
// record's write, and the equality lookups that narrow a query's candidates.
import type { Database, Key, RootDatabase } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
import { equalityValues, indexValues, type IndexValue } from './index-values.js';
import { getPath, type Filter } from './query.js';
import type { StoredRecord } from './record.js';

/** The index a filter's equality can use: the first declared path it names by equality. */
export interface IndexLookup {
  path: string;
  values: IndexValue[];
}

export class LmdbIndexes {
  private readonly paths = new Map<string, string[]>();

  constructor(
    private readonly root: RootDatabase,
    private readonly meta: Database<unknown, Key>,
    private readonly index: Database<number, Key>,
  ) {
    for (const { key } of this.meta.getRange({ start: ['index'], end: ['index', HIGH] })) {
      const [, datatype, path] = key as [string, string, string];
      this.addPath(datatype, path);
    }
  }

  private addPath(datatype: string, path: string): void {
    const list = this.paths.get(datatype) ?? [];
    if (!list.includes(path)) list.push(path);
    this.paths.set(datatype, list);
  }

  pathsOf(datatype: string): readonly string[] {
    return this.paths.get(datatype) ?? [];
  }

  /** Builds the index over every tenant's records of `datatype` in one transaction, then marks it built. */
  async declare(datatype: string, path: string, records: Iterable<[tenant: string, sk: string]>, read: (tenant: string, sk: string) => StoredRecord | undefined): Promise<void> {
    if (this.pathsOf(datatype).includes(path)) return;
    await this.root.transaction(() => {
      for (const [tenant, sk] of records) {
        const value = read(tenant, sk);
        if (value === undefined) continue;
        for (const v of indexValues(getPath(value, path))) this.index.put([tenant, datatype, path, v, sk], 1);
      }
      this.meta.put(['index', datatype, path], { builtAt: new Date().toISOString() });
    });
    this.addPath(datatype, path);
  }

  lookupFor(datatype: string, filter: Filter | undefined): IndexLookup | undefined {
    if (!filter) return undefined;
    for (const path of this.pathsOf(datatype)) {
      if (!(path in filter)) continue;
      const values = equalityValues(filter[path]);
      if (!values) continue;
      return { path, values };
    }
    return undefined;
  }

  /** The ids the lookup names, once each, in id order. */
  sks(tenant: string, datatype: string, { path, values }: IndexLookup): string[] {
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
    return sks;
  }

  /** Entries the lookup names, counted up to `cap` (keys only). */
  countUpTo(tenant: string, datatype: string, { path, values }: IndexLookup, cap: number): number {
    let n = 0;
    for (const v of values) {
      // Keys only, stopping at the cap (lmdb-js's getKeysCount takes no limit).
      for (const _ of this.index.getKeys({ start: [tenant, datatype, path, v], end: [tenant, datatype, path, v, HIGH], limit: cap - n })) n++;
      if (n >= cap) return cap;
    }
    return n;
  }

  /** Removes every index entry of one record, found by looking (the record cannot be read). */
  unindex(tenant: string, datatype: string, sk: string): void {
    for (const path of this.pathsOf(datatype)) {
      for (const key of this.index.getKeys({ start: [tenant, datatype, path], end: [tenant, datatype, path, HIGH] })) {
        if ((key as IndexValue[])[4] === sk) this.index.remove(key);
      }
    }
  }

  reindex(tenant: string, datatype: string, sk: string, before: StoredRecord | undefined, after: StoredRecord | undefined): void {
    for (const path of this.pathsOf(datatype)) {
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
}
