// The CRM's list reads (communications, call recordings, the shared inbox, social activity, one
// person's activity): each reads every record of a datatype, or every record of one person, then
// filters, orders and pages in memory. A tenant grows these without bound (every SMS, call and
// tracked screen is a record), so they run in a query worker (listings-job.ts), never on the
// event loop: 100,000 messages held it ~700 ms per listing for every organisation.
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import { pageItems, type Filter, type PageLimits } from '../../core/store/query.js';
import type { Store } from '../../core/store/store.js';
import { INBOX_CONVERSATION, normalizePhone } from '../inbox/index.js';
import { byNewest, CUSTOMER_ACTIVITY, summarize, type ActivitySummary } from './customer-activity-actor.js';
import { SOCIAL_ACTIVITY } from './social-sync-actor.js';

export interface Paging {
  page?: number;
  pageSize?: number;
}

export interface TimeWindow {
  since?: string;
  until?: string;
}

export type CrmListing =
  /** Records of each source that involve `contact` (either side), in the window, newest first. */
  | ({ list: 'communications'; sources: Array<{ datatype: string; filter?: Filter }>; contact?: string } & TimeWindow & Paging)
  | ({ list: 'inbox'; channel?: string; status?: string; assignedTo?: string; unread?: boolean; q?: string } & Paging)
  | ({ list: 'social'; filter: Filter } & TimeWindow & Paging)
  | ({ list: 'activity-timeline'; email: string; type?: string } & TimeWindow & Paging)
  | { list: 'activity-summary'; email: string; now: number };

type Page = ListResult<StoredRecord> & { unreadTotal?: number; unreadConversations?: number };

/** Newest first by `data.at`, then by id (ids grow with creation time). */
function newestFirst(a: StoredRecord, b: StoredRecord): number {
  const ta = String(a.data.at ?? a.createdate);
  const tb = String(b.data.at ?? b.createdate);
  if (ta !== tb) return ta < tb ? 1 : -1;
  return a.sk < b.sk ? 1 : a.sk > b.sk ? -1 : 0;
}

/** Keeps records whose `data.at` falls in [since, until). */
function inWindow(r: StoredRecord, since?: string, until?: string): boolean {
  const at = Date.parse(String(r.data.at ?? r.createdate));
  if (since && at < Date.parse(since)) return false;
  if (until && at >= Date.parse(until)) return false;
  return true;
}

/** Matches a record whose either side is `contact` (phone numbers compared without punctuation). */
function involves(r: StoredRecord, contact: string | undefined): boolean {
  if (!contact) return true;
  const want = normalizePhone(contact) ?? contact.trim().toLowerCase();
  for (const k of ['from', 'to', 'contact']) {
    const v = r.data[k];
    if (typeof v !== 'string') continue;
    if ((normalizePhone(v) ?? v.toLowerCase()) === want) return true;
  }
  return false;
}

/** The unread count of a conversation; 0 for anything but a non-negative integer (odd stored data). */
function unreadOf(c: StoredRecord): number {
  const n = Number(c.data.unread ?? 0);
  return Number.isSafeInteger(n) && n > 0 ? n : 0;
}

function byLastMessage(a: StoredRecord, b: StoredRecord): number {
  const ta = String(a.data.lastMessageAt ?? a.createdate);
  const tb = String(b.data.lastMessageAt ?? b.createdate);
  if (ta !== tb) return ta < tb ? 1 : -1;
  return a.sk < b.sk ? 1 : -1;
}

function inbox(store: Store, tenant: string, q: Extract<CrmListing, { list: 'inbox' }>, limits: PageLimits): Page {
  const needle = q.q?.toLowerCase();
  const assigned = q.assignedTo?.toLowerCase();
  const all = read(store, tenant, q)
    .filter((c) => {
      const d = c.data;
      if (q.status && d.status !== q.status) return false;
      if (assigned !== undefined && (assigned === 'none' ? d.assignedTo != null : d.assignedTo !== assigned)) return false;
      if (q.unread !== undefined && unreadOf(c) > 0 !== q.unread) return false;
      if (needle && !`${d.contact} ${d.contactName ?? ''}`.toLowerCase().includes(needle)) return false;
      return true;
    })
    .sort(byLastMessage);
  let unreadTotal = 0;
  let unreadConversations = 0;
  for (const c of all) {
    const n = unreadOf(c);
    unreadTotal += n;
    if (n > 0) unreadConversations++;
  }
  return { ...pageItems(all, q.page, q.pageSize, limits), unreadTotal, unreadConversations };
}

/** The datatypes (and key filters) a listing reads: what is measured before it runs. */
export function sourcesOf(q: CrmListing): Array<{ datatype: string; filter?: Filter }> {
  switch (q.list) {
    case 'communications':
      return q.sources;
    case 'inbox':
      return [{ datatype: INBOX_CONVERSATION, filter: q.channel ? { 'data.channel': q.channel } : undefined }];
    case 'social':
      return [{ datatype: SOCIAL_ACTIVITY, filter: q.filter }];
    case 'activity-timeline':
    case 'activity-summary':
      return [{ datatype: CUSTOMER_ACTIVITY, filter: { 'data.email': q.email } }];
  }
}

/** Every record the listing's sources hold (what sourcesOf measured). */
function read(store: Store, tenant: string, q: CrmListing): StoredRecord[] {
  return sourcesOf(q).flatMap((s) => store.scan(tenant, s.datatype, s.filter));
}

/** Runs one listing against `store`: in place when it is small, else in a query worker (listings-job.ts). */
export function crmListing(store: Store, tenant: string, q: CrmListing, limits: PageLimits): Page | ActivitySummary {
  switch (q.list) {
    case 'communications': {
      const all = read(store, tenant, q)
        .filter((r) => involves(r, q.contact) && inWindow(r, q.since, q.until))
        .sort(newestFirst);
      return pageItems(all, q.page, q.pageSize, limits);
    }
    case 'inbox':
      return inbox(store, tenant, q, limits);
    case 'social': {
      const all = read(store, tenant, q)
        .filter((r) => inWindow(r, q.since, q.until))
        .sort(newestFirst);
      return pageItems(all, q.page, q.pageSize, limits);
    }
    case 'activity-timeline': {
      const all = read(store, tenant, q)
        .filter((r) => (!q.type || r.data.type === q.type) && inWindow(r, q.since, q.until))
        .sort(byNewest);
      return pageItems(all, q.page, q.pageSize, limits);
    }
    case 'activity-summary':
      return summarize(q.email, read(store, tenant, q), q.now);
  }
}
