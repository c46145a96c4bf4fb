// The issuing steps of the events area (spec: Endpoints → Events, payload rules 3 to 5): create,
// purchase (charge, issue, and refund the charge when nothing was issued), comp, fulfil and
// walk-in sales, refunds, and the signed QR code. Every change goes through the scanner actor of
// the ticket's event, the single writer of its tickets; a retry with the same idempotency key
// answers the first result.
import { appError } from '../../core/errors.js';
import { assertIdempotencyKey, findIdempotent, fingerprint } from '../../core/idempotency.js';
import { toMajor } from '../../core/money.js';
import type { StoredRecord } from '../../core/store/record.js';
import { isIssueReplay, type QrReply, replayIssue, type IssueItem, type IssueMsg, type IssueResult } from '../scanner/index.js';
import type { EventsApi } from './api.js';
import { EVENT_ORDER, exponentOf, FULFILLED_NS, isLive, storedMinor, TICKET, TICKET_TYPE } from '../event-records/index.js';
import { PaymentDeclinedError, type Payment } from './payments.js';

/** An answer and, when it is not the route's usual one, its status (a replayed first answer, an order fulfilled before). */
export interface SaleAnswer<T> {
  status?: number;
  body: T;
}

export interface PurchaseRequest {
  eventId?: string;
  items: Array<{ ticketTypeId: string; quantity: number; holderEmail?: string; holderName?: string }>;
  buyer: { email: string; name?: string };
  customerId?: string;
  payment?: { method?: string; token?: string };
  idempotencyKey?: string;
}

export interface CompRequest {
  eventId?: string;
  items: IssueItem[];
  note?: string;
  idempotencyKey?: string;
}

export interface FulfilRequest {
  eventId?: string;
  orderId?: string;
  items?: IssueItem[];
  walkIn?: { ticketTypeId: string; quantity?: number; holderName?: string; holderEmail?: string; holderPhone?: string };
  checkIn?: boolean;
  zone?: string;
  checkpoint?: string;
  idempotencyKey?: string;
}

/**
 * The event every item's ticket type belongs to (they must share one), checked against the
 * `eventId` sent, if any. Unknown types are a 400 naming the item.
 */
function eventOfItems(api: EventsApi, tenant: string, items: Array<{ ticketTypeId: string }>, eventRef?: string): { ev: StoredRecord; types: Map<string, StoredRecord> } {
  const types = new Map<string, StoredRecord>();
  let eventId: string | undefined;
  items.forEach((item, i) => {
    const type = api.deps.store.getRecord(tenant, TICKET_TYPE, item.ticketTypeId);
    if (!type) throw appError('ERR_VALIDATION', `body/items/${i}/ticketTypeId ${item.ticketTypeId} is not a known ticket type`);
    if (eventId !== undefined && type.data.event !== eventId) throw appError('ERR_VALIDATION', `body/items/${i}/ticketTypeId belongs to another event: one request issues tickets of one event`);
    eventId = String(type.data.event);
    types.set(type.sk, type);
  });
  const ev = api.event(tenant, eventId!);
  if (eventRef !== undefined && api.event(tenant, eventRef).sk !== ev.sk) throw appError('ERR_VALIDATION', `body/eventId ${eventRef} is not the event of the ticket types sent`);
  return { ev, types };
}

/**
 * Runs an issuing request once per idempotency key: a retry answers the first result. The key is
 * recorded with the tickets, in their batch; `run` passes it to the scanner as `replay` (a
 * reference, rebuilt here from the tickets: a 25,000-ticket answer is far over the stored size
 * limit) or, for walk-ins whose answer carries their check-ins, as `idempotency` (the answer whole).
 */
