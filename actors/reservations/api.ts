// The reservations area's API for the edge: one call per request. Bookings and the organisation's
// reservation settings are changed by the reservations actors (one per definition, and the one
// keyed RESERVATION_SETTINGS_KEY); reads of definitions, bookings and locations go to the store.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { isId } from '../../core/ids.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { findDefinition, RESERVATION_DATATYPE, type Definition } from './definition.js';
import { RESERVATIONS_ACTOR, type ReservationMessage } from './messages.js';
import { findLocation, LOCATION_DATATYPE, locationNotFound, locationTimezone } from './queries.js';
import { RESERVATION_SETTINGS_KEY, reservationSettingsOf, type ReservationSettings } from './settings.js';

export interface ReservationsParts {
  readonly runtime: Pick<ActorRuntime, 'ask'>;
  readonly store: Store;
}

export interface ReservationsApi {
  settings(tenant: string): ReservationSettings;
  /** Merges `patch` into the settings, in their one writer; 404 for an unknown organisation. */
  updateSettings(tenant: string, patch: Partial<ReservationSettings>): Promise<ReservationSettings>;
  definition(tenant: string, id: string): Definition | undefined;
  booking(tenant: string, id: string): StoredRecord | undefined;
  /** One message to the reservations actor of definition `definitionId`. */
  ask<R>(tenant: string, definitionId: string, msg: ReservationMessage): Promise<R>;
  location(tenant: string, slug: string): StoredRecord | undefined;
  /** The location a write names: it must exist by slug (404); its sk gets a 400 that says what to send. */
  requireLocation(tenant: string, slug: string): StoredRecord;
  locationTimezone(tenant: string, slug: string): string;
}

export function createReservationsApi(parts: ReservationsParts): ReservationsApi {
  const { runtime, store } = parts;
  return {
    settings: (tenant) => reservationSettingsOf(store.getOrg(tenant)),
    updateSettings: (tenant, patch) => {
      const msg: ReservationMessage = { type: 'update-settings', patch };
      return runtime.ask<ReservationSettings>(tenant, RESERVATIONS_ACTOR, RESERVATION_SETTINGS_KEY, msg);
    },
    definition: (tenant, id) => findDefinition(store, tenant, id),
    booking: (tenant, id) => store.getRecord(tenant, RESERVATION_DATATYPE, id),
    ask: (tenant, definitionId, msg) => runtime.ask(tenant, RESERVATIONS_ACTOR, definitionId, msg),
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
  };
}
