// The check-in queue actor: one per location (key: the location slug). It runs the check-in
// operations of its location one at a time. It writes nothing itself: check-in tasks belong to the
// workflow actor (workflow `check-in`, stages `waiting` → `serving`), service points to the
// service-points actor of the location, bookings to their reservations actor. It asks those
// (never the other way round, so no cycle of asks can form) and undoes its earlier step when a
// later one is refused.
import { askerOf } from '../../core/actor/asker.js';
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import { RESERVATION_DATATYPE, RESERVATIONS_ACTOR, type ReservationMessage } from '../reservations/index.js';
import { occupyServicePoint, releaseServicePoint } from '../service-points/index.js';
import {
  askWorkflow,
  CHECKIN_SERVING,
  CHECKIN_WAITING,
  CHECKIN_WORKFLOW,
  createTaskDetailed,
  TASK_DATATYPE,
  type Contact,
  type TaskRecord,
} from '../workflow/index.js';
import { type AssignReply, CHECKIN_ACTOR, type CheckinMessage, type ClearReply } from './messages.js';

interface State {
  slug: string;
}

const CHECKIN = { workflowId: CHECKIN_WORKFLOW };

function uniqueKeyOf(reservationId: string): string {
  return `reservation:${reservationId}`;
}

/** A check-in task of this location, fresh from its owner. */
async function checkinTask(state: State, ctx: ActorContext, taskId: string): Promise<TaskRecord> {
  const task = await askWorkflow<TaskRecord>(askerOf(ctx), ctx.tenant, { type: 'get-task', taskId });
  if (task.data.workflowId !== CHECKIN_WORKFLOW || (task.data.businessLocationId ?? '') !== state.slug) {
    throw appError('ERR_NOT_FOUND', `check-in task ${taskId}`);
  }
  return task;
}

function stampBooking(ctx: ActorContext, booking: StoredRecord, taskId: string): Promise<StoredRecord> {
  const msg: ReservationMessage = { type: 'stamp-check-in', id: booking.sk, taskId };
  return ctx.ask<StoredRecord>(RESERVATIONS_ACTOR, String(booking.data.reservationDefinitionId ?? ''), msg);
}

async function fromReservation(state: State, ctx: ActorContext, msg: Extract<CheckinMessage, { type: 'from-reservation' }>) {
  const booking = ctx.store.getRecord(ctx.tenant, RESERVATION_DATATYPE, msg.reservationId);
  if (!booking) throw appError('ERR_NOT_FOUND', `reservation ${msg.reservationId}`);
  if (booking.data.status === 'cancelled') throw appError('ERR_CONFLICT', `reservation ${booking.sk} is cancelled`);
  const customer = (booking.data.customer ?? {}) as Contact;
  const partySize = msg.partySize ?? (Number.isInteger(booking.data.partySize) ? (booking.data.partySize as number) : undefined);
  const { task, created } = await createTaskDetailed(askerOf(ctx), ctx.tenant, {
    workflowId: CHECKIN_WORKFLOW,
    title: customer.name ?? customer.email ?? `Reservation ${String(booking.data.confirmationNumber ?? booking.sk)}`,
    businessLocationId: state.slug,
    uniqueKey: uniqueKeyOf(booking.sk),
    reservationId: booking.sk,
    customer,
    partySize,
    notes: msg.notes,
    by: msg.by,
    payload: {
      confirmationNumber: booking.data.confirmationNumber,
      service: booking.data.service,
      startTime: booking.data.startTime,
    },
  });
  if (!created) {
    // A live task exists (spec: States and transitions, 409). If a crash came between that task
    // and its stamp on the booking, stamp it now so the booking points at it.
    if (booking.data.checkInTaskId !== task.sk) await stampBooking(ctx, booking, task.sk).catch(() => undefined);
    throw appError('ERR_CONFLICT', `reservation ${booking.sk} is already checked in: task ${task.sk} is ${task.data.stageId}`);
  }
  try {
    await stampBooking(ctx, booking, task.sk);
  } catch (err) {
    // The booking was cancelled or removed meanwhile: take the task back out of the queue.
    await askWorkflow(askerOf(ctx), ctx.tenant, { type: 'cancel', taskId: task.sk, outcome: 'cancelled', by: msg.by }).catch(() => undefined);
    throw err;
  }
  return task;
}

async function assign(state: State, ctx: ActorContext, msg: Extract<CheckinMessage, { type: 'assign' }>): Promise<AssignReply> {
  const asker = askerOf(ctx);
  const task = await checkinTask(state, ctx, msg.taskId);
  if (task.data.status !== 'open') throw appError('ERR_CONFLICT', `task ${task.sk} is already ${task.data.status}`);
  if (task.data.stageId !== CHECKIN_WAITING) {
    throw appError('ERR_CONFLICT', `task ${task.sk} is already being served at ${task.data.servicePointName ?? task.data.servicePointId ?? 'a service point'}`);
  }
  const occupied = await occupyServicePoint(asker, ctx.tenant, state.slug, msg.servicePointId, task.sk);
  const point = occupied.point;
  try {
    const served = await askWorkflow<TaskRecord>(asker, ctx.tenant, {
      type: 'move-to',
      taskId: task.sk,
      stageId: CHECKIN_SERVING,
      by: msg.by,
      expect: { ...CHECKIN, stageId: CHECKIN_WAITING },
      fields: {
        servicePointId: point.sk,
        servicePointName: typeof point.data.name === 'string' ? point.data.name : point.sk,
        servedAt: new Date(ctx.clock.now()).toISOString(),
      },
    });
    return { task: served, servicePoint: point };
  } catch (err) {
    // The task changed under us (finished through /workflow meanwhile): give the point back.
    await releaseServicePoint(asker, ctx.tenant, state.slug, point.sk, occupied.previousStatus ?? 'available', task.sk).catch(
      () => undefined,
    );
    throw err;
  }
}

