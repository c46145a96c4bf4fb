// How the kit decides a scan with no network: the server's resolution and refusal rules
// (actors/scanner: the scanner actor's `resolve` and `refusal`, and checkin-list.ts
// `listRefusal`), over the synced feed plus the kit's own entries (door-state.ts). What only the
// server can know (zone capacity across devices, wristband credentials, legacy HMAC codes, what
// other devices did since the last sync) is not decided here: see the README's door kit section.
import { parseSignedCode, verifySigned, withinWindow } from './codes.js';
import type { LocalDoor } from './door-state.js';
import { byNumber, type EventView } from './event-view.js';
import { localDay } from './local-day.js';
import type { DenialReason, FeedList, FeedTicket } from './types.js';

export interface Resolved {
  ticket?: FeedTicket;
  /** The event whose feed holds the ticket (another one than scanned at: `wrong_event`). */
  eventId?: string;
  reason?: DenialReason;
}

/** Number index per view, rebuilt when a feed page changed the view (its `version`). */
const numbers = new WeakMap<EventView, { version: number; index: Map<string, string> }>();

function ticketByNumber(view: EventView, code: string): FeedTicket | undefined {
  let n = numbers.get(view);
  if (!n || n.version !== view.version) numbers.set(view, (n = { version: view.version, index: byNumber(view) }));
  const id = n.index.get(code.toLowerCase());
  return id === undefined ? undefined : view.tickets[id];
}

/**
 * The ticket a code names, in the server's order: a signed code first; a code shaped like one
 * that does not verify is still tried as a static code (a static code may contain colons), and
 * only when that fails is the signature or window failure the answer. `here` is the event
 * scanned at; `others` the kit's other synced events (a ticket of one of them is `wrong_event`).
 */
export function resolveCode(here: EventView, others: EventView[], code: string, at: number): Resolved {
  let failed: DenialReason | undefined;
  const signed = parseSignedCode(code);
  if (signed) {
    for (const view of [here, ...others]) {
      const t = view.tickets[signed.ticketId];
      if (!t) continue;
      const ev = view.event;
      if (!verifySigned(view.keys, signed, t.codeTag)) failed = 'bad_signature';
      else if (signed.timestamp !== null && !withinWindow(signed.timestamp, at, ev.codeWindowSeconds * 1000, ev.codeSkewSeconds * 1000)) failed = 'expired_code';
      else return { ticket: t, eventId: ev.id };
      break;
    }
  }
  for (const view of [here, ...others]) {
    const t = ticketByNumber(view, code);
    if (t) return { ticket: t, eventId: view.event.id };
  }
  return { reason: failed ?? 'invalid_code' };
}

const instant = (s: string | null): number | null => {
  const ms = s === null ? NaN : Date.parse(s);
  return Number.isNaN(ms) ? null : ms;
};

/** The list rules (checkin-list.ts `listRefusal`): the feed's counts plus this kit's entries not in them yet. */
function listRefusal(view: EventView, door: LocalDoor, list: FeedList, t: FeedTicket, at: number): DenialReason | undefined {
  if (list.ticketTypeIds && !list.ticketTypeIds.includes(t.ticketTypeId)) return 'product';
  const from = instant(list.rules.validFrom);
  const until = instant(list.rules.validUntil);
  if ((from !== null && at < from) || (until !== null && at > until)) return 'invalid_time';
  const today = localDay(at, view.event.timezone);
  if (list.rules.weekdays && !list.rules.weekdays.includes(today.weekday)) return 'invalid_time';
  const server = t.lists[list.id];
  const mine = door.entries(view.event.id, t.id, list.id);
  const entries = (server?.entries ?? 0) + mine.length;
  if (!list.allowMultipleEntries) {
    // The kit makes no check-outs: what it let in is inside.
    if (server?.inside || mine.length > 0) return 'already_checked_in';
    if (entries > 0 && !(list.allowReentry ?? view.event.allowReentry)) return 'already_checked_in';
  }
  if (list.rules.maxEntries !== null && entries >= list.rules.maxEntries) return 'max_entries';
  // The feed counts entries, not entries per day: only this kit's own entries of the day count here.
  if (list.rules.maxEntriesPerDay !== null && mine.filter((e) => e.day === today.day).length >= list.rules.maxEntriesPerDay) return 'max_entries';
  return undefined;
}

/** Why ticket `t` of the view's event may not enter (on `list`, when the scan names one); undefined when it may. */
export function refusal(view: EventView, door: LocalDoor, list: FeedList | undefined, t: FeedTicket, at: number): DenialReason | undefined {
  const revoked = view.revoked[t.id];
  if (revoked?.reason === 'cancelled' || t.status === 'cancelled') return 'cancelled';
  if (revoked?.reason === 'refunded' || t.status === 'refunded') return 'refunded';
  if (revoked) return 'invalid_code';
  if (t.requiresActivation && !t.activated) return 'not_active';
  if (list) return listRefusal(view, door, list, t, at);
  // The event's own door: inside is what this kit let in; with re-entry off, a ticket that ever entered stays used.
  if (door.entries(view.event.id, t.id, null).length > 0) return 'already_checked_in';
  if (!view.event.allowReentry && (t.status === 'checked_in' || t.checkedIn)) return 'already_checked_in';
  return undefined;
}
