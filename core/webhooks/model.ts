// What is stored of webhook endpoints and deliveries, and where. Everything lives in tenant kv
// namespaces, out of the generic record store's reach: an endpoint's signing secrets must never be
// readable through /repository, and its URL changes only through its routes (which check it).
// Endpoints are written by the tenant's webhooks actor (actors/webhooks); deliveries are written
// in the batch of the write that caused them (queue.ts) and then by the dispatcher of the node
// owning the tenant (dispatcher.ts).

/** endpoint id → Endpoint. */
export const ENDPOINT_NS = 'webhook_endpoint';
/** event id → StoredEvent: the body of an event queued for several endpoints, stored once for them all. */
export const EVENT_NS = 'webhook_event';
/**
 * Due deliveries, one lane per endpoint: key `<endpoint id>:<dueAt, 15 digits>:<event id>` → 1, so
 * an endpoint's keys are one range in send order and a lane is read a page at a time.
 */
export const LANE_NS = 'webhook_lane';
/** The queue of the first build (`<dueAt>:<delivery id>` → 1): moved into lanes when met. */
export const LEGACY_QUEUE_NS = 'webhook_queue';
/** endpoint id → EndpointHealth, while the endpoint fails. */
export const HEALTH_NS = 'webhook_health';
/** endpoint id → epoch ms it was deleted: its deliveries and lane are removed in steps, then this. */
export const GONE_NS = 'webhook_gone';
/** One namespace per endpoint: event id → Delivery (ids grow with time, so key order is age). */
export const deliveryNs = (endpointId: string): string => `webhook_delivery:${endpointId}`;

/** The bus subject on which a tenant's new subscription table travels to every node. */
export const SUBSCRIPTIONS_SUBJECT = 'webhooks.subscriptions';

export interface SigningSecret {
  /** `whsec_<base64 key>`. */
  secret: string;
  /** Epoch ms; absent: the current secret. A rotated-out secret signs beside it until then. */
  expiresAt?: number;
}

export interface Endpoint {
  id: string;
  url: string;
  /** Event names, or `*`. */
  events: string[];
  description: string;
  enabled: boolean;
  /** The newest first. */
  secrets: SigningSecret[];
  createdAt: number;
  updatedAt: number;
  createdBy: string;
  /** Why it was disabled by the server (failing for too long); absent when an Admin did it. */
  disabledReason?: string;
  disabledAt?: number;
}

export type DeliveryState = 'pending' | 'delivered' | 'failed';

/** An event as sent: every attempt to every endpoint signs the same bytes. */
export interface StoredEvent {
  type: string;
  /** Epoch ms the event was queued. */
  createdAt: number;
  /** The JSON body. */
  body: string;
}

/** One endpoint's delivery of one event: its state and last attempt, small (the body is the event's). */
export interface Delivery {
  eventId: string;
  endpointId: string;
  type: string;
  /** Epoch ms the event was queued. */
  createdAt: number;
  /** The event's body when it went to this endpoint alone (else it is the event's, EVENT_NS). */
  body?: string;
  state: DeliveryState;
  attempts: number;
  lastStatus: number | null;
  lastError?: string;
  lastDurationMs?: number;
  lastAttemptAt?: number;
  /** While pending: when it is due (its queue key's time). */
  dueAt: number | null;
  deliveredAt?: number;
}

export interface EndpointHealth {
  /** The first failure since the last success (epoch ms). */
  failingSince: number;
}

/** The public id of a delivery: its event id then its endpoint id (both 24 hex). */
export function deliveryId(eventId: string, endpointId: string): string {
  return eventId + endpointId;
}

export function parseDeliveryId(id: string): { eventId: string; endpointId: string } | undefined {
  if (!/^[0-9a-f]{48}$/.test(id)) return undefined;
  return { eventId: id.slice(0, 24), endpointId: id.slice(24) };
}

const due15 = (at: number): string => String(Math.max(0, Math.floor(at))).padStart(15, '0');

/** The lane key of endpoint `endpointId`'s delivery of `eventId`, due at `dueAt`. */
export function laneKey(endpointId: string, dueAt: number, eventId: string): string {
  return `${endpointId}:${due15(dueAt)}:${eventId}`;
}

/** Keys of `endpointId`'s lane sort strictly after this one. */
export const laneStart = (endpointId: string): string => `${endpointId}:`;
/** Keys of `endpointId`'s lane due at or before `at` sort strictly before this one. */
export const laneDueUntil = (endpointId: string, at: number): string => `${endpointId}:${due15(at + 1)}:`;
/** Every key of `endpointId`'s lane sorts strictly before this one (';' follows ':'). */
export const laneEnd = (endpointId: string): string => `${endpointId};`;

export function parseLaneKey(key: string): { endpointId: string; dueAt: number; eventId: string } | undefined {
  const m = /^([0-9a-f]{24}):(\d{15}):([0-9a-f]{24})$/.exec(key);
  return m ? { endpointId: m[1], dueAt: Number(m[2]), eventId: m[3] } : undefined;
}

/** A key of the first build's queue, read to move it into its lane. */
export function parseLegacyQueueKey(key: string): { dueAt: number; eventId: string; endpointId: string } | undefined {
  const m = /^(\d{15}):([0-9a-f]{24})([0-9a-f]{24})$/.exec(key);
  return m ? { dueAt: Number(m[1]), eventId: m[2], endpointId: m[3] } : undefined;
}

/** Ids (and so event and delivery keys) made before `at` sort before this one (core/ids.ts: 8 hex of seconds first). */
export function idsBefore(at: number): string {
  return Math.max(0, Math.floor(at / 1000)).toString(16).padStart(8, '0');
}

/** An enabled endpoint's subscriptions, as the node keeps them in memory (subscriptions.ts). */
export interface SubscriptionTable {
  /** endpoint id → its event names (`*` for every event). */
  endpoints: Record<string, string[]>;
}

export function tableOf(endpoints: Iterable<Endpoint>): SubscriptionTable {
  const out: SubscriptionTable = { endpoints: {} };
  for (const e of endpoints) if (e.enabled) out.endpoints[e.id] = e.events;
  return out;
}
