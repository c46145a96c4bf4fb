// A real store that counts the kv entries its namespace reads (listKv, rangeKv) hand back: what a
// test asserts is bounded (a page, not the whole namespace) without replacing any of the store.
import type { LmdbStore } from '../../core/store/lmdb-store.js';

export function countingKvReads(store: LmdbStore): { store: LmdbStore; read: () => number } {
  let read = 0;
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'listKv' && prop !== 'rangeKv') return typeof v === 'function' ? v.bind(target) : v;
      return (...args: unknown[]) => {
        const out = (v as (...a: unknown[]) => unknown[]).apply(target, args);
        read += out.length;
        return out;
      };
    },
  });
  return { store: counted, read: () => read };
}
