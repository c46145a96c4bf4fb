// The reservations feature area: reservation definitions, bookings (the reservations actor, one
// per definition), service points (the service-points actor, one per location) and the durable
// reminder timers.
import { reservationsActor } from '../../actors/reservations/index.js';
import { RESERVATION_DATATYPE, RESERVATION_DEFINITION_DATATYPE } from '../../actors/reservations/index.js';
import { createReservationsApi, REMINDER_JOB } from '../../actors/reservations/index.js';
import { LOCATION_DATATYPE } from '../../actors/reservations/index.js';
import { SERVICE_POINT_DATATYPE, servicePointsActor } from '../../actors/service-points/index.js';
import type { Module } from '../module.js';
import { reservationRoutes } from '../routes/reservations/index.js';

export const reservationsModule: Module = {
  name: 'reservations',
  actors: [reservationsActor, servicePointsActor],
  indexes: [
    [RESERVATION_DATATYPE, 'data.confirmationNumber'],
    [RESERVATION_DATATYPE, 'data.customerId'],
    [RESERVATION_DATATYPE, 'data.businessLocationId'],
    [RESERVATION_DATATYPE, 'data.reservationDefinitionId'],
    [RESERVATION_DEFINITION_DATATYPE, 'data.businessLocationId'],
    [SERVICE_POINT_DATATYPE, 'data.businessLocationId'],
    [SERVICE_POINT_DATATYPE, 'data.name'],
    [LOCATION_DATATYPE, 'data.name'],
  ],
  // Reservation definitions by name, and a location's service points by name (all of them read
  // in the order of the data.name index): a page by index at any size.
  listings: [
    { datatype: RESERVATION_DEFINITION_DATATYPE, equals: [], sort: 'data.name' },
    { datatype: SERVICE_POINT_DATATYPE, equals: ['data.businessLocationId'], sort: 'data.name' },
  ],
  routes: reservationRoutes,
  start(deps) {
    const reservations = createReservationsApi(deps);
    deps.services.scheduler.register(REMINDER_JOB, (job) => reservations.fireReminder(job));
  },
};
