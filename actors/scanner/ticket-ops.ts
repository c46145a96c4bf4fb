// Ticket changes: issue (create, purchase, comp, fulfil, walk-in), transfer, refund, cancel,
// activate, code secret, badge printed, perk claim. They run inside the event's scanner actor,
// which is the single writer of the event's tickets, so none of them can race a scan or each
// other. Every check comes before the first change, in memory or in the batch: a refusal throws
// an AppError with nothing changed, and the actor keeps its state (refusalKeepsState).
// Each holder's ticket email is queued in the outbox in the same batch as the ticket (core/outbox.ts),
// so a crash leaves a ticket with its email or neither, and a retry of the request redoes both.
import { appError } from '../../core/errors.js';
import { recordIdempotent } from '../../core/idempotency.js';
import { newId } from '../../core/ids.js';
import { queueMessage } from '../../core/outbox.js';
import type { Store, WriteBatch } from '../../core/store/store.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import type { ActorContext } from '../../core/actor/runtime.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { byCredentialCode } from './locate.js';
import { newCodeSecret } from './ticket-code.js';
import { iso, readTicket, secretOf, writeTicket, type ScannerState } from './state.js';
import {
  credentialClaim,
  EVENT_ORDER,
  exponentOf,
  FULFILLED_NS,
  isLive,
  majorFields,
  nameKeys,
  newTicketNumber,
  normalizeEmail,
  SECRET_NS,
  SOLD_NS,
  storedMinor,
  TICKET,
  TICKET_CODE,
  TICKET_TYPE,
  ticketIdFor,
  ticketOfEvent,
  type Payment,
} from '../event-records/index.js';
import type { IssueMsg, IssueResult, IssueSource, TicketOpMsg } from './messages.js';

/** What a replayable issue records under its idempotency key: where its result can be read. */
export interface IssueReplay {
  replay: 'issue';
  eventId: string;
  issueId: string;
  count: number;
  orderId?: string;
  payment?: Payment | null;
}

export function isIssueReplay(body: unknown): body is IssueReplay {
  return typeof body === 'object' && body !== null && (body as { replay?: unknown }).replay === 'issue';
}

/** The answer an issue gave, rebuilt from its records (the tickets as they are now, in issue order). */
export function replayIssue(store: Store, tenant: string, r: IssueReplay): IssueResult {
  const tickets = store
    .scan(tenant, TICKET, { 'data.event': r.eventId, 'data.issueId': r.issueId })
    .sort((a, b) => (a.data.issueSeq as number) - (b.data.issueSeq as number));
  const result: IssueResult = { tickets };
  if (r.orderId) {
    const order = store.getRecord(tenant, EVENT_ORDER, r.orderId);
    if (order) result.order = order;
    result.payment = r.payment ?? null;
  }
  return result;
}

type Data = Record<string, any>;

/** Sources whose holders are emailed their ticket (a plain create is a desk operation). */
const EMAILED: ReadonlySet<IssueSource> = new Set(['purchase', 'comp', 'fulfill', 'walk-in']);

/** Queues the holder's ticket email, if the ticket has a holder email. */
export function queueTicketEmail(batch: WriteBatch, st: ScannerState, ticket: StoredRecord, now: number): void {
  const to = ticket.data.holderEmail;
  if (typeof to !== 'string' || !to) return;
  const name = st.ev!.name;
  queueMessage(
    batch,
    st.tenant,
    {
      channel: 'email',
      to,
      subject: `Your ticket for ${name}`,
      body: `Ticket ${ticket.data.number} (${ticket.data.ticketTypeTitle ?? 'ticket'}) for ${name}. Show the QR code in the app or this number at the door.`,
      kind: 'event-ticket',
      payload: { ticketId: ticket.sk, number: ticket.data.number, eventId: st.eventId },
    },
    now,
  );
}

/** The event's ticket `id`, or a 404 (tickets of other events are not this actor's). */
function ticketOf(st: ScannerState, id: string): StoredRecord {
  const t = readTicket(st, id);
  if (!t || !ticketOfEvent(t, st.ev!)) throw appError('ERR_NOT_FOUND', `ticket ${id}`);
  return t;
}

