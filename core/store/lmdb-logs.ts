// Append-only logs of the LMDB store ([tenant, log, seq] → entry): reads merge what the write
// journal holds and LMDB does not have yet.
import type { Database, Key } from 'lmdb';
import type { LogEntry } from './store.js';
import type { WriteJournal } from './write-journal.js';

export class LmdbLogs {
  /** Set while a write journal is open (LmdbStore.openJournal). */
  journal?: WriteJournal;

  constructor(private readonly logs: Database<unknown, Key>) {}

  read<T>(tenant: string, log: string, fromSeq = 0, limit?: number): LogEntry<T>[] {
    const journaled = this.journal?.logEntries(tenant, log, fromSeq);
    if (journaled && journaled.length > 0) {
      // Journaled entries are the newest, but LMDB may hold some of them already: merge by seq.
      const bySeq = new Map<number, unknown>();
      for (const e of this.readStored(tenant, log, fromSeq, limit)) bySeq.set(e.seq, e.entry);
      for (const e of journaled) bySeq.set(e.seq, e.entry);
      const out = [...bySeq].sort((a, b) => a[0] - b[0]).map(([seq, entry]) => ({ seq, entry: entry as T }));
      return limit === undefined ? out : out.slice(0, limit);
    }
    return this.readStored(tenant, log, fromSeq, limit);
  }

  private readStored<T>(tenant: string, log: string, fromSeq: number, limit?: number): LogEntry<T>[] {
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

  lastSeq(tenant: string, log: string): number {
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
}
