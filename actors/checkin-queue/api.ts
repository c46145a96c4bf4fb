// The check-in queue area's API for the edge: one call per request. Changes are one message to the
// check-in actor of the location concerned; the live queue, its summary, a guest's position and
// the history read committed state from the store (queries.ts) at the node's clock.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import type { FindOptions } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { ListingDeps } from '../records/index.js';
import type { ReservationsApi } from '../reservations/index.js';
import { CHECKIN_WORKFLOW, TASK_DATATYPE, type TaskRecord } from '../workflow/index.js';
import { CHECKIN_ACTOR, type CheckinMessage } from './messages.js';
import { history, listPoints, liveTasks, position, summary, type Position, type QueueSummary } from './queries.js';

export interface CheckinParts extends ListingDeps {
  readonly runtime: Pick<ActorRuntime, 'ask'>;
  readonly clock: Clock;
}

export interface CheckinApi {
  /** One message to the check-in actor of `location`. */
  ask<R>(tenant: string, location: string, msg: CheckinMessage): Promise<R>;
  /** The location of a check-in task (404 when it is no check-in task of this tenant). */
  taskLocation(tenant: string, taskId: string): string;
  /**
   * The location a booking checks in at: `requested` (which must exist), else the booking's, else
   * its definition's. 404 for an unknown booking, 400 when none names a location.
   */
  bookingLocation(tenant: string, reservationId: string, requested: string | undefined): { booking: StoredRecord; location: string };
  /** The live queue of a location in arrival order. */
  liveTasks(tenant: string, location: string): TaskRecord[];
  summary(tenant: string, location: string): QueueSummary;
  /** A check-in task's place in its queue (404 when it is no check-in task). */
  position(tenant: string, taskId: string): Position;
  history(tenant: string, location: string | undefined, range: { from?: number; to?: number }, opts: FindOptions): Promise<ListResult>;
  points(tenant: string, f: { location?: string; status?: string; availableOnly?: boolean }, opts: FindOptions): Promise<ListResult>;
}

export function createCheckinApi(parts: CheckinParts, reservations: ReservationsApi): CheckinApi {
  const { runtime, store, clock } = parts;
  const checkinTask = (tenant: string, taskId: string): TaskRecord => {
    const task = store.getRecord(tenant, TASK_DATATYPE, taskId);
    if (!task || task.data.workflowId !== CHECKIN_WORKFLOW) throw appError('ERR_NOT_FOUND', `check-in task ${taskId}`);
    return task as TaskRecord;
  };
  return {
    ask: (tenant, location, msg) => runtime.ask(tenant, CHECKIN_ACTOR, location, msg),
    taskLocation(tenant, taskId) {
      const task = checkinTask(tenant, taskId);
      return typeof task.data.businessLocationId === 'string' ? task.data.businessLocationId : '';
    },
    bookingLocation(tenant, reservationId, requested) {
      const booking = reservations.booking(tenant, reservationId);
      if (!booking) throw appError('ERR_NOT_FOUND', `reservation ${reservationId}`);
      let location = requested;
      if (location) reservations.requireLocation(tenant, location);
      else {
        const own = booking.data.businessLocationId;
        const def = reservations.definition(tenant, String(booking.data.reservationDefinitionId ?? ''));
        location = typeof own === 'string' && own ? own : def?.businessLocationId;
      }
      if (!location) throw appError('ERR_VALIDATION', 'body/businessLocationId is required: the booking names no location');
      return { booking, location };
    },
    liveTasks: (tenant, location) => liveTasks(store, tenant, location),
    summary: (tenant, location) => summary(store, tenant, location, clock.now()),
    position: (tenant, taskId) => position(store, tenant, checkinTask(tenant, taskId)),
    history: (tenant, location, range, opts) => history(parts, tenant, location, range, opts),
    points: (tenant, f, opts) => listPoints(parts, tenant, f, opts),
  };
}
