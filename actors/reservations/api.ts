// The reservations area's API for the edge: one call per request. Bookings and the organisation's
// reservation settings are changed by the reservations actors (one per definition, and the one
// keyed RESERVATION_SETTINGS_KEY); reads of one definition, booking or location go to the store,
// reads over many bookings (slots, a customer's own, upcoming, today) to the query pool.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { ScheduledJob } from '../../core/scheduler.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import { isId } from '../../core/ids.js';
import type { PageLimits } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import { listRecords, type ListingDeps } from '../records/index.js';
import { findDefinition, RESERVATION_DATATYPE, RESERVATION_DEFINITION_DATATYPE, resolveService, type Definition } from './definition.js';
import { RESERVATIONS_ACTOR, type CreateReservationInput, type Owner, type ReservationMessage, type UpdateReservationInput } from './messages.js';
import { findLocation, LOCATION_DATATYPE, locationNotFound, locationTimezone, type SlotView } from './queries.js';
import { RESERVATION_READS_JOB, type ReservationRead } from './read-job.js';
import { RESERVATION_SETTINGS_KEY } from './settings.js';
import { reservationSettingsOf, type ReservationSettings } from '../org-settings/index.js';

export interface ReservationsParts extends ListingDeps {
  readonly runtime: Pick<ActorRuntime, 'ask'>;
  readonly clock: Clock;
  readonly config: { readonly store: PageLimits };
}

interface Paging {
  page?: number;
  pageSize?: number;
}

/** A day's bookable slots of a service, as `POST /crm/reservations/slots` answers them. */
export interface DaySlots {
  reservationDefinitionId: string;
  service: { id?: string; name: string; durationMinutes: number; capacity: number };
  serviceDate: string;
  timezone: string;
  partySize: number;
  slots: SlotView[];
}

export interface ReservationsApi {
  settings(tenant: string): ReservationSettings;
  /** Merges `patch` into the settings, in their one writer; 404 for an unknown organisation. */
  updateSettings(tenant: string, patch: Partial<ReservationSettings>): Promise<ReservationSettings>;
  definition(tenant: string, id: string): Definition | undefined;
  /** The definitions (stored records), by name. */
  definitions(tenant: string, paging: Paging): Promise<ListResult>;
  /** A day's slots of a service (a date the caller checked); 404 for an unknown definition, 400 for an unknown service. */
  slots(tenant: string, q: { reservationDefinitionId: string; serviceName?: string; serviceDate: string; partySize?: number }): Promise<DaySlots>;
  /** A customer's own bookings, soonest first; `upcoming`: only those that have not started. */
  ownBookings(tenant: string, customerId: string, q: Paging & { status?: string; upcoming?: boolean }): Promise<ListResult>;
  /** Bookings starting within `hours`, up to `lateMinutes` late, not cancelled or checked in, soonest first. */
  upcoming(tenant: string, q: Paging & { hours: number; lateMinutes: number; location?: string }): Promise<ListResult>;
  /** A location's bookings of one day (today by default) in the location's timezone. */
  today(tenant: string, q: Paging & { location: string; date?: string; includeCancelled?: boolean }): Promise<ListResult & { date: string; timezone: string }>;
  booking(tenant: string, id: string): StoredRecord | undefined;
  location(tenant: string, slug: string): StoredRecord | undefined;
  /** The location a write names: it must exist by slug (404); its sk gets a 400 that says what to send. */
  requireLocation(tenant: string, slug: string): StoredRecord;
  locationTimezone(tenant: string, slug: string): string;
  /**
   * Books a place (404 for an unknown definition; 409 when the slot is full), with its confirmation
   * queued and its reminder scheduled in the same write; a repeated `idempotencyKey` answers the first booking.
   */
  book(tenant: string, owner: Owner, input: CreateReservationInput, idempotencyKey?: string): Promise<StoredRecord>;
  /** Changes or cancels `booking` (stale `version`, full slot, cancelled or checked in: 409). */
  changeBooking(tenant: string, booking: StoredRecord, owner: Owner, changes: UpdateReservationInput, version?: number): Promise<StoredRecord>;
  /** Sends `booking`'s reminder now, through the outbox. */
  sendReminder(tenant: string, booking: StoredRecord, owner: Owner): Promise<unknown>;
  /** Runs a due reminder job (REMINDER_JOB) the bookings' actor scheduled. */
  fireReminder(job: ScheduledJob): Promise<void>;
}

