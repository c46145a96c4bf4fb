// Reservation definitions (datatype `reservation_definition`, written through the record store or
// seeded) and the slot arithmetic built on them. A definition's hours are wall-clock times in its
// own IANA timezone; slots and bookings are UTC instants.
//
// data: {
//   name, timezone ('UTC' when absent or unknown), businessLocationId?, slotMinutes (default 30),
//   openingHours?: { monday: [{open: '09:00', close: '17:00'}], tue: {open, close}, sun: 'closed', ... }
//     (keys: full or 3-letter English day names, or '0'..'6' with 0 = Sunday; or a 7-item array
//     from Sunday; a day not listed is closed; no openingHours at all = open around the clock;
//     close <= open runs past midnight and belongs to the opening day),
//   services?: [{id?, name, durationMinutes?, capacity?}] (none: one implicit service named after
//     the definition, with the definition's durationMinutes/capacity),
//   durationMinutes?, capacity? (defaults for services that omit them: slotMinutes and 1),
//   maxPartySize?, requiredFields?: ['phone', {name: 'allergies', label: 'Allergies'}],
//   confirmation?: {enabled (default true), channel: 'email'|'sms', subject?, message?},
//   reminder?: {enabled (default true), minutesBefore (default 1440), channel, subject?, message?},
// }
//
// Capacity counts people: a booking takes `partySize` places (default 1) of its service for its
// whole duration, and a slot's remaining capacity is the service's capacity minus the peak load of
// the bookings that overlap it.
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { isValidTimeZone, parseInstant, parseTime, wallMinutesToUtc, weekday, localTime } from '../../core/timezone.js';

export const RESERVATION_DEFINITION_DATATYPE = 'reservation_definition';
export const RESERVATION_DATATYPE = 'reservation';

export interface ServiceDef {
  id?: string;
  name: string;
  durationMinutes: number;
  capacity: number;
  /** The definition has no services: this one stands for it. */
  implicit?: boolean;
}

/** Minutes after midnight of the opening day; `close` may pass 1440. */
export interface OpeningWindow {
  open: number;
  close: number;
}

export interface MessageSettings {
  enabled: boolean;
  channel: 'email' | 'sms';
  subject?: string;
  message?: string;
}

export interface RequiredField {
  name: string;
  label: string;
}

export interface Definition {
  id: string;
  name: string;
  timezone: string;
  slotMinutes: number;
  services: ServiceDef[];
  /** Per weekday (0 = Sunday); undefined = open around the clock. */
  openingHours?: OpeningWindow[][];
  requiredFields: RequiredField[];
  confirmation: MessageSettings;
  reminder: MessageSettings & { minutesBefore: number };
  businessLocationId?: string;
  maxPartySize?: number;
  record: StoredRecord;
}

const DAY_KEYS: Record<string, number> = {
  sunday: 0, sun: 0, '0': 0,
  monday: 1, mon: 1, '1': 1,
  tuesday: 2, tue: 2, tues: 2, '2': 2,
  wednesday: 3, wed: 3, '3': 3,
  thursday: 4, thu: 4, thur: 4, thurs: 4, '4': 4,
  friday: 5, fri: 5, '5': 5,
  saturday: 6, sat: 6, '6': 6,
};

function positive(v: unknown, fallback: number, max: number): number {
  const n = typeof v === 'string' && v.trim() !== '' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n > 0 ? Math.min(Math.floor(n), max) : fallback;
}

function windows(raw: unknown): OpeningWindow[] {
  if (raw === null || raw === undefined || raw === false || raw === 'closed') return [];
  const list = Array.isArray(raw) ? raw : [raw];
  const out: OpeningWindow[] = [];
  for (const w of list) {
    if (!w || typeof w !== 'object') continue;
    const o = w as Record<string, unknown>;
    const open = parseTime(o.open ?? o.start ?? o.from);
    let close = parseTime(o.close ?? o.end ?? o.to);
    if (open === undefined || close === undefined || open >= 1440) continue;
    if (close <= open) close += 1440;
    out.push({ open, close });
  }
  return out.sort((a, b) => a.open - b.open);
}

function openingHours(raw: unknown): OpeningWindow[][] | undefined {
  if (raw === undefined || raw === null) return undefined;
  const week: OpeningWindow[][] = [[], [], [], [], [], [], []];
  if (Array.isArray(raw)) {
    raw.slice(0, 7).forEach((d, i) => (week[i] = windows(d)));
    return week;
  }
  if (typeof raw !== 'object') return undefined;
  for (const [k, v] of Object.entries(raw as Record<string, unknown>)) {
    const day = DAY_KEYS[k.toLowerCase()];
    if (day !== undefined) week[day] = windows(v);
  }
  return week;
}