function mustBeLive(t: StoredRecord, action: string): void {
  const status = t.data.status ?? 'valid';
  if (!isLive(status)) throw appError('ERR_CONFLICT', `a ${status} ticket cannot be ${action}`);
}

/** `transfer`: the change is a transfer (the door feed reports the ticket's earlier codes revoked). */
function update(st: ScannerState, ctx: ActorContext, t: StoredRecord, data: Data, state?: string, transfer = false): StoredRecord {
  const now = ctx.clock.now();
  const next = nextVersion(t, { data, ...(state ? { state } : {}) }, now);
  writeTicket(st, ctx.batch, next, t.version);
  st.feed.ticket(ctx.batch, t.sk, now, transfer ? { transferAt: now } : {});
  return next;
}

function saveSold(st: ScannerState, ctx: ActorContext, typeId: string, delta: number): void {
  const byType = { ...st.sold.byType, [typeId]: Math.max(0, (st.sold.byType[typeId] ?? 0) + delta) };
  st.sold = { total: Math.max(0, st.sold.total + delta), byType };
  ctx.batch.putKv(st.tenant, SOLD_NS, st.eventId, st.sold);
}

/** Ids are case-blind; `thorough` also asks the index, for tickets written around these routes. */
function numberTaken(st: ScannerState, number: string, thorough: boolean): boolean {
  if (st.overlay.get(TICKET, ticketIdFor(number))) return true;
  if (!thorough) return false;
  const forms = [...new Set([number, number.toUpperCase(), number.toLowerCase()])];
  return st.store.count(st.tenant, TICKET, { 'data.number': { $in: forms } }) > 0;
}

