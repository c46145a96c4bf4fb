// Tickets (spec: Endpoints → Events, payload rules 3 to 5): issuing (create, purchase, comp,
// fulfil), the signed QR code, lookup at the desk, and the changes of one ticket (activate,
// transfer, refund, cancel, badge, perks). Every change goes through the scanner actor of the
// ticket's event, the single writer of its tickets.
import { Type } from '@sinclair/typebox';
import { appError } from '../../../core/errors.js';
import { assertIdempotencyKey, findIdempotent, fingerprint } from '../../../core/idempotency.js';
import type { Filter } from '../../../core/store/query.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { exponentOf, storedMinor } from '../../../actors/events/money.js';
import { PaymentDeclinedError, type Payment } from '../../../actors/events/payments.js';
import { toMajor } from '../../../actors/storefront/money.js';
import {
  EVENT_ORDER,
  FULFILLED_NS,
  isLive,
  nameKeys,
  normalizeEmail,
  TICKET,
  TICKET_TYPE,
  ticketOfEvent,
} from '../../../actors/events/records.js';
import { isIssueReplay, replayIssue, type IssueItem, type IssueMsg, type IssueResult as Issued } from '../../../actors/events/tickets.js';
import { byCredentialCode, byNumberIndex, byStaticCode } from '../../../actors/scanner/locate.js';
import { signCode } from '../../../actors/scanner/ticket-code.js';
import type { RequestContext, RouteDef } from '../../route.js';
import { route } from '../../route.js';
import { EventParams, Id, IdParams, IssueItem as IssueItemSchema, IssueResult, Paging, TicketList, TicketSchema } from './schemas.js';
import { byCreated, type EventsService } from './service.js';
import { listRecords } from '../../../actors/records/reads.js';

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
        code: Type.String({ description: 'Dynamic QR payload `ticketId:timestamp:signature`' }),
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

/**
 * The event every item's ticket type belongs to (they must share one), checked against the
 * `eventId` sent, if any. Unknown types are a 400 naming the item.
 */
function eventOfItems(svc: EventsService, tenant: string, items: Array<{ ticketTypeId: string }>, eventRef?: string): { ev: StoredRecord; types: Map<string, StoredRecord> } {
  const types = new Map<string, StoredRecord>();
  let eventId: string | undefined;
  items.forEach((item, i) => {
    const type = svc.deps.store.getRecord(tenant, TICKET_TYPE, item.ticketTypeId);
    if (!type) throw appError('ERR_VALIDATION', `body/items/${i}/ticketTypeId ${item.ticketTypeId} is not a known ticket type`);
    if (eventId !== undefined && type.data.event !== eventId) throw appError('ERR_VALIDATION', `body/items/${i}/ticketTypeId belongs to another event: one request issues tickets of one event`);
    eventId = String(type.data.event);
    types.set(type.sk, type);
  });
  const ev = svc.event(tenant, eventId!);
  if (eventRef !== undefined && svc.event(tenant, eventRef).sk !== ev.sk) throw appError('ERR_VALIDATION', `body/eventId ${eventRef} is not the event of the ticket types sent`);
  return { ev, types };
}

/**
 * Runs an issuing request once per idempotency key: a retry answers the first result. The key is
 * recorded with the tickets, in their batch; `run` passes it to the scanner as `replay` (a
 * reference, rebuilt here from the tickets: a 25,000-ticket answer is far over the stored size
 * limit) or, for walk-ins whose answer carries their check-ins, as `idempotency` (the answer whole).
 */
async function idempotent(
  svc: EventsService,
  ctx: RequestContext,
  scope: string,
  key: string | undefined,
  body: unknown,
  run: (idem: IssueMsg['idempotency']) => Promise<unknown>,
): Promise<unknown> {
  assertIdempotencyKey(key);
  if (!key) return run(undefined);
  const print = fingerprint(scope, body);
  return svc.serialize(ctx.tenant, `idem:${key}`, async () => {
    const hit = findIdempotent(svc.deps.store, ctx.tenant, key, print, svc.deps.clock);
    if (hit) {
      ctx.status = hit.status;
      return isIssueReplay(hit.body) ? replayIssue(svc.deps.store, ctx.tenant, hit.body) : hit.body;
    }
    return run({ key, print });
  });
}

