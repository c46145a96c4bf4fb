// Events administration (spec: Endpoints → Events, all staff-only): events with their zones and
// ticket types, publishing, sessions and the schedule, participants, media records. Writes go
// through the tenant's events actor; reads through the events API. An event is named by id or slug.
import type { AppDeps } from '../../deps.js';
import { Type } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import type { Filter } from '../../../core/store/query.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { isValidTimeZone, localDate } from '../../../core/timezone.js';
import type { ChildKind, EventInput, EventWithTypes as Written } from '../../../actors/events/index.js';
import { exponentOf, storedMinor, ticketTypeRead } from '../../../actors/event-records/index.js';
import { toMajor } from '../../../actors/storefront/index.js';
import {
  EVENT,
  EVENT_MEDIA,
  EVENT_PARTICIPANT,
  EVENT_SESSION,
  RESERVED_SLUGS,
  type SoldCounts,
} from '../../../actors/event-records/index.js';
import { doorFree } from './door-wait.js';
import { route, type RouteDef } from '../../route.js';
import { mediaRoutes, removeStoredFiles } from './media.js';
import { EventCreate, EventParams, EventUpdate, EventWithTypes, Id, IdParams, ListOf, Paging, RecordList, RecordSchema, TicketType } from './schemas.js';
import { eventRecordWithTypes, mediaOf, mediaRecords, sessionsOf, ticketTypesOf, type EventsApi } from '../../../actors/events/index.js';
import { listRecords } from '../../../actors/records/index.js';

const TAG = 'Events';
const Email = Type.String({ format: 'email', maxLength: 254 });
const DateTime = Type.String({ format: 'date-time' });
const Version = Type.Optional(Type.Integer({ minimum: 1, description: 'The version read; a stale one is a 409' }));

function checkEventInput(i: EventInput): void {
  if (i.timezone !== undefined && !isValidTimeZone(i.timezone)) throw appError('ERR_VALIDATION', `body/timezone "${i.timezone}" is not an IANA time zone`);
  if (i.slug !== undefined && RESERVED_SLUGS.has(i.slug)) throw appError('ERR_VALIDATION', `body/slug "${i.slug}" is reserved`);
}

/** An event answered with every one of its ticket types (prices in major units, see actors/events/money.ts). */
function withTypes(event: StoredRecord, types: StoredRecord[]) {
  const e = exponentOf(event.data.currency);
  return { ...event, ticketTypes: types.map((t) => ticketTypeRead(t, e)) };
}

const written = (w: Written) => withTypes(w.event, w.ticketTypes);

const TYPES_NOTE =
  ' `ticketTypes` lists every ticket type of the event (records; `data.price` in major units of the event currency, ' +
  '`data.moneyUnit` `"major"`).';

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// --- children: sessions, participants, media --------------------------------------------------

const SessionFields = {
  title: Type.String({ minLength: 1, maxLength: 200 }),
  description: Type.Optional(Type.String({ maxLength: 10_000 })),
  startTime: DateTime,
  endTime: DateTime,
  location: Type.Optional(Type.String({ maxLength: 200 })),
  zoneId: Type.Optional(Type.String({ maxLength: 64 })),
  track: Type.Optional(Type.String({ maxLength: 100 })),
  speakerIds: Type.Optional(Type.Array(Id, { maxItems: 50, description: 'Participant ids' })),
  capacity: Type.Optional(Type.Integer({ minimum: 0 })),
};
const SessionCreate = Type.Object(SessionFields, { additionalProperties: false });
const SessionUpdate = Type.Object(
  { ...Object.fromEntries(Object.entries(SessionFields).map(([k, v]) => [k, Type.Optional(v)])), version: Version },
  { additionalProperties: false },
);

