// What the tenant's webhooks actor accepts, and its kind's name: callers address it with these.
import type { SubscriptionsMessage } from '../../core/webhooks/hub.js';
import type { Endpoint } from '../../core/webhooks/model.js';

export const WEBHOOKS = 'webhooks';
export const WEBHOOKS_KEY = '_';

export interface EndpointPatch {
  url?: string;
  events?: string[];
  description?: string;
  enabled?: boolean;
}

export type WebhooksMsg =
  | { type: 'create'; endpoint: Omit<Endpoint, 'id' | 'createdAt' | 'updatedAt'>; max: number }
  | { type: 'update'; id: string; patch: EndpointPatch }
  | { type: 'delete'; id: string }
  | { type: 'rotate'; id: string; secret: string; graceMs: number }
  /** The dispatcher's: the endpoint failed without a success since `since`. */
  | { type: 'disable'; id: string; since: number }
  | { type: 'ping'; id: string }
  | { type: 'retry'; deliveryId: string };

/** An endpoint change's answer: the endpoint, and the tenant's subscription table it left. */
export interface EndpointChange {
  endpoint: Endpoint;
  /** Absent when nothing changed. */
  subscriptions?: SubscriptionsMessage;
}
