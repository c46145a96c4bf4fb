// Read side of reservations: definitions as clients see them, slots, a customer's own bookings, the
// operators' upcoming and today lists. Reads go to the store (committed state).
import { AppError } from '../../core/errors.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import { pageItems, type Filter, type PageLimits } from '../../core/store/query.js';
import type { Store } from '../../core/store/store.js';
import { dayRange, isValidTimeZone, localDate } from '../../core/timezone.js';
import {
  bookingsOf,
  bookingTimes,
  daySlots,
  parseDefinition,
  peakLoad,
  RESERVATION_DATATYPE,
  RESERVATION_DEFINITION_DATATYPE,
  type Definition,
  type ServiceDef,
} from './definition.js';

export const LOCATION_DATATYPE = 'location';


/** Memoized definition lookup for one request. */
export function definitions(store: Store, tenant: string): (id: unknown) => Definition | undefined {
  const cache = new Map<string, Definition | undefined>();
  return (id) => {
    if (typeof id !== 'string' || !id) return undefined;
    if (!cache.has(id)) {
      const rec = store.getRecord(tenant, RESERVATION_DEFINITION_DATATYPE, id);
      cache.set(id, rec ? parseDefinition(rec) : undefined);
    }
    return cache.get(id);
  };
}

/** The location record with slug `slug` (`data.name`); an sk finds nothing (spec: Errors 10). */
export function findLocation(store: Store, tenant: string, slug: string): StoredRecord | undefined {
  return store.scan(tenant, LOCATION_DATATYPE, { 'data.name': slug })[0];
}

/** The 404 for a slug no location record names; its message says how to create one. */
export function locationNotFound(slug: string): AppError {
  return new AppError('ERR_LOCATION_NOT_FOUND', [slug, JSON.stringify(slug)]);
}

/** The timezone of a location: its own `data.timezone`, else that of a definition there, else UTC. */
export function locationTimezone(store: Store, tenant: string, slug: string): string {
  const loc = findLocation(store, tenant, slug);
  const own = loc?.data.timezone ?? loc?.data.timeZone;
  if (isValidTimeZone(own)) return own;
  const def = store
    .scan(tenant, RESERVATION_DEFINITION_DATATYPE, { 'data.businessLocationId': slug })
    .map(parseDefinition)[0];
  return def?.timezone ?? 'UTC';
}

/**
 * A booking as the API answers it: `startTime`/`endTime` always UTC instants. An older record that
 * stores a zone-less wall-clock time is read in its definition's timezone (spec: Fields known per
 * kind, reservation); the stored record is left as it is.
 */
export function present(rec: StoredRecord, def: Definition | undefined): StoredRecord {
  const tz = def?.timezone ?? (typeof rec.data.timezone === 'string' ? rec.data.timezone : 'UTC');
  const t = bookingTimes(rec, tz, def?.services[0]?.durationMinutes ?? 30);
  if (!t) return rec;
  return {
    ...rec,
    data: { ...rec.data, startTime: new Date(t.start).toISOString(), endTime: new Date(t.end).toISOString(), timezone: tz },
  };
}

function startOf(rec: StoredRecord): number {
  return Date.parse(String(rec.data.startTime));
}

/** The caller's own bookings, soonest first. */
export function listOwn(
  store: Store,
  tenant: string,
  customerId: string,
  opts: { page?: number; pageSize?: number; status?: string; from?: number },
  limits: PageLimits,
): ListResult {
  const defOf = definitions(store, tenant);
  const filter: Filter = { 'data.customerId': customerId };
  if (opts.status) filter['data.status'] = opts.status;
  let items = store.scan(tenant, RESERVATION_DATATYPE, filter).map((r) => present(r, defOf(r.data.reservationDefinitionId)));
  if (opts.from !== undefined) items = items.filter((r) => startOf(r) >= opts.from!);
  items.sort((a, b) => startOf(a) - startOf(b) || (a.sk < b.sk ? -1 : 1));
  return pageItems(items, opts.page, opts.pageSize, limits);
}

