// The scan log as callers read it (`GET /events/:id/scans`, the annul answer): one item per log
// entry, in log order, paged by the log's own key (the entry's sequence), so a page costs the
// same at the log's start and a million entries in. Filters are applied to the keys read, and a
// request reads a bounded number of them: a rare filter answers a short (even empty) page with
// `next`, and the caller follows it, as with any cursor API. The log is read from the store, not
// through the scanner (appends are never rewritten); only whether an entry was annulled comes
// from the scanner's memory.
import type { Store } from '../../core/store/store.js';
import type { ScanEntry } from './scan-entry.js';

/** Entries a request examines at most, matching or not. */
export const SCAN_LOG_EXAMINE = 5_000;
export const SCAN_LOG_MAX_PAGE = 500;
export const SCAN_LOG_PAGE = 100;

export interface ScanLogItem {
  /** `<eventId>-<sequence>`: names the scan to `POST /events/checkin/annul`. */
  id: string;
  at: string;
  kind: 'in' | 'out' | 'annul';
  ticketId: string | null;
  success: boolean;
  reason: string | null;
  zone: string;
  checkpoint: string | null;
  listId: string | null;
  deviceId: string | null;
  by: string | null;
  nonce: string | null;
  /** Made offline and uploaded later (`scannedAt`): `at` is when it was made. */
  offline: boolean;
  /** An offline admission the server would have refused (`conflictReason`: why); it counts as an entry. */
  conflict: boolean;
  conflictReason: string | null;
  annulled: boolean;
  /** An annulment: the scan it reversed. */
  annuls?: string;
}

export interface ScanFilter {
  listId?: string;
  deviceId?: string;
  checkpoint?: string;
  zone?: string;
  success?: boolean;
  reason?: string;
  /** Offline admissions the server would have refused (true), or the other scans (false). */
  conflict?: boolean;
  /** Received at or after (epoch ms). */
  since?: number;
}

export function scanId(eventId: string, seq: number): string {
  return `${eventId}-${seq}`;
}

/** The event and sequence a scan id names; undefined when it is not one. */
export function parseScanId(id: string): { eventId: string; seq: number } | undefined {
  const m = /^([0-9a-f]{24})-([1-9][0-9]{0,14})$/.exec(id);
  return m ? { eventId: m[1], seq: Number(m[2]) } : undefined;
}

export function scanItem(eventId: string, seq: number, e: ScanEntry, annulled: boolean): ScanLogItem {
  const item: ScanLogItem = {
    id: scanId(eventId, seq),
    at: new Date(e.at).toISOString(),
    kind: e.kind,
    ticketId: e.ticketId,
    success: e.ok,
    reason: e.reason,
    zone: e.zone,
    checkpoint: e.checkpoint,
    listId: e.list ?? null,
    deviceId: e.device,
    by: e.by,
    nonce: e.nonce,
    offline: e.offline === true || e.receivedAt !== null,
    conflict: e.conflict !== undefined,
    conflictReason: e.conflict ?? null,
    annulled,
  };
  if (e.annuls) item.annuls = scanId(eventId, e.annuls.seq);
  return item;
}

/** When the server received the entry: the log's order. */
function received(e: ScanEntry): number {
  return e.receivedAt ?? e.at;
}

function matches(e: ScanEntry, f: ScanFilter): boolean {
  return (
    (f.listId === undefined || e.list === f.listId) &&
    (f.deviceId === undefined || e.device === f.deviceId) &&
    (f.checkpoint === undefined || e.checkpoint === f.checkpoint) &&
    (f.zone === undefined || e.zone === f.zone) &&
    (f.success === undefined || e.ok === f.success) &&
    (f.reason === undefined || e.reason === f.reason) &&
    (f.conflict === undefined || (e.conflict !== undefined) === f.conflict) &&
    (f.since === undefined || received(e) >= f.since)
  );
}

/**
 * The first sequence after `after` received at or after `since`: receipt order is log order, so a
 * binary search over the log's keys (a read each, ~20 for a million entries).
 */
function firstSince(store: Store, tenant: string, log: string, after: number, last: number, since: number): number {
  let lo = after + 1;
  let hi = last + 1;
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2);
    const e = store.readLog<ScanEntry>(tenant, log, mid, 1)[0];
    if (e && received(e.entry) < since) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * Entries after sequence `after` matching `f`, up to `limit`, examining at most
 * SCAN_LOG_EXAMINE; `next` is the cursor to continue from (null: the end of the log).
 */
export function readScanLog(
  store: Store,
  tenant: string,
  log: string,
  f: ScanFilter,
  after: number,
  limit: number,
): { entries: Array<{ seq: number; entry: ScanEntry }>; next: number | null } {
  const last = store.lastLogSeq(tenant, log);
  let from = f.since === undefined ? after + 1 : firstSince(store, tenant, log, after, last, f.since);
  const entries: Array<{ seq: number; entry: ScanEntry }> = [];
  let budget = SCAN_LOG_EXAMINE;
  let seen = from - 1;
  while (from <= last && budget > 0 && entries.length < limit) {
    const chunk = store.readLog<ScanEntry>(tenant, log, from, Math.min(budget, Math.max(limit - entries.length, 100)));
    if (chunk.length === 0) break;
    for (const { seq, entry } of chunk) {
      seen = seq;
      budget--;
      if (matches(entry, f)) {
        entries.push({ seq, entry });
        if (entries.length === limit) break;
      }
    }
    from = seen + 1;
  }
  return { entries, next: seen < last ? seen : null };
}