const ParticipantFields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  email: Type.Optional(Email),
  phone: Type.Optional(Type.String({ maxLength: 40 })),
  role: Type.Optional(Type.String({ minLength: 1, maxLength: 60, description: 'e.g. `speaker`, `sponsor`, `staff`, `vip` (default `attendee`)' })),
  company: Type.Optional(Type.String({ maxLength: 200 })),
  title: Type.Optional(Type.String({ maxLength: 200 })),
  bio: Type.Optional(Type.String({ maxLength: 10_000 })),
  ticketId: Type.Optional(Id),
};
const ParticipantCreate = Type.Object(ParticipantFields, { additionalProperties: false });
const ParticipantUpdate = Type.Object(
  { ...Object.fromEntries(Object.entries(ParticipantFields).map(([k, v]) => [k, Type.Optional(v)])), version: Version },
  { additionalProperties: false },
);

const MediaCreate = Type.Object(
  {
    title: Type.String({ minLength: 1, maxLength: 200 }),
    kind: Type.Union([Type.Literal('image'), Type.Literal('video'), Type.Literal('audio'), Type.Literal('document'), Type.Literal('link')]),
    url: Type.String({ format: 'uri', maxLength: 2000 }),
    mimeType: Type.Optional(Type.String({ maxLength: 100 })),
    sizeBytes: Type.Optional(Type.Integer({ minimum: 0 })),
    description: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

const ShareBody = Type.Object(
  {
    mediaIds: Type.Array(Id, { minItems: 1, maxItems: 50 }),
    recipients: Type.Array(Email, { minItems: 1, maxItems: 100 }),
    message: Type.Optional(Type.String({ maxLength: 2000 })),
  },
  { additionalProperties: false },
);

const Schedule = Type.Object({
  eventId: Type.String(),
  timezone: Type.String(),
  days: Type.Array(Type.Object({ date: Type.String({ description: 'YYYY-MM-DD in the event time zone' }), sessions: Type.Array(RecordSchema) })),
});

function listOf(svc: EventsApi<AppDeps>, tenant: string, datatype: string, filter: Filter, q: { page?: number; pageSize?: number }, sort: string) {
  return listRecords(svc.deps, tenant, datatype, filter, { page: q.page, pageSize: q.pageSize, sort, sortType: 'asc' });
}

function childRoutes(svc: EventsApi<AppDeps>, o: {
  datatype: ChildKind;
  plural: string;
  singular: string;
  create: ReturnType<typeof Type.Object>;
  update?: ReturnType<typeof Type.Object>;
  state: string;
  defaults?: Record<string, unknown>;
  sort: string;
  listQuery?: Record<string, ReturnType<typeof Type.Optional>>;
  check?: (data: Record<string, any>) => void;
}): RouteDef[] {
  const routes: RouteDef[] = [
    route({
      method: 'GET',
      path: `/events/:id/${o.plural}`,
      auth: 'staff',
      tag: TAG,
      summary: `List the ${o.plural} of an event`,
      params: EventParams,
      query: Type.Object({ ...Paging, ...(o.listQuery ?? {}) }),
      response: RecordList,
      errors: [404],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const filter: Filter = { 'data.event': ev.sk };
        const q = ctx.query as Record<string, unknown>;
        for (const k of Object.keys(o.listQuery ?? {})) if (q[k] !== undefined) filter[`data.${k}`] = q[k];
        return listOf(svc, ctx.tenant, o.datatype, filter, ctx.query, o.sort);
      },
    }),
    route({
      method: 'POST',
      path: `/events/:id/${o.plural}`,
      auth: 'staff',
      tag: TAG,
      summary: `Add a ${o.singular} to an event`,
      params: EventParams,
      body: o.create,
      response: RecordSchema,
      status: 201,
      errors: [404],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const data = { ...(o.defaults ?? {}), ...(ctx.body as Record<string, unknown>) };
        o.check?.(data);
        return svc.events(ctx.tenant, { type: 'create-child', datatype: o.datatype, eventId: ev.sk, data, state: o.state });
      },
    }),
  ];
  if (o.update) {
    routes.push(
      route({
        method: 'PUT',
        path: `/events/${o.plural}/:id`,
        auth: 'staff',
        tag: TAG,
        summary: `Change a ${o.singular}`,
        description: 'Sets the fields sent; `version`, when sent, must be the stored one.',
        params: IdParams,
        body: o.update,
        response: RecordSchema,
        errors: [404, 409],
        handler: (ctx) => {
          const { version, ...patch } = ctx.body as Record<string, unknown> & { version?: number };
          return svc.events(ctx.tenant, { type: 'update-child', datatype: o.datatype, id: ctx.params.id, patch, version });
        },
      }),
      route({
        method: 'DELETE',
        path: `/events/${o.plural}/:id`,
        auth: 'staff',
        tag: TAG,
        summary: `Delete a ${o.singular}`,
        params: IdParams,
        status: 204,
        errors: [404],
        handler: async (ctx) => {
          await svc.events(ctx.tenant, { type: 'delete-child', datatype: o.datatype, id: ctx.params.id });
        },
      }),
    );
  }
  return routes;
}

