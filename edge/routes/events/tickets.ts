// Tickets (spec: Endpoints → Events, payload rules 3 to 5): issuing (create, purchase, comp,
// fulfil), the signed QR code, lookup at the desk, and the changes of one ticket (activate,
// transfer, refund, cancel, badge, perks). Every change goes through the scanner actor of the
// ticket's event, the single writer of its tickets.
import { Type } from '@sinclair/typebox';
import type { Filter } from '../../../core/store/query.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { normalizeEmail, TICKET } from '../../../actors/event-records/index.js';
import {
  compTickets,
  createTicket,
  fulfilTickets,
  lookupTickets,
  purchaseTickets,
  refundTicket,
  ticketTypeRecord,
  ticketWithCode,
  type EventsApi,
  type SaleAnswer,
} from '../../../actors/events/index.js';
import type { AppDeps } from '../../deps.js';
import type { RequestContext, RouteDef } from '../../route.js';
import { route } from '../../route.js';
import { EventParams, Id, IdParams, IssueItem as IssueItemSchema, IssueResult, Paging, TicketList, TicketSchema } from './schemas.js';
import { listRecords } from '../../../actors/records/index.js';
import { AfterCursor } from '../../schemas.js';

const TAG = 'Tickets';
const Email = Type.String({ format: 'email', maxLength: 254 });
const Name = Type.String({ minLength: 1, maxLength: 200 });
const IdempotencyKey = Type.Optional(Type.String({ description: 'A UUID: a retry with the same key answers the first result' }));
const NUMBER_PATTERN = '^[A-Za-z0-9][A-Za-z0-9:_.-]{2,127}$';

const TicketCreate = Type.Object(
  {
    ticketTypeId: Id,
    holderEmail: Type.Optional(Email),
    holderName: Type.Optional(Name),
    holderPhone: Type.Optional(Type.String({ minLength: 3, maxLength: 40 })),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64, description: 'The customer record this ticket belongs to' })),
    number: Type.Optional(Type.String({ pattern: NUMBER_PATTERN, description: 'The static code; generated (10 characters) when absent. Unique per tenant, case-blind' })),
  },
  { additionalProperties: false },
);

const PurchaseItem = Type.Object(
  {
    ticketTypeId: Id,
    quantity: Type.Integer({ minimum: 1, maximum: 50 }),
    holderEmail: Type.Optional(Email),
    holderName: Type.Optional(Name),
  },
  { additionalProperties: false },
);

const PurchaseBody = Type.Object(
  {
    eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
    items: Type.Array(PurchaseItem, { minItems: 1, maxItems: 20 }),
    buyer: Type.Object({ email: Email, name: Type.Optional(Name) }, { additionalProperties: false }),
    customerId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    payment: Type.Optional(
      Type.Object(
        {
          method: Type.Optional(Type.String({ minLength: 1, maxLength: 30, description: 'e.g. `card`, `cash`' })),
          token: Type.Optional(Type.String({ minLength: 1, maxLength: 200, description: 'Card token; `tok_decline` is declined by the local provider' })),
        },
        { additionalProperties: false },
      ),
    ),
    idempotencyKey: IdempotencyKey,
  },
  { additionalProperties: false },
);

const CompBody = Type.Object(
  {
    eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
    items: Type.Array(IssueItemSchema, { minItems: 1, maxItems: 50 }),
    note: Type.Optional(Type.String({ maxLength: 500 })),
    idempotencyKey: IdempotencyKey,
  },
  { additionalProperties: false },
);

const FulfillBody = Type.Object(
  {
    eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })),
    orderId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'The paid order being fulfilled; a second fulfil of it answers the same tickets' })),
    items: Type.Optional(Type.Array(IssueItemSchema, { minItems: 1, maxItems: 50 })),
    walkIn: Type.Optional(
      Type.Object(
        {
          ticketTypeId: Id,
          quantity: Type.Optional(Type.Integer({ minimum: 1, maximum: 20 })),
          holderName: Type.Optional(Name),
          holderEmail: Type.Optional(Email),
          holderPhone: Type.Optional(Type.String({ minLength: 3, maxLength: 40 })),
        },
        { additionalProperties: false },
      ),
    ),
    checkIn: Type.Optional(Type.Boolean({ description: 'Walk-ins: check the new tickets in at once' })),
    zone: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    checkpoint: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
    idempotencyKey: IdempotencyKey,
  },
  { additionalProperties: false },
);

