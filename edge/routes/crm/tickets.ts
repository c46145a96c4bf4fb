// Support tickets (spec: Endpoints → CRM (staff)): the thread `GET /crm/tickets/messages/:id`, a
// public reply `POST /crm/tickets/reply/:id` (emailed to the requester) and internal comments
// `GET|POST /crm/tickets/comments/:id` (never sent, never listed with the messages). The spec
// shows no way to open or list tickets; `/crm/tickets/detail[/:id]` does that, shaped like leads.
import { Type } from '@sinclair/typebox';
import { SUPPORT_TICKET, TICKET_PRIORITIES, TICKET_STATUSES, type Author } from '../../../actors/crm/index.js';
import type { Filter } from '../../../core/store/query.js';
import type { RequestContext } from '../../route.js';
import type { CrmApi } from '../../../actors/crm/index.js';
import { route, type RouteDef } from '../../route.js';
import { Enum, Email, Id, ListOf, PageProps, RecordOf } from './schemas.js';
import { listRecords } from '../../../actors/records/index.js';
import { AfterCursor } from '../../schemas.js';

const TAG = 'Support tickets';

const Status = Enum(TICKET_STATUSES);
const Priority = Enum(TICKET_PRIORITIES);
const TicketRecord = RecordOf(
  Type.Object({}, { additionalProperties: true, description: 'subject, requester {email, name}, status, priority, assignee, tags, messageCount, commentCount, lastMessageAt, ...' }),
);
const EntryRecord = RecordOf(
  Type.Object({}, { additionalProperties: true, description: 'ticketId, kind (message or comment), visibility, author {type, email, name}, body, at; replies carry delivery {outboxId}' }),
);
const Body = Type.String({ minLength: 1, maxLength: 50_000 });

function author(ctx: RequestContext): Author {
  const p = ctx.principal!;
  return { type: 'staff', email: p.email, id: p.sub };
}


