// Reservation and service point routes (spec: Endpoints → Reservations and service points).
// Each handler makes one call into the reservations API (bookings, settings: their actors; reads:
// the store or the query pool) or the service-points API (the actor of the point's location).
import { Type } from '@sinclair/typebox';
import { AppError, appError } from '../../../core/errors.js';
import { assertIdempotencyKey } from '../../../core/idempotency.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { parseDate } from '../../../core/timezone.js';
import type { Principal } from '../../../core/auth/tokens.js';
import { parseDefinition, type Definition } from '../../../actors/reservations/index.js';
import { createReservationsApi, present, type Owner, type ReservationsApi } from '../../../actors/reservations/index.js';
import { createCheckinApi } from '../../../actors/checkin-queue/index.js';
import { createServicePointsApi } from '../../../actors/service-points/index.js';
import type { AppDeps } from '../../deps.js';
import { route, type RequestContext, type RouteDef } from '../../route.js';
import { IdParam, ISODate, Paging, RecordList, RecordSchema, Slug, StringEnum } from '../workflow/schemas.js';

const TAG = 'Reservations';
const SP_TAG = 'Service points';

const ServiceRef = Type.Union([
  Type.String({ minLength: 1, maxLength: 200 }),
  Type.Object({ id: Type.Optional(Type.String({ maxLength: 200 })), name: Type.Optional(Type.String({ maxLength: 200 })) }),
]);
const Customer = Type.Object(
  {
    name: Type.Optional(Type.String({ maxLength: 200 })),
    email: Type.Optional(Type.String({ maxLength: 200 })),
    phone: Type.Optional(Type.String({ maxLength: 40 })),
  },
  { additionalProperties: false },
);
const Answers = Type.Record(Type.String(), Type.Unknown(), { description: 'Form answers (flat fields work too)' });

/** Fields of the create/update bodies that are not form answers. */
const RESERVED = new Set([
  'reservationDefinitionId',
  'service',
  'serviceId',
  'serviceName',
  'startTime',
  'endTime',
  'partySize',
  'customer',
  'notes',
  'customerId',
  'idempotencyKey',
  'answers',
  'id',
  'reservationId',
  'version',
  'status',
  'isNew',
]);

const MAX_ANSWERS = 100;

function ownerOf(p: Principal | undefined): Owner {
  if (!p) throw appError('ERR_UNAUTHENTICATED', 'send a bearer token in the Authorization header');
  return { customerId: p.customerId ?? p.sub, email: p.email, staff: p.kind === 'staff', by: p.sub };
}

function answersOf(body: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  if (body.answers && typeof body.answers === 'object' && !Array.isArray(body.answers)) Object.assign(out, body.answers);
  for (const [k, v] of Object.entries(body)) if (!RESERVED.has(k)) out[k] = v;
  if (Object.keys(out).length > MAX_ANSWERS) throw appError('ERR_VALIDATION', `at most ${MAX_ANSWERS} form answers`);
  return out;
}

/** spec: Errors 3: a record-store style `{datatype, data}` body is not a new reservation. */
function refuseWrapped(body: Record<string, unknown>): void {
  if ('datatype' in body || (body.data !== null && typeof body.data === 'object')) {
    throw appError(
      'ERR_BAD_REQUEST',
      'reservation is not new: send flat fields (reservationDefinitionId, service, startTime, endTime, customer {name, email} and the form answers), not {datatype, data}',
    );
  }
}

function requireFields(body: Record<string, unknown>, names: string[]): void {
  const missing = names.filter((k) => typeof body[k] !== 'string' || !(body[k] as string).trim());
  if (missing.length) {
    const messages = missing.map((k) => `body/${k} is required`);
    throw new AppError('ERR_VALIDATION', [messages.join('; ')], { messages });
  }
}

const ADMIN_ROLES = ['Admin', 'ConfigAdmin'];

const SettingsSchema = Type.Object({
  servicePointsRequireStaffToken: Type.Boolean({
    description:
      'When true, creating, changing and deleting service points needs a staff token (role User); an organisation created by ' +
      'sign-up starts with it true. False (sign-up with `openStorefront: true`, and organisations created before this default): ' +
      'any customer or staff token may, as the spec’s Auth column says',
  }),
});

