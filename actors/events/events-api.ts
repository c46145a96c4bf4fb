// The events area's API within one node: the event lookup (by id or slug, cached for the scan
// path and dropped on every event write), the calls into the events and scanner actors, the
// payments provider and the in-process gates that serialize retries of one purchase, fulfilment
// or refund. The issuing steps built on it are ./ticket-sales.ts.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import { IdempotencyGate } from '../../core/idempotency.js';
import type { Logger } from '../../core/log.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { EVENTS, EVENTS_KEY, type EventsMsg } from './actor.js';
import { LocalPayments, type PaymentsProvider } from './payments.js';
import { findEvent, TICKET } from '../event-records/index.js';
import { SCANNER, type ScannerMsg } from '../scanner/index.js';

/** The node's parts the events area uses (the edge passes its whole set; the type parameter keeps it). */
export interface EventsDeps {
  readonly store: Store;
  readonly runtime: ActorRuntime;
  readonly clock: Clock;
  readonly logger: Logger;
  readonly config: { readonly store: { readonly defaultPageSize: number; readonly maxPageSize: number } };
}

const CACHE_MAX = 10_000;

export class EventsApi<D extends EventsDeps = EventsDeps> {
  private readonly cache = new Map<string, StoredRecord>();
  readonly gate = new IdempotencyGate();
  readonly payments: PaymentsProvider;

  constructor(
    readonly deps: D,
    payments?: PaymentsProvider,
  ) {
    this.payments = payments ?? new LocalPayments(deps.clock);
  }

  /** The event named by id or slug, or undefined. Cached: the scan path asks on every request. */
  findEvent(tenant: string, idOrSlug: string): StoredRecord | undefined {
    const key = tenant + '\u0000' + idOrSlug;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const ev = findEvent(this.deps.store, tenant, idOrSlug);
    if (ev) {
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(key, ev);
    }
    return ev;
  }

  event(tenant: string, idOrSlug: string): StoredRecord {
    const ev = this.findEvent(tenant, idOrSlug);
    if (!ev) throw appError('ERR_NOT_FOUND', `event ${idOrSlug}`);
    return ev;
  }

  /** A ticket and the id of its event (its `data.event` may be an id or a slug). */
  ticket(tenant: string, id: string): { ticket: StoredRecord; eventId: string } {
    const ticket = this.deps.store.getRecord(tenant, TICKET, id);
    const ev = ticket && typeof ticket.data.event === 'string' ? this.findEvent(tenant, ticket.data.event) : undefined;
    if (!ticket || !ev) throw appError('ERR_NOT_FOUND', `ticket ${id}`);
    return { ticket, eventId: ev.sk };
  }

  scanner<R>(tenant: string, eventId: string, msg: ScannerMsg): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, SCANNER, eventId, msg);
  }

  events<R>(tenant: string, msg: EventsMsg): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, EVENTS, EVENTS_KEY, msg);
  }

  /** After an event changed: forget cached lookups and let a live scanner reread its config. */
  async eventChanged(tenant: string, eventId: string): Promise<void> {
    this.cache.clear();
    if (this.deps.runtime.isLive(tenant, SCANNER, eventId)) await this.deps.runtime.ask(tenant, SCANNER, eventId, { type: 'reload' });
  }

  /** One page of an in-memory list, in the list envelope (spec: List envelope), sizes clamped as the store clamps them. */
  page<T>(items: T[], q: { page?: number; pageSize?: number }): { data: T[]; total: number; hasNext: boolean; page: number; pageSize: number } {
    const { defaultPageSize, maxPageSize } = this.deps.config.store;
    const pageSize = Math.min(q.pageSize ?? defaultPageSize, maxPageSize);
    const page = q.page ?? 1;
    const data = items.slice((page - 1) * pageSize, page * pageSize);
    return { data, total: items.length, hasNext: page * pageSize < items.length, page, pageSize };
  }

  /** Runs `fn` alone among calls with the same key in this process (retries wait for the first). */
  serialize<T>(tenant: string, key: string, fn: () => Promise<T>): Promise<T> {
    return this.gate.run(`${tenant}\u0000${key}`, fn);
  }
}

/** Oldest first, ties by id (`mine` lists newest first: the reverse). */
export function byCreated(a: StoredRecord, b: StoredRecord): number {
  return a.createdate < b.createdate ? -1 : a.createdate > b.createdate ? 1 : a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0;
}