function ownTicketFilter(refs: string[]): Filter {
  return { 'data.event': { $in: refs } };
}

/** The ticket `id` answered with a freshly signed dynamic code (codeSecret is never sent). */
export async function ticketWithCode(svc: EventsService, tenant: string, id: string): Promise<StoredRecord> {
  const { eventId } = svc.ticket(tenant, id);
  const r = await svc.scanner<{ secret: string; ticket: StoredRecord; windowMs: number }>(tenant, eventId, { op: 'secret', ticketId: id });
  const now = svc.deps.clock.now();
  return {
    ...r.ticket,
    data: { ...r.ticket.data, code: signCode(r.secret, id, now), codeExpiresAt: new Date(now + r.windowMs).toISOString() },
  };
}

export function ticketRoutes(svc: EventsService): RouteDef[] {
  const ticketOp = (ctx: RequestContext, msg: Record<string, unknown> & { op: string }) => {
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
      description: 'Tickets whose `data.event` is the event’s id or slug, oldest first; filter by `status`, `ticketTypeId` or `holderEmail`.',
      params: EventParams,
      query: Type.Object({
        ...Paging,
        status: Type.Optional(Type.Union([Type.Literal('valid'), Type.Literal('checked_in'), Type.Literal('refunded'), Type.Literal('cancelled')])),
        ticketTypeId: Type.Optional(Id),
        holderEmail: Type.Optional(Email),
      }),
      response: TicketList,
      errors: [404],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const filter: Filter = {};
        if (ctx.query.holderEmail) filter['data.holderEmail'] = normalizeEmail(ctx.query.holderEmail);
        if (ctx.query.ticketTypeId) filter['data.ticketTypeId'] = ctx.query.ticketTypeId;
        Object.assign(filter, ownTicketFilter([ev.sk, String(ev.data.slug)]));
        if (ctx.query.status) filter['data.status'] = ctx.query.status;
        return listRecords(svc.deps, ctx.tenant, TICKET, filter, { page: ctx.query.page, pageSize: ctx.query.pageSize, sort: 'createdate', sortType: 'asc' });
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
      handler: async (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.id);
        const b = ctx.body;
        const item: IssueItem = { ticketTypeId: b.ticketTypeId, quantity: 1, holderEmail: b.holderEmail, holderName: b.holderName, holderPhone: b.holderPhone, customerId: b.customerId, number: b.number };
        const r = await svc.scanner<Issued>(ctx.tenant, ev.sk, { op: 'issue', source: 'create', items: [item], by: byOf(ctx) });
        return r.tickets[0];
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
        '`data.code` is `ticketId:timestamp:signature` (timestamp in epoch ms; HMAC-SHA256 with the ticket’s secret over ' +
        '`ticketId:timestamp`, base64url). The secret is minted on the first request and never sent. A refresh invalidates ' +
        'no code still inside the event’s window. Refused (409) for refunded and cancelled tickets.',
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
      handler: (ctx) =>
        idempotent(svc, ctx, 'events.tickets.purchase', ctx.body.idempotencyKey, ctx.body, async (idempotency) => {
          const b = ctx.body;
          const { ev, types } = eventOfItems(svc, ctx.tenant, b.items, b.eventId);
          if (ev.data.status !== 'published') throw appError('ERR_CONFLICT', 'tickets of an unpublished event cannot be sold; publish it first');
          const currency = String(ev.data.currency ?? 'USD');
          const e = exponentOf(currency);
          // Minor units here; the order and the payment are recorded and answered in major units.
          const amount = b.items.reduce((sum, i) => sum + storedMinor(types.get(i.ticketTypeId)!.data, 'price', e) * i.quantity, 0);
          let payment: Payment | null = null;
          if (amount > 0) {
            try {
              payment = await svc.payments.charge({
                tenant: ctx.tenant,
                amount,
                currency,
                description: `${ev.data.name}: ${b.items.reduce((n, i) => n + i.quantity, 0)} ticket(s)`,
                idempotencyKey: idempotency?.key,
                method: b.payment?.method,
                token: b.payment?.token,
                customerEmail: b.buyer.email,
              });
            } catch (err) {
              if (err instanceof PaymentDeclinedError) throw appError('ERR_PAYMENT_DECLINED', err.message);
              throw err;
            }
          }
          let r: Issued;
          try {
            r = await svc.scanner<Issued>(ctx.tenant, ev.sk, {
              op: 'issue',
              source: 'purchase',
              items: b.items.map((i) => ({ ...i })),
              by: byOf(ctx),
              order: { buyer: b.buyer, customerId: b.customerId, amount, currency, payment: payment && { ...payment, amount: toMajor(payment.amount, e) } },
              replay: idempotency,
            });
          } catch (err) {
            // Nothing was issued: give the money back before answering.
            if (payment) await svc.payments.refund({ tenant: ctx.tenant, paymentId: payment.id, amount, currency }).catch((e) => svc.deps.logger.error({ err: e, paymentId: payment!.id }, 'refund after a failed purchase failed'));
            throw err;
          }
          return r;
        }),
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
      handler: (ctx) =>
        idempotent(svc, ctx, 'events.tickets.comp', ctx.body.idempotencyKey, ctx.body, async (idempotency) => {
          const { ev } = eventOfItems(svc, ctx.tenant, ctx.body.items, ctx.body.eventId);
          return svc.scanner<Issued>(ctx.tenant, ev.sk, { op: 'issue', source: 'comp', items: ctx.body.items, by: byOf(ctx), note: ctx.body.note, replay: idempotency });
        }),
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
      handler: async (ctx) => {
        const b = ctx.body;
        if (b.walkIn && b.items) throw appError('ERR_VALIDATION', 'body/items and body/walkIn cannot both be sent');
        if (!b.walkIn && !b.items) throw appError('ERR_VALIDATION', 'body/items (with body/orderId) or body/walkIn is required');
        if (b.items && !b.orderId) throw appError('ERR_VALIDATION', 'body/orderId is required with body/items');
        if (b.checkIn && !b.walkIn) throw appError('ERR_VALIDATION', 'body/checkIn applies to walk-ins only');
        const items: IssueItem[] = b.walkIn ? [{ ...b.walkIn, quantity: b.walkIn.quantity ?? 1 }] : b.items!;
        // The event and zone are checked after the key is looked up: a retry answers the first
        // result even if they changed since.
        const issueOnce = (idempotency: IssueMsg['idempotency']) => {
          const e = eventOfItems(svc, ctx.tenant, items, b.eventId).ev;
          if (b.zone !== undefined && !(Array.isArray(e.data.zones) && e.data.zones.some((z: any) => z.id === b.zone))) {
            throw appError('ERR_VALIDATION', `body/zone "${b.zone}" is not a zone of event ${e.sk}`);
          }
          return svc.scanner<Issued>(ctx.tenant, e.sk, {
            op: 'issue',
            source: b.walkIn ? 'walk-in' : 'fulfill',
            items,
            by: byOf(ctx),
            fulfillOrderId: b.orderId,
            ...(b.walkIn ? { idempotency } : { replay: idempotency }),
            checkIn: b.checkIn ? { zone: b.zone, checkpoint: b.checkpoint } : undefined,
          });
        };
        const run = (idempotency: IssueMsg['idempotency']) => {
          if (!b.orderId) return issueOnce(idempotency);
          return svc.serialize(ctx.tenant, `fulfill:${b.orderId}`, async () => {
            const done = svc.deps.store.getKv<{ event: string; ticketIds: string[] }>(ctx.tenant, FULFILLED_NS, b.orderId!);
            if (done) {
              ctx.status = 200;
              return { tickets: done.ticketIds.map((id) => svc.deps.store.getRecord(ctx.tenant, TICKET, id)).filter((t): t is StoredRecord => !!t) };
            }
            return issueOnce(idempotency);
          });
        };
        return idempotent(svc, ctx, 'events.tickets.fulfill', b.idempotencyKey, b, run);
      },
    }),

    route({
      method: 'GET',
      path: '/events/tickets/lookup/:eventId',
      auth: 'staff',
      tag: TAG,
      summary: 'Find tickets of an event by number, email or name',
      description:
        '`q` matches a ticket number (any case) or credential code exactly, a holder email exactly, or whole words of the ' +
        'holder name (case- and accent-blind: `ada` finds “Ada Lovelace”). Lookups read indexes, never the whole event.',
      params: Type.Object({ eventId: Type.String({ minLength: 1, maxLength: 80 }) }),
      query: Type.Object({ q: Type.String({ minLength: 1, maxLength: 200 }), ...Paging }),
      response: TicketList,
      errors: [404],
      handler: (ctx) => {
        const ev = svc.event(ctx.tenant, ctx.params.eventId);
        const refs = { id: ev.sk, slug: String(ev.data.slug ?? '') };
        const q = ctx.query.q.trim();
        const store = svc.deps.store;
        const read = (datatype: string, sk: string) => store.getRecord(ctx.tenant, datatype, sk);
        const exact = byStaticCode(read, q) ?? byCredentialCode(read, q);
        let matches: StoredRecord[] = exact ? [exact] : byNumberIndex(store, ctx.tenant, q);
        if (matches.length === 0 && q.includes('@')) matches = store.scan(ctx.tenant, TICKET, { 'data.holderEmail': normalizeEmail(q) });
        else if (matches.length === 0) {
          const words = nameKeys(q);
          if (words.length > 0) {
            matches = store
              .scan(ctx.tenant, TICKET, { 'data.holderNameKeys': words[0] })
              .filter((t) => words.every((w) => (t.data.holderNameKeys as string[]).includes(w)));
          }
        }
        matches = matches.filter((t) => ticketOfEvent(t, refs));
        matches.sort(byCreated);
        return svc.page(matches, ctx.query);
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
      handler: (ctx) => ticketOp(ctx, { op: 'activate', credentialCode: ctx.body.credentialCode }),
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
      handler: (ctx) => ticketOp(ctx, { op: 'transfer', holderEmail: ctx.body.holderEmail, holderName: ctx.body.holderName }),
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
      handler: (ctx) =>
        svc.serialize(ctx.tenant, `refund:${ctx.params.id}`, async () => {
          const { ticket, eventId } = svc.ticket(ctx.tenant, ctx.params.id);
          if (!isLive(ticket.data.status ?? 'valid')) throw appError('ERR_CONFLICT', `a ${ticket.data.status} ticket cannot be refunded`);
          let refund: Record<string, unknown> | null = null;
          const order = typeof ticket.data.orderId === 'string' ? svc.deps.store.getRecord(ctx.tenant, EVENT_ORDER, ticket.data.orderId) : undefined;
          const payment = order?.data.payment as Payment | null | undefined;
          const e = exponentOf(payment?.currency ?? ticket.data.currency);
          // The ticket's own unit decides (a ticket sold before the major-unit convention holds cents).
          const price = storedMinor(ticket.data, 'price', e);
          if (price > 0 && payment) {
            const r = await svc.payments.refund({ tenant: ctx.tenant, paymentId: payment.id, amount: price, currency: payment.currency });
            refund = { ...r, amount: toMajor(r.amount, e) };
          }
          return svc.scanner<StoredRecord>(ctx.tenant, eventId, { op: 'refund', ticketId: ticket.sk, refund, reason: ctx.body.reason, by: byOf(ctx) });
        }),
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
      handler: (ctx) => ticketOp(ctx, { op: 'cancel', reason: ctx.query.reason }),
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
        const type = svc.deps.store.getRecord(ctx.tenant, TICKET_TYPE, String(t.data.ticketTypeId));
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
      handler: (ctx) => ticketOp(ctx, { op: 'badge-printed', printer: ctx.body.printer }),
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
      handler: (ctx) => ticketOp(ctx, { op: 'perk-claim', perkId: ctx.params.perkId, note: ctx.body.note }),
    }),
  ];
}