export function createReservationsApi(parts: ReservationsParts): ReservationsApi {
  const { runtime, store, clock } = parts;
  const limits = parts.config.store;
  // Reads over every booking of a location or definition run in a query worker (read-job.ts).
  const read = <T>(tenant: string, q: ReservationRead) => parts.queries.run<T>(tenant, RESERVATION_READS_JOB, q);
  // A booking's changes go to the actor of its definition.
  const bookings = <R>(tenant: string, definitionId: string, msg: ReservationMessage) => runtime.ask<R>(tenant, RESERVATIONS_ACTOR, definitionId, msg);
  const definitionOf = (booking: StoredRecord) => String(booking.data.reservationDefinitionId ?? '');
  return {
    settings: (tenant) => reservationSettingsOf(store.getOrg(tenant)),
    updateSettings: (tenant, patch) => {
      const msg: ReservationMessage = { type: 'update-settings', patch };
      return runtime.ask<ReservationSettings>(tenant, RESERVATIONS_ACTOR, RESERVATION_SETTINGS_KEY, msg);
    },
    definition: (tenant, id) => findDefinition(store, tenant, id),
    definitions: (tenant, { page, pageSize }) => listRecords(parts, tenant, RESERVATION_DEFINITION_DATATYPE, {}, { page, pageSize, sort: 'data.name' }),
    async slots(tenant, q) {
      const def = findDefinition(store, tenant, q.reservationDefinitionId);
      if (!def) throw appError('ERR_NOT_FOUND', `reservation definition ${q.reservationDefinitionId}`);
      const service = resolveService(def, q.serviceName);
      const partySize = q.partySize ?? 1;
      return {
        reservationDefinitionId: def.id,
        service: { ...(service.id !== undefined ? { id: service.id } : {}), name: service.name, durationMinutes: service.durationMinutes, capacity: service.capacity },
        serviceDate: q.serviceDate,
        timezone: def.timezone,
        partySize,
        slots: await read<SlotView[]>(tenant, { op: 'slots', tenant, def, service, date: q.serviceDate, partySize, now: clock.now() }),
      };
    },
    ownBookings: (tenant, customerId, q) =>
      read(tenant, {
        op: 'own',
        tenant,
        customerId,
        opts: { page: q.page, pageSize: q.pageSize, status: q.status, from: q.upcoming ? clock.now() : undefined },
        limits,
      }),
    upcoming: (tenant, q) =>
      read(tenant, {
        op: 'upcoming',
        tenant,
        now: clock.now(),
        opts: { hours: q.hours, lateMinutes: q.lateMinutes, location: q.location },
        page: q.page,
        pageSize: q.pageSize,
        limits,
      }),
    today: (tenant, q) =>
      read(tenant, {
        op: 'today',
        tenant,
        now: clock.now(),
        opts: { location: q.location, date: q.date, includeCancelled: q.includeCancelled },
        page: q.page,
        pageSize: q.pageSize,
        limits,
      }),
    booking: (tenant, id) => store.getRecord(tenant, RESERVATION_DATATYPE, id),
    location: (tenant, slug) => findLocation(store, tenant, slug),
    requireLocation(tenant, slug) {
      const loc = findLocation(store, tenant, slug);
      if (loc) return loc;
      const byId = isId(slug) ? store.getRecord(tenant, LOCATION_DATATYPE, slug) : undefined;
      if (byId) {
        throw appError('ERR_VALIDATION', `body/businessLocationId must be the location slug ("${String(byId.data.name)}"), not the location's id`);
      }
      throw locationNotFound(slug);
    },
    locationTimezone: (tenant, slug) => locationTimezone(store, tenant, slug),
    book(tenant, owner, input, idempotencyKey) {
      const defId = input.reservationDefinitionId;
      if (!findDefinition(store, tenant, defId)) throw appError('ERR_NOT_FOUND', `reservation definition ${defId}`);
      return bookings<StoredRecord>(tenant, defId, { type: 'create', owner, idempotencyKey, input });
    },
    changeBooking: (tenant, booking, owner, changes, version) =>
      bookings<StoredRecord>(tenant, definitionOf(booking), { type: 'update', id: booking.sk, owner, version, changes }),
    sendReminder: (tenant, booking, owner) => bookings(tenant, definitionOf(booking), { type: 'send-reminder', id: booking.sk, owner }),
    async fireReminder(job) {
      const msg: ReservationMessage = { type: 'fire-reminder', jobId: job.id, reservationId: String(job.payload.reservationId) };
      await bookings(job.tenant, String(job.payload.reservationDefinitionId ?? ''), msg);
    },
  };
}