async function idempotent(
  api: EventsApi,
  tenant: string,
  scope: string,
  key: string | undefined,
  body: unknown,
  run: (idem: IssueMsg['idempotency']) => Promise<SaleAnswer<unknown>>,
): Promise<SaleAnswer<unknown>> {
  assertIdempotencyKey(key);
  if (!key) return run(undefined);
  const print = fingerprint(scope, body);
  return api.serialize(tenant, `idem:${key}`, async () => {
    const hit = findIdempotent(api.deps.store, tenant, key, print, api.deps.clock);
    if (hit) return { status: hit.status, body: isIssueReplay(hit.body) ? replayIssue(api.deps.store, tenant, hit.body) : hit.body };
    return run({ key, print });
  });
}

/** One ticket of the given type of event `eventRef`. */
export async function createTicket(api: EventsApi, tenant: string, eventRef: string, item: Omit<IssueItem, 'quantity'>, by: string | null): Promise<StoredRecord> {
  const ev = api.event(tenant, eventRef);
  const r = await api.scanner<IssueResult>(tenant, ev.sk, { type: 'issue', source: 'create', items: [{ ...item, quantity: 1 }], by });
  return r.tickets[0]!;
}

/**
 * Charges the total (minor units) through the payments provider, then issues the tickets and
 * records the order; when issuing fails nothing was issued, so the charge is refunded first.
 */