export function issue(st: ScannerState, msg: IssueMsg, ctx: ActorContext): IssueResult {
  const ev = st.ev!;
  // Checks first: ticket types of this event, quantities left, chosen numbers free.
  const types = new Map<string, StoredRecord>();
  const wanted = new Map<string, number>();
  msg.items.forEach((item, i) => {
    let type = types.get(item.ticketTypeId);
    if (!type) {
      type = ctx.store.getRecord(st.tenant, TICKET_TYPE, item.ticketTypeId);
      if (!type || type.data.event !== st.eventId) {
        throw appError('ERR_VALIDATION', `body/items/${i}/ticketTypeId ${item.ticketTypeId} is not a ticket type of event ${ev.id}`);
      }
      types.set(item.ticketTypeId, type);
    }
    wanted.set(item.ticketTypeId, (wanted.get(item.ticketTypeId) ?? 0) + item.quantity);
    if (item.number !== undefined && numberTaken(st, item.number, true)) {
      throw appError('ERR_CONFLICT', `ticket number ${item.number} is already in use`);
    }
  });
  for (const [typeId, n] of wanted) {
    const type = types.get(typeId)!;
    const cap = type.data.quantity;
    const sold = st.sold.byType[typeId] ?? 0;
    if (typeof cap === 'number' && sold + n > cap) {
      throw appError('ERR_CONFLICT', `ticket type "${type.data.title}" has ${Math.max(0, cap - sold)} left, ${n} requested`);
    }
  }

  const now = ctx.clock.now();
  const exponent = exponentOf(ev.currency);
  const orderId = msg.order ? newId(now) : undefined;
  const issueId = msg.replay ? newId(now) : undefined;
  const tickets: StoredRecord[] = [];
  for (const item of msg.items) {
    const type = types.get(item.ticketTypeId)!;
    for (let q = 0; q < item.quantity; q++) {
      let number = item.number;
      if (number === undefined) {
        do number = newTicketNumber();
        while (numberTaken(st, number, false));
      }
      const holderEmail = item.holderEmail ? normalizeEmail(item.holderEmail) : msg.order ? normalizeEmail(msg.order.buyer.email) : null;
      const holderName = item.holderName ?? (msg.order && !item.holderEmail ? msg.order.buyer.name : undefined) ?? null;
      const data: Data = {
        event: st.eventId,
        ticketTypeId: type.sk,
        ticketTypeTitle: type.data.title,
        number,
        holderEmail,
        holderName,
        holderNameKeys: nameKeys(holderName),
        status: 'valid',
        ...majorFields({ price: msg.source === 'comp' ? 0 : storedMinor(type.data, 'price', exponent) }, exponent),
        currency: ev.currency,
        source: msg.source,
        requiresActivation: type.data.requiresActivation === true,
        issuedBy: msg.by,
      };
      const customerId = item.customerId ?? msg.order?.customerId;
      if (customerId) data.customerId = customerId;
      if (item.holderPhone) data.holderPhone = item.holderPhone;
      if (orderId) data.orderId = orderId;
      if (msg.fulfillOrderId) data.orderId = msg.fulfillOrderId;
      if (msg.note) data.note = msg.note;
      if (issueId) {
        data.issueId = issueId;
        data.issueSeq = tickets.length;
      }
      // Created with ifVersion 0 under the number's id: two events issuing one number at once
      // cannot both commit.
      const ticket = newRecord(st.tenant, TICKET, data, { sk: ticketIdFor(number), state: 'valid', now });
      st.overlay.put(ctx.batch, ticket, 0);
      st.feed.ticket(ctx.batch, ticket.sk, now, { fresh: true });
      if (EMAILED.has(msg.source)) queueTicketEmail(ctx.batch, st, ticket, now);
      tickets.push(ticket);
    }
  }
  for (const [typeId, n] of wanted) saveSold(st, ctx, typeId, n);

  const result: IssueResult = { tickets };
  if (msg.order) {
    const order = newRecord(
      st.tenant,
      EVENT_ORDER,
      {
        event: st.eventId,
        buyer: { email: normalizeEmail(msg.order.buyer.email), name: msg.order.buyer.name ?? null },
        customerId: msg.order.customerId ?? null,
        items: msg.items.map((i) => ({ ticketTypeId: i.ticketTypeId, quantity: i.quantity })),
        ...majorFields({ amount: msg.order.amount }, exponentOf(msg.order.currency)),
        currency: msg.order.currency,
        payment: msg.order.payment,
        ticketIds: tickets.map((t) => t.sk),
        soldBy: msg.by,
      },
      { sk: orderId, state: msg.order.payment ? 'paid' : 'free', now },
    );
    ctx.batch.putRecord(order, 0);
    result.order = order;
    result.payment = msg.order.payment;
  }
  if (msg.fulfillOrderId) ctx.batch.putKv(st.tenant, FULFILLED_NS, msg.fulfillOrderId, { event: st.eventId, ticketIds: tickets.map((t) => t.sk) });
  if (msg.replay) {
    const ref: IssueReplay = { replay: 'issue', eventId: st.eventId, issueId: issueId!, count: tickets.length };
    if (orderId) {
      ref.orderId = orderId;
      ref.payment = msg.order!.payment;
    }
    recordIdempotent(ctx.store, ctx.batch, st.tenant, msg.replay.key, msg.replay.print, { status: 201, body: ref }, ctx.clock);
  }
  for (const t of tickets) queueEvent(ctx.services.webhooks, ctx.batch, st.tenant, 'ticket.issued', t, now);
  return result;
}