function messageSettings(raw: unknown): MessageSettings {
  const o = raw && typeof raw === 'object' ? (raw as Record<string, unknown>) : {};
  const s: MessageSettings = { enabled: o.enabled !== false && raw !== false, channel: o.channel === 'sms' ? 'sms' : 'email' };
  if (typeof o.subject === 'string' && o.subject) s.subject = o.subject;
  if (typeof o.message === 'string' && o.message) s.message = o.message;
  else if (typeof o.body === 'string' && o.body) s.message = o.body;
  return s;
}

function requiredFields(raw: unknown): RequiredField[] {
  if (!Array.isArray(raw)) return [];
  const out: RequiredField[] = [];
  for (const f of raw) {
    if (typeof f === 'string' && f) out.push({ name: f, label: f });
    else if (f && typeof f === 'object') {
      const o = f as Record<string, unknown>;
      const name = [o.name, o.key, o.id, o.field].find((x) => typeof x === 'string' && x) as string | undefined;
      if (name && o.required !== false) out.push({ name, label: typeof o.label === 'string' && o.label ? o.label : name });
    }
  }
  return out;
}

export function parseDefinition(rec: StoredRecord): Definition {
  const d = rec.data;
  const name = typeof d.name === 'string' && d.name ? d.name : rec.sk;
  const slotMinutes = positive(d.slotMinutes ?? d.slotLength ?? d.slotDuration, 30, 1440);
  const defaultDuration = positive(d.durationMinutes, slotMinutes, 1440);
  const defaultCapacity = positive(d.capacity, 1, 100_000);
  const services: ServiceDef[] = [];
  if (Array.isArray(d.services)) {
    for (const s of d.services) {
      if (!s || typeof s !== 'object') continue;
      const o = s as Record<string, unknown>;
      if (typeof o.name !== 'string' || !o.name) continue;
      const svc: ServiceDef = {
        name: o.name,
        durationMinutes: positive(o.durationMinutes ?? o.duration, defaultDuration, 1440),
        capacity: positive(o.capacity, defaultCapacity, 100_000),
      };
      if ((typeof o.id === 'string' && o.id) || typeof o.id === 'number') svc.id = String(o.id);
      services.push(svc);
    }
  }
  // A definition with no services has one implicit service named after it (spec: Fields known per kind).
  if (services.length === 0) services.push({ name, durationMinutes: defaultDuration, capacity: defaultCapacity, implicit: true });
  const reminderRaw = d.reminder && typeof d.reminder === 'object' ? (d.reminder as Record<string, unknown>) : {};
  const def: Definition = {
    id: rec.sk,
    name,
    timezone: isValidTimeZone(d.timezone) ? d.timezone : 'UTC',
    slotMinutes,
    services,
    openingHours: openingHours(d.openingHours),
    requiredFields: requiredFields(d.requiredFields ?? d.requiredFormFields),
    confirmation: messageSettings(d.confirmation),
    reminder: { ...messageSettings(d.reminder), minutesBefore: positive(reminderRaw.minutesBefore, 1440, 60 * 24 * 60) },
    record: rec,
  };
  if (typeof d.businessLocationId === 'string' && d.businessLocationId) def.businessLocationId = d.businessLocationId;
  if (d.maxPartySize !== undefined) def.maxPartySize = positive(d.maxPartySize, 1, 100_000);
  return def;
}

export function findDefinition(store: Store, tenant: string, id: string): Definition | undefined {
  const rec = typeof id === 'string' && id ? store.getRecord(tenant, RESERVATION_DEFINITION_DATATYPE, id) : undefined;
  return rec ? parseDefinition(rec) : undefined;
}

export function loadDefinition(store: Store, tenant: string, id: string): Definition {
  const def = findDefinition(store, tenant, id);
  if (!def) throw appError('ERR_NOT_FOUND', `reservation definition ${id}`);
  return def;
}

export type ServiceRef = string | { id?: unknown; name?: unknown } | undefined | null;

