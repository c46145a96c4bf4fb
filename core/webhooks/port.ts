// The port through which a write queues a webhook event (issue 34): the actor or service that
// makes the write calls `queue` with its own WriteBatch, so the event exists exactly when the write
// commits (a refused write queues nothing) and survives kill -9 with it. Delivery happens after
// commit, never on the writer's path: a door scan does not wait for any endpoint.
//
// `wants` answers from memory (the tenant's enabled endpoints and the event names they subscribe
// to), so a producer on a hot path (every door scan) pays one map lookup when nobody listens.
import type { WriteBatch } from '../store/store.js';

export interface WebhookPort {
  /** Whether an enabled endpoint of `tenant` subscribes to `type` (its name or `*`). */
  wants(tenant: string, type: string): boolean;
  /**
   * Queues event `type` with `data` (the record envelope, or the scan result for door events) in
   * `batch`, to be delivered to every endpoint of `tenant` subscribed to it once `batch` commits.
   * Does nothing when no endpoint wants it.
   */
  queue(batch: WriteBatch, tenant: string, type: string, data: unknown, now: number): void;
}

/** A node that delivers no webhooks (no endpoint is ever wanted). */
export const noWebhooks: WebhookPort = {
  wants: () => false,
  queue: () => undefined,
};