export function ticketOp(st: ScannerState, msg: TicketOpMsg, ctx: ActorContext): unknown {
  const t = ticketOf(st, msg.ticketId);
  const now = ctx.clock.now();
  const d = t.data as Data;
  switch (msg.type) {
    case 'transfer': {
      if (d.status === 'checked_in' || d.checkedInAt) throw appError('ERR_CONFLICT', 'a ticket that has been used cannot be transferred');
      mustBeLive(t, 'transferred');
      const holderEmail = normalizeEmail(msg.holderEmail);
      const holderName = msg.holderName ?? null;
      const { customerId: _gone, ...rest } = d;
      const history = Array.isArray(d.transfers) ? d.transfers : [];
      const next = update(st, ctx, t, {
        ...rest,
        holderEmail,
        holderName,
        holderNameKeys: nameKeys(holderName),
        transfers: [...history, { from: d.holderEmail ?? null, to: holderEmail, at: iso(now), by: msg.by }],
      }, undefined, true);
      // The old holder's QR stops working: a new secret is minted on the next QR request.
      ctx.batch.deleteKv(st.tenant, SECRET_NS, t.sk);
      st.secrets.set(t.sk, '');
      queueTicketEmail(ctx.batch, st, next, now);
      queueEvent(ctx.services.webhooks, ctx.batch, st.tenant, 'ticket.transferred', next, now);
      return next;
    }
    case 'refund': {
      mustBeLive(t, 'refunded');
      const next = update(st, ctx, t, { ...d, status: 'refunded', refundedAt: iso(now), refund: msg.refund, refundReason: msg.reason ?? null, refundedBy: msg.by }, 'refunded');
      saveSold(st, ctx, String(d.ticketTypeId), -1);
      queueEvent(ctx.services.webhooks, ctx.batch, st.tenant, 'ticket.refunded', next, now);
      return next;
    }
    case 'cancel': {
      mustBeLive(t, 'cancelled');
      const next = update(st, ctx, t, { ...d, status: 'cancelled', cancelledAt: iso(now), cancelReason: msg.reason ?? null, cancelledBy: msg.by }, 'cancelled');
      saveSold(st, ctx, String(d.ticketTypeId), -1);
      return next;
    }
    case 'activate': {
      mustBeLive(t, 'activated');
      const codes: string[] = Array.isArray(d.credentialCodes) ? [...d.credentialCodes] : [];
      const code = msg.credentialCode;
      if (code !== undefined && !codes.includes(code)) {
        const read = (datatype: string, sk: string) => st.overlay.get(datatype, sk);
        const holder = byCredentialCode(read, code);
        if (holder && holder.sk !== t.sk) throw appError('ERR_CONFLICT', `credential code ${code} is bound to another ticket`);
        if (st.overlay.get(TICKET, ticketIdFor(code))) throw appError('ERR_CONFLICT', `credential code ${code} is a ticket number`);
        codes.push(code);
        st.overlay.put(
          ctx.batch,
          newRecord(st.tenant, TICKET_CODE, { ticketId: t.sk, event: st.eventId, kind: 'credential', value: code }, { sk: credentialClaim(code), now }),
          0,
        );
      }
      return update(st, ctx, t, { ...d, activatedAt: d.activatedAt ?? iso(now), activatedBy: d.activatedBy ?? msg.by, credentialCodes: codes });
    }
    case 'secret': {
      mustBeLive(t, 'shown as a QR code');
      let secret = secretOf(st, t.sk);
      if (!secret) {
        secret = newCodeSecret();
        ctx.batch.putKv(st.tenant, SECRET_NS, t.sk, secret);
        st.secrets.set(t.sk, secret);
        // A new code generation (codeTag) for the door feed.
        st.feed.ticket(ctx.batch, t.sk, now);
      }
      return { secret, ticket: t, windowMs: st.ev!.codeWindowMs };
    }
    case 'badge-printed': {
      const badge = (d.badge ?? {}) as Data;
      return update(st, ctx, t, {
        ...d,
        badge: {
          firstPrintedAt: badge.firstPrintedAt ?? iso(now),
          lastPrintedAt: iso(now),
          printCount: (typeof badge.printCount === 'number' ? badge.printCount : 0) + 1,
          printer: msg.printer ?? badge.printer ?? null,
          printedBy: msg.by,
        },
      });
    }
    case 'perk-claim': {
      const type = ctx.store.getRecord(st.tenant, TICKET_TYPE, String(d.ticketTypeId));
      const perks: Data[] = Array.isArray(type?.data.perks) ? (type!.data.perks as Data[]) : [];
      const perk = perks.find((p) => p.id === msg.perkId);
      if (!perk) throw appError('ERR_NOT_FOUND', `perk ${msg.perkId} of this ticket's type`);
      mustBeLive(t, 'used to claim a perk');
      const claimed = (d.perksClaimed ?? {}) as Data;
      if (claimed[msg.perkId]) throw appError('ERR_CONFLICT', `perk ${msg.perkId} was already claimed at ${claimed[msg.perkId].claimedAt}`);
      return update(st, ctx, t, {
        ...d,
        perksClaimed: { ...claimed, [msg.perkId]: { name: perk.name ?? msg.perkId, claimedAt: iso(now), by: msg.by, note: msg.note ?? null } },
      });
    }
  }
}
