// The webhook events (issue 34): ONE table of every event a node may send, with what it means, the
// shape of its `data` and an example. Endpoints validate their `events` against EVENT_TYPES, the
// producers name their type from it (a typo does not compile), and /openapi.json (`webhooks`) and
// /documentation render it, so the three never disagree.
//
// `data` is the record envelope as the API answers it (the door events: the scan result). The
// schemas name the fields integrators rely on and leave the rest open: a record gains fields over
// time, and a receiver should ignore what it does not know.
import { Type, type TSchema } from '@sinclair/typebox';
import type { WriteBatch } from '../store/store.js';
import type { WebhookPort } from './port.js';

const Str = Type.String();
const OptStr = Type.Optional(Type.Union([Type.String(), Type.Null()]));
const Num = Type.Optional(Type.Number());

/** The record envelope around `data` (spec: Resources → Record envelope). */
function envelope(datatype: string, data: Record<string, TSchema>) {
  return Type.Object(
    {
      pk: Type.String({ description: 'Organisation id' }),
      sk: Type.String({ description: 'Record id' }),
      datatype: Type.Literal(datatype),
      version: Type.Integer({ description: 'Optimistic-concurrency counter' }),
      state: Type.String(),
      createdate: Type.String({ format: 'date-time' }),
      modifydate: Type.String({ format: 'date-time' }),
      data: Type.Object(data, { additionalProperties: true }),
    },
    { additionalProperties: true },
  );
}

const AT = '2026-11-28T09:30:00.000Z';
const ORG = 'lovelace-events';
function record(datatype: string, sk: string, state: string, data: Record<string, unknown>, version = 1) {
  return { pk: ORG, sk, datatype, version, state, createdate: AT, modifydate: AT, data };
}

const ticketData = {
  event: Str,
  ticketTypeId: Str,
  ticketTypeTitle: Type.Optional(Str),
  number: Type.String({ description: 'The static code' }),
  holderEmail: OptStr,
  holderName: OptStr,
  status: Type.String({ description: '`valid`, `checked_in`, `refunded` or `cancelled`' }),
  price: Num,
  currency: Type.Optional(Str),
  source: Type.Optional(Type.String({ description: '`create`, `purchase`, `comp`, `fulfill` or `walk-in`' })),
  orderId: Type.Optional(Str),
  customerId: Type.Optional(Str),
};
const Ticket = envelope('ticket', ticketData);
const ticket = (extra: Record<string, unknown>, state = 'valid', version = 1) =>
  record('ticket', 'tck_4f1c2a9b7e', state, {
    event: '6745f0a1c2b3d4e5f6a7b8c9',
    ticketTypeId: '6745f0a1c2b3d4e5f6a7b8d0',
    ticketTypeTitle: 'General admission',
    number: '4F1C2A9B7E',
    holderEmail: 'ada@example.com',
    holderName: 'Ada Lovelace',
    status: 'valid',
    price: 25,
    currency: 'EUR',
    source: 'purchase',
    ...extra,
  }, version);

/** A door scan that let a ticket in or out, and where it happened. */
const ScanResult = Type.Object(
  {
    success: Type.Literal(true),
    direction: Type.String({ description: '`checkin` or `checkout`' }),
    eventId: Str,
    zone: OptStr,
    listId: Type.Optional(Str),
    checkpoint: OptStr,
    deviceId: OptStr,
    scannedAt: Type.String({ format: 'date-time' }),
    ticket: Ticket,
  },
  { additionalProperties: true },
);
const scan = (direction: string, zone: string, t: unknown) => ({
  success: true,
  direction,
  eventId: '6745f0a1c2b3d4e5f6a7b8c9',
  zone,
  checkpoint: 'north-gate',
  deviceId: '6745f0a1c2b3d4e5f6a7b8ca',
  scannedAt: AT,
  ticket: t,
});

