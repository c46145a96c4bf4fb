// Check-in queue routes (spec: Endpoints → Check-in queue; all staff). Every change and read is one
// call of the check-in API (actors/checkin-queue/api.ts): a change goes to the check-in actor of the
// location concerned, which asks the workflow, service-points and reservations actors in turn.
// `businessLocationId` is always the location slug; an sk sent instead finds nothing, so lists
// come back empty (spec: Errors 10).
import { Type } from '@sinclair/typebox';
import { AppError, appError } from '../../../core/errors.js';
import { dayRange, parseDate } from '../../../core/timezone.js';
import { createCheckinApi, type CheckinApi } from '../../../actors/checkin-queue/index.js';
import { createReservationsApi } from '../../../actors/reservations/index.js';
import { pageItems } from '../../../core/store/query.js';
import { CHECKIN_WAITING } from '../../../actors/workflow/index.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import { FreeObject, recordOf } from '../../schemas.js';
import { byOf, IdParam, ISODate, ISODateTime, ListOf, Paging, RecordList, RecordSchema, Slug, StringEnum } from '../workflow/schemas.js';

const TAG = 'Check-in queue';
const TaskIdParam = IdParam('taskId', 'Check-in task id (sk)');
const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function taskAction(api: CheckinApi, kind: 'leave' | 'no-show', summary: string, description: string): RouteDef {
  const act = kind === 'leave' ? api.leave : api.noShow;
  return route({
    method: 'POST',
    path: `/checkin/:taskId/${kind}`,
    auth: 'staff',
    tag: TAG,
    summary,
    description,
    params: TaskIdParam,
    response: RecordSchema,
    errors: [404, 409],
    handler: (ctx) => act(ctx.tenant, ctx.params.taskId, byOf(ctx.principal)),
  });
}

const QueueItem = recordOf(FreeObject, {
  queuePosition: Type.Integer({ description: '1-based place among waiting tasks; 0 while being served' }),
});

const ServedSchema = Type.Object({ task: RecordSchema, servicePoint: RecordSchema });

