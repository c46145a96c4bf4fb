// The event names an endpoint may subscribe to. The catalogue (catalogue.ts, with each event's
// schema and example) is written beside this on another branch; until it lands here, this list is
// the one endpoints are checked against, and the integrator points it at the catalogue.

/** Sent by `POST /webhooks/endpoints/:id/test` only; an endpoint never subscribes to it. */
export const PING = 'ping';

export const WEBHOOK_EVENTS: readonly string[] = [
  'ticket.issued',
  'ticket.checked_in',
  'ticket.checked_out',
  'ticket.refunded',
  'ticket.transferred',
  'order.opened',
  'order.fired',
  'order.settled',
  'order.refunded',
  'reservation.created',
  'reservation.updated',
  'reservation.checked_in',
  'checkin.task.created',
  'checkin.task.assigned',
  'workflow.task.completed',
  'lead.created',
  'support_ticket.created',
  'chat.conversation.created',
  'chat.message.created',
  'customer.created',
];
