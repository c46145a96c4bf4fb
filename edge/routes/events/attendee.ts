// The attendee surface (spec: Customer self-service → `/client/events`): a signed-in customer's
// own tickets, each naming its event in `data.event`, and the rotating QR code of one of them.
// "Own" means holderEmail is the caller's proven email or data.customerId is one of the caller's
// customer ids; anyone else's ticket is a 404 (spec: Errors → 404 on customer-owned routes).
import type { AppDeps } from '../../deps.js';
import { Type } from '@sinclair/typebox';
import type { Principal } from '../../../core/auth/tokens.js';
import { appError } from '../../../core/errors.js';
import type { StoredRecord } from '../../../core/store/record.js';
import { route, type RouteDef } from '../../route.js';
import { IdParams, Paging, TicketList } from './schemas.js';
import { byCreated, ticketRecord, ticketsOfHolder, ticketWithCode, type EventsApi } from '../../../actors/events/index.js';
import { TicketWithCode } from './tickets.js';

const TAG = 'Attendee';

function owns(svc: EventsApi<AppDeps>, tenant: string, p: Principal, t: StoredRecord): boolean {
  // A sign-up that merely typed an address sees no ticket issued to it (EventsApi.holderOf).
  const h = svc.holderOf(tenant, p);
  return (h.email !== undefined && t.data.holderEmail === h.email) || h.customerIds.includes(String(t.data.customerId));
}

function myTickets(svc: EventsApi<AppDeps>, tenant: string, p: Principal): StoredRecord[] {
  return ticketsOfHolder(svc, tenant, svc.holderOf(tenant, p));
}

export function attendeeRoutes(svc: EventsApi<AppDeps>): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/client/events/tickets/mine',
      auth: 'customer',
      tag: TAG,
      summary: 'My tickets',
      description:
        'The caller’s tickets, newest first, each referencing its event in `data.event` (an event id, or a slug for ' +
        'tickets written that way). Mine: `holderEmail` equals the account’s email once the account proved it (POST /profile/customer/verify-email), ' +
        'or `data.customerId` is its customer id (or, once proven, the id of a customer record staff made for that address). ' +
        'Filter by `eventId` (id or slug).',
      query: Type.Object({ ...Paging, eventId: Type.Optional(Type.String({ minLength: 1, maxLength: 80 })) }),
      response: TicketList,
      handler: (ctx) => {
        let tickets = myTickets(svc, ctx.tenant, ctx.principal!);
        if (ctx.query.eventId !== undefined) {
          const ev = svc.findEvent(ctx.tenant, ctx.query.eventId);
          tickets = ev ? tickets.filter((t) => t.data.event === ev.sk || t.data.event === ev.data.slug) : [];
        }
        tickets.sort((a, b) => byCreated(b, a));
        return svc.page(tickets, ctx.query);
      },
    }),

    route({
      method: 'GET',
      path: '/client/events/tickets/:id/qr',
      auth: 'customer',
      tag: TAG,
      summary: 'One of my tickets with a freshly signed QR code',
      description: 'As the staff route `GET /events/tickets/:id/qr`, for the caller’s own tickets; another’s ticket is a 404. Refresh before `data.codeExpiresAt`.',
      params: IdParams,
      response: TicketWithCode,
      errors: [404, 409],
      handler: (ctx) => {
        const t = ticketRecord(svc, ctx.tenant, ctx.params.id);
        if (!t || !owns(svc, ctx.tenant, ctx.principal!, t)) throw appError('ERR_NOT_FOUND', `ticket ${ctx.params.id}`);
        return ticketWithCode(svc, ctx.tenant, ctx.params.id);
      },
    }),
  ];
}