/**
 * The organisation setting `servicePointsRequireStaffToken`: when on, a service-point write needs a
 * staff token with role User (a customer's or another staff token: 403).
 */
function requireStaffIfConfigured(api: ReservationsApi, ctx: RequestContext): void {
  if (!api.settings(ctx.tenant).servicePointsRequireStaffToken) return;
  const p = ctx.principal;
  if (!(p && p.kind === 'staff' && p.roles.includes('User'))) {
    throw appError('ERR_FORBIDDEN', 'this organisation requires a staff token to change service points (servicePointsRequireStaffToken)');
  }
}

const SP_GATE_NOTE =
  ' **Access.** With `servicePointsRequireStaffToken` true (where an organisation created by sign-up starts) a staff token is ' +
  'needed (403 with a customer token, 401 without a token). With it false (the spec’s mode: sign-up with `openStorefront: true`, ' +
  'organisations created before this default, or `PUT /crm/reservations/settings` by an Admin) any customer or staff token may ' +
  '(spec: Auth `customer`).';

/** A booking the caller owns (another customer's is a 404: spec Errors, 404). */
function ownBooking(api: ReservationsApi, ctx: RequestContext, id: string): StoredRecord {
  const rec = api.booking(ctx.tenant, id);
  if (!rec || rec.data.customerId !== ownerOf(ctx.principal).customerId) throw appError('ERR_NOT_FOUND', `reservation ${id}`);
  return rec;
}

/** A definition as clients see it: services (the implicit one included) and timezone resolved. */
function presentDefinition(def: Definition): StoredRecord {
  return {
    ...def.record,
    data: {
      ...def.record.data,
      name: def.name,
      timezone: def.timezone,
      slotMinutes: def.slotMinutes,
      services: def.services.map((s) => ({ ...s })),
      requiredFields: def.requiredFields,
    },
  };
}

const CreateBody = Type.Object(
  {
    reservationDefinitionId: Type.Optional(Type.String({ maxLength: 64 })),
    service: Type.Optional(ServiceRef),
    serviceId: Type.Optional(Type.String({ maxLength: 200 })),
    serviceName: Type.Optional(Type.String({ maxLength: 200 })),
    startTime: Type.Optional(Type.String({ maxLength: 40, description: 'ISO instant; a zone-less time is read in the definition timezone' })),
    endTime: Type.Optional(Type.String({ maxLength: 40 })),
    partySize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    customer: Type.Optional(Customer),
    notes: Type.Optional(Type.String({ maxLength: 2000 })),
    customerId: Type.Optional(Type.String({ maxLength: 64, description: 'Staff only: book for this customer' })),
    idempotencyKey: Type.Optional(Type.String({ description: 'UUID: a retry with the same key answers the first result' })),
    answers: Type.Optional(Answers),
  },
  { additionalProperties: true, description: 'Flat fields; every other field is a form answer' },
);

const UpdateBody = Type.Object(
  {
    id: Type.Optional(Type.String({ maxLength: 64 })),
    reservationId: Type.Optional(Type.String({ maxLength: 64 })),
    version: Type.Optional(Type.Integer({ minimum: 1 })),
    service: Type.Optional(ServiceRef),
    startTime: Type.Optional(Type.String({ maxLength: 40 })),
    endTime: Type.Optional(Type.String({ maxLength: 40 })),
    partySize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
    customer: Type.Optional(Customer),
    notes: Type.Optional(Type.String({ maxLength: 2000 })),
    status: Type.Optional(StringEnum(['cancelled'])),
    answers: Type.Optional(Answers),
  },
  { additionalProperties: true },
);

const SlotSchema = Type.Object({
  startTime: Type.String(),
  endTime: Type.String(),
  localTime: Type.String({ description: 'Wall-clock start in the definition timezone' }),
  capacity: Type.Integer(),
  remaining: Type.Integer(),
  available: Type.Boolean({ description: 'remaining >= partySize' }),
});