export function purchaseTickets(api: EventsApi, tenant: string, b: PurchaseRequest, by: string | null): Promise<SaleAnswer<unknown>> {
  return idempotent(api, tenant, 'events.tickets.purchase', b.idempotencyKey, b, async (idempotency) => {
    const { ev, types } = eventOfItems(api, tenant, b.items, b.eventId);
    if (ev.data.status !== 'published') throw appError('ERR_CONFLICT', 'tickets of an unpublished event cannot be sold; publish it first');
    const currency = String(ev.data.currency ?? 'USD');
    const e = exponentOf(currency);
    // Minor units here; the order and the payment are recorded and answered in major units.
    const amount = b.items.reduce((sum, i) => sum + storedMinor(types.get(i.ticketTypeId)!.data, 'price', e) * i.quantity, 0);
    let payment: Payment | null = null;
    if (amount > 0) {
      try {
        payment = await api.payments.charge({
          tenant,
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
    let r: IssueResult;
    try {
      r = await api.scanner<IssueResult>(tenant, ev.sk, {
        type: 'issue',
        source: 'purchase',
        items: b.items.map((i) => ({ ...i })),
        by,
        order: { buyer: b.buyer, customerId: b.customerId, amount, currency, payment: payment && { ...payment, amount: toMajor(payment.amount, e) } },
        replay: idempotency,
      });
    } catch (err) {
      // Nothing was issued: give the money back before answering.
      if (payment) await api.payments.refund({ tenant, paymentId: payment.id, amount, currency }).catch((e) => api.deps.logger.error({ err: e, paymentId: payment!.id }, 'refund after a failed purchase failed'));
      throw err;
    }
    return { body: r };
  });
}

/** Complimentary tickets of one event, price 0, their holders' emails queued with them. */
export function compTickets(api: EventsApi, tenant: string, b: CompRequest, by: string | null): Promise<SaleAnswer<unknown>> {
  return idempotent(api, tenant, 'events.tickets.comp', b.idempotencyKey, b, async (idempotency) => {
    const { ev } = eventOfItems(api, tenant, b.items, b.eventId);
    return { body: await api.scanner<IssueResult>(tenant, ev.sk, { type: 'issue', source: 'comp', items: b.items, by, note: b.note, replay: idempotency }) };
  });
}

/** The tickets of an order paid elsewhere (once per order: again answers the same tickets, 200), or a walk-in sale. */
export function fulfilTickets(api: EventsApi, tenant: string, b: FulfilRequest, by: string | null): Promise<SaleAnswer<unknown>> {
  if (b.walkIn && b.items) throw appError('ERR_VALIDATION', 'body/items and body/walkIn cannot both be sent');
  if (!b.walkIn && !b.items) throw appError('ERR_VALIDATION', 'body/items (with body/orderId) or body/walkIn is required');
  if (b.items && !b.orderId) throw appError('ERR_VALIDATION', 'body/orderId is required with body/items');
  if (b.checkIn && !b.walkIn) throw appError('ERR_VALIDATION', 'body/checkIn applies to walk-ins only');
  const items: IssueItem[] = b.walkIn ? [{ ...b.walkIn, quantity: b.walkIn.quantity ?? 1 }] : b.items!;
  // The event and zone are checked after the key is looked up: a retry answers the first
  // result even if they changed since.
  const issueOnce = async (idempotency: IssueMsg['idempotency']): Promise<SaleAnswer<unknown>> => {
    const e = eventOfItems(api, tenant, items, b.eventId).ev;
    if (b.zone !== undefined && !(Array.isArray(e.data.zones) && e.data.zones.some((z: any) => z.id === b.zone))) {
      throw appError('ERR_VALIDATION', `body/zone "${b.zone}" is not a zone of event ${e.sk}`);
    }
    const body = await api.scanner<IssueResult>(tenant, e.sk, {
      type: 'issue',
      source: b.walkIn ? 'walk-in' : 'fulfill',
      items,
      by,
      fulfillOrderId: b.orderId,
      ...(b.walkIn ? { idempotency } : { replay: idempotency }),
      checkIn: b.checkIn ? { zone: b.zone, checkpoint: b.checkpoint } : undefined,
    });
    return { body };
  };
  const run = (idempotency: IssueMsg['idempotency']) => {
    if (!b.orderId) return issueOnce(idempotency);
    return api.serialize(tenant, `fulfill:${b.orderId}`, async () => {
      const done = api.deps.store.getKv<{ event: string; ticketIds: string[] }>(tenant, FULFILLED_NS, b.orderId!);
      if (done) {
        return { status: 200, body: { tickets: done.ticketIds.map((id) => api.deps.store.getRecord(tenant, TICKET, id)).filter((t): t is StoredRecord => !!t) } };
      }
      return issueOnce(idempotency);
    });
  };
  return idempotent(api, tenant, 'events.tickets.fulfill', b.idempotencyKey, b, run);
}

/** Gives back a paid ticket's price through the payments provider, then marks it refunded (one at a time per ticket). */
export function refundTicket(api: EventsApi, tenant: string, id: string, reason: string | undefined, by: string | null): Promise<StoredRecord> {
  return api.serialize(tenant, `refund:${id}`, async () => {
    const { ticket, eventId } = api.ticket(tenant, id);
    if (!isLive(ticket.data.status ?? 'valid')) throw appError('ERR_CONFLICT', `a ${ticket.data.status} ticket cannot be refunded`);
    let refund: Record<string, unknown> | null = null;
    const order = typeof ticket.data.orderId === 'string' ? api.deps.store.getRecord(tenant, EVENT_ORDER, ticket.data.orderId) : undefined;
    const payment = order?.data.payment as Payment | null | undefined;
    const e = exponentOf(payment?.currency ?? ticket.data.currency);
    // The ticket's own unit decides (a ticket sold before the major-unit convention holds cents).
    const price = storedMinor(ticket.data, 'price', e);
    if (price > 0 && payment) {
      const r = await api.payments.refund({ tenant, paymentId: payment.id, amount: price, currency: payment.currency });
      refund = { ...r, amount: toMajor(r.amount, e) };
    }
    return api.scanner<StoredRecord>(tenant, eventId, { type: 'refund', ticketId: ticket.sk, refund, reason, by });
  });
}

/**
 * The ticket `id` answered with a dynamic code signed now and its signed static code, both by the
 * event's door key in its scanner (neither the codeSecret nor a private key is ever sent).
 */
export async function ticketWithCode(api: EventsApi, tenant: string, id: string): Promise<StoredRecord> {
  const { eventId } = api.ticket(tenant, id);
  const r = await api.scanner<QrReply>(tenant, eventId, { type: 'qr', ticketId: id });
  return {
    ...r.ticket,
    data: { ...r.ticket.data, code: r.code, staticCode: r.staticCode, codeExpiresAt: new Date(r.at + r.windowMs).toISOString() },
  };
}