export function checkinRoutes(deps: AppDeps): RouteDef[] {
  const reservations = createReservationsApi(deps);
  const api = createCheckinApi(deps, reservations);
  return [
    route({
      method: 'POST',
      path: '/checkin/walk-in',
      auth: 'staff',
      tag: TAG,
      summary: 'Put a walk-in guest in the queue of a location',
      description:
        'At least one of name, email, phone is required (400 otherwise: spec Errors 7 and Limits). The task joins the ' +
        '`check-in` workflow in stage `waiting`.',
      body: Type.Object({
        businessLocationId: Slug,
        name: Type.Optional(Type.String({ maxLength: 200 })),
        email: Type.Optional(Type.String({ maxLength: 200 })),
        phone: Type.Optional(Type.String({ maxLength: 40 })),
        partySize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        notes: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
      status: 201,
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => {
        const b = ctx.body;
        const customer = {
          ...(b.name?.trim() ? { name: b.name.trim() } : {}),
          ...(b.email?.trim() ? { email: b.email.trim() } : {}),
          ...(b.phone?.trim() ? { phone: b.phone.trim() } : {}),
        };
        if (!customer.name && !customer.email && !customer.phone) {
          const msg = 'at least one of body/name, body/email, body/phone is required';
          throw new AppError('ERR_VALIDATION', [msg], { messages: [msg] });
        }
        if (customer.email && !EMAIL.test(customer.email)) throw appError('ERR_VALIDATION', 'body/email must be an email address');
        return api.walkIn(ctx.tenant, b.businessLocationId, { customer, partySize: b.partySize, notes: b.notes }, byOf(ctx.principal));
      },
    }),

    route({
      method: 'POST',
      path: '/checkin/from-reservation/:reservationId',
      auth: 'staff',
      tag: TAG,
      summary: 'Check a booking in: its guest joins the queue',
      description:
        'The task carries the booking id and `businessLocationId` (the one in the request wins over the booking\'s); the booking ' +
        'gets `checkedInAt` and `checkInTaskId`. While a live task exists for the booking: 409. A cancelled booking: 409.',
      params: IdParam('reservationId', 'Reservation id (sk)'),
      body: Type.Object({
        partySize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
        businessLocationId: Type.Optional(Slug),
        notes: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
      status: 201,
      response: RecordSchema,
      errors: [404, 409],
      handler: (ctx) => {
        const b = ctx.body;
        return api.checkInBooking(ctx.tenant, ctx.params.reservationId, { location: b.businessLocationId, partySize: b.partySize, notes: b.notes }, byOf(ctx.principal));
      },
    }),

    route({
      method: 'POST',
      path: '/checkin/:taskId/assign',
      auth: 'staff',
      tag: TAG,
      summary: 'Seat a waiting guest at a service point',
      description:
        '`servicePointId` is the point\'s id or its name (at the task\'s location). A point whose status is `occupied` or ' +
        '`reserved` is refused with 409; otherwise the task moves to stage `serving` at that point and the point becomes ' +
        '`occupied` (written back by its sk). Two staff seating guests at one free point at once: exactly one succeeds. ' +
        'A task already served or finished: 409.',
      params: TaskIdParam,
      body: Type.Object({ servicePointId: Type.String({ minLength: 1, maxLength: 100 }) }),
      response: ServedSchema,
      errors: [404, 409],
      handler: (ctx) => api.assign(ctx.tenant, ctx.params.taskId, ctx.body.servicePointId, byOf(ctx.principal)),
    }),

    taskAction(
      api,
      'leave',
      'The guest left the queue',
      'Cancels the task with outcome `left`. A guest who was being served leaves the point `dirty`. A finished task: 409.',
    ),
    taskAction(
      api,
      'no-show',
      'The guest did not come when called',
      'Cancels a waiting task with outcome `no_show`. A task being served (use leave) or finished: 409.',
    ),

    route({
      method: 'POST',
      path: '/checkin/:taskId/notify',
      auth: 'staff',
      tag: TAG,
      summary: 'Tell the guest it is their turn',
      description:
        'Sends a message through the outbox (SMS when the task has a phone, else email; or the `channel` asked for) in the ' +
        'same write that stamps the task `notifiedAt` (and counts `notifications`). No address for the channel: 409.',
      params: TaskIdParam,
      body: Type.Object({
        message: Type.Optional(Type.String({ minLength: 1, maxLength: 1000 })),
        channel: Type.Optional(StringEnum(['email', 'sms'])),
      }),
      response: RecordSchema,
      errors: [404, 409],
      handler: (ctx) => api.notify(ctx.tenant, ctx.params.taskId, { message: ctx.body.message, channel: ctx.body.channel }, byOf(ctx.principal)),
    }),

    route({
      method: 'POST',
      path: '/checkin/service-point/:spId/clear',
      auth: 'staff',
      tag: TAG,
      summary: 'Free a service point: the guest served there is done',
      description:
        '`finalStatus` is `dirty` or `available` (else 400); the point takes it and the task served there completes (outcome ' +
        '`served`). `spId` is the point\'s id, or its name (with `businessLocationId` when the name is used at several locations).',
      params: IdParam('spId', 'Service point id or name'),
      body: Type.Object({
        finalStatus: StringEnum(['dirty', 'available']),
        businessLocationId: Type.Optional(Slug),
      }),
      response: Type.Object({ servicePoint: RecordSchema, completedTasks: Type.Array(RecordSchema) }),
      errors: [404, 409],
      handler: (ctx) =>
        api.clear(ctx.tenant, ctx.params.spId, { finalStatus: ctx.body.finalStatus, location: ctx.body.businessLocationId }, byOf(ctx.principal)),
    }),

    route({
      method: 'GET',
      path: '/checkin/service-point',
      auth: 'staff',
      tag: TAG,
      summary: 'Service points with their status',
      query: Type.Object({ businessLocationId: Type.Optional(Slug), status: Type.Optional(Type.String({ maxLength: 40 })), ...Paging }),
      response: RecordList,
      handler: (ctx) =>
        api.points(ctx.tenant, { location: ctx.query.businessLocationId, status: ctx.query.status }, {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
        }),
    }),

    route({
      method: 'GET',
      path: '/checkin/service-point/available',
      auth: 'staff',
      tag: TAG,
      summary: 'Service points ready to seat a guest',
      description: 'Points whose status is not `occupied`, `reserved` or `dirty` (compared without case). Assign accepts a dirty point too.',
      query: Type.Object({ businessLocationId: Type.Optional(Slug), ...Paging }),
      response: RecordList,
      handler: (ctx) =>
        api.points(ctx.tenant, { location: ctx.query.businessLocationId, availableOnly: true }, {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
        }),
    }),

    route({
      method: 'GET',
      path: '/checkin/queue',
      auth: 'staff',
      tag: TAG,
      summary: 'The live queue of a location in arrival order (waiting and being served)',
      query: Type.Object({ businessLocationId: Slug, ...Paging }),
      response: ListOf(QueueItem),
      handler: (ctx) => {
        let n = 0;
        const items = api.liveTasks(ctx.tenant, ctx.query.businessLocationId).map((t) => ({
          ...t,
          queuePosition: t.data.stageId === CHECKIN_WAITING ? ++n : 0,
        }));
        return pageItems(items, ctx.query.page, ctx.query.pageSize, ctx.deps.config.store);
      },
    }),

    route({
      method: 'GET',
      path: '/checkin/queue/summary',
      auth: 'staff',
      tag: TAG,
      summary: 'Waiting and serving counts, average and longest wait of a location',
      description:
        'Waits are those of the guests waiting now (minutes so far). `averageServiceMinutes` is over the last 50 guests served there ' +
        '(15 before anyone has been, and for a location whose more than 1,000 earlier guests were served before this server kept the ' +
        'sample, until its next served guest).',
      query: Type.Object({ businessLocationId: Slug }),
      response: Type.Object({
        businessLocationId: Type.String(),
        waiting: Type.Integer(),
        serving: Type.Integer(),
        averageWaitMinutes: Type.Number(),
        longestWaitMinutes: Type.Number(),
        averageServiceMinutes: Type.Number(),
        servicePoints: Type.Integer(),
        availableServicePoints: Type.Integer(),
      }),
      handler: (ctx) => api.summary(ctx.tenant, ctx.query.businessLocationId),
    }),

    route({
      method: 'GET',
      path: '/checkin/queue/history',
      auth: 'staff',
      tag: TAG,
      summary: 'Finished check-in tasks (served, left, no-show), most recent first',
      description:
        'Filter by `date` (a calendar day in the location\'s timezone) or by `from`/`to` instants, on the time they finished.',
      query: Type.Object({
        businessLocationId: Type.Optional(Slug),
        date: Type.Optional(ISODate),
        from: Type.Optional(ISODateTime),
        to: Type.Optional(ISODateTime),
        ...Paging,
      }),
      response: RecordList,
      handler: (ctx) => {
        const q = ctx.query;
        let from = q.from ? Date.parse(q.from) : undefined;
        let to = q.to ? Date.parse(q.to) : undefined;
        if (q.date) {
          if (!parseDate(q.date)) throw appError('ERR_VALIDATION', 'query/date is not a calendar date');
          const tz = q.businessLocationId ? reservations.locationTimezone(ctx.tenant, q.businessLocationId) : 'UTC';
          [from, to] = dayRange(q.date, tz);
        }
        return api.history(ctx.tenant, q.businessLocationId, { from, to }, { page: q.page, pageSize: q.pageSize });
      },
    }),

    route({
      method: 'GET',
      path: '/checkin/queue/position/:taskId',
      auth: 'staff',
      tag: TAG,
      summary: "A guest's place in the queue and estimated wait",
      description:
        'position is 1-based among waiting guests (0 once served or finished). The estimate assumes each service point of ' +
        'the location serves one party at a time for the average service time.',
      params: TaskIdParam,
      response: Type.Object({
        taskId: Type.String(),
        businessLocationId: Type.Union([Type.String(), Type.Null()]),
        status: Type.String(),
        stageId: Type.String(),
        position: Type.Integer(),
        ahead: Type.Integer(),
        estimatedWaitMinutes: Type.Integer(),
      }),
      errors: [404],
      handler: (ctx) => {
        return api.position(ctx.tenant, ctx.params.taskId);
      },
    }),

    route({
      method: 'GET',
      path: '/checkin/upcoming',
      auth: 'staff',
      tag: TAG,
      summary: 'Bookings arriving soon that are not checked in yet',
      description:
        'Bookings starting within the next `hours` (default 2), including those up to `lateMinutes` (default 30) late, not ' +
        'cancelled and not checked in, soonest first.',
      query: Type.Object({
        businessLocationId: Type.Optional(Slug),
        hours: Type.Optional(Type.Number({ exclusiveMinimum: 0, maximum: 168 })),
        lateMinutes: Type.Optional(Type.Integer({ minimum: 0, maximum: 1440 })),
        ...Paging,
      }),
      response: RecordList,
      handler: (ctx) =>
        reservations.upcoming(ctx.tenant, {
          hours: ctx.query.hours ?? 2,
          lateMinutes: ctx.query.lateMinutes ?? 30,
          location: ctx.query.businessLocationId,
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
        }),
    }),

    route({
      method: 'GET',
      path: '/checkin/reservations/today',
      auth: 'staff',
      tag: TAG,
      summary: "A location's bookings of today, in the location's timezone",
      description:
        "Today is the calendar day in the location's timezone (`data.timezone` of the location record, else that of a " +
        'reservation definition there, else UTC); `date` picks another day. Cancelled bookings are left out unless asked for.',
      query: Type.Object({
        businessLocationId: Slug,
        date: Type.Optional(ISODate),
        includeCancelled: Type.Optional(Type.Boolean()),
        ...Paging,
      }),
      response: ListOf(RecordSchema, { date: Type.String(), timezone: Type.String() }),
      handler: (ctx) => {
        const q = ctx.query;
        if (q.date && !parseDate(q.date)) throw appError('ERR_VALIDATION', 'query/date is not a calendar date');
        return reservations.today(ctx.tenant, {
          location: q.businessLocationId,
          date: q.date,
          includeCancelled: q.includeCancelled,
          page: q.page,
          pageSize: q.pageSize,
        });
      },
    }),
  ];
}