const Order = envelope('sf_order', {
  orderNumber: Type.Integer(),
  businessLocationId: Str,
  tabLabel: Type.Optional(Str),
  status: Type.String({ description: '`open`, `closed` or `split`' }),
  currency: Str,
  lines: Type.Optional(Type.Array(Type.Object({}, { additionalProperties: true }))),
  total: Num,
  amountPaid: Num,
  amountRefunded: Num,
  servicePointId: Type.Optional(Str),
  customerId: Type.Optional(Str),
});
const order = (status: string, extra: Record<string, unknown>, version: number) =>
  record('sf_order', '6745f0a1c2b3d4e5f6a7b8e1', status, {
    orderNumber: 1042,
    businessLocationId: 'main-bar',
    tabLabel: 'Table 4',
    status,
    currency: 'EUR',
    lines: [{ lineId: '6745f0a1c2b3d4e5f6a7b8e2', name: 'Espresso', quantity: 2, unitPrice: 2.5 }],
    total: 5,
    amountPaid: 0,
    amountRefunded: 0,
    openedAt: AT,
    ...extra,
  }, version);

const Reservation = envelope('reservation', {
  reservationDefinitionId: Str,
  customerId: OptStr,
  customer: Type.Object({ name: Type.Optional(Str), email: Type.Optional(Str), phone: Type.Optional(Str) }, { additionalProperties: true }),
  service: Str,
  startTime: Type.String({ format: 'date-time' }),
  endTime: Type.String({ format: 'date-time' }),
  partySize: Type.Integer(),
  status: Type.String({ description: '`confirmed`, `cancelled` or `checked_in`' }),
  confirmationNumber: Str,
});
const reservation = (status: string, extra: Record<string, unknown>, version = 1) =>
  record('reservation', '6745f0a1c2b3d4e5f6a7b8f1', status, {
    reservationDefinitionId: 'dinner',
    customerId: '6745f0a1c2b3d4e5f6a7b8f2',
    customer: { name: 'Ada Lovelace', email: 'ada@example.com' },
    service: 'Dinner',
    startTime: '2026-12-01T19:00:00.000Z',
    endTime: '2026-12-01T21:00:00.000Z',
    timezone: 'Europe/Berlin',
    partySize: 4,
    status,
    confirmationNumber: 'R7K2QX',
    ...extra,
  }, version);

const Task = envelope('task', {
  workflowId: Str,
  title: Str,
  stageId: Str,
  status: Type.String({ description: '`open`, `completed` or `cancelled`' }),
  businessLocationId: Type.Optional(Str),
  reservationId: Type.Optional(Str),
  orderId: Type.Optional(Str),
  servicePointId: Type.Optional(Str),
  servicePointName: Type.Optional(Str),
  outcome: Type.Optional(Str),
});
const task = (workflowId: string, stageId: string, status: string, extra: Record<string, unknown>, version = 1) =>
  record('task', '6745f0a1c2b3d4e5f6a7b901', status, {
    workflowId,
    title: 'Ada Lovelace',
    stageId,
    status,
    queuedAt: AT,
    stageEnteredAt: AT,
    businessLocationId: 'main-bar',
    customer: { name: 'Ada Lovelace' },
    partySize: 4,
    ...extra,
  }, version);

const Lead = envelope('lead', { name: Type.Optional(Str), email: Type.Optional(Str), phone: Type.Optional(Str), status: Type.Optional(Str), source: Type.Optional(Str) });
const SupportTicket = envelope('support_ticket', {
  subject: Str,
  requester: Type.Object({ email: Str, name: Type.Optional(Str) }, { additionalProperties: true }),
  status: Str,
  priority: Str,
  assignee: OptStr,
});
const Participant = Type.Object({ id: Str, role: Str, name: Type.Optional(Str), email: Type.Optional(Str) }, { additionalProperties: true });
const Chat = envelope('chat', {
  chatId: Str,
  status: Type.String({ description: '`ai`, `queued`, `assigned` or `closed`' }),
  customer: Participant,
  department: OptStr,
  subject: OptStr,
});
const ChatMessage = Type.Object(
  {
    id: Str,
    seq: Type.Integer({ description: 'Position in the chat, from 1' }),
    chatId: Str,
    from: Participant,
    text: Str,
    type: Str,
    at: Type.String({ format: 'date-time' }),
  },
  { additionalProperties: true },
);
const Customer = envelope('customer', { email: Str, name: Type.Optional(Str), phone: Type.Optional(Str), status: Str });
const Ping = Type.Object({ endpointId: Str, message: Str }, { additionalProperties: true });

