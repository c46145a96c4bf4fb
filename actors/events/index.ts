// The events area's public surface: the per-node API (event lookup, the events and scanner
// actors, payments) and the issuing steps built on it.
export { EventsApi, byCreated, type EventsDeps } from './api.js';
export {
  compTickets,
  createTicket,
  fulfilTickets,
  purchaseTickets,
  refundTicket,
  ticketWithCode,
  type CompRequest,
  type FulfilRequest,
  type PurchaseRequest,
  type SaleAnswer,
} from './ticket-sales.js';
export {
  eventRecordWithTypes,
  lookupTickets,
  mediaOf,
  mediaRecords,
  sessionsOf,
  ticketRecord,
  ticketsOfHolder,
  ticketTypeRecord,
  ticketTypesOf,
} from './event-reads.js';
export { eventsActor } from './actor.js';
export type { ChildKind, EventInput, EventWithTypes } from './messages.js';
export { checkinListRecord, checkinListsOf, checkinStats, createCheckinList, deleteCheckinList, occupancy, updateCheckinList } from './checkin-lists.js';
export type { ListTarget } from './api.js';
export { annulScan, runExitAll, scansOf, type AnnulRef, type ScanLogQuery } from './door-log.js';
export { doorFeed, FEED_DEFAULT_LIMIT, FEED_MAX_LIMIT, type FeedPage } from './door-feed.js';
