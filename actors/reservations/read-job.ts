// The reservation reads whose cost grows with the bookings a tenant has stored (a customer's own
// bookings, the upcoming and today's lists, a day's slots): each reads every booking of a location
// or definition, so it runs in a query worker (core/query/pool.ts loads this module by URL) under
// the query budget, never on the event loop. Answers are plain data, paged where a route pages.
import type { JobContext } from '../../core/query/protocol.js';
import type { PageLimits } from '../../core/store/query.js';
import type { Definition, ServiceDef } from './definition.js';
import { pageItems } from '../../core/store/query.js';
import { listOwn, slotsOf, today, upcoming } from './queries.js';

/** This module, as the pool loads it (.ts under tsx). */
export const RESERVATION_READS_JOB = new URL(import.meta.url.endsWith('.ts') ? './read-job.ts' : './read-job.js', import.meta.url).href;

interface Paging {
  page?: number;
  pageSize?: number;
  limits: PageLimits;
}

export type ReservationRead =
  | { op: 'own'; tenant: string; customerId: string; opts: { page?: number; pageSize?: number; status?: string; from?: number }; limits: PageLimits }
  | ({ op: 'upcoming'; tenant: string; now: number; opts: { hours: number; lateMinutes: number; location?: string } } & Paging)
  | ({ op: 'today'; tenant: string; now: number; opts: { location: string; date?: string; includeCancelled?: boolean } } & Paging)
  | { op: 'slots'; tenant: string; def: Definition; service: ServiceDef; date: string; partySize: number; now: number };

export function run({ store }: JobContext, q: ReservationRead): unknown {
  switch (q.op) {
    case 'own':
      return listOwn(store, q.tenant, q.customerId, q.opts, q.limits);
    case 'upcoming':
      return pageItems(upcoming(store, q.tenant, q.now, q.opts), q.page, q.pageSize, q.limits);
    case 'today': {
      const r = today(store, q.tenant, q.now, q.opts);
      return { ...pageItems(r.items, q.page, q.pageSize, q.limits), date: r.date, timezone: r.timezone };
    }
    case 'slots':
      return slotsOf(store, q.tenant, q.def, q.service, q.date, q.partySize, q.now);
  }
}
