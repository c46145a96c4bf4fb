// The outbox listings (GET /profile/outbox and /profile/outbox/mine) read every message sent to
// an address, or every message of the organisation (a large comp sends tens of thousands), before
// they filter and page: they run in a query worker (core/query/pool.ts loads this module by URL)
// under the query budget, never on the event loop.
import { readOutbox } from '../../core/outbox.js';
import type { JobContext } from '../../core/query/protocol.js';
import { pageItems } from '../../core/store/query.js';
import { adminView, recipientView } from './outbox-view.js';

/** This module, as the pool loads it (.ts under tsx). */
export const OUTBOX_JOB = new URL(import.meta.url.endsWith('.ts') ? './outbox-job.ts' : './outbox-job.js', import.meta.url).href;

/** The outbox routes' own paging: 20 by default, at most 200. */
const LIMITS = { defaultPageSize: 20, maxPageSize: 200 };

interface Selection {
  tenant: string;
  channel?: string;
  kind?: string;
  page?: number;
  pageSize?: number;
}

export type OutboxRead =
  /** Every message (or those to one address), newest first, as envelopes for Admins. */
  | ({ op: 'admin'; to?: string } & Selection)
  /** The messages to a person's own addresses, newest first; `full` answers codes to `account`. */
  | ({ op: 'mine'; addresses: string[]; account: string; full: boolean } & Selection);

export function run({ store }: JobContext, q: OutboxRead): unknown {
  const wanted = (m: { channel: string; kind?: string }) => (!q.channel || m.channel === q.channel) && (!q.kind || m.kind === q.kind);
  if (q.op === 'admin') {
    const all = readOutbox(store, q.tenant, q.to).filter(wanted).reverse().map(adminView);
    return pageItems(all, q.page, q.pageSize, LIMITS);
  }
  const mine = q.addresses
    .flatMap((to) => readOutbox(store, q.tenant, to))
    .filter(wanted)
    .sort((a, b) => (a.sentAt < b.sentAt ? 1 : a.sentAt > b.sentAt ? -1 : a.id < b.id ? 1 : -1))
    .map((m) => (q.full ? recipientView(m, q.account) : adminView(m)));
  return pageItems(mine, q.page, q.pageSize, LIMITS);
}
