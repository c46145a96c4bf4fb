// The reservations feature area: reservation definitions, bookings (the reservations actor, one
// per definition), service points (the service-points actor, one per location) and the durable
// reminder timers.
import { reservationsActor } from '../../actors/reservations/index.js';
import { RESERVATION_DATATYPE, RESERVATION_DEFINITION_DATATYPE } from '../../actors/reservations/index.js';
import { REMINDER_JOB, RESERVATIONS_ACTOR, type ReservationMessage } from '../../actors/reservations/index.js';
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
  routes: reservationRoutes,
  start(deps) {
    const scheduler = deps.services.scheduler;
    scheduler.register(REMINDER_JOB, async (job) => {
      const msg: ReservationMessage = { type: 'fire-reminder', jobId: job.id, reservationId: String(job.payload.reservationId) };
      await deps.runtime.ask(job.tenant, RESERVATIONS_ACTOR, String(job.payload.reservationDefinitionId ?? ''), msg);
    });
  },
};
