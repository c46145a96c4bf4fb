// Key-value entries of the LMDB store ([tenant, ns, key] → value): reads see the write journal's
// entries first, as they are newer than LMDB's.
import type { Database, Key } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
import type { KvRange } from './store.js';
import type { WriteJournal } from './write-journal.js';

export class LmdbKv {
  /** Set while a write journal is open (LmdbStore.openJournal). */
  journal?: WriteJournal;

  constructor(private readonly kv: Database<unknown, Key>) {}

  get<T>(tenant: string, ns: string, key: string): T | undefined {
    const journaled = this.journal?.kv(tenant, ns, key);
    if (journaled) return journaled.deleted ? undefined : (journaled.value as T);
    return this.kv.get([tenant, ns, key]) as T | undefined;
  }

  list<T>(tenant: string, ns: string): Array<{ key: string; value: T }> {
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

  /**
   * At most `limit` entries of a namespace in key order (descending with `reverse`), strictly past
   * `after` and before `until` in that order: a read of a page costs its page, not the namespace.
   * The journal's entries of the namespace (few: they move to LMDB every interval) are merged in;
   * each can hide at most one LMDB entry, so reading that many more from LMDB still fills the page.
   */
  range<T>(tenant: string, ns: string, r: KvRange): Array<{ key: string; value: T }> {
    const limit = Math.max(0, Math.floor(r.limit));
    if (limit === 0) return [];
    const journaled = this.journal?.kvEntries(tenant, ns);
    const extra = journaled?.size ?? 0;
    const inRange = (k: string): boolean =>
      r.reverse ? (r.after === undefined || k < r.after) && (r.until === undefined || k > r.until) : (r.after === undefined || k > r.after) && (r.until === undefined || k < r.until);
    const out: Array<{ key: string; value: T }> = [];
    const range = r.reverse
      ? { start: [tenant, ns, r.after ?? HIGH], end: r.until === undefined ? [tenant, ns] : [tenant, ns, r.until], reverse: true }
      : { start: r.after === undefined ? [tenant, ns] : [tenant, ns, r.after], end: [tenant, ns, r.until ?? HIGH] };
    for (const { key, value } of this.kv.getRange({ ...range, limit: limit + extra + 1 })) {
      const k = (key as string[])[2];
      if (!inRange(k) || journaled?.has(k)) continue;
      out.push({ key: k, value: value as T });
      if (out.length >= limit + extra) break;
    }
    if (journaled && extra > 0) {
      for (const [key, p] of journaled) if (!p.deleted && inRange(key)) out.push({ key, value: p.value as T });
      const cmp = (a: { key: string }, b: { key: string }) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
      out.sort(r.reverse ? (a, b) => cmp(b, a) : cmp);
    }
    return out.length > limit ? out.slice(0, limit) : out;
  }
}