/** The service a booking names, by id or by name (spec: Errors 4); 400 "invalid service" otherwise. */
export function resolveService(def: Definition, ref: ServiceRef): ServiceDef {
  const names = def.services.map((s) => s.name).join(', ');
  if (ref === undefined || ref === null || ref === '') {
    if (def.services.length === 1) return def.services[0];
    throw appError('ERR_VALIDATION', `service is required: one of ${names}`);
  }
  const keys: string[] = [];
  if (typeof ref === 'string' || typeof ref === 'number') keys.push(String(ref));
  else if (typeof ref === 'object') {
    if (ref.id !== undefined && ref.id !== null) keys.push(String(ref.id));
    if (typeof ref.name === 'string') keys.push(ref.name);
  }
  for (const k of keys) {
    const hit =
      def.services.find((s) => s.id !== undefined && s.id === k) ??
      def.services.find((s) => s.name === k) ??
      def.services.find((s) => s.name.toLowerCase() === k.toLowerCase());
    if (hit) return hit;
  }
  throw appError('ERR_VALIDATION', `invalid service "${keys[0] ?? ''}" for ${def.name}: choose one of ${names}`);
}

export interface Slot {
  start: number;
  end: number;
  /** Wall-clock start in the definition's timezone, `HH:mm`. */
  localTime: string;
}

/**
 * The slots of `date` (a service date in the definition's timezone) for `service`. Slot starts are
 * wall-clock times every `slotMinutes` from each opening; a start the spring-forward gap skips has
 * no slot, a start the autumn repeat shows twice has one (its first occurrence), and a slot must end
 * by the closing instant.
 */
export function daySlots(def: Definition, service: ServiceDef, date: string): Slot[] {
  const tz = def.timezone;
  const day = weekday(date);
  const wins = def.openingHours ? def.openingHours[day] : [{ open: 0, close: 1440 }];
  const out = new Map<number, Slot>();
  const durationMs = service.durationMinutes * 60_000;
  for (const w of wins) {
    const close = wallMinutesToUtc(date, w.close, tz);
    if (close === undefined) continue;
    for (let m = w.open; m + service.durationMinutes <= w.close + 60; m += def.slotMinutes) {
      if (m >= w.close) break;
      const start = wallMinutesToUtc(date, m, tz, { gap: 'skip' });
      if (start === undefined) continue;
      const end = start + durationMs;
      if (end > close) continue;
      if (!out.has(start)) out.set(start, { start, end, localTime: localTime(start, tz) });
    }
  }
  return [...out.values()].sort((a, b) => a.start - b.start);
}

export interface Booking {
  sk: string;
  start: number;
  end: number;
  partySize: number;
  service: string;
}

/** Start and end of a stored booking (a zone-less older record is read in the definition's zone). */
export function bookingTimes(rec: StoredRecord, tz: string, fallbackMinutes = 30): { start: number; end: number } | undefined {
  const start = parseInstant(rec.data.startTime, tz);
  if (start === undefined) return undefined;
  const endRaw = parseInstant(rec.data.endTime, tz);
  const end = endRaw !== undefined && endRaw > start ? endRaw : start + fallbackMinutes * 60_000;
  return { start, end };
}

export function partySizeOf(rec: StoredRecord): number {
  const n = Number(rec.data.partySize ?? 1);
  return Number.isInteger(n) && n > 0 ? n : 1;
}

/** Live bookings of a service, from records of the definition. */
export function bookingsOf(records: StoredRecord[], def: Definition, service: ServiceDef, exceptSk?: string): Booking[] {
  const out: Booking[] = [];
  for (const r of records) {
    if (r.sk === exceptSk || r.data.status === 'cancelled') continue;
    const name = typeof r.data.service === 'string' ? r.data.service : (r.data.service as { name?: string } | undefined)?.name;
    const matches = def.services.length === 1 || name === service.name || (service.id !== undefined && r.data.serviceId === service.id);
    if (!matches) continue;
    const t = bookingTimes(r, def.timezone, service.durationMinutes);
    if (t) out.push({ sk: r.sk, ...t, partySize: partySizeOf(r), service: service.name });
  }
  return out;
}

/** The most places taken at any moment of [start, end) by `bookings`. */
export function peakLoad(bookings: Booking[], start: number, end: number): number {
  const overlapping = bookings.filter((b) => b.start < end && b.end > start);
  if (overlapping.length === 0) return 0;
  const moments = [start, ...overlapping.map((b) => b.start).filter((s) => s > start && s < end)];
  let peak = 0;
  for (const t of moments) {
    let load = 0;
    for (const b of overlapping) if (b.start <= t && b.end > t) load += b.partySize;
    if (load > peak) peak = load;
  }
  return peak;
}