export function reservationRoutes(deps: AppDeps): RouteDef[] {
  const api = createReservationsApi(deps);
  const points = createServicePointsApi(deps);
  const checkin = createCheckinApi(deps, api);
  return [
    route({
      method: 'GET',
      path: '/crm/reservations/definitions',
      auth: 'none',
      tag: TAG,
      summary: 'Reservation definitions (public, with orgid)',
      description: 'Each with its timezone, slot length, opening hours and services (a definition without services shows its implicit one).',
      query: Type.Object({ ...Paging }),
      response: RecordList,
      handler: async (ctx) => {
        const page = await api.definitions(ctx.tenant, { page: ctx.query.page, pageSize: ctx.query.pageSize });
        return { ...page, data: page.data.map((r) => presentDefinition(parseDefinition(r))) };
      },
    }),

    route({
      method: 'POST',
      path: '/crm/reservations/slots',
      auth: 'none',
      tag: TAG,
      summary: "A day's bookable slots with remaining capacity (public, with orgid)",
      description:
        "`serviceDate` is a date in the definition's timezone; slots come back as UTC instants with their local wall-clock time. " +
        'Slots that have started are left out. On a DST change day a wall-clock start the clock skips has no slot, and one it ' +
        'shows twice has one (its first occurrence). `serviceName` takes a service id or name; it may be left out when the ' +
        'definition has one service.',
      body: Type.Object({
        reservationDefinitionId: Type.String({ minLength: 1, maxLength: 64 }),
        serviceName: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        serviceDate: ISODate,
        partySize: Type.Optional(Type.Integer({ minimum: 1, maximum: 1000 })),
      }),
      response: Type.Object({
        reservationDefinitionId: Type.String(),
        service: Type.Object({
          id: Type.Optional(Type.String()),
          name: Type.String(),
          durationMinutes: Type.Integer(),
          capacity: Type.Integer(),
        }),
        serviceDate: Type.String(),
        timezone: Type.String(),
        partySize: Type.Integer(),
        slots: Type.Array(SlotSchema),
      }),
      errors: [404],
      handler: (ctx) => {
        const b = ctx.body;
        if (!parseDate(b.serviceDate)) throw appError('ERR_VALIDATION', 'body/serviceDate is not a calendar date');
        return api.slots(ctx.tenant, b);
      },
    }),

    route({
      method: 'GET',
      path: '/crm/reservations/get',
      auth: 'customer',
      tag: TAG,
      summary: "The caller's own bookings, soonest first",
      description:
        'Only the caller\'s bookings (a staff token sees the ones it booked for itself); operators list every booking with ' +
        '`POST /repository/find/reservation`. Times are UTC instants; an older record with a zone-less time is read in its ' +
        "definition's timezone.",
      query: Type.Object({
        status: Type.Optional(StringEnum(['confirmed', 'cancelled', 'checked_in'])),
        upcoming: Type.Optional(Type.Boolean({ description: 'Only bookings that have not started' })),
        ...Paging,
      }),
      response: RecordList,
      handler: (ctx) =>
        api.ownBookings(ctx.tenant, ownerOf(ctx.principal).customerId, {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
          status: ctx.query.status,
          upcoming: ctx.query.upcoming,
        }),
    }),

    route({
      method: 'GET',
      path: '/crm/reservations/get/:id',
      auth: 'customer',
      tag: TAG,
      summary: "One of the caller's bookings (another's: 404)",
      params: IdParam('id', 'Reservation id (sk)'),
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => {
        const rec = ownBooking(api, ctx, ctx.params.id);
        return present(rec, api.definition(ctx.tenant, String(rec.data.reservationDefinitionId ?? '')));
      },
    }),

    route({
      method: 'POST',
      path: '/crm/reservations/create',
      auth: 'customer',
      tag: TAG,
      summary: 'Book a slot',
      description:
        'Flat fields: `reservationDefinitionId`, `service` (id or name), `startTime` (a slot start from /slots), `endTime`?, ' +
        '`partySize`?, `customer {name, email}` (email defaults to the caller\'s), `notes`?, the required form answers (flat or ' +
        'under `answers`). A `{datatype, data}` body is refused as not new (400); an unknown service is 400 "invalid service"; ' +
        'missing form answers are 400 naming them; a full slot is 409. The booking gets a confirmation number (`R-` and 8 ' +
        'characters, never its id), its confirmation message is queued and its reminder scheduled (durably) in the same write.',
      body: CreateBody,
      status: 201,
      response: RecordSchema,
      errors: [404, 409],
      handler: async (ctx) => {
        const body = ctx.body as Record<string, unknown>;
        refuseWrapped(body);
        requireFields(body, ['reservationDefinitionId', 'startTime']);
        assertIdempotencyKey(body.idempotencyKey);
        const owner = ownerOf(ctx.principal);
        if (!owner.staff && body.customerId !== undefined && body.customerId !== owner.customerId) {
          throw appError('ERR_FORBIDDEN', 'customers book for themselves: leave customerId out');
        }
        const defId = String(body.reservationDefinitionId);
        const b = ctx.body;
        return api.book(
          ctx.tenant,
          owner,
          {
            reservationDefinitionId: defId,
            service: b.service ?? b.serviceId ?? b.serviceName,
            startTime: String(body.startTime),
            endTime: b.endTime,
            partySize: b.partySize,
            customer: b.customer,
            notes: b.notes,
            customerId: b.customerId,
            answers: answersOf(body),
          },
          b.idempotencyKey,
        );
      },
    }),

    route({
      method: 'POST',
      path: '/crm/reservations/update',
      auth: 'customer',
      tag: TAG,
      summary: "Change or cancel one of the caller's bookings",
      description:
        '`{id, ...flat fields to change}`; `version` (optional) makes it conditional (stale: 409). Moving the time, service or ' +
        'party re-checks capacity (full: 409) and re-arms the reminder. `status: "cancelled"` cancels it (frees the place, drops ' +
        'the reminder). A cancelled booking cannot change (409); a checked-in one cannot move (409).',
      body: UpdateBody,
      response: RecordSchema,
      errors: [404, 409],
      handler: (ctx) => {
        const body = ctx.body as Record<string, unknown>;
        refuseWrapped(body);
        const id = ctx.body.id ?? ctx.body.reservationId;
        if (!id) throw new AppError('ERR_VALIDATION', ['body/id is required'], { messages: ['body/id is required'] });
        const rec = ownBooking(api, ctx, id);
        const b = ctx.body;
        const answers = answersOf(body);
        return api.changeBooking(
          ctx.tenant,
          rec,
          ownerOf(ctx.principal),
          {
            service: b.service,
            startTime: b.startTime,
            endTime: b.endTime,
            partySize: b.partySize,
            customer: b.customer,
            notes: b.notes,
            status: b.status,
            answers: Object.keys(answers).length ? answers : undefined,
          },
          b.version,
        );
      },
    }),

    route({
      method: 'POST',
      path: '/crm/reservations/send-reminder/:reservationId',
      auth: 'customer',
      tag: TAG,
      summary: 'Send the reminder of one of the caller\'s bookings now',
      description: 'Through the outbox (email, or SMS when the definition says so and a phone is known). Cancelled: 409; no address: 409.',
      params: IdParam('reservationId', 'Reservation id (sk)'),
      response: Type.Object({
        sent: Type.Boolean(),
        reservationId: Type.String(),
        channel: Type.String(),
        to: Type.String(),
        messageId: Type.String(),
      }),
      errors: [404, 409],
      handler: (ctx) => {
        const rec = ownBooking(api, ctx, ctx.params.reservationId);
        return api.sendReminder(ctx.tenant, rec, ownerOf(ctx.principal));
      },
    }),

    route({
      method: 'GET',
      path: '/crm/reservations/settings',
      auth: 'customer',
      roles: ADMIN_ROLES,
      tag: SP_TAG,
      summary: "The organisation's reservation settings (role Admin or ConfigAdmin)",
      response: SettingsSchema,
      handler: (ctx) => api.settings(ctx.tenant),
    }),

    route({
      method: 'PUT',
      path: '/crm/reservations/settings',
      auth: 'customer',
      roles: ADMIN_ROLES,
      tag: SP_TAG,
      summary: "Change the organisation's reservation settings (role Admin or ConfigAdmin)",
      description:
        '`servicePointsRequireStaffToken` true makes service-point create, update and delete need a staff token; an ' +
        'organisation created by sign-up starts with it true unless it signed up with `openStorefront: true`, and one created ' +
        'before that default starts with it false. While it is false, any authenticated customer can add, rename or remove the ' +
        'venue’s tables (the spec’s default).',
      body: Type.Object({ servicePointsRequireStaffToken: Type.Boolean() }, { additionalProperties: false }),
      response: SettingsSchema,
      handler: (ctx) => api.updateSettings(ctx.tenant, ctx.body),
    }),

    // Service points: read and changed at the customer level (spec: Auth `customer`); the
    // organisation may require staff for changes (servicePointsRequireStaffToken).
    route({
      method: 'GET',
      path: '/crm/reservations/service-point/get',
      auth: 'customer',
      tag: SP_TAG,
      summary: 'Service points (tables, chairs, desks), by name',
      query: Type.Object({
        businessLocationId: Type.Optional(Slug),
        status: Type.Optional(Type.String({ maxLength: 40 })),
        ...Paging,
      }),
      response: RecordList,
      handler: (ctx) =>
        checkin.points(ctx.tenant, { location: ctx.query.businessLocationId, status: ctx.query.status }, {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
        }),
    }),

    route({
      method: 'GET',
      path: '/crm/reservations/service-point/get/:id',
      auth: 'customer',
      tag: SP_TAG,
      summary: 'One service point',
      params: IdParam('id', 'Service point id (sk)'),
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => points.get(ctx.tenant, ctx.params.id),
    }),

    route({
      method: 'POST',
      path: '/crm/reservations/service-point/create',
      auth: 'customer',
      tag: SP_TAG,
      summary: 'Create a service point at a location',
      description:
        '`{name, businessLocationId (slug), status? (default "available"), ...other fields}`. Names are unique per location ' +
        '(case-insensitive; 409). The location must exist (404); its sk instead of its slug is a 400.' + SP_GATE_NOTE,
      body: Type.Object(
        {
          name: Type.String({ minLength: 1, maxLength: 100 }),
          businessLocationId: Slug,
          status: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
        },
        { additionalProperties: true },
      ),
      status: 201,
      response: RecordSchema,
      errors: [403, 404, 409],
      handler: (ctx) => {
        requireStaffIfConfigured(api, ctx);
        api.requireLocation(ctx.tenant, ctx.body.businessLocationId);
        const data: Record<string, unknown> = { ...(ctx.body as Record<string, unknown>) };
        for (const k of ['id', 'sk', 'pk', 'version', 'datatype', 'data', 'isNew']) delete data[k];
        return points.create(ctx.tenant, ctx.body.businessLocationId, data);
      },
    }),

    route({
      method: 'POST',
      path: '/crm/reservations/service-point/update',
      auth: 'customer',
      tag: SP_TAG,
      summary: 'Change a service point',
      description:
        '`{id, version?, ...fields to set}`. The location cannot change (400); `version` makes it conditional (stale: 409).' + SP_GATE_NOTE,
      body: Type.Object(
        {
          id: Type.String({ minLength: 1, maxLength: 64 }),
          version: Type.Optional(Type.Integer({ minimum: 1 })),
          name: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
          status: Type.Optional(Type.String({ minLength: 1, maxLength: 40 })),
        },
        { additionalProperties: true },
      ),
      response: RecordSchema,
      errors: [403, 404, 409],
      handler: (ctx) => {
        requireStaffIfConfigured(api, ctx);
        const changes: Record<string, unknown> = { ...(ctx.body as Record<string, unknown>) };
        for (const k of ['id', 'sk', 'pk', 'version', 'datatype', 'data', 'isNew']) delete changes[k];
        return points.update(ctx.tenant, ctx.body.id, changes, ctx.body.version);
      },
    }),

    route({
      method: 'DELETE',
      path: '/crm/reservations/service-point/delete/:id',
      auth: 'customer',
      tag: SP_TAG,
      summary: 'Delete a service point',
      description: 'An occupied point (a guest is being served there) is refused with 409: clear it first.' + SP_GATE_NOTE,
      params: IdParam('id', 'Service point id (sk)'),
      response: Type.Object({ deleted: Type.Boolean(), id: Type.String() }),
      errors: [403, 404, 409],
      handler: (ctx) => {
        requireStaffIfConfigured(api, ctx);
        return points.remove(ctx.tenant, ctx.params.id);
      },
    }),
  ];
}

