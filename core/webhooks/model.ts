// What is stored of webhook endpoints and deliveries, and where. Everything lives in tenant kv
// namespaces, out of the generic record store's reach: an endpoint's signing secrets must never be
// readable through /repository, and its URL changes only through its routes (which check it).
// Endpoints are written by the tenant's webhooks actor (actors/webhooks); deliveries are written
// in the batch of the write that caused them (queue.ts) and then by the dispatcher of the node
// owning the tenant (dispatcher.ts).

/** endpoint id → Endpoint. */
export const ENDPOINT_NS = 'webhook_endpoint';
/** Due deliveries: key `<dueAt, 15 digits>:<delivery id>` → 1, so a listing is in send order. */
export const QUEUE_NS = 'webhook_queue';
/** endpoint id → EndpointHealth, while the endpoint fails. */
export const HEALTH_NS = 'webhook_health';
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

export interface Delivery {
  eventId: string;
  endpointId: string;
  type: string;
  /** Epoch ms the event was queued. */
  createdAt: number;
  /** The JSON body, kept as sent: every attempt signs the same bytes. */
  body: string;
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

export function queueKey(dueAt: number, id: string): string {
  return `${String(Math.max(0, Math.floor(dueAt))).padStart(15, '0')}:${id}`;
}

export function parseQueueKey(key: string): { dueAt: number; id: string } {
  const colon = key.indexOf(':');
  return { dueAt: Number(key.slice(0, colon)), id: key.slice(colon + 1) };
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
