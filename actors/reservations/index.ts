// The reservations area's public surface.
export { reservationsActor } from './actor.js';
export * from './definition.js';
export * from './messages.js';
export * from './queries.js';
export { RESERVATION_SETTINGS_KEY } from './settings.js';
export { newOrgReservationSettings, reservationSettingsOf, RESERVATION_SETTINGS_FIELD, type ReservationSettings } from '../org-settings/index.js';
export { createReservationsApi, type ReservationsApi, type ReservationsParts } from './api.js';
export { RESERVATION_READS_JOB, type ReservationRead } from './read-job.js';
