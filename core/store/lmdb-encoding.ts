// How the LMDB store encodes: key bounds, msgpack structures shared per database, and the size of
// each value as it is encoded (the usage counter's measure).
import type { Database, Key, RootDatabase } from 'lmdb';

/** Sorts after every id, key and sequence we write (ids are hex, keys are short strings). */
export const HIGH = '\uffff';

/** Property names worth a shared structure: identifiers, not ids or numbers used as keys. */
const STRUCTURE_KEY = /^(?![0-9a-f]{24}$)[A-Za-z_$][A-Za-z0-9_$-]{0,63}$/;

/**
 * msgpackr record structures shared by every value of a database, kept in `meta` under
 * ['structures', name] and written in the transaction of the first value that uses a new one.
 * Without them each value carries its own key lists and every read parses them again (a ticket
 * read took ~3 µs to decode instead of ~0.8 µs, and took 450 bytes instead of 250). Values
 * written before (own structures) still decode. Objects keyed by ids (maps of counts and the
 * like) are not shared, so dynamic keys cannot use up the slots.
 */
export function sharedStructures(root: RootDatabase, meta: Database<unknown, Key>, name: string): object {
  const key = ['structures', name];
  return {
    maxSharedStructures: 512,
    shouldShareStructure: (keys: string[]) => keys.length <= 64 && keys.every((k) => STRUCTURE_KEY.test(k)),
    getStructures: () => meta.get(key),
    saveStructures: (structures: unknown[], isCompatible: boolean | ((existing: unknown) => boolean)) =>
      // Inside a write transaction this runs in it (flags without ABORTABLE), like lmdb-js's own.
      root.transactionSync(() => {
        const existing = meta.get(key) as unknown[] | undefined;
        const compatible = typeof isCompatible === 'function' ? isCompatible(existing) : !existing || existing.length === (isCompatible as unknown);
        if (!compatible) return false;
        void meta.put(key, structures);
        return true;
      }, 0x10000),
  };
}

/** After a write rolled back: structures msgpack saved in it are gone from `meta`, so load them again. */
export function forgetSavedStructures(dbs: ReadonlyArray<Database<unknown, Key>>): void {
  for (const db of dbs) {
    const st = (db as unknown as { encoder?: { structures?: { uninitialized?: boolean } } }).encoder?.structures;
    if (st) st.uninitialized = true;
  }
}

/**
 * The size of the last value a tapped database encoded, read right after a put: the exact stored
 * size at no cost, where encoding again or reading the value back would cost a second pass on
 * every write. lmdb-js encodes a put's value synchronously inside the put.
 */
export class EncodedSize {
  bytes = 0;

  tap(db: Database<unknown, Key>): void {
    const encoder = (db as unknown as { encoder?: { encode(value: unknown, mode?: number): Buffer & { start?: number; end?: number } } }).encoder;
    if (!encoder) throw new Error('lmdb-js has no encoder on a database: the usage counter cannot measure writes');
    const encode = encoder.encode;
    encoder.encode = (value: unknown, mode?: number) => {
      const buf = encode.call(encoder, value, mode);
      // lmdb-js's own reading of the size: a reused buffer has start and end.
      this.bytes = buf.start !== undefined && buf.start > -1 ? buf.end! - buf.start : buf.length;
      return buf;
    };
  }
}

/** The stored size of a value in the current transaction (0: none), without decoding it. */
export function storedBytes(db: Database<unknown, Key>, key: Key): number {
  return db.getBinaryFast(key)?.length ?? 0;
}
