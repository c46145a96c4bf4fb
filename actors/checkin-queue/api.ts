// The check-in queue area's API for the edge: one call per request. A change is one message to the
// check-in actor of the location concerned, which the API finds (the task's, the booking's, the
// point's); the messages themselves stay inside the area. The live queue, its summary, a guest's position and
// the history read committed state from the store (queries.ts) at the node's clock.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import type { FindOptions } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { ListingDeps } from '../records/index.js';
import type { ReservationsApi } from '../reservations/index.js';
import { CHECKIN_WORKFLOW, TASK_DATATYPE, type Contact, type TaskRecord } from '../workflow/index.js';
import { locationOfPoint } from '../service-points/index.js';
import { CHECKIN_ACTOR, type AssignReply, type CheckinMessage, type ClearReply } from './messages.js';
import { history, listPoints, liveTasks, position, summary, type Position, type QueueSummary } from './queries.js';

export interface CheckinParts extends ListingDeps {
  readonly runtime: Pick<ActorRuntime, 'ask'>;
  readonly clock: Clock;
}

/** A guest who walked in (at least one contact field; the caller checked it). */
export interface WalkIn {
  customer: Contact;
  partySize?: number;
  notes?: string;
}

/** Checking a booking in. `location` overrides the booking's own (spec: the request wins). */
export interface BookingCheckin {
  location?: string;
  partySize?: number;
  notes?: string;
}

/** `by` is who acts (the staff token's subject), stamped on the task. */
export interface CheckinApi {
  /** Queues a walk-in guest at `location` (404 for an unknown location). */
  walkIn(tenant: string, location: string, guest: WalkIn, by: string): Promise<TaskRecord>;
  /**
   * Queues a booking's guest at the booking's location: `location` when given (which must exist),
   * else the booking's, else its definition's. 404 for an unknown booking, 400 when none names a location.
   */
  checkInBooking(tenant: string, reservationId: string, input: BookingCheckin, by: string): Promise<TaskRecord>;
  /** Seats a waiting guest at a point (its id or name at the task's location). */
  assign(tenant: string, taskId: string, servicePointId: string, by: string): Promise<AssignReply>;
  /** The guest left (outcome `left`). */
  leave(tenant: string, taskId: string, by: string): Promise<TaskRecord>;
  /** The guest did not come when called (outcome `no_show`). */
  noShow(tenant: string, taskId: string, by: string): Promise<TaskRecord>;
  /** Tells the guest it is their turn, by `channel` or the task's own address. */
  notify(tenant: string, taskId: string, note: { message?: string; channel?: 'email' | 'sms' }, by: string): Promise<TaskRecord>;
  /**
   * Frees a point (its id, or its name with `location` when the name is used at several) and
   * completes the task served there.
   */
  clear(tenant: string, point: string, input: { finalStatus: 'dirty' | 'available'; location?: string }, by: string): Promise<ClearReply>;
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
  const ask = <R>(tenant: string, location: string, msg: CheckinMessage) => runtime.ask<R>(tenant, CHECKIN_ACTOR, location, msg);
  /** A message about a task goes to the actor of the task's location (404 before it is sent). */
  const askTask = <R>(tenant: string, msg: Extract<CheckinMessage, { taskId: string }>) => {
    const location = checkinTask(tenant, msg.taskId).data.businessLocationId;
    return ask<R>(tenant, typeof location === 'string' ? location : '', msg);
  };
  const bookingLocation = (tenant: string, booking: StoredRecord, requested: string | undefined): string => {
    let location = requested;
    if (location) reservations.requireLocation(tenant, location);
    else {
      const own = booking.data.businessLocationId;
      const def = reservations.definition(tenant, String(booking.data.reservationDefinitionId ?? ''));
      location = typeof own === 'string' && own ? own : def?.businessLocationId;
    }
    if (!location) throw appError('ERR_VALIDATION', 'body/businessLocationId is required: the booking names no location');
    return location;
  };
  return {
    walkIn(tenant, location, guest, by) {
      reservations.requireLocation(tenant, location);
      return ask(tenant, location, { type: 'walk-in', ...guest, by });
    },
    checkInBooking(tenant, reservationId, { location, partySize, notes }, by) {
      const booking = reservations.booking(tenant, reservationId);
      if (!booking) throw appError('ERR_NOT_FOUND', `reservation ${reservationId}`);
      return ask(tenant, bookingLocation(tenant, booking, location), { type: 'from-reservation', reservationId: booking.sk, partySize, notes, by });
    },
    assign: (tenant, taskId, servicePointId, by) => askTask(tenant, { type: 'assign', taskId, servicePointId, by }),
    leave: (tenant, taskId, by) => askTask(tenant, { type: 'leave', taskId, by }),
    noShow: (tenant, taskId, by) => askTask(tenant, { type: 'no-show', taskId, by }),
    notify: (tenant, taskId, { message, channel }, by) => askTask(tenant, { type: 'notify', taskId, message, channel, by }),
    clear(tenant, point, { finalStatus, location }, by) {
      return ask(tenant, locationOfPoint(store, tenant, point, location), { type: 'clear', point, finalStatus, by });
    },
    liveTasks: (tenant, location) => liveTasks(store, tenant, location),
    summary: (tenant, location) => summary(store, tenant, location, clock.now()),
    position: (tenant, taskId) => position(store, tenant, checkinTask(tenant, taskId)),
    history: (tenant, location, range, opts) => history(parts, tenant, location, range, opts),
    points: (tenant, f, opts) => listPoints(parts, tenant, f, opts),
  };
}
