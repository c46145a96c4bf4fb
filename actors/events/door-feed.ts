// The door feed (GET /events/:id/door-feed): what a scanner device needs to decide scans with no
// network, as a full sync and then deltas.
//
// Two logs say what changed, each with a sequence: the change log of tickets and lists
// (actors/scanner/door-feed.ts, written in the batch of each change) and the door's own scan log
// (every scan's one write, `scan:<eventId>`): a successful scan or annulment changes its ticket's
// door, and reading it costs the door nothing, where a feed entry per admitted ticket doubled the
// writes behind a rush. A cursor holds a watermark in each.
//
// A full sync (no cursor) first notes both watermarks, then pages through the event's tickets by id
// on the `data.event` index (a keyset: a page costs the same at ticket 999,000 as at ticket 0),
// then goes on from the watermarks: a change committed while the pages were read has a later
// sequence, so it comes in the deltas, and nothing is lost to writes racing the pages (pretix's
// X-Page-Generated idea). A delta reads the change log, then the scan log, from its cursor. Either
// way a page reads at most `limit` tickets and a bounded stretch of each log.
//
// The cursor is opaque base64url of the phase and positions, bound to its event; one that does not
// decode, names another event or a position past a log is a 400.
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { eventConfig, SECRET_NS, TICKET, ticketOfEvent } from '../event-records/index.js';
import { CHECKIN_LIST, codeTag, FEED_SEQ_NS, feedNs, SCAN_LOG_PREFIX, type DoorsOf, type FeedEntry, type FeedListDoor, type ScanEntry } from '../scanner/index.js';
import type { EventsApi, EventsDeps } from './api.js';

export const FEED_DEFAULT_LIMIT = 500;
export const FEED_MAX_LIMIT = 1000;

export interface FeedTicket {
  id: string;
  number: string;
  codeTag: string | null;
  ticketTypeId: string;
  holderName: string | null;
  status: string;
  requiresActivation: boolean;
  activated: boolean;
  checkedIn: boolean;
  lists: Record<string, FeedListDoor>;
}

export interface FeedList {
  id: string;
  name: string;
  ticketTypeIds: string[] | null;
  zones: string[] | null;
  allowReentry: boolean | null;
  allowMultipleEntries: boolean;
  rules: { validFrom: string | null; validUntil: string | null; maxEntries: number | null; maxEntriesPerDay: number | null; weekdays: number[] | null };
}

export type RevokeReason = 'refunded' | 'cancelled' | 'deleted' | 'transferred';

export interface FeedPage {
  event: {
    id: string;
    timezone: string;
    allowReentry: boolean;
    codeWindowSeconds: number;
    codeSkewSeconds: number;
    zones: Array<{ id: string; name: string; capacity: number | null }>;
  };
  tickets: FeedTicket[];
  lists: FeedList[];
  revoked: Array<{ id: string; reason: RevokeReason; at: string }>;
  cursor: string;
  complete: boolean;
}

/**
 * Where a sync stands. Full: tickets of index value `v` (0: the event's id, 1: its slug, which
 * records written around the routes may carry) after id `a`, then the change log after `w` and the
 * scan log after `x`. Delta: the change log after `s`, the scan log after `d`.
 */
type Cursor = { e: string; w: number; x: number; v: 0 | 1; a: string | null } | { e: string; s: number; d: number };

const CURSOR_MAX_CHARS = 1024;

function encode(c: Cursor): string {
  return Buffer.from(JSON.stringify(c)).toString('base64url');
}

const isSeq = (x: unknown, max: number): x is number => typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 && x <= max;

/** The cursor `text` of event `eventId`, or a 400: it must be one this feed answered (`last`, `lastScan`: the logs' watermarks now). */
function decode(text: string, eventId: string, last: number, lastScan: number): Cursor {
  const bad = (why: string) => appError('ERR_VALIDATION', `query/since is not a cursor of this feed (${why}): start a full sync without it`);
  if (text.length > CURSOR_MAX_CHARS || !/^[A-Za-z0-9_-]+$/.test(text)) throw bad('not base64url');
  let c: unknown;
  try {
    c = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw bad('garbled');
  }
  if (typeof c !== 'object' || c === null || Array.isArray(c)) throw bad('garbled');
  const o = c as Record<string, unknown>;
  if (o.e !== eventId) throw bad('another event');
  const keys = Object.keys(o).sort().join(',');
  if (keys === 'd,e,s' && isSeq(o.s, last) && isSeq(o.d, lastScan)) return { e: eventId, s: o.s, d: o.d };
  if (keys === 'a,e,v,w,x' && isSeq(o.w, last) && isSeq(o.x, lastScan) && (o.v === 0 || o.v === 1) && (o.a === null || (typeof o.a === 'string' && o.a.length > 0 && o.a.length <= 256))) {
    return { e: eventId, w: o.w, x: o.x, v: o.v, a: o.a };
  }
  throw bad('garbled');
}

