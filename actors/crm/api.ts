// The crm area's API for the edge: one call per request. Lead writes are asks to the lead's actor
// (lead-actor.ts); reads go to the store (a record by id) or, for lists, through the listing
// rules (listings.ts, and the records area's listRecords), which measure a read before it runs
// and move a large one to a query worker.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import type { PageLimits } from '../../core/store/query.js';
import type { Data, ListResult, StoredRecord } from '../../core/store/record.js';
import { COMM_MESSAGE, INBOX_CONVERSATION, parseParties } from '../inbox/index.js';
import { CALL_RECORDING, recordingRecordId } from '../phone/index.js';
import { INLINE_LISTING_MAX, listRecords, type ListingDeps } from '../records/index.js';
import { CRM_LISTINGS_JOB, type CrmListingRead } from './listings-job.js';
import { crmListing, sourcesOf, type CrmListing } from './listings.js';
import { LEAD_ACTOR, type LeadMsg } from './messages.js';
import { LEAD } from './leads.js';
import { SUPPORT_TICKET, SUPPORT_TICKET_MESSAGE } from './support-ticket-actor.js';

/** What the area needs of its node. */
export interface CrmParts extends ListingDeps {
  readonly runtime: ActorRuntime;
  readonly clock: Clock;
  readonly config: { readonly store: PageLimits };
}

interface Page {
  page?: number;
  pageSize?: number;
}

export interface CrmApi {
  lead(tenant: string, id: string): StoredRecord;
  createLead(tenant: string, fields: Data): Promise<StoredRecord>;
  /** 404 for an unknown lead, 409 when `version` is not the stored one. */
  updateLead(tenant: string, id: string, version: number, changes: Data): Promise<StoredRecord>;
  /** 404 for an unknown lead; with `version`, 409 unless it is the stored one. */
  deleteLead(tenant: string, id: string, version?: number): Promise<StoredRecord>;
  ticket(tenant: string, id: string): StoredRecord;
  /** A ticket's public messages or internal comments, oldest first; 404 for an unknown ticket. */
  ticketThread(tenant: string, id: string, kind: 'message' | 'comment', page: Page): Promise<ListResult>;
  /** A conversation (`parties`: its id or `<channel>:<contact>`) with a page of its messages. */
  conversation(tenant: string, parties: string, page: Page & { sortType?: 'asc' | 'desc' }): Promise<{ conversation: StoredRecord; messages: ListResult }>;
  /** A call recording by the provider's recording SID. */
  recording(tenant: string, sid: string): StoredRecord;
  /** A CRM list (inbox, communications, activity, social): small ones inline, large ones in a query worker. */
  list<T>(tenant: string, listing: CrmListing): Promise<T>;
}

function found(rec: StoredRecord | undefined, what: string): StoredRecord {
  if (!rec) throw appError('ERR_NOT_FOUND', what);
  return rec;
}

/** A CRM list read measured before it runs, as a route's record listings are (actors/records/reads.ts). */
export function listCrm<T>(parts: Pick<CrmParts, 'store' | 'queries' | 'config'>, tenant: string, listing: CrmListing): Promise<T> {
  const { store, queries, config } = parts;
  let candidates = 0;
  for (const s of sourcesOf(listing)) {
    candidates += store.candidatesUpTo(tenant, s.datatype, s.filter, INLINE_LISTING_MAX + 1 - candidates);
    if (candidates > INLINE_LISTING_MAX) {
      return queries.run<T>(tenant, CRM_LISTINGS_JOB, { tenant, listing, limits: config.store } satisfies CrmListingRead);
    }
  }
  return Promise.resolve().then(() => crmListing(store, tenant, listing, config.store) as T);
}

export function createCrmApi(parts: CrmParts): CrmApi {
  const { runtime, store, clock } = parts;
  const lead = (tenant: string, id: string, msg: LeadMsg) => runtime.ask<StoredRecord>(tenant, LEAD_ACTOR, id, msg);
  return {
    lead: (tenant, id) => found(store.getRecord(tenant, LEAD, id), `lead ${id}`),
    createLead: (tenant, fields) => lead(tenant, newId(clock.now()), { type: 'create', fields }),
    updateLead: (tenant, id, version, changes) => lead(tenant, id, { type: 'update', version, changes }),
    deleteLead: (tenant, id, version) => lead(tenant, id, version === undefined ? { type: 'delete' } : { type: 'delete', version }),
    ticket: (tenant, id) => found(store.getRecord(tenant, SUPPORT_TICKET, id), `support ticket ${id}`),
    ticketThread: (tenant, id, kind, page) => {
      found(store.getRecord(tenant, SUPPORT_TICKET, id), `support ticket ${id}`);
      // Oldest first: a thread reads top to bottom. Ids grow with time, so they break ties in order.
      return listRecords(parts, tenant, SUPPORT_TICKET_MESSAGE, { 'data.ticketId': id, 'data.kind': kind }, { page: page.page, pageSize: page.pageSize, sort: 'data.at', sortType: 'asc' });
    },
    conversation: async (tenant, parties, page) => {
      const { id } = parseParties(parties);
      const conversation = found(store.getRecord(tenant, INBOX_CONVERSATION, id), `conversation ${parties}`);
      const messages = await listRecords(parts, tenant, COMM_MESSAGE, { 'data.conversationId': id }, {
        page: page.page,
        pageSize: page.pageSize,
        sort: 'data.at',
        sortType: page.sortType ?? 'asc',
      });
      return { conversation, messages };
    },
    recording: (tenant, sid) => found(store.getRecord(tenant, CALL_RECORDING, recordingRecordId(sid)), `recording ${sid}`),
    list: (tenant, listing) => listCrm(parts, tenant, listing),
  };
}