function ticketTypeView(rec: StoredRecord, currency: string, sold: SoldCounts | undefined) {
  const d = rec.data as Record<string, any>;
  const n = sold?.byType[rec.sk] ?? 0;
  const quantity = typeof d.quantity === 'number' ? d.quantity : null;
  const e = exponentOf(currency);
  return {
    id: rec.sk,
    title: String(d.title ?? ''),
    colour: d.colour ?? null,
    price: toMajor(storedMinor(d, 'price', e), e),
    currency,
    quantity,
    sold: n,
    available: quantity === null ? null : Math.max(0, quantity - n),
    requiresActivation: d.requiresActivation === true,
    perks: Array.isArray(d.perks) ? d.perks.map((p: any) => ({ id: String(p.id), name: String(p.name ?? p.id), description: p.description ?? null })) : [],
    description: d.description ?? null,
    version: rec.version,
  };
}

export function eventRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  return [
    doorFree(route({
      method: 'GET',
      path: '/events',
      auth: 'staff',
      tag: TAG,
      summary: 'List events',
      description: 'Sorted by start date. `q` matches the name (case-insensitive substring); `status` is `draft` or `published`.',
      query: Type.Object({
        ...Paging,
        status: Type.Optional(Type.Union([Type.Literal('draft'), Type.Literal('published')])),
        q: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })),
      }),
      response: RecordList,
      handler: (ctx) => {
        const filter: Filter = {};
        if (ctx.query.status) filter['data.status'] = ctx.query.status;
        if (ctx.query.q) filter['data.name'] = { $regex: escapeRegex(ctx.query.q), $options: 'i' };
        return listOf(svc, ctx.tenant, EVENT, filter, ctx.query, 'data.startDate');
      },
    })),

    doorFree(route({
      method: 'POST',
      path: '/events',
      auth: 'staff',
      tag: TAG,
      summary: 'Create an event',
      description:
        'Flat fields (no `{datatype, data}` wrapper). The slug defaults to the kebab-cased name (made unique); zones are ' +
        '`[{id?, name, capacity?}]`; ticket types are created with the event, each `price` in major units of the event ' +
        'currency as a number or a numeric string (`25`, `"25.00"`). The event starts as `draft`. Answers the event record ' +
        'with its `ticketTypes`.' + TYPES_NOTE,
      body: EventCreate,
      response: EventWithTypes,
      status: 201,
      errors: [409],
      handler: async (ctx) => {
        checkEventInput(ctx.body);
        return written(await svc.events<Written>(ctx.tenant, { type: 'create-event', input: ctx.body, by: ctx.principal!.sub }));
      },
    })),

    doorFree(route({
      method: 'GET',
      path: '/events/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Get an event by id or slug, with its ticket types',
      description: 'The event record.' + TYPES_NOTE,
      params: EventParams,
      response: EventWithTypes,
      errors: [404],
      handler: (ctx) => {
        const id = svc.event(ctx.tenant, ctx.params.id).sk;
        const { ev, types } = eventRecordWithTypes(svc, ctx.tenant, id);
        if (!ev) throw appError('ERR_NOT_FOUND', `event ${ctx.params.id}`);
        return withTypes(ev, types);
      },
    })),

    route({
      method: 'PUT',
      path: '/events/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Change an event',
      description:
        'Sets the fields sent. `zones` replaces the zone list; `ticketTypes` creates types without an id and changes those ' +
        'with one, leaving the others (`price` in major units, a number or a numeric string). The slug of an event with live ' +
        'tickets cannot change (tickets may name their event by slug). Door scanners pick the change up at once.' + TYPES_NOTE,
      params: EventParams,
      body: EventUpdate,
      response: EventWithTypes,
      errors: [404, 409],
      handler: async (ctx) => {
        checkEventInput(ctx.body);
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const { version, ...input } = ctx.body;
        const w = await svc.events<Written>(ctx.tenant, { type: 'update-event', eventId: ev.sk, input, version });
        await svc.eventChanged(ctx.tenant, ev.sk);
        return written(w);
      },
    }),

    route({
      method: 'DELETE',
      path: '/events/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Delete an event',
      description:
        'Refused (409) while the event has live tickets: cancel or refund them first. Its ticket types, sessions, participants ' +
        'and media records (and their uploaded files) go with it; its scan log is kept.',
      params: EventParams,
      status: 204,
      errors: [404, 409],
      handler: async (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const media = mediaOf(svc, ctx.tenant, ev.sk);
        await svc.events(ctx.tenant, { type: 'delete-event', eventId: ev.sk });
        await svc.eventChanged(ctx.tenant, ev.sk);
        // Uploaded files go with their media records.
        await removeStoredFiles(svc.deps, ctx.tenant, media);
      },
    }),

    doorFree(route({
      method: 'POST',
      path: '/events/:id/publish',
      auth: 'staff',
      tag: TAG,
      summary: 'Publish an event',
      description: 'Sets `data.status` and the record `state` to `published` (tickets can then be sold). Publishing twice changes nothing.',
      params: EventParams,
      response: RecordSchema,
      errors: [404],
      handler: async (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const rec = await svc.events<StoredRecord>(ctx.tenant, { type: 'publish-event', eventId: ev.sk, by: ctx.principal!.sub });
        await svc.eventChanged(ctx.tenant, ev.sk);
        return rec;
      },
    })),

    doorFree(route({
      method: 'GET',
      path: '/events/:id/ticket-types',
      auth: 'staff',
      tag: TAG,
      summary: 'Ticket types of an event',
      description:
        'Each with its title, colour and id (spec: Fields known per kind → ticket type), price (major units of `currency`, ' +
        'e.g. 25.5 for 25.50), quantity, sold and available.',
      params: EventParams,
      response: ListOf(TicketType),
      errors: [404],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const { types, sold } = ticketTypesOf(svc, ctx.tenant, ev.sk);
        const data = types.map((t) => ticketTypeView(t, String(ev.data.currency ?? 'USD'), sold));
        return { data, total: data.length, hasNext: false, page: 1, pageSize: Math.max(1, data.length) };
      },
    })),

    ...childRoutes(svc, {
      datatype: EVENT_SESSION,
      plural: 'sessions',
      singular: 'session',
      create: SessionCreate,
      update: SessionUpdate,
      state: 'scheduled',
      sort: 'data.startTime',
      listQuery: { track: Type.Optional(Type.String({ maxLength: 100 })) },
      check: (d) => {
        if (Date.parse(d.endTime) <= Date.parse(d.startTime)) throw appError('ERR_VALIDATION', 'body/endTime must be after body/startTime');
      },
    }),

    doorFree(route({
      method: 'GET',
      path: '/events/:id/schedule',
      auth: 'staff',
      tag: TAG,
      summary: 'The schedule of an event: its sessions by day',
      description: 'Sessions in start order, grouped by calendar day in the event’s time zone.',
      params: EventParams,
      response: Schedule,
      errors: [404],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const tz = typeof ev.data.timezone === 'string' && isValidTimeZone(ev.data.timezone) ? ev.data.timezone : 'UTC';
        const sessions = sessionsOf(svc, ctx.tenant, ev.sk);
        const days: Array<{ date: string; sessions: StoredRecord[] }> = [];
        for (const s of sessions) {
          const date = localDate(Date.parse(String(s.data.startTime)), tz);
          if (days.at(-1)?.date !== date) days.push({ date, sessions: [] });
          days.at(-1)!.sessions.push(s);
        }
        return { eventId: ev.sk, timezone: tz, days };
      },
    })),

    ...childRoutes(svc, {
      datatype: EVENT_PARTICIPANT,
      plural: 'participants',
      singular: 'participant',
      create: ParticipantCreate,
      update: ParticipantUpdate,
      state: 'invited',
      defaults: { role: 'attendee', status: 'invited' },
      sort: 'data.name',
      listQuery: {
        role: Type.Optional(Type.String({ maxLength: 60 })),
        status: Type.Optional(Type.Union([Type.Literal('invited'), Type.Literal('confirmed')])),
      },
    }),

    doorFree(route({
      method: 'POST',
      path: '/events/participants/:id/confirm',
      auth: 'staff',
      tag: TAG,
      summary: 'Confirm a participant',
      description: 'Sets `data.status` to `confirmed` and stamps `confirmedAt`; confirming again changes nothing.',
      params: IdParams,
      response: RecordSchema,
      errors: [404],
      handler: (ctx) => svc.events(ctx.tenant, { type: 'confirm-participant', id: ctx.params.id, by: ctx.principal!.sub }),
    })),

    // The media POST (a JSON record, or a multipart file upload), chunked uploads and file
    // downloads are in media.ts.
    ...childRoutes(svc, {
      datatype: EVENT_MEDIA,
      plural: 'media',
      singular: 'media record',
      create: MediaCreate,
      state: 'active',
      sort: 'createdate',
      listQuery: { kind: Type.Optional(Type.String({ maxLength: 20 })) },
    }).filter((r) => r.method !== 'POST'),
    // Media routes read no ticket record.
    ...mediaRoutes(svc, MediaCreate).map(doorFree),

    doorFree(route({
      method: 'POST',
      path: '/events/:id/media/share',
      auth: 'staff',
      tag: TAG,
      summary: 'Share media of an event by email',
      description: 'Queues one email per recipient listing the media links, in the same write that records the share on each media record; the outbox dispatcher sends them after the answer.',
      params: EventParams,
      body: ShareBody,
      response: Type.Object({ media: Type.Array(RecordSchema), messages: Type.Integer({ description: 'Emails queued' }) }),
      errors: [404],
      handler: async (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const ids = [...new Set(ctx.body.mediaIds)];
        const items = mediaRecords(svc, ctx.tenant, ids);
        const missing = ids.filter((_, i) => !items[i] || items[i]!.data.event !== ev.sk);
        if (missing.length) throw appError('ERR_NOT_FOUND', `media ${missing.join(', ')} of event ${ev.sk}`);
        const recipients = [...new Set(ctx.body.recipients.map((r) => r.toLowerCase()))];
        const media = await svc.events<StoredRecord[]>(ctx.tenant, {
          type: 'media-shared',
          ids,
          recipients,
          by: ctx.principal!.sub,
          eventId: ev.sk,
          subject: `${ev.data.name}: shared media`,
          note: ctx.body.message,
        });
        return { media, messages: recipients.length };
      },
    })),
  ];
}