const iso = (ms: number): string => new Date(ms).toISOString();
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

function feedList(rec: StoredRecord): FeedList {
  const d = rec.data as Record<string, any>;
  const r = (d.rules ?? {}) as Record<string, unknown>;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : null);
  const int = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) ? v : null);
  return {
    id: rec.sk,
    name: typeof d.name === 'string' ? d.name : '',
    ticketTypeIds: strings(d.ticketTypeIds),
    zones: strings(d.zones),
    allowReentry: typeof d.allowReentry === 'boolean' ? d.allowReentry : null,
    allowMultipleEntries: d.allowMultipleEntries === true,
    rules: {
      validFrom: str(r.validFrom),
      validUntil: str(r.validUntil),
      maxEntries: int(r.maxEntries),
      maxEntriesPerDay: int(r.maxEntriesPerDay),
      weekdays: Array.isArray(r.weekdays) ? r.weekdays.filter((x): x is number => typeof x === 'number') : null,
    },
  };
}

function feedTicket(store: Store, tenant: string, t: StoredRecord): FeedTicket {
  const d = t.data as Record<string, any>;
  const secret = store.getKv<string>(tenant, SECRET_NS, t.sk);
  const status = typeof d.status === 'string' ? d.status : 'valid';
  return {
    id: t.sk,
    number: typeof d.number === 'string' ? d.number : String(d.number ?? ''),
    codeTag: secret ? codeTag(secret) : null,
    ticketTypeId: String(d.ticketTypeId ?? ''),
    holderName: str(d.holderName),
    status,
    requiresActivation: d.requiresActivation === true,
    activated: typeof d.activatedAt === 'string' && d.activatedAt !== '',
    checkedIn: status === 'checked_in' || Boolean(d.checkedInAt),
    lists: {},
  };
}

/** A refunded or cancelled ticket's revocation. */
function statusRevocation(t: StoredRecord): { id: string; reason: RevokeReason; at: string } | undefined {
  const d = t.data as Record<string, any>;
  if (d.status === 'refunded') return { id: t.sk, reason: 'refunded', at: str(d.refundedAt) ?? t.modifydate };
  if (d.status === 'cancelled') return { id: t.sk, reason: 'cancelled', at: str(d.cancelledAt) ?? t.modifydate };
  return undefined;
}

/** Log slots a delta page looks at, at most, in each log: the change log has gaps where entries were replaced, the scan log repeats tickets and holds denials. */
const slotBudget = (limit: number): number => Math.max(2000, 8 * limit);

/** Scan log entries read at once. */
const SCAN_PAGE = 256;

