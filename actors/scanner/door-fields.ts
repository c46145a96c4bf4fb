// A ticket's door fields (status `checked_in`, `inside`, `zone`, check-in and check-out times) as
// the scan log says they are, for tickets whose record does not say so yet. The scan log is the
// door's truth: a scan commits its log entry alone, and the records are brought up to date behind,
// in batches (see materialize in scanner-actor.ts). Until then every read of such a ticket goes through
// this patch: the scanner's own reads at once, every other read after the read barrier
// (door-backlog.ts) has written it.
import type { StoredRecord } from '../../core/store/record.js';
import type { ScanEntry } from './scan-entry.js';

export interface DoorPatch {
  /** Sequence of the first log entry not yet in the record (the materialized watermark follows it). */
  since: number;
  /** A successful entry is in the patch: the status becomes `checked_in` (when live). */
  entered: boolean;
  inside: boolean;
  zone: string | null;
  /** The first entry's time, when the patch holds the ticket's first entry. */
  checkedInAt: string | null;
  lastCheckInAt: string | null;
  lastCheckOutAt: string | null;
  /** An annulment left the ticket no entry: its status goes back to valid and its check-in times go (before the rest applies). */
  reset?: boolean;
}

// Scans arriving together share their millisecond: the last one's text is kept.
let lastMs = NaN;
let lastIso = '';
function iso(ms: number): string {
  if (ms !== lastMs) {
    lastIso = new Date(ms).toISOString();
    lastMs = ms;
  }
  return lastIso;
}

/** Folds a successful scan of `e.ticketId` (entry `seq`) into its patch; `p` is the patch so far. */
export function foldPatch(p: DoorPatch | undefined, e: ScanEntry, seq: number): DoorPatch {
  const next: DoorPatch = p ?? { since: seq, entered: false, inside: false, zone: null, checkedInAt: null, lastCheckInAt: null, lastCheckOutAt: null };
  const when = iso(e.at);
  if (e.kind === 'annul') {
    const x = e.annuls!;
    next.inside = x.inside;
    next.zone = x.insideZone;
    if (x.kind === 'in' && x.none) {
      next.entered = false;
      next.reset = true;
      next.checkedInAt = null;
      next.lastCheckInAt = null;
    }
  } else if (e.kind === 'in') {
    next.entered = true;
    next.inside = true;
    next.zone = e.zone;
    if (e.first && next.checkedInAt === null) next.checkedInAt = when;
    next.lastCheckInAt = when;
  } else {
    next.inside = false;
    next.zone = null;
    next.lastCheckOutAt = when;
  }
  return next;
}

/**
 * The ticket as the log says it is. A refund or cancel written after the entry keeps its status
 * (the patch is replayed after a crash onto whatever the record holds, so it must be idempotent).
 */
export function withDoor(t: StoredRecord, p: DoorPatch): StoredRecord {
  let d = t.data;
  if (p.reset && (d.status === 'checked_in' || d.checkedInAt)) {
    d = { ...d, checkedInAt: null, lastCheckInAt: null };
    if (d.status === 'checked_in') d.status = 'valid';
    if (t.state === 'checked_in') t = { ...t, state: 'valid' };
  }
  // Object.assign and then the fields, not `{ ...d, inside, zone }`: the same keys in the same
  // order, but V8 builds the spread-with-extras one key at a time (~4.5 µs per ticket against
  // ~0.2 µs), and this runs for every successful scan's answer.
  // (A `__proto__` key would be assigned as the prototype: the edge refuses it, but a record
  // written before that rule is copied the old way.)
  const data: Record<string, unknown> = Object.hasOwn(d, '__proto__') ? { ...d } : Object.assign({}, d);
  data.inside = p.inside;
  data.zone = p.zone;
  const live = d.status === undefined || d.status === 'valid' || d.status === 'checked_in';
  if (p.entered && live) data.status = 'checked_in';
  if (p.checkedInAt !== null && !d.checkedInAt) data.checkedInAt = p.checkedInAt;
  if (p.lastCheckInAt !== null) data.lastCheckInAt = p.lastCheckInAt;
  if (p.lastCheckOutAt !== null) data.lastCheckOutAt = p.lastCheckOutAt;
  const state = p.entered && live && (t.state === undefined || t.state === 'valid' || t.state === 'checked_in') ? 'checked_in' : t.state;
  return { ...t, state, data };
}