/** Bookings at a location (or everywhere), older records without a location included via their definition. */
function bookingsAt(store: Store, tenant: string, slug: string | undefined): StoredRecord[] {
  if (!slug) return store.scan(tenant, RESERVATION_DATATYPE, { 'data.status': { $ne: 'cancelled' } });
  const out = new Map<string, StoredRecord>();
  for (const r of store.scan(tenant, RESERVATION_DATATYPE, { 'data.businessLocationId': slug })) out.set(r.sk, r);
  for (const d of store.scan(tenant, RESERVATION_DEFINITION_DATATYPE, { 'data.businessLocationId': slug })) {
    for (const r of store.scan(tenant, RESERVATION_DATATYPE, { 'data.reservationDefinitionId': d.sk })) {
      if (r.data.businessLocationId === undefined || r.data.businessLocationId === null) out.set(r.sk, r);
    }
  }
  return [...out.values()];
}

/**
 * Bookings starting within the next `hours` that are not checked in (and not cancelled), soonest
 * first. Bookings that started up to `lateMinutes` ago still show: they are late, not gone.
 */
export function upcoming(
  store: Store,
  tenant: string,
  now: number,
  opts: { hours: number; lateMinutes: number; location?: string },
): StoredRecord[] {
  const defOf = definitions(store, tenant);
  const from = now - opts.lateMinutes * 60_000;
  const to = now + opts.hours * 3_600_000;
  return bookingsAt(store, tenant, opts.location)
    .filter((r) => r.data.status !== 'cancelled' && !r.data.checkedInAt && r.data.status !== 'checked_in')
    .map((r) => present(r, defOf(r.data.reservationDefinitionId)))
    .filter((r) => startOf(r) >= from && startOf(r) < to)
    .sort((a, b) => startOf(a) - startOf(b) || (a.sk < b.sk ? -1 : 1));
}

/** Bookings of a calendar day at a location, in the location's timezone (default: today there). */
export function today(
  store: Store,
  tenant: string,
  now: number,
  opts: { location: string; date?: string; includeCancelled?: boolean },
): { date: string; timezone: string; items: StoredRecord[] } {
  const tz = locationTimezone(store, tenant, opts.location);
  const date = opts.date ?? localDate(now, tz);
  const [from, to] = dayRange(date, tz);
  const defOf = definitions(store, tenant);
  const items = bookingsAt(store, tenant, opts.location)
    .filter((r) => opts.includeCancelled || r.data.status !== 'cancelled')
    .map((r) => present(r, defOf(r.data.reservationDefinitionId)))
    .filter((r) => startOf(r) >= from && startOf(r) < to)
    .sort((a, b) => startOf(a) - startOf(b) || (a.sk < b.sk ? -1 : 1));
  return { date, timezone: tz, items };
}

export interface SlotView {
  startTime: string;
  endTime: string;
  localTime: string;
  capacity: number;
  remaining: number;
  available: boolean;
}

/** The day's slots of a service with remaining capacity; slots that have started are left out. */
export function slotsOf(store: Store, tenant: string, def: Definition, service: ServiceDef, date: string, partySize: number, now: number): SlotView[] {
  const bookings = bookingsOf(store.scan(tenant, RESERVATION_DATATYPE, { 'data.reservationDefinitionId': def.id }), def, service);
  return daySlots(def, service, date)
    .filter((s) => s.start > now)
    .map((s) => {
      const remaining = Math.max(0, service.capacity - peakLoad(bookings, s.start, s.end));
      return {
        startTime: new Date(s.start).toISOString(),
        endTime: new Date(s.end).toISOString(),
        localTime: s.localTime,
        capacity: service.capacity,
        remaining,
        available: remaining >= partySize,
      };
    });
}