export async function doorFeed(svc: EventsApi<EventsDeps>, tenant: string, evRec: StoredRecord, since: string | undefined, limit: number): Promise<FeedPage> {
  const store = svc.deps.store;
  const ev = eventConfig(evRec);
  // First, the watermarks: every change committed up to them is in what is read after them.
  const last = store.getKv<number>(tenant, FEED_SEQ_NS, ev.id) ?? 0;
  const scanLog = SCAN_LOG_PREFIX + ev.id;
  const lastScan = store.lastLogSeq(tenant, scanLog);
  const cursor: Cursor = since === undefined ? { e: ev.id, w: last, x: lastScan, v: 0, a: null } : decode(since, ev.id, last, lastScan);
  const page: FeedPage = {
    event: {
      id: ev.id,
      timezone: ev.timezone,
      allowReentry: ev.allowReentry,
      codeWindowSeconds: ev.codeWindowMs / 1000,
      codeSkewSeconds: ev.codeSkewMs / 1000,
      zones: ev.zones.map((z) => ({ id: z.id, name: z.name, capacity: z.capacity })),
    },
    tickets: [],
    lists: [],
    revoked: [],
    cursor: '',
    complete: false,
  };
  let listsChanged = since === undefined;
  if ('w' in cursor) {
    // Full sync: tickets by id, the event's id first, then its slug.
    const values = ev.slug !== '' && ev.slug !== ev.id ? [ev.id, ev.slug] : [ev.id];
    let v: number = cursor.v;
    let after: string | undefined = cursor.a ?? undefined;
    let more = false;
    while (v < values.length) {
      const want = limit - page.tickets.length;
      // One id more than the page takes: whether more follow is known without another call.
      const ids = store.idsByIndex(tenant, TICKET, 'data.event', values[v], after, want + 1);
      const take = ids.slice(0, want);
      for (const id of take) {
        const t = store.getRecord(tenant, TICKET, id);
        // Gone since the index was read, or (a write around the routes) not this event's: the log says.
        if (!t || !ticketOfEvent(t, ev)) continue;
        page.tickets.push(feedTicket(store, tenant, t));
        const r = statusRevocation(t);
        if (r) page.revoked.push(r);
      }
      if (ids.length > want) {
        if (take.length > 0) after = take[take.length - 1];
        more = true;
        break;
      }
      v++;
      after = undefined;
    }
    if (more) page.cursor = encode({ e: ev.id, w: cursor.w, x: cursor.x, v: v as 0 | 1, a: after ?? null });
    else {
      page.cursor = encode({ e: ev.id, s: cursor.w, d: cursor.x });
      page.complete = cursor.w === last && cursor.x === lastScan;
    }
  } else {
    // Delta: the change log after the cursor, up to its watermark; then the scan log.
    const ns = feedNs(ev.id);
    const end = Math.min(last, cursor.s + slotBudget(limit));
    let seq = cursor.s;
    const seen = new Set<string>();
    while (seq < end && page.tickets.length + page.revoked.length < limit) {
      seq++;
      const e = store.getKv<FeedEntry>(tenant, ns, String(seq));
      if (!e) continue;
      if (e.l !== undefined) {
        listsChanged = true;
        continue;
      }
      const id = e.t;
      if (id === undefined || seen.has(id)) continue;
      seen.add(id);
      const t = store.getRecord(tenant, TICKET, id);
      if (!t || !ticketOfEvent(t, ev)) {
        page.revoked.push({ id, reason: 'deleted', at: iso(e.at) });
        continue;
      }
      page.tickets.push(feedTicket(store, tenant, t));
      // A transfer after the cursor voids the codes the reader has (the ticket's new codeTag is in `tickets`).
      if (e.tr && e.tr.seq > cursor.s) page.revoked.push({ id, reason: 'transferred', at: iso(e.tr.at) });
      const r = statusRevocation(t);
      if (r) page.revoked.push(r);
    }
    // The tickets whose door changed: successful scans and annulments (a denial changes nothing).
    let scanSeq = cursor.d;
    if (seq === last) {
      const scanEnd = Math.min(lastScan, cursor.d + slotBudget(limit));
      let full = false;
      while (!full && scanSeq < scanEnd) {
        const entries = store.readLog<ScanEntry>(tenant, scanLog, scanSeq + 1, Math.min(SCAN_PAGE, scanEnd - scanSeq));
        if (entries.length === 0) break;
        for (const { seq: n, entry: e } of entries) {
          if (n > scanEnd) break;
          if (page.tickets.length + page.revoked.length >= limit) {
            full = true;
            break;
          }
          scanSeq = n;
          const id = e.ticketId;
          if (!e.ok || id === null || seen.has(id)) continue;
          seen.add(id);
          const t = store.getRecord(tenant, TICKET, id);
          if (!t || !ticketOfEvent(t, ev)) continue;
          page.tickets.push(feedTicket(store, tenant, t));
          const r = statusRevocation(t);
          if (r) page.revoked.push(r);
        }
      }
    }
    page.cursor = encode({ e: ev.id, s: seq, d: scanSeq });
    page.complete = seq === last && scanSeq === lastScan;
  }
  if (listsChanged) page.lists = store.scan(tenant, CHECKIN_LIST, { 'data.event': ev.id }).map(feedList);
  if (page.tickets.length > 0) {
    // Each ticket's door on the lists, from the scanner's memory (its records hold no per-list state).
    // Each ticket's door from the scanner's memory: its records hold no per-list state, and a scan
    // read from the log may still be on its way into the record.
    const doors = await svc.scanner<DoorsOf>(tenant, ev.id, { type: 'door-of', ticketIds: page.tickets.map((t) => t.id) });
    for (const t of page.tickets) {
      t.lists = doors.lists[t.id] ?? {};
      const f = doors.fields[t.id];
      if (f) {
        t.status = f.status;
        t.checkedIn = f.checkedIn;
      }
    }
  }
  return page;
}
