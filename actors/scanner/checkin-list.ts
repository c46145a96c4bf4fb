// Check-in lists: which tickets a door admits, where and when (issue 31). An event may have
// several (general admission, the VIP lounge); each keeps its own door state (door-state.ts), so a
// ticket valid on two lists enters each once, as pretix's lists do. A scan that names no list uses
// the event's own door, exactly as before lists existed.
//
//   checkin_list   one list of one event (`data.event`): name, ticket types, zones, re-entry and
//                  multiple-entry rules, validity window, entry limits, `exitAllAt`
//
// The scanner actor of the event is the lists' single writer and keeps them in memory: a scan
// naming a list reads nothing more from the store.
import type { StoredRecord } from '../../core/store/record.js';
import type { EventConfig } from '../event-records/index.js';
import type { DoorState } from './door-state.js';
import { localDay } from './local-day.js';
import { addDays, localDate, wallToUtc } from '../../core/timezone.js';
import type { DenialReason } from './messages.js';

export const CHECKIN_LIST = 'checkin_list';

/** Lists one event may have: each is a door state in the scanner's memory. */
export const MAX_LISTS_PER_EVENT = 50;

/** A list as the door uses it. */
export interface CheckinList {
  id: string;
  name: string;
  /** null: every ticket type. */
  types: ReadonlySet<string> | null;
  /** null: every zone. */
  zones: ReadonlySet<string> | null;
  /** null: as the event says. */
  allowReentry: boolean | null;
  allowMultipleEntries: boolean;
  validFrom: number | null;
  validUntil: number | null;
  maxEntries: number | null;
  maxEntriesPerDay: number | null;
  /** ISO weekdays (1 = Monday … 7 = Sunday) the list admits on; null: every day. */
  weekdays: ReadonlySet<number> | null;
  /** `HH:MM` in the event's time zone: every day then, whoever is inside on the list is checked out. */
  exitAllAt: string | null;
}

const strings = (v: unknown): string[] | null => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : null);
const int = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) ? v : null);
const instant = (v: unknown): number | null => {
  const ms = typeof v === 'string' ? Date.parse(v) : NaN;
  return Number.isNaN(ms) ? null : ms;
};

export function checkinList(rec: StoredRecord): CheckinList {
  const d = rec.data as Record<string, any>;
  const rules = (d.rules ?? {}) as Record<string, unknown>;
  const types = strings(d.ticketTypeIds);
  const zones = strings(d.zones);
  const weekdays = Array.isArray(rules.weekdays) ? rules.weekdays.filter((x): x is number => typeof x === 'number') : null;
  return {
    id: rec.sk,
    name: typeof d.name === 'string' ? d.name : '',
    types: types ? new Set(types) : null,
    zones: zones ? new Set(zones) : null,
    allowReentry: typeof d.allowReentry === 'boolean' ? d.allowReentry : null,
    allowMultipleEntries: d.allowMultipleEntries === true,
    validFrom: instant(rules.validFrom),
    validUntil: instant(rules.validUntil),
    maxEntries: int(rules.maxEntries),
    maxEntriesPerDay: int(rules.maxEntriesPerDay),
    weekdays: weekdays ? new Set(weekdays) : null,
    exitAllAt: typeof d.exitAllAt === 'string' ? d.exitAllAt : null,
  };
}

/**
 * Why ticket `t` (live, of the list's event) may not enter on `list` at `at`; undefined when the
 * list admits it (the zone's capacity is the caller's to check). In pretix's order: the
 * ticket type, the time rules, then whether it is already in, then the entry counts.
 */
export function listRefusal(door: DoorState, ev: EventConfig, list: CheckinList, t: StoredRecord, at: number): DenialReason | undefined {
  if (list.types && !list.types.has(String(t.data.ticketTypeId))) return 'product';
  if ((list.validFrom !== null && at < list.validFrom) || (list.validUntil !== null && at > list.validUntil)) return 'invalid_time';
  if (list.weekdays && !list.weekdays.has(localDay(at, door.timezone).weekday)) return 'invalid_time';
  const ld = door.lists.get(list.id);
  const entries = ld?.entries.get(t.sk) ?? 0;
  if (!list.allowMultipleEntries) {
    if (ld?.inside.has(t.sk)) return 'already_checked_in';
    // After an exit, a ticket enters again only with re-entry on (the list's, else the event's).
    if (entries > 0 && !(list.allowReentry ?? ev.allowReentry)) return 'already_checked_in';
  }
  if (list.maxEntries !== null && entries >= list.maxEntries) return 'max_entries';
  if (list.maxEntriesPerDay !== null && door.entriesOnDay(ld, t.sk, at) >= list.maxEntriesPerDay) return 'max_entries';
  return undefined;
}

/** The durable timer kind of a list's automatic check-out (edge/modules/events.ts runs it). */
export const EXIT_ALL_JOB = 'checkin-list.exit-all';

/** One timer per list, under a fixed id: setting `exitAllAt` again replaces it. */
export function exitAllJobId(listId: string): string {
  return `exit-all-${listId}`;
}

/** The next instant after `now` at which the wall clock in `tz` shows `hhmm` (a time in a spring-forward gap moves forward). */
export function nextExitAt(hhmm: string, tz: string, now: number): number | undefined {
  const today = localDate(now, tz);
  const t = wallToUtc(today, hhmm, tz);
  if (t === undefined) return undefined;
  return t > now ? t : wallToUtc(addDays(today, 1), hhmm, tz);
}
