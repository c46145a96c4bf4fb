// Key-value entries of the LMDB store ([tenant, ns, key] → value): reads see the write journal's
// entries first, as they are newer than LMDB's.
import type { Database, Key } from 'lmdb';
import { HIGH } from './lmdb-encoding.js';
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
}
