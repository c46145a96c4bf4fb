// The reservations area's public surface.
export { reservationsActor } from './actor.js';
export * from './definition.js';
export * from './messages.js';
export * from './queries.js';
export { newOrgReservationSettings, reservationSettingsOf, saveReservationSettings, RESERVATION_SETTINGS_FIELD, type ReservationSettings } from './settings.js';
export { RESERVATION_READS_JOB, type ReservationRead } from './read-job.js';