function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function ticketRoutes(crm: CrmApi): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/crm/tickets/detail',
      auth: 'staff',
      tag: TAG,
      summary: 'List support tickets',
      description:
        'Filters: status, priority, assignee, requester (email), q (subject). Newest first. All tickets, or those of one ' +
        '`status`, `assignee` or `requester`, are read by index: any page answers as fast as the first, with `total` exact, by ' +
        '`page` or by cursor (send back as `after` the `next` of the previous page). Another filter beside one of those reads ' +
        'its tickets and tests each, the same way while they are at most 1,000; `q`, or more, pages by number only.',
      query: Type.Object({
        status: Type.Optional(Status),
        priority: Type.Optional(Priority),
        assignee: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
        requester: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
        q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        ...PageProps,
        ...AfterCursor,
      }),
      response: ListOf(TicketRecord),
      handler: (ctx) => {
        const f: Filter = {};
        if (ctx.query.status) f['data.status'] = ctx.query.status;
        if (ctx.query.priority) f['data.priority'] = ctx.query.priority;
        if (ctx.query.assignee) f['data.assignee'] = ctx.query.assignee.toLowerCase();
        if (ctx.query.requester) f['data.requester.email'] = ctx.query.requester.toLowerCase();
        if (ctx.query.q) f['data.subject'] = { $regex: escapeRegex(ctx.query.q), $options: 'i' };
        return listRecords(ctx.deps, ctx.tenant, SUPPORT_TICKET, f, {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
          after: ctx.query.after,
          sort: 'createdate',
          sortType: 'desc',
        });
      },
    }),
    route({
      method: 'POST',
      path: '/crm/tickets/detail',
      auth: 'staff',
      tag: TAG,
      summary: 'Open a support ticket',
      description:
        '`description`, when given, becomes the requester\'s first message. Status defaults to `open`, priority to `normal`.',
      status: 201,
      body: Type.Object(
        {
          subject: Type.String({ minLength: 1, maxLength: 300 }),
          requester: Type.Object({ email: Email, name: Type.Optional(Type.String({ maxLength: 200 })) }),
          description: Type.Optional(Body),
          status: Type.Optional(Status),
          priority: Type.Optional(Priority),
          assignee: Type.Optional(Type.String({ format: 'email', maxLength: 254 })),
          channel: Type.Optional(Type.String({ minLength: 1, maxLength: 32 })),
          tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
        },
        { additionalProperties: true },
      ),
      response: Type.Object({ ticket: TicketRecord, message: Type.Optional(EntryRecord) }),
      handler: async (ctx) => {
        const { description, ...fields } = ctx.body;
        return crm.createTicket(ctx.tenant, fields, description, author(ctx));
      },
    }),
    route({
      method: 'GET',
      path: '/crm/tickets/detail/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'One support ticket',
      params: Type.Object({ id: Id }),
      response: TicketRecord,
      errors: [404],
      handler: (ctx) => crm.ticket(ctx.tenant, ctx.params.id),
    }),
    route({
      method: 'PUT',
      path: '/crm/tickets/detail/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Change a support ticket (version-checked)',
      description: 'Body `{data, version}`: status, priority, assignee (null unassigns), subject, tags. A stale version answers 409.',
      params: Type.Object({ id: Id }),
      body: Type.Object({
        data: Type.Object(
          {
            subject: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
            status: Type.Optional(Status),
            priority: Type.Optional(Priority),
            assignee: Type.Optional(Type.Union([Type.String({ format: 'email', maxLength: 254 }), Type.Null()])),
            tags: Type.Optional(Type.Array(Type.String({ minLength: 1, maxLength: 64 }), { maxItems: 50 })),
          },
          { additionalProperties: false, minProperties: 1 },
        ),
        version: Type.Integer({ minimum: 1 }),
      }),
      response: TicketRecord,
      errors: [404, 409],
      handler: async (ctx) =>
        (await crm.updateTicket(ctx.tenant, ctx.params.id, ctx.body.version, ctx.body.data, author(ctx)))
          .ticket,
    }),
    route({
      method: 'GET',
      path: '/crm/tickets/messages/:id',
      auth: 'staff',
      tag: TAG,
      summary: "A ticket's public thread: the requester's messages and staff replies, oldest first",
      description: 'Internal comments are never listed here.',
      params: Type.Object({ id: Id }),
      query: Type.Object(PageProps),
      response: ListOf(EntryRecord),
      errors: [404],
      handler: (ctx) => crm.ticketThread(ctx.tenant, ctx.params.id, 'message', ctx.query),
    }),
    route({
      method: 'POST',
      path: '/crm/tickets/reply/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Reply to the requester',
      description:
        'Appends a public message to the thread and emails it to the requester through the outbox, atomically. `status` optionally moves the ticket (e.g. to `pending` or `solved`).',
      status: 201,
      params: Type.Object({ id: Id }),
      body: Type.Object({
        body: Body,
        subject: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
        status: Type.Optional(Status),
      }),
      response: Type.Object({ ticket: TicketRecord, message: EntryRecord }),
      errors: [404],
      handler: (ctx) =>
        crm.replyToTicket(ctx.tenant, ctx.params.id, ctx.body, author(ctx)),
    }),
    route({
      method: 'GET',
      path: '/crm/tickets/comments/:id',
      auth: 'staff',
      tag: TAG,
      summary: "A ticket's internal comments, oldest first",
      params: Type.Object({ id: Id }),
      query: Type.Object(PageProps),
      response: ListOf(EntryRecord),
      errors: [404],
      handler: (ctx) => crm.ticketThread(ctx.tenant, ctx.params.id, 'comment', ctx.query),
    }),
    route({
      method: 'POST',
      path: '/crm/tickets/comments/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Add an internal comment (never sent to the requester)',
      status: 201,
      params: Type.Object({ id: Id }),
      body: Type.Object({ body: Body }),
      response: Type.Object({ ticket: TicketRecord, message: EntryRecord }),
      errors: [404],
      handler: (ctx) => crm.commentOnTicket(ctx.tenant, ctx.params.id, ctx.body.body, author(ctx)),
    }),
  ];
}
