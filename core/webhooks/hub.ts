// The node's webhook port (port.ts): which endpoints of a tenant want an event, from memory, and
// the queueing of an event in the caller's own batch.
//
// The subscription table of a tenant is read from the store once, the first time the tenant is
// asked about, then replaced by what the tenant's webhooks actor publishes after each committed
// endpoint change (SUBSCRIPTIONS_SUBJECT, carrying the whole table): every node hears it over the
// bus, whether or not its store has applied the write yet. A tenant nobody subscribes for costs a
// door scan one map lookup.
//
// Queueing writes the event's body once and, per subscribed endpoint, a small delivery record and
// its lane key, into the caller's batch: the event exists exactly when the write commits. Each
// endpoint's attempts, back-off and listing are its own from the start; an attempt's outcome
// rewrites only its small record, never the body.
import type { Bus, Unsubscribe } from '../bus/bus.js';
import { newId } from '../ids.js';
import type { Store, WriteBatch } from '../store/store.js';
import { deliveryNs, ENDPOINT_NS, EVENT_NS, LANE_NS, laneKey, SUBSCRIPTIONS_SUBJECT, tableOf, type Delivery, type Endpoint, type StoredEvent, type SubscriptionTable } from './model.js';
import type { WebhookPort } from './port.js';

interface TenantSubs {
  /** Endpoints subscribed to every event. */
  all: string[];
  /** Event name → endpoints subscribed to it by name. */
  byType: Map<string, string[]>;
  /** The publication it came from (0: read from the store). */
  v: number;
}

/** A tenant read from the store with no enabled endpoint. */
const NONE: TenantSubs = Object.freeze({ all: [], byType: new Map(), v: 0 }) as TenantSubs;
const NONE_EMPTY = { all: [] as string[], byType: new Map<string, string[]>() };

export interface SubscriptionsMessage {
  tenant: string;
  /** Increasing per tenant (the actor's clock and a counter): an older one is ignored. */
  v: number;
  table: SubscriptionTable;
}

export class WebhookHub implements WebhookPort {
  private readonly subs = new Map<string, TenantSubs>();
  private readonly unsubscribe: Unsubscribe;
  /** Told which endpoints' lanes a batch adds to (the dispatcher reads them once it has committed). */
  onQueued: (tenant: string, endpointIds: readonly string[]) => void = () => undefined;
  /** Told an endpoint of `tenant` was deleted (the dispatcher removes what it left). */
  onDeleted: (tenant: string) => void = () => undefined;

  constructor(
    private readonly store: Store,
    bus: Bus,
  ) {
    this.unsubscribe = bus.subscribe(SUBSCRIPTIONS_SUBJECT, (m) => this.apply(m as SubscriptionsMessage));
  }

  close(): void {
    this.unsubscribe();
  }

  wants(tenant: string, type: string): boolean {
    const s = this.subs.get(tenant) ?? this.load(tenant);
    // Nobody listening (the common case on the door's path): the lookup above is the whole cost.
    if (s === NONE) return false;
    return s.all.length > 0 || s.byType.has(type);
  }

  /** The enabled endpoints of `tenant` subscribed to `type`. */
  endpointsFor(tenant: string, type: string): string[] {
    const s = this.subs.get(tenant) ?? this.load(tenant);
    const named = s.byType.get(type);
    if (s.all.length === 0) return named ?? [];
    return named ? [...new Set([...s.all, ...named])] : s.all;
  }

  queue(batch: WriteBatch, tenant: string, type: string, data: unknown, now: number): void {
    const endpoints = this.endpointsFor(tenant, type);
    if (endpoints.length === 0) return;
    queueEvent(batch, tenant, endpoints, type, data, now);
    this.onQueued(tenant, endpoints);
  }

  /** A write queued deliveries to `endpointIds` outside `queue` (a ping, a retry): sent without waiting for the next poll. */
  queued(tenant: string, endpointIds: readonly string[]): void {
    this.onQueued(tenant, endpointIds);
  }

  apply(m: SubscriptionsMessage): void {
    if (!m || typeof m.tenant !== 'string' || !m.table) return;
    const cur = this.subs.get(m.tenant);
    if (cur && cur.v > m.v) return;
    const s = compile(m.table, m.v);
    this.subs.set(m.tenant, s.all.length === 0 && s.byType.size === 0 ? { ...NONE_EMPTY, v: m.v } : s);
  }

  private load(tenant: string): TenantSubs {
    const s = compile(tableOf(this.store.listKv<Endpoint>(tenant, ENDPOINT_NS).map((e) => e.value)), 0);
    this.subs.set(tenant, s.all.length === 0 && s.byType.size === 0 ? NONE : s);
    return s;
  }
}

function compile(t: SubscriptionTable, v: number): TenantSubs {
  const all: string[] = [];
  const byType = new Map<string, string[]>();
  for (const [id, events] of Object.entries(t.endpoints)) {
    for (const e of events) {
      if (e === '*') all.push(id);
      else {
        const list = byType.get(e);
        if (list) list.push(id);
        else byType.set(e, [id]);
      }
    }
  }
  return { all, byType, v };
}

/**
 * Queues event `type` for `endpoints` in `batch`; answers the event id. Every key is new (the event
 * id is minted here), so the store reads nothing it would replace. With one endpoint (the usual
 * case, and a door scan's) the body goes in the delivery itself: two writes, not three. With more,
 * the body is stored once as the event and each delivery is small.
 */
export function queueEvent(batch: WriteBatch, tenant: string, endpoints: readonly string[], type: string, data: unknown, now: number): { eventId: string } {
  const eventId = newId(now);
  const body = JSON.stringify({ id: eventId, type, createdAt: new Date(now).toISOString(), orgId: tenant, data });
  const shared = endpoints.length > 1;
  if (shared) batch.putKv(tenant, EVENT_NS, eventId, { type, createdAt: now, body } satisfies StoredEvent, 'fresh');
  for (const endpointId of endpoints) {
    const d: Delivery = { eventId, endpointId, type, createdAt: now, state: 'pending', attempts: 0, lastStatus: null, dueAt: now };
    if (!shared) d.body = body;
    batch.putKv(tenant, deliveryNs(endpointId), eventId, d, 'fresh');
    batch.putKv(tenant, LANE_NS, laneKey(endpointId, now, eventId), 1, 'fresh');
  }
  return { eventId };
}
