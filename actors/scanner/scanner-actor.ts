// The door-scanning actor, one per event (key: the event id). Every check-in, check-out and
// validation of the event is decided here, one message at a time, so two gates scanning one
// ticket at the same moment get exactly one success. The decision is synchronous and touches
// memory plus a couple of LMDB key reads. A scan's one durable write is its scan log entry (an
// append): the runtime releases the answer once it is committed (the output gate), so an
// acknowledged scan survives kill -9. The ticket record learns its door fields (status, inside,
// zone, check-in times) behind, in batches (`materialize`); until then they live in the door's
// memory (door-fields.ts), which this actor reads through, and every other reader waits for the
// read barrier (door-backlog.ts). A random ticket page written and flushed per scan bounded the
// door; the log is append-shaped.
//
// State: the door (who is inside, occupancy, counters, offline nonces, fields not yet in the
// records), rebuilt on activation by replaying the scan log; codes resolve through their
// `ticket_code` claims and ticket bodies are read from LMDB, so activation costs the same for
// 1,000 or 1,000,000 tickets.
import type { ActorContext, ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { isValidTimeZone } from '../../core/timezone.js';
import { recordIdempotent } from '../../core/idempotency.js';
import { cancelJob } from '../../core/scheduler.js';
import { nextVersion, type StoredRecord } from '../../core/store/record.js';
import { issue, ticketOp } from './ticket-ops.js';
import { EVENT, eventConfig, SOLD_NS, TICKET, ticketOfEvent, UNKNOWN_ZONE, type SoldCounts } from '../event-records/index.js';
import { DOOR_BEHIND_NS, DOOR_MATERIALIZED_NS, type MaterializeStep } from './door-backlog.js';
import { withDoor, type DoorPatch } from './door-fields.js';
import { DoorState, ListDoor, type NonceResult } from './door-state.js';
import type { CheckinStats, Counts, ZoneOccupancy } from './door-tally.js';
import { type CheckinList, listRefusal } from './checkin-list.js';
import { armExitAll, listOp, loadLists } from './list-ops.js';
import type { AnnulledScan, ScanEntry } from './scan-entry.js';
import { scanItem, type ScanLogItem } from './scan-log.js';
import { DOOR_NOTICE_MS, doorScannedSubject, doorView } from './door-view.js';
import { byCredentialCode, byStaticCode, type Located, type RecordReader } from './locate.js';
import { RecordOverlay } from './record-overlay.js';
import { FeedLog, listDoorsOf, type DoorsOf } from './door-feed.js';
import { readTicket, type ScannerState } from './state.js';
import { parseDynamicCode, parseStaticCode } from './ticket-code.js';
import { doorKeys, qrCodes, rotateDoorKeys, signedCodeRefusal } from './door-keys.js';
import {
  type AnnulMsg,
  type BatchItemError,
  type BatchItemReply,
  type DenialReason,
  type ScanInput,
  SCANNER,
  type ScannerMsg,
  type ScanReply,
  type ValidateReply,
  type WalkInResult,
} from './messages.js';

const PAGE = 4096;

/** One list's figures in the stats' `byList`. */
export interface ListFigures {
  name: string;
  total: number;
  successful: number;
  denied: number;
  uniqueAttendees: number;
  checkouts: Counts;
  inside: number;
  /** Offline admissions on the list the server would have refused; absent when none (the figures of a list without are as before). */
  conflicts?: number;
}

export const SCAN_LOG_PREFIX = 'scan:';

/** The event's time zone, UTC for one this runtime does not know (a record written around the routes). */
function zoneOf(st: ScannerState): string {
  return st.ev && isValidTimeZone(st.ev.timezone) ? st.ev.timezone : 'UTC';
}

function activate(ctx: ActivationContext): ScannerState {
  const rec = ctx.store.getRecord(ctx.tenant, EVENT, ctx.key);
  const log = SCAN_LOG_PREFIX + ctx.key;
  const st: ScannerState = {
    tenant: ctx.tenant,
    eventId: ctx.key,
    ev: rec ? eventConfig(rec) : undefined,
    door: new DoorState(),
    overlay: new RecordOverlay(ctx.store, ctx.tenant, () => ctx.store.lastLogSeq(ctx.tenant, log)),
    secrets: new Map(),
    sold: ctx.store.getKv<SoldCounts>(ctx.tenant, SOLD_NS, ctx.key) ?? { total: 0, byType: {} },
    log,
    store: ctx.store,
    behindKv: ctx.store.getKv(ctx.tenant, DOOR_BEHIND_NS, ctx.key) !== undefined,
    lists: new Map(),
    feed: new FeedLog(ctx.store, ctx.tenant, ctx.key),
  };
  loadLists(st);
  st.door.timezone = zoneOf(st);
  // Entries past the watermark rebuild the door fields the records do not have yet.
  st.door.materialized = ctx.store.getKv<number>(ctx.tenant, DOOR_MATERIALIZED_NS, ctx.key) ?? 0;
  // Replay the scan log page by page: memory stays flat however long the log is.
  let from = 1;
  for (;;) {
    const page = ctx.store.readLog<ScanEntry>(ctx.tenant, st.log, from, PAGE);
    for (const e of page) st.door.apply(e.entry, e.seq);
    if (page.length < PAGE) break;
    from = st.door.seq + 1;
  }
  // Scans of lists deleted since are in the event's counts only.
  for (const id of st.door.lists.keys()) if (!st.lists.has(id)) st.door.lists.delete(id);
  // A crash left fields behind: materialization resumes.
  if (st.door.behind.size > 0) ctx.services.doorBacklog.fellBehind(ctx.tenant, ctx.key, st.door.seq);
  return st;
}

/** Reads a record as this actor last wrote it; a ticket with the door fields the log holds. */
function reader(st: ScannerState): RecordReader {
  return (datatype, sk) => (datatype === TICKET ? readTicket(st, sk) : st.overlay.get(datatype, sk));
}

interface Resolved {
  ticket?: StoredRecord;
  reason?: DenialReason;
}

/**
 * Resolution in the spec's order: dynamic QR (and, with it, the signed static code), static code
 * (as typed, upper, lower), credential. A code shaped like a signed one that does not verify is
 * still tried as a static and a credential code (a static code may contain colons); only when
 * neither matches does the signature or window failure become the answer.
 */
function resolve(st: ScannerState, code: string, at: number): Resolved {
  const read = reader(st);
  let failed: DenialReason | undefined;
  const dyn = parseDynamicCode(code);
  const signed = dyn ?? parseStaticCode(code);
  if (signed) {
    const t = readTicket(st, signed.ticketId);
    if (t) {
      failed = signedCodeRefusal(st, t.sk, dyn ? dyn.timestamp : 'S', signed.signature, at);
      if (!failed) return { ticket: t };
    }
  }
  const t = byStaticCode(read, code) ?? byCredentialCode(read, code);
  if (t) return { ticket: t };
  return { reason: failed ?? 'invalid_code' };
}

/**
 * Why `t` may not enter `zone` at `at` (on `list`, when the scan names one); undefined when it may.
 */
function refusal(st: ScannerState, t: StoredRecord, zone: string, list: CheckinList | undefined, at: number): DenialReason | undefined {
  const ev = st.ev!;
  if (!ticketOfEvent(t, ev)) return 'wrong_event';
  const d = t.data;
  if (d.status === 'cancelled') return 'cancelled';
  if (d.status === 'refunded') return 'refunded';
  if (d.requiresActivation === true && !d.activatedAt) return 'not_active';
  if (list) {
    const r = listRefusal(st.door, ev, list, t, at);
    if (r) return r;
    // A ticket let in again while inside (multiple entries) moving within its zone takes no new place.
    if (st.door.lists.get(list.id)?.inside.get(t.sk) === zone) return undefined;
  } else {
    if (st.door.inside.has(t.sk)) return 'already_checked_in';
    // With re-entry off, a ticket that ever entered stays used (spec: status remains checked_in).
    if (!ev.allowReentry && (d.status === 'checked_in' || d.checkedInAt)) return 'already_checked_in';
  }
  const z = ev.zoneById.get(zone);
  if (z && z.capacity !== null && st.door.occupancy(zone) >= z.capacity) return 'zone_full';
  return undefined;
}

/** The event's list `id`; a 404 when it has none (deleted since the edge looked). */
function listNamed(st: ScannerState, id: string | undefined): CheckinList | undefined {
  if (id === undefined) return undefined;
  const list = st.lists.get(id);
  if (!list) throw appError('ERR_NOT_FOUND', `check-in list ${id} of event ${st.eventId}`);
  return list;
}

/** A scan log entry for `s`, denied until the decision says otherwise. */
export function scanEntry(kind: 'in' | 'out', s: ScanInput, by: string | null, now: number): ScanEntry {
  const at = s.scannedAt ?? now;
  const e: ScanEntry = {
    at,
    kind,
    ok: false,
    reason: null,
    ticketId: null,
    zone: s.zone ?? UNKNOWN_ZONE,
    from: null,
    checkpoint: s.checkpoint ?? null,
    nonce: s.nonce ?? null,
    first: false,
    by,
    device: s.device ?? null,
    receivedAt: at === now ? null : now,
    code: null,
  };
  // Only scans naming a list carry the field: the log of an event without lists is as it was.
  if (s.list !== undefined) e.list = s.list;
  return e;
}

/** Logs `e` and applies it; answers the ticket's door fields not yet in its record (see DoorState.apply). */
function record(st: ScannerState, ctx: ActorContext, e: ScanEntry): DoorPatch | undefined {
  const seq = st.door.seq + 1;
  const caughtUp = st.door.behind.size === 0;
  const patch = st.door.apply(e, seq);
  ctx.batch.append(st.tenant, st.log, seq, e);
  notice(st, ctx, e.receivedAt ?? e.at);
  if (caughtUp && st.door.behind.size > 0) {
    // Falling behind is noted in the store once (not per scan), so a restart's first read knows.
    if (!st.behindKv) {
      ctx.batch.putKv(st.tenant, DOOR_BEHIND_NS, st.eventId, 1);
      st.behindKv = true;
    }
    ctx.services.doorBacklog.fellBehind(st.tenant, st.eventId, seq);
  }
  return patch;
}

/**
 * Tells the live door views (edge/routes/events/door-view.ts) that a scan of the event is
 * committing: published after the commit, at most once per DOOR_NOTICE_MS. A scan inside that gap
 * is still shown: a view reads the door DOOR_NOTICE_MS or more after the notice it acts on.
 * `now` is the entry's receipt time (no clock read of its own on the scan path).
 */
function notice(st: ScannerState, ctx: ActorContext, now: number): void {
  if (st.noticeAt !== undefined && now - st.noticeAt < DOOR_NOTICE_MS && now >= st.noticeAt) return;
  st.noticeAt = now;
  ctx.publish(doorScannedSubject(st.tenant, st.eventId), 1);
}

/** The ticket as a successful entry left it: `p` is what `record` answered for it. */
function after(t: StoredRecord, p: DoorPatch | undefined): StoredRecord {
  return p ? withDoor(t, p) : t;
}

/**
 * Writes the door fields of up to `max` tickets (those that fell behind first) into their
 * records, and the watermark: every log entry up to it is in the records. Answers how many
 * tickets are still behind and the last scan seen.
 */
function materialize(st: ScannerState, ctx: ActorContext, max: number): MaterializeStep {
  const now = ctx.clock.now();
  let n = 0;
  for (const [id, p] of st.door.behind) {
    if (n++ >= max) break;
    st.door.behind.delete(id);
    const t = st.overlay.get(TICKET, id);
    // Deleted since (its event was): nothing to write.
    if (!t) continue;
    const v = withDoor(t, p);
    st.overlay.put(ctx.batch, nextVersion(t, { state: v.state, data: v.data }, now), t.version);
    // The door feed learns door changes from the scan log itself (actors/events/door-feed.ts): no entry here.
  }
  const first = st.door.behind.values().next();
  const upto = first.done ? st.door.seq : first.value.since - 1;
  if (upto > st.door.materialized) {
    st.door.materialized = upto;
    ctx.batch.putKv(st.tenant, DOOR_MATERIALIZED_NS, st.eventId, upto);
  }
  if (first.done) {
    if (st.behindKv) ctx.batch.deleteKv(st.tenant, DOOR_BEHIND_NS, st.eventId);
    st.behindKv = false;
  }
  // The backlog lets the event go once this step has committed (door-backlog.ts), not now: until
  // then a reader must still wait for it.
  return { left: st.door.behind.size, seq: st.door.seq };
}

/** A nonce seen before: the original answer, counted once (offline scanners retry). */
function replay(st: ScannerState, seen: NonceResult): ScanReply {
  const reply: ScanReply = { success: seen.ok };
  if (seen.reason) reply.reason = seen.reason as DenialReason;
  if (seen.offline) {
    reply.offline = true;
    if (seen.conflict !== undefined) {
      reply.conflict = true;
      reply.conflictReason = seen.conflict as DenialReason;
    }
    if (seen.ticketId) reply.ticketId = seen.ticketId;
    return reply;
  }
  if (seen.ticketId) {
    const t = readTicket(st, seen.ticketId);
    if (t) reply.ticket = t;
  }
  return reply;
}

/** Logs a refused scan (no ticket matched: `invalid_code`) and answers it. */
function deny(st: ScannerState, ctx: ActorContext, e: ScanEntry, t: StoredRecord | undefined, reason: DenialReason | undefined): ScanReply {
  e.reason = reason ?? 'invalid_code';
  record(st, ctx, e);
  return t ? { success: false, reason: e.reason as DenialReason, ticket: t } : { success: false, reason: e.reason as DenialReason };
}

/** Lets `t` in (or refuses it), logs the scan. `t` is undefined when the code matched nothing. */
function enter(st: ScannerState, ctx: ActorContext, s: ScanInput, by: string | null, t: StoredRecord | undefined, reason: DenialReason | undefined): ScanReply {
  const now = ctx.clock.now();
  const e = scanEntry('in', s, by, now);
  if (t) {
    e.ticketId = t.sk;
    reason = refusal(st, t, e.zone, listNamed(st, s.list), e.at);
  } else if (s.code !== undefined) {
    e.code = s.code.length > 256 ? s.code.slice(0, 256) : s.code;
  }
  if (reason !== undefined || !t) return deny(st, ctx, e, t, reason);
  e.ok = true;
  e.first = !t.data.checkedInAt;
  // The log entry is the scan's one write; the record learns it behind (materialize).
  const reply: ScanReply = { success: true, ticket: after(t, record(st, ctx, e)) };
  if (ctx.services.webhooks.wants(st.tenant, CHECKED_IN)) doorWebhook(st, ctx, CHECKED_IN, e, reply);
  return reply;
}

const CHECKED_IN = 'ticket.checked_in';
const CHECKED_OUT = 'ticket.checked_out';

/**
 * Queues a door webhook event in the scan's own batch: `data` is the scan result and where it
 * happened. Called only when an endpoint wants it (one map lookup otherwise).
 */
function doorWebhook(st: ScannerState, ctx: ActorContext, type: string, e: ScanEntry, reply: ScanReply): void {
  const data = {
    success: true,
    // As the catalogue documents it (core/webhooks/catalogue.ts), not the log's `in`/`out`.
    direction: e.kind === 'in' ? 'checkin' : 'checkout',
    eventId: st.eventId,
    zone: e.zone,
    ...(e.list !== undefined ? { listId: e.list } : {}),
    checkpoint: e.checkpoint,
    deviceId: e.device,
    scannedAt: new Date(e.at).toISOString(),
    ticket: reply.ticket,
    // An offline device's decision, uploaded later: `scannedAt` is when it let the ticket in.
    ...(e.offline ? { offline: true } : {}),
    ...(e.conflict !== undefined ? { conflict: true, conflictReason: e.conflict } : {}),
  };
  ctx.services.webhooks.queue(ctx.batch, st.tenant, type, data, e.receivedAt ?? e.at);
}

function checkIn(st: ScannerState, ctx: ActorContext, s: ScanInput, by: string | null): ScanReply {
  if (s.nonce) {
    const seen = st.door.nonces.get(s.nonce);
    if (seen) return replay(st, seen);
  }
  const r = located(st, s) ?? resolve(st, s.code ?? '', s.scannedAt ?? ctx.clock.now());
  return enter(st, ctx, s, by, r.ticket, r.reason);
}

function checkOut(st: ScannerState, ctx: ActorContext, s: ScanInput, by: string | null): ScanReply {
  if (s.nonce) {
    const seen = st.door.nonces.get(s.nonce);
    if (seen) return replay(st, seen);
  }
  const now = ctx.clock.now();
  const e = scanEntry('out', s, by, now);
  const found = scannedTicket(st, s, e.at, true);
  const t = found.ticket;
  let reason = found.reason;
  // Who is inside is the list's when the scan names one, else the event's own door's.
  const door = s.list !== undefined ? st.door.lists.get(listNamed(st, s.list)!.id) : st.door;
  if (t) {
    e.ticketId = t.sk;
    if (!ticketOfEvent(t, st.ev!)) reason = 'wrong_event';
    else if (!door?.inside.has(t.sk)) reason = 'not_checked_in';
  } else if (s.code !== undefined) {
    e.code = s.code.length > 256 ? s.code.slice(0, 256) : s.code;
  }
  if (reason !== undefined || !t) return deny(st, ctx, e, t, reason);
  e.ok = true;
  e.from = door!.inside.get(t.sk)!;
  if (s.zone === undefined) e.zone = e.from;
  // Status stays checked_in (spec: States and transitions); the ticket is just no longer inside.
  const reply: ScanReply = { success: true, ticket: after(t, record(st, ctx, e)) };
  if (ctx.services.webhooks.wants(st.tenant, CHECKED_OUT)) doorWebhook(st, ctx, CHECKED_OUT, e, reply);
  return reply;
}

/**
 * A scan an offline device decided (`s.offline`), uploaded in a batch: the device's decision is
 * recorded as made, at its `scannedAt`, received now; it is never decided again. The server's own
 * decision only marks an admission it would have refused as a conflict (why: `conflictReason`),
 * which still counts as a successful entry. A ticket of the event is placed as the entry says (a
 * ticket already inside on the scan's door moves there, counted once inside, as a multiple-entry
 * list moves it); a code matching no ticket of the event places no one (its text is kept).
 * The answer names the ticket (`ticketId`) instead of carrying it: the device has it from its
 * feed, and 500 tickets would make an upload's answer ~350 KB on the venue's poor network.
 */
function offlineScan(st: ScannerState, ctx: ActorContext, kind: 'in' | 'out', s: ScanInput, by: string | null): ScanReply {
  const seen = s.nonce ? st.door.nonces.get(s.nonce) : undefined;
  if (seen) return replay(st, seen);
  const now = ctx.clock.now();
  const e = scanEntry(kind, s, by, now);
  e.receivedAt = now;
  e.offline = true;
  const found = scannedTicket(st, s, e.at, kind === 'out');
  const t = found.ticket;
  let own = found.reason;
  const ours = t !== undefined && ticketOfEvent(t, st.ev!);
  const list = s.list !== undefined ? st.lists.get(s.list) : undefined;
  const door = list ? st.door.lists.get(list.id) : st.door;
  if (!t) own ??= 'invalid_code';
  else if (!ours) own = 'wrong_event';
  else if (kind === 'in') own = refusal(st, t, e.zone, list, e.at);
  else if (!door?.inside.has(t.sk)) own = 'not_checked_in';
  const keepCode = () => {
    if (s.code !== undefined) e.code = s.code.length > 256 ? s.code.slice(0, 256) : s.code;
  };
  if (s.offline!.decision === 'denied') {
    e.reason = s.offline!.reason ?? own ?? null;
    if (t) e.ticketId = t.sk;
    else keepCode();
    record(st, ctx, e);
    const reply: ScanReply = { success: false, offline: true };
    if (e.reason !== null) reply.reason = e.reason as DenialReason;
    if (t) reply.ticketId = t.sk;
    return reply;
  }
  e.ok = true;
  if (own !== undefined) e.conflict = own;
  const reply: ScanReply = { success: true, offline: true };
  if (own !== undefined) {
    reply.conflict = true;
    reply.conflictReason = own;
  }
  if (!t || !ours) {
    // Nothing of this event to place (and a ticket of another event is that event's scanner's to write).
    keepCode();
    record(st, ctx, e);
    return reply;
  }
  e.ticketId = t.sk;
  if (kind === 'in') e.first = !t.data.checkedInAt;
  else {
    e.from = door?.inside.get(t.sk) ?? null;
    if (s.zone === undefined && e.from !== null) e.zone = e.from;
  }
  record(st, ctx, e);
  reply.ticketId = t.sk;
  // Integrators hear of an offline admission when it is uploaded, as of a scan made online.
  const type = kind === 'in' ? CHECKED_IN : CHECKED_OUT;
  if (ctx.services.webhooks.wants(st.tenant, type)) doorWebhook(st, ctx, type, e, { success: true, ticket: readTicket(st, t.sk) ?? t });
  return reply;
}

/** The error a batch item answers in its slot. */
function itemError(message: string): BatchItemError {
  return { success: false, error: { statusCode: 400, error: 'Bad Request', message } };
}

/**
 * A batch's scans of this event, each answering in its own slot. Offline scans are decided in the
 * order they were made (`scannedAt`, ties as sent), in the slots offline scans hold; online scans
 * keep their place. The log keeps the order decided, so a replay folds the same door. A scan
 * naming a list deleted since the edge looked answers a 400 in its slot; the others commit.
 */
function batch(st: ScannerState, ctx: ActorContext, by: string | null, scans: Array<ScanInput & { direction: 'in' | 'out' }>): BatchItemReply[] {
  const order = scans.map((_, i) => i);
  const off = order.filter((i) => scans[i].offline !== undefined);
  if (off.length > 1) {
    const sorted = [...off].sort((a, b) => (scans[a].scannedAt ?? 0) - (scans[b].scannedAt ?? 0) || a - b);
    off.forEach((slot, k) => (order[slot] = sorted[k]));
  }
  const out: BatchItemReply[] = new Array(scans.length);
  for (const i of order) {
    const s = scans[i];
    const replayed = s.nonce !== undefined && st.door.nonces.has(s.nonce);
    if (s.list !== undefined && !st.lists.has(s.list) && !replayed) {
      out[i] = itemError(`body/scans/${i}/listId: check-in list ${s.list} of event ${st.eventId} not found (deleted)`);
    } else if (s.offline) out[i] = offlineScan(st, ctx, s.direction, s, by);
    else out[i] = s.direction === 'out' ? checkOut(st, ctx, s, by) : checkIn(st, ctx, s, by);
  }
  return out;
}

/** The ticket a scan names: by `ticketId` when `byId` allows it (a check-out), else by its code. */
function scannedTicket(st: ScannerState, s: ScanInput, at: number, byId: boolean): Resolved {
  if (byId && s.ticketId !== undefined) {
    const t = readTicket(st, s.ticketId);
    return t ? { ticket: t } : { reason: 'invalid_code' };
  }
  return located(st, s) ?? resolve(st, s.code ?? '', at);
}

/**
 * A static or credential code the edge already resolved (it had to, to find the event): one read
 * of the ticket by id instead of the lookup again. A dynamic code is still verified here.
 */
function located(st: ScannerState, s: ScanInput): Resolved | undefined {
  const l = s.located;
  if (!l || l.dynamic) return undefined;
  const t = readTicket(st, l.ticketId);
  return t ? { ticket: t } : undefined;
}

function validate(st: ScannerState, code: string, zone: string | undefined, listId: string | undefined, now: number, hint: Located | undefined): ValidateReply {
  const list = listNamed(st, listId);
  const r = located(st, { located: hint }) ?? resolve(st, code, now);
  if (!r.ticket) return { valid: false, reason: r.reason ?? 'invalid_code' };
  const reason = refusal(st, r.ticket, zone ?? UNKNOWN_ZONE, list, now);
  return reason ? { valid: false, reason, ticket: r.ticket } : { valid: true, ticket: r.ticket };
}

/** Each list's figures beside the event's (`byList`); narrowed to `list` when given. */
function stats(st: ScannerState, list: CheckinList | undefined): CheckinStats & { byList: Record<string, ListFigures> } {
  const figures = (l: CheckinList): ListFigures => {
    const d = st.door.lists.get(l.id);
    const s = d ? d.stats() : new ListDoor().stats();
    const f: ListFigures = { name: l.name, total: s.total, successful: s.successful, denied: s.denied, uniqueAttendees: s.uniqueAttendees, checkouts: s.checkouts, inside: s.inside };
    if (s.conflicts > 0) f.conflicts = s.conflicts;
    return f;
  };
  if (list) {
    const d = st.door.lists.get(list.id) ?? new ListDoor();
    return { ...d.stats(), byList: { [list.id]: figures(list) } };
  }
  const byList: Record<string, ListFigures> = {};
  for (const l of st.lists.values()) byList[l.id] = figures(l);
  return { ...st.door.stats(), byList };
}

/**
 * The door of each ticket as this actor knows it now, for the door feed: its status and whether it
 * ever entered (with the door fields not yet in its record), and its entries and presence per list.
 * The feed reads a scan from the log only once it is committed, so its effect is here by then.
 */
function doorsOf(st: ScannerState, ids: readonly string[]): DoorsOf {
  const fields: DoorsOf['fields'] = {};
  for (const id of ids) {
    const t = readTicket(st, id);
    if (!t) continue;
    const status = typeof t.data.status === 'string' ? t.data.status : 'valid';
    fields[id] = { status, checkedIn: status === 'checked_in' || Boolean(t.data.checkedInAt) };
  }
  return { lists: listDoorsOf(st.door, ids), fields };
}

/** What an annulment answers, the same every time it is asked: the scan (now annulled) and the annulment, as the scan log lists them. */
export interface AnnulReply {
  scan: ScanLogItem;
  annulment: ScanLogItem;
}

/** Log entry `seq`, as committed (an annulment's cold path: the hot path never reads the log). */
function logEntry(st: ScannerState, ctx: ActorContext, seq: number): ScanEntry | undefined {
  const got = ctx.store.readLog<ScanEntry>(st.tenant, st.log, seq, 1)[0];
  return got && got.seq === seq ? got.entry : undefined;
}

/** Whether ticket `id` has a successful entry at the event that still stands, other than scan `except`. */
function entersElsewhere(st: ScannerState, ctx: ActorContext, id: string, except: number, exceptList: string | undefined): boolean {
  for (const [listId, ld] of st.door.lists) {
    const n = ld.entries.get(id) ?? 0;
    if (n > (listId === exceptList ? 1 : 0)) return true;
  }
  // The event's own door keeps no count: its chain of scans is walked back (entries, exits, …).
  for (let s = st.door.standing(st.door.last.get(id)); s; ) {
    const e = logEntry(st, ctx, s);
    if (!e) return false;
    if (s !== except && e.kind === 'in') return true;
    s = st.door.standing(e.prev);
  }
  return false;
}

function annulReply(st: ScannerState, seq: number, e: ScanEntry, aseq: number, a: ScanEntry): AnnulReply {
  return { scan: scanItem(st.eventId, seq, e, true), annulment: scanItem(st.eventId, aseq, a, false) };
}

/**
 * Reverses one successful scan: an entry of its own in the log, which the fold undoes
 * (DoorState.unapply). Everything the fold needs is decided here and recorded in the entry.
 */
function annul(st: ScannerState, ctx: ActorContext, msg: AnnulMsg): AnnulReply {
  const name = msg.seq !== undefined ? `scan ${st.eventId}-${msg.seq}` : `scan with nonce ${msg.nonce} at event ${st.eventId}`;
  const seq = msg.seq ?? (msg.nonce !== undefined ? st.door.nonces.get(msg.nonce)?.seq : undefined);
  const e = seq !== undefined && seq <= st.door.seq ? logEntry(st, ctx, seq) : undefined;
  if (seq === undefined || !e) throw appError('ERR_NOT_FOUND', name);
  if (e.kind === 'annul') throw appError('ERR_CONFLICT', `${name} is an annulment: it cannot be annulled`);
  if (!e.ok) throw appError('ERR_CONFLICT', `${name} was refused (${e.reason}): there is nothing to annul`);
  if (e.ticketId === null) throw appError('ERR_CONFLICT', `${name} is an offline admission of a code matching no ticket of the event: it placed no one and cannot be annulled`);
  const now = ctx.clock.now();
  if (!msg.caller.admin) {
    if (e.by !== msg.caller.id) throw appError('ERR_FORBIDDEN', `only the user or device that made ${name}, or an Admin, may annul it`);
    if (now - (e.receivedAt ?? e.at) > msg.windowMs) {
      throw appError('ERR_FORBIDDEN', `${name} was received more than ${msg.windowMs / 1000} s ago (DOOR_ANNUL_WINDOW_S): only an Admin may annul it now`);
    }
  }
  const done = st.door.annulled.get(seq);
  if (done !== undefined) {
    const a = logEntry(st, ctx, done);
    if (a) return annulReply(st, seq, e, done, a);
    // Annulled a moment ago and still committing: the same answer, from memory.
  }
  if (e.list !== undefined && !st.lists.has(e.list)) throw appError('ERR_CONFLICT', `the check-in list of ${name} was deleted`);
  const id = e.ticketId!;
  const door = e.list !== undefined ? st.door.list(e.list) : st.door;
  const latest = door.last.get(id) === seq;
  const prev = st.door.standing(e.prev);
  // Undoing the latest scan leaves the ticket as the one before it that stands: inside where an
  // entry put it, else not inside (an entry it closed may itself have been annulled).
  let restore: string | null = null;
  if (latest && prev) {
    const p = logEntry(st, ctx, prev);
    if (p?.kind === 'in') restore = p.zone;
  }
  const here = latest ? restore : (door.inside.get(id) ?? null);
  // Inside through another door (the event's own, another list): the ticket stays inside there.
  let elsewhere: string | undefined = e.list !== undefined ? st.door.inside.get(id) : undefined;
  for (const [listId, ld] of st.door.lists) {
    if (elsewhere !== undefined) break;
    if (listId !== e.list) elsewhere = ld.inside.get(id);
  }
  const annuls: AnnulledScan = {
    seq,
    kind: e.kind as 'in' | 'out',
    at: e.at,
    zone: e.zone,
    from: e.from,
    first: e.first,
    checkpoint: e.checkpoint,
    device: e.device,
    latest,
    prev,
    restore,
    none: e.kind === 'in' && !entersElsewhere(st, ctx, id, seq, e.list),
    inside: here !== null || elsewhere !== undefined,
    insideZone: here ?? elsewhere ?? null,
  };
  if (e.conflict !== undefined) annuls.conflict = e.conflict;
  const a: ScanEntry = {
    at: now,
    kind: 'annul',
    ok: true,
    reason: null,
    ticketId: id,
    zone: e.zone,
    from: null,
    checkpoint: e.checkpoint,
    nonce: null,
    first: false,
    by: msg.caller.id,
    device: msg.caller.device ?? null,
    receivedAt: null,
    code: null,
    annuls,
  };
  if (e.list !== undefined) a.list = e.list;
  if (done !== undefined) return annulReply(st, seq, e, done, a);
  const aseq = st.door.seq + 1;
  record(st, ctx, a);
  return annulReply(st, seq, e, aseq, a);
}

/**
 * A list's `exitAllAt` came: every ticket inside on it is checked out, logged as check-outs by
 * `system`, and the timer is armed for the next day in the same batch. A timer whose list is
 * gone or now says another time does nothing (its replacement, if any, is armed already).
 */
function exitAll(st: ScannerState, ctx: ActorContext, msg: { listId: string; jobId: string; at: string }): number {
  const list = st.lists.get(msg.listId);
  if (!st.ev || !list || list.exitAllAt !== msg.at) {
    // Gone (or its event is): nothing will replace the timer under its id.
    if (!st.ev || !list || list.exitAllAt === null) cancelJob(ctx, msg.jobId);
    return 0;
  }
  const ld = st.door.lists.get(list.id);
  const now = ctx.clock.now();
  let n = 0;
  for (const [id, zone] of [...(ld?.inside ?? [])]) {
    const e = scanEntry('out', { list: list.id, zone }, 'system', now);
    e.ticketId = id;
    e.ok = true;
    e.from = zone;
    record(st, ctx, e);
    n++;
  }
  armExitAll(st, ctx, list.id, list.exitAllAt);
  return n;
}

function receive(st: ScannerState, msg: ScannerMsg, ctx: ActorContext): unknown {
  if (msg.type === 'reload') {
    const rec = ctx.store.getRecord(st.tenant, EVENT, st.eventId);
    st.ev = rec ? eventConfig(rec) : undefined;
    const tz = st.door.timezone;
    st.door.timezone = zoneOf(st);
    // The event's lists go with it (actors/events deletes their records).
    loadLists(st);
    for (const id of st.door.lists.keys()) if (!st.lists.has(id)) st.door.lists.delete(id);
    // The lists' automatic check-outs are local times: a new time zone moves them.
    if (st.ev && st.door.timezone !== tz) for (const l of st.lists.values()) if (l.exitAllAt) armExitAll(st, ctx, l.id, l.exitAllAt);
    // A live door view shows the new zones and capacities.
    if (st.ev) ctx.publish(doorScannedSubject(st.tenant, st.eventId), 1);
    return true;
  }
  // Before the event check: a deleted event's backlog is still cleared.
  if (msg.type === 'materialize') return materialize(st, ctx, msg.max);
  if (msg.type === 'exit-all') return exitAll(st, ctx, msg);
  if (!st.ev) throw appError('ERR_NOT_FOUND', `event ${st.eventId}`);
  switch (msg.type) {
    case 'in':
      return checkIn(st, ctx, msg, msg.by);
    case 'out':
      return checkOut(st, ctx, msg, msg.by);
    case 'validate':
      return validate(st, msg.code, msg.zone, msg.list, ctx.clock.now(), msg.located);
    case 'batch':
      return batch(st, ctx, msg.by, msg.scans);
    case 'stats':
      return stats(st, listNamed(st, msg.list));
    case 'annul':
      return annul(st, ctx, msg);
    case 'annulled':
      return msg.seqs.map((seq) => st.door.annulled.get(seq) ?? 0);
    case 'door-of':
      return doorsOf(st, msg.ticketIds);
    case 'feed-touch':
      st.feed.ticket(ctx.batch, msg.ticketId, ctx.clock.now());
      return true;
    case 'door-view':
      return doorView(st, ctx.clock.now());

    case 'occupancy': {
      const list = listNamed(st, msg.list);
      if (!list) return st.door.occupancyByZone(st.ev) satisfies Record<string, ZoneOccupancy>;
      return (st.door.lists.get(list.id) ?? new ListDoor()).occupancyByZone(st.ev, list.zones, st.door);
    }
    case 'list-create':
    case 'list-update':
    case 'list-delete':
      return listOp(st, msg, ctx);
    case 'issue': {
      const result: WalkInResult = issue(st, msg, ctx);
      if (msg.checkIn) {
        const by = msg.by;
        result.checkins = result.tickets.map((t) => enter(st, ctx, { ...msg.checkIn }, by, t, undefined));
        // Answer the tickets as they are after entering.
        result.tickets = result.checkins.map((c, i) => c.ticket ?? result.tickets[i]);
      }
      // The answer is recorded with the effect, in the same batch (core/idempotency.ts).
      if (msg.idempotency) recordIdempotent(ctx.store, ctx.batch, st.tenant, msg.idempotency.key, msg.idempotency.print, { status: 201, body: result }, ctx.clock);
      return result;
    }
    case 'qr':
      return qrCodes(st, msg, ctx);
    case 'door-keys':
      return doorKeys(st, ctx);
    case 'door-keys-rotate':
      return rotateDoorKeys(st, ctx);
    default:
      return ticketOp(st, msg, ctx);
  }
}

export function scannerActor(opts: { idleMs?: number } = {}): ActorKind<ScannerState, ScannerMsg, unknown> {
  return {
    kind: SCANNER,
    activate,
    receive,
    // Every handler checks before it changes memory or queues a write (ticket-ops.ts; a scan
    // changes the door only with its log entry): a refusal (404, 409, 400) keeps the door's state
    // instead of replaying the scan log. Not materialize: it takes tickets off `behind` as it reads
    // them, so a read refused part-way must rebuild.
    refusalKeepsState: (_st, msg) => msg.type !== 'materialize',
    ...(opts.idleMs ? { idleMs: opts.idleMs } : {}),
  };
}