export const TicketWithCode = Type.Object(
  {
    ...TicketSchema.properties,
    data: Type.Object(
      {
        ...TicketSchema.properties.data.properties,
        code: Type.String({ description: 'Dynamic QR payload `ticketId:timestamp:signature` (Ed25519, the event’s active door key)' }),
        staticCode: Type.String({ description: 'Signed static code `ticketId:S:signature` (printable; no expiry; void after a transfer)' }),
        codeExpiresAt: Type.String({ format: 'date-time', description: 'When the code leaves the event window (clock skew aside)' }),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

const Badge = Type.Object({
  ticketId: Type.String(),
  number: Type.String(),
  holderName: Type.Union([Type.String(), Type.Null()]),
  holderEmail: Type.Union([Type.String(), Type.Null()]),
  status: Type.String(),
  ticketType: Type.Object({ id: Type.String(), title: Type.String(), colour: Type.Union([Type.String(), Type.Null()]) }),
  event: Type.Object({
    id: Type.String(),
    name: Type.String(),
    slug: Type.String(),
    startDate: Type.Union([Type.String(), Type.Null()]),
    venue: Type.Union([Type.String(), Type.Null()]),
  }),
  qr: Type.Object({ format: Type.Literal('static'), value: Type.String({ description: 'The ticket number: a printed badge must not expire like a dynamic code' }) }),
  perks: Type.Array(Type.Object({ id: Type.String(), name: Type.String(), claimed: Type.Boolean() })),
  printCount: Type.Integer(),
  lastPrintedAt: Type.Union([Type.String(), Type.Null()]),
});

function byOf(ctx: RequestContext): string | null {
  return ctx.principal?.sub ?? null;
}

function ownTicketFilter(refs: string[]): Filter {
  return { 'data.event': { $in: refs } };
}

/** Sets the status an issuing step answered with (a replayed first answer, an order fulfilled before). */
function answer(ctx: RequestContext, a: SaleAnswer<unknown>): unknown {
  if (a.status !== undefined) ctx.status = a.status;
  return a.body;
}

export function ticketRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  const ticketOp = (ctx: RequestContext, msg: Record<string, unknown> & { type: string }) => {
    const { eventId } = svc.ticket(ctx.tenant, ctx.params.id);
    return svc.scanner<StoredRecord>(ctx.tenant, eventId, { ...msg, ticketId: ctx.params.id, by: byOf(ctx) } as never);
  };

  return [
    route({
      method: 'GET',
      path: '/events/:id/tickets',
      auth: 'staff',
      tag: TAG,
      summary: 'List the tickets of an event',
      description:
        'Tickets whose `data.event` is the event’s id or slug, oldest first; filter by `status`, `ticketTypeId` or `holderEmail`. ' +
        'Alone, or filtered by `status`, `ticketTypeId`, both, or `holderEmail`, the listing is read by index: any page of any ' +
        'event answers as fast as the first, with `total` exact. Page by `page`, or by cursor: send back as `after` the `next` of ' +
        'the previous page (stable while tickets are added or change between pages). `holderEmail` with `status` or ' +
        '`ticketTypeId` reads the holder\'s tickets of the event in order and tests each, the same by page or cursor while the ' +
        'holder has at most 1,000 of them; beyond that, pages are by number only. ' +
        'An enrolled scanner device may read the tickets of its own events (403 for another).',
      params: EventParams,
      query: Type.Object({
        ...Paging,
        ...AfterCursor,
        status: Type.Optional(Type.Union([Type.Literal('valid'), Type.Literal('checked_in'), Type.Literal('refunded'), Type.Literal('cancelled')])),
        ticketTypeId: Type.Optional(Id),
        holderEmail: Type.Optional(Email),
      }),
      response: TicketList,
      errors: [404],
      device: true,
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        svc.deviceMay(ctx.principal!.device, ev);
        const filter: Filter = {};
        if (ctx.query.holderEmail) filter['data.holderEmail'] = normalizeEmail(ctx.query.holderEmail);
        if (ctx.query.ticketTypeId) filter['data.ticketTypeId'] = ctx.query.ticketTypeId;
        Object.assign(filter, ownTicketFilter([ev.sk, String(ev.data.slug)]));
        if (ctx.query.status) filter['data.status'] = ctx.query.status;
        return listRecords(svc.deps, ctx.tenant, TICKET, filter, { page: ctx.query.page, pageSize: ctx.query.pageSize, after: ctx.query.after, sort: 'createdate', sortType: 'asc' });
      },
    }),

    route({
      method: 'POST',
      path: '/events/:id/tickets',
      auth: 'staff',
      tag: TAG,
      summary: 'Create a ticket',
      description: 'One ticket of the given type (`ticketTypeId` is required). Its number, the static code, is generated unless sent.',
      params: EventParams,
      body: TicketCreate,
      response: TicketSchema,
      status: 201,
      errors: [404, 409],
      handler: (ctx) => {
        const b = ctx.body;
        return createTicket(svc, ctx.tenant, ctx.params.id, { ticketTypeId: b.ticketTypeId, holderEmail: b.holderEmail, holderName: b.holderName, holderPhone: b.holderPhone, customerId: b.customerId, number: b.number }, byOf(ctx));
      },
    }),

    route({
      method: 'GET',
      path: '/events/tickets/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Get a ticket',
      params: IdParams,
      response: TicketSchema,
      errors: [404],
      handler: (ctx) => svc.ticket(ctx.tenant, ctx.params.id).ticket,
    }),

    route({
      method: 'GET',
      path: '/events/tickets/:id/qr',
      auth: 'staff',
      tag: TAG,
      summary: 'The ticket with a freshly signed QR code',
      description:
        '`data.code` is `ticketId:timestamp:signature` (timestamp in epoch ms) and `data.staticCode` `ticketId:S:signature`, ' +
        'a printable code that does not expire. `signature` is the key id `kid` (8 characters) followed by the base64url ' +
        'Ed25519 signature (86 characters) of `ticketId:timestamp:codeTag` (`ticketId:S:codeTag` for the static code) by ' +
        'the event’s active door key; `codeTag` is the first 8 base64url characters of SHA-256 of the ticket’s code secret, ' +
        'its code generation. A scanner device checks a code offline with the public keys of `GET /events/:id/door-keys` ' +
        'and the ticket’s `codeTag` from the door feed. The secret is minted on the first request and never sent; a ' +
        'transfer mints a new one, so every code signed before it stops verifying. A refresh invalidates no code still ' +
        'inside the event’s window; the static code is signed again with the active key each time (the same text until ' +
        'a key rotation or a transfer). Codes of the earlier HMAC form (a 43-character signature) keep verifying at the ' +
        'door. Refused (409) for refunded and cancelled tickets.',
      params: IdParams,
      response: TicketWithCode,
      errors: [404, 409],
      handler: (ctx) => ticketWithCode(svc, ctx.tenant, ctx.params.id),
    }),

    route({
      method: 'POST',
      path: '/events/tickets/purchase',
      auth: 'staff',
      tag: TAG,
      summary: 'Sell tickets',
      description:
        'Charges the total (price × quantity of each item, in the event currency; computed in integer minor units, answered ' +
        'in major units like every amount: `order.data.amount` 75.5 is 75.50) through the payments provider (`local` ' +
        'by default: approves all but the token `tok_decline`, which answers 402), then issues the tickets and records the ' +
        'order (each holder’s ticket email is queued in the same write), all items of one published event. Holders default to the buyer. `idempotencyKey` (UUID): a retry answers ' +
        'the first result without charging again. Sold out: 409, and the charge is refunded.',
      body: PurchaseBody,
      response: IssueResult,
      status: 201,
      errors: [402, 404, 409],
      handler: async (ctx) => answer(ctx, await purchaseTickets(svc, ctx.tenant, ctx.body, byOf(ctx))),
    }),

    route({
      method: 'POST',
      path: '/events/tickets/comp',
      auth: 'staff',
      tag: TAG,
      summary: 'Issue complimentary tickets',
      description: '`items: [{ticketTypeId, quantity, holderEmail, holderName?}]` (spec: payload rule 4), all of one event; price 0, counted against each type’s quantity. Each ticket’s holder is emailed: the emails are queued in the outbox in the same write as the tickets and sent after the answer, so a large comp answers once its tickets are stored, and a retry with the same `idempotencyKey` after a crash issues the tickets and their emails together or answers the first result.',
      body: CompBody,
      response: IssueResult,
      status: 201,
      errors: [404, 409],
      handler: async (ctx) => answer(ctx, await compTickets(svc, ctx.tenant, ctx.body, byOf(ctx))),
    }),

    route({
      method: 'POST',
      path: '/events/tickets/fulfill',
      auth: 'staff',
      tag: TAG,
      summary: 'Issue the tickets of a paid order, or sell at the door',
      description:
        'Either `{orderId, items}` (an order paid elsewhere; fulfilling it again answers the same tickets with 200) or a ' +
        'walk-in `{walkIn: {ticketTypeId, quantity?, holderName?, holderEmail?, holderPhone?}}`, which requires ' +
        '`walkIn.ticketTypeId` (spec: payload rule 5); with `checkIn: true` the walk-in tickets are checked in at once, in ' +
        '`zone` if sent.',
      body: FulfillBody,
      response: IssueResult,
      status: 201,
      errors: [404, 409],
      handler: async (ctx) => answer(ctx, await fulfilTickets(svc, ctx.tenant, ctx.body, byOf(ctx))),
    }),

    route({
      method: 'GET',
      path: '/events/tickets/lookup/:eventId',
      auth: 'staff',
      tag: TAG,
      summary: 'Find tickets of an event by number, email or name',
      description:
        '`q` matches a ticket number (any case) or credential code exactly, a holder email exactly, or whole words of the ' +
        'holder name (case- and accent-blind: `ada` finds “Ada Lovelace”). Lookups read indexes, never the whole event. ' +
        'An enrolled scanner device may look up tickets of its own events (403 for another).',
      params: Type.Object({ eventId: Type.String({ minLength: 1, maxLength: 80 }) }),
      query: Type.Object({ q: Type.String({ minLength: 1, maxLength: 200 }), ...Paging }),
      response: TicketList,
      errors: [404],
      device: true,
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.eventId);
        svc.deviceMay(ctx.principal!.device, ev);
        return svc.page(lookupTickets(svc, ctx.tenant, ev, ctx.query.q.trim()), ctx.query);
      },
    }),

    route({
      method: 'POST',
      path: '/events/tickets/:id/activate',
      auth: 'staff',
      tag: TAG,
      summary: 'Activate a ticket, optionally binding a credential code',
      description:
        'Stamps `activatedAt` (tickets of a type that requires activation scan as `not_active` until then) and binds ' +
        '`credentialCode` (a wristband or card) to the ticket: scanning it then resolves to this ticket. A code bound to ' +
        'another ticket is a 409.',
      params: IdParams,
      body: Type.Object({ credentialCode: Type.Optional(Type.String({ minLength: 3, maxLength: 128 })) }, { additionalProperties: false }),
      response: TicketSchema,
      errors: [404, 409],
      handler: (ctx) => ticketOp(ctx, { type: 'activate', credentialCode: ctx.body.credentialCode }),
    }),

    route({
      method: 'POST',
      path: '/events/tickets/:id/transfer',
      auth: 'staff',
      tag: TAG,
      summary: 'Give a ticket to someone else',
      description: 'Changes the holder and rotates the QR secret, so codes shown by the previous holder stop working. A used, refunded or cancelled ticket is a 409. The new holder is emailed (queued in the outbox with the change).',
      params: IdParams,
      body: Type.Object({ holderEmail: Email, holderName: Type.Optional(Name) }, { additionalProperties: false }),
      response: TicketSchema,
      errors: [404, 409],
      handler: (ctx) => ticketOp(ctx, { type: 'transfer', holderEmail: ctx.body.holderEmail, holderName: ctx.body.holderName }),
    }),

    route({
      method: 'POST',
      path: '/events/tickets/:id/refund',
      auth: 'staff',
      tag: TAG,
      summary: 'Refund a ticket',
      description:
        'Gives back the ticket’s price through the payments provider when it was paid (`data.refund.amount` in major units), then sets status `refunded` (it ' +
        'then scans as `refunded` and no longer counts as sold). Refunding twice is a 409.',
      params: IdParams,
      body: Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false }),
      response: TicketSchema,
      errors: [404, 409],
      handler: (ctx) => refundTicket(svc, ctx.tenant, ctx.params.id, ctx.body.reason, byOf(ctx)),
    }),

    route({
      method: 'DELETE',
      path: '/events/tickets/:id',
      auth: 'staff',
      tag: TAG,
      summary: 'Cancel a ticket',
      description: 'Sets status `cancelled` (the record is kept: the ticket then scans as `cancelled`). Answers the cancelled ticket. Cancelling a refunded or cancelled ticket is a 409.',
      params: IdParams,
      query: Type.Object({ reason: Type.Optional(Type.String({ maxLength: 500 })) }),
      response: TicketSchema,
      errors: [404, 409],
      handler: (ctx) => ticketOp(ctx, { type: 'cancel', reason: ctx.query.reason }),
    }),

    route({
      method: 'GET',
      path: '/events/tickets/:id/badge',
      auth: 'staff',
      tag: TAG,
      summary: 'A printable badge for a ticket',
      description: 'Holder, ticket type title and colour, event, perks, and the QR content (the ticket number, which does not expire).',
      params: IdParams,
      response: Badge,
      errors: [404],
      handler: (ctx) => {
        const { ticket: t, eventId } = svc.ticket(ctx.tenant, ctx.params.id);
        const ev = svc.event(ctx.tenant, eventId);
        const type = ticketTypeRecord(svc, ctx.tenant, String(t.data.ticketTypeId));
        const claimed = (t.data.perksClaimed ?? {}) as Record<string, unknown>;
        const badge = (t.data.badge ?? {}) as Record<string, any>;
        return {
          ticketId: t.sk,
          number: String(t.data.number ?? ''),
          holderName: (t.data.holderName as string) ?? null,
          holderEmail: (t.data.holderEmail as string) ?? null,
          status: String(t.data.status ?? 'valid'),
          ticketType: { id: String(t.data.ticketTypeId ?? ''), title: String(type?.data.title ?? t.data.ticketTypeTitle ?? ''), colour: (type?.data.colour as string) ?? null },
          event: { id: ev.sk, name: String(ev.data.name), slug: String(ev.data.slug), startDate: (ev.data.startDate as string) ?? null, venue: (ev.data.venue as string) ?? null },
          qr: { format: 'static' as const, value: String(t.data.number ?? '') },
          perks: (Array.isArray(type?.data.perks) ? (type!.data.perks as any[]) : []).map((p) => ({ id: String(p.id), name: String(p.name), claimed: !!claimed[p.id] })),
          printCount: typeof badge.printCount === 'number' ? badge.printCount : 0,
          lastPrintedAt: badge.lastPrintedAt ?? null,
        };
      },
    }),

    route({
      method: 'POST',
      path: '/events/tickets/:id/badge/printed',
      auth: 'staff',
      tag: TAG,
      summary: 'Record that a badge was printed',
      description: 'Counts the print in `data.badge {firstPrintedAt, lastPrintedAt, printCount, printer}`; reprints are allowed and counted.',
      params: IdParams,
      body: Type.Object({ printer: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }, { additionalProperties: false }),
      response: TicketSchema,
      errors: [404],
      handler: (ctx) => ticketOp(ctx, { type: 'badge-printed', printer: ctx.body.printer }),
    }),

    route({
      method: 'POST',
      path: '/events/tickets/:id/perks/:perkId/claim',
      auth: 'staff',
      tag: TAG,
      summary: 'Claim a perk of a ticket',
      description: 'The perk must be one of the ticket type’s perks (404 otherwise). Each perk is claimed once: a second claim is a 409.',
      params: Type.Object({ id: Id, perkId: Type.String({ minLength: 1, maxLength: 64 }) }),
      body: Type.Object({ note: Type.Optional(Type.String({ maxLength: 500 })) }, { additionalProperties: false }),
      response: TicketSchema,
      errors: [404, 409],
      handler: (ctx) => ticketOp(ctx, { type: 'perk-claim', perkId: ctx.params.perkId, note: ctx.body.note }),
    }),
  ];
}