async function leave(state: State, ctx: ActorContext, msg: Extract<CheckinMessage, { type: 'leave' }>): Promise<TaskRecord> {
  const task = await checkinTask(state, ctx, msg.taskId);
  const left = await askWorkflow<TaskRecord>(askerOf(ctx), ctx.tenant, {
    type: 'cancel',
    taskId: task.sk,
    outcome: 'left',
    by: msg.by,
    expect: CHECKIN,
  });
  // Someone leaving a table they were seated at leaves it to be cleaned.
  if (task.data.stageId === CHECKIN_SERVING && task.data.servicePointId) {
    await releaseServicePoint(askerOf(ctx), ctx.tenant, state.slug, task.data.servicePointId, 'dirty', task.sk).catch(() => undefined);
  }
  return left;
}

async function clear(state: State, ctx: ActorContext, msg: Extract<CheckinMessage, { type: 'clear' }>): Promise<ClearReply> {
  const asker = askerOf(ctx);
  const released = await releaseServicePoint(asker, ctx.tenant, state.slug, msg.point, msg.finalStatus);
  const point = released.point;
  // The task served there: the one the point knew, and any open check-in task that says it is there.
  const ids = new Set<string>();
  if (released.taskId) ids.add(released.taskId);
  for (const t of ctx.store.scan(ctx.tenant, TASK_DATATYPE, { 'data.servicePointId': point.sk, 'data.status': 'open' })) {
    if (t.data.workflowId === CHECKIN_WORKFLOW && t.data.stageId === CHECKIN_SERVING) ids.add(t.sk);
  }
  const completedTasks: TaskRecord[] = [];
  for (const taskId of ids) {
    try {
      completedTasks.push(
        await askWorkflow<TaskRecord>(asker, ctx.tenant, {
          type: 'complete',
          taskId,
          outcome: 'served',
          by: msg.by,
          expect: { ...CHECKIN, stageId: CHECKIN_SERVING, servicePointId: point.sk },
        }),
      );
    } catch (err) {
      // Already finished, or moved elsewhere: nothing to complete here.
      if (!(err instanceof AppError) || (err.statusCode !== 409 && err.statusCode !== 404)) throw err;
    }
  }
  return { servicePoint: point, completedTasks };
}

function receive(state: State, msg: CheckinMessage, ctx: ActorContext): Promise<unknown> {
  switch (msg.type) {
    case 'walk-in':
      return createTaskDetailed(askerOf(ctx), ctx.tenant, {
        workflowId: CHECKIN_WORKFLOW,
        title: msg.customer.name ?? msg.customer.email ?? msg.customer.phone ?? 'Walk-in',
        businessLocationId: state.slug,
        customer: msg.customer,
        partySize: msg.partySize,
        notes: msg.notes,
        by: msg.by,
        payload: { source: 'walk-in' },
      }).then((r) => r.task);
    case 'from-reservation':
      return fromReservation(state, ctx, msg);
    case 'assign':
      return assign(state, ctx, msg);
    case 'leave':
      return leave(state, ctx, msg);
    case 'no-show':
      return checkinTask(state, ctx, msg.taskId).then((task) => {
        if (task.data.status === 'open' && task.data.stageId === CHECKIN_SERVING) {
          throw appError('ERR_CONFLICT', `task ${task.sk} is being served; a guest who goes away now has left (use leave)`);
        }
        return askWorkflow(askerOf(ctx), ctx.tenant, {
          type: 'cancel',
          taskId: task.sk,
          outcome: 'no_show',
          by: msg.by,
          expect: { ...CHECKIN, stageId: CHECKIN_WAITING },
        });
      });
    case 'notify':
      return checkinTask(state, ctx, msg.taskId).then((task) =>
        askWorkflow(askerOf(ctx), ctx.tenant, { type: 'notify', taskId: task.sk, message: msg.message, channel: msg.channel, by: msg.by, expect: CHECKIN }),
      );
    case 'clear':
      return clear(state, ctx, msg);
    default:
      return Promise.reject(appError('ERR_BAD_REQUEST', `unknown check-in message ${(msg as { type?: unknown }).type}`));
  }
}

export const checkinQueueActor: ActorKind<State, CheckinMessage, unknown> = {
  kind: CHECKIN_ACTOR,
  activate: (ctx) => ({ slug: ctx.key }),
  receive,
};