export interface WebhookEventDef {
  /** One line: what happened when this event is sent. */
  readonly meaning: string;
  /** The shape of the payload's `data`. */
  readonly schema: TSchema;
  /** A `data` as sent. */
  readonly example: unknown;
}

const chatCustomer = { id: '6745f0a1c2b3d4e5f6a7b8f2', role: 'customer', name: 'Ada Lovelace', email: 'ada@example.com' };

/** Every event, by name. */
export const WEBHOOK_EVENTS = {
  'ticket.issued': {
    meaning: 'A ticket was issued (created, sold, comped, fulfilled or sold at the door): one event per ticket.',
    schema: Ticket,
    example: ticket({}),
  },
  'ticket.checked_in': {
    meaning: 'A door scan let a ticket in (a first entry or a re-entry). `data` is the scan result: the ticket, the zone, checkpoint and device.',
    schema: ScanResult,
    example: scan('checkin', 'main-hall', ticket({ status: 'checked_in', checkedInAt: AT, zone: 'main-hall' }, 'checked_in', 2)),
  },
  'ticket.checked_out': {
    meaning: 'A door scan let a ticket out of a zone. `data` is the scan result.',
    schema: ScanResult,
    example: scan('checkout', 'main-hall', ticket({ status: 'checked_in', checkedInAt: AT, lastCheckOutAt: AT, zone: null }, 'checked_in', 3)),
  },
  'ticket.refunded': {
    meaning: 'A ticket was refunded; it no longer admits anyone.',
    schema: Ticket,
    example: ticket({ status: 'refunded', refundedAt: AT, refundReason: 'Cannot attend' }, 'refunded', 2),
  },
  'ticket.transferred': {
    meaning: 'A ticket passed to a new holder; the old holder\'s QR code stops working.',
    schema: Ticket,
    example: ticket({ holderEmail: 'charles@example.com', holderName: 'Charles Babbage', transfers: [{ from: 'ada@example.com', to: 'charles@example.com', at: AT }] }, 'valid', 2),
  },
  'order.opened': {
    meaning: 'A POS tab (storefront order) was opened, including the new tabs a split makes.',
    schema: Order,
    example: order('open', { lines: [], total: 0 }, 1),
  },
  'order.fired': {
    meaning: 'Lines of an order were sent to the kitchen (one kitchen task for the lines fired).',
    schema: Order,
    example: order('open', { lines: [{ lineId: '6745f0a1c2b3d4e5f6a7b8e2', name: 'Espresso', quantity: 2, unitPrice: 2.5, taskId: '6745f0a1c2b3d4e5f6a7b8e3', firedAt: AT }] }, 3),
  },
  'order.settled': {
    meaning: 'An order was paid in full and closed.',
    schema: Order,
    example: order('closed', { amountPaid: 5, closedAt: AT }, 4),
  },
  'order.refunded': {
    meaning: 'Money was refunded on an order (in part or in full).',
    schema: Order,
    example: order('closed', { amountPaid: 5, amountRefunded: 5, closedAt: AT }, 5),
  },
  'reservation.created': {
    meaning: 'A reservation was booked.',
    schema: Reservation,
    example: reservation('confirmed', {}),
  },
  'reservation.updated': {
    meaning: 'A reservation was changed by its customer or by staff: rescheduled, edited or cancelled.',
    schema: Reservation,
    example: reservation('cancelled', { cancelledAt: AT }, 2),
  },
  'reservation.checked_in': {
    meaning: 'The guest of a reservation arrived and joined the check-in queue.',
    schema: Reservation,
    example: reservation('checked_in', { checkedInAt: AT, checkInTaskId: '6745f0a1c2b3d4e5f6a7b901' }, 2),
  },
  'checkin.task.created': {
    meaning: 'A guest joined a location\'s check-in queue (a walk-in or an arrived reservation).',
    schema: Task,
    example: task('check-in', 'waiting', 'open', {}),
  },
  'checkin.task.assigned': {
    meaning: 'A guest in the check-in queue was given a service point (a table, a desk) and is being served.',
    schema: Task,
    example: task('check-in', 'serving', 'open', { servicePointId: '6745f0a1c2b3d4e5f6a7b902', servicePointName: 'Table 4', servedAt: AT }, 2),
  },
  'workflow.task.completed': {
    meaning: 'A task of any workflow (kitchen, check-in, your own) was completed.',
    schema: Task,
    example: task('kitchen', 'ready', 'completed', { outcome: 'completed', finishedAt: AT }, 3),
  },
  'lead.created': {
    meaning: 'A CRM lead was created.',
    schema: Lead,
    example: record('lead', '6745f0a1c2b3d4e5f6a7b911', 'created', { name: 'Ada Lovelace', email: 'ada@example.com', status: 'new', source: 'website' }),
  },
  'support_ticket.created': {
    meaning: 'A support ticket was opened.',
    schema: SupportTicket,
    example: record('support_ticket', '6745f0a1c2b3d4e5f6a7b921', 'open', {
      subject: 'Cannot find my tickets',
      requester: { email: 'ada@example.com', name: 'Ada Lovelace' },
      status: 'open',
      priority: 'normal',
      assignee: null,
      tags: [],
      messageCount: 1,
    }),
  },
  'chat.conversation.created': {
    meaning: 'A customer started a support chat.',
    schema: Chat,
    example: record('chat', '6745f0a1c2b3d4e5f6a7b931', 'queued', { chatId: '6745f0a1c2b3d4e5f6a7b931', status: 'queued', customer: chatCustomer, department: 'sales', subject: 'Group booking' }),
  },
  'chat.message.created': {
    meaning: 'A customer wrote in a support chat (agents\' and the AI\'s messages are not sent).',
    schema: ChatMessage,
    example: { id: '6745f0a1c2b3d4e5f6a7b932', seq: 1, chatId: '6745f0a1c2b3d4e5f6a7b931', from: chatCustomer, text: 'Do you take groups of twelve?', type: 'text', at: AT },
  },
  'customer.created': {
    meaning: 'A customer account was created (sign-up).',
    schema: Customer,
    example: record('customer', '6745f0a1c2b3d4e5f6a7b8f2', 'active', { email: 'ada@example.com', name: 'Ada Lovelace', status: 'active' }),
  },
  ping: {
    meaning: 'Sent by `POST /webhooks/endpoints/:id/test` to check an endpoint; nothing happened.',
    schema: Ping,
    example: { endpointId: '6745f0a1c2b3d4e5f6a7b941', message: 'ping' },
  },
} as const satisfies Record<string, WebhookEventDef>;

export type WebhookEventType = keyof typeof WEBHOOK_EVENTS;

/** Every event name, in the table's order (an endpoint's `events` takes these and `*`). */
export const EVENT_TYPES: readonly WebhookEventType[] = Object.keys(WEBHOOK_EVENTS) as WebhookEventType[];

/** What an endpoint's `events` may name (with `*`): every event but `ping`, which only the test route sends. */
export const SUBSCRIBABLE_EVENTS: readonly WebhookEventType[] = EVENT_TYPES.filter((type) => type !== 'ping');

export function isEventType(name: string): name is WebhookEventType {
  return Object.hasOwn(WEBHOOK_EVENTS, name);
}

/**
 * Queues `type` in `batch` when an endpoint of `tenant` listens: the producer's one call, made as
 * its write's last step (after every check), so a refused write queues nothing. `data` may be a
 * function, built only when someone listens.
 */
export function queueEvent(
  port: WebhookPort,
  batch: WriteBatch,
  tenant: string,
  type: WebhookEventType,
  data: unknown,
  now: number,
): void {
  if (!port.wants(tenant, type)) return;
  port.queue(batch, tenant, type, typeof data === 'function' ? (data as () => unknown)() : data, now);
}
