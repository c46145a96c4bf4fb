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
import { COMM_MESSAGE, createInboxApi, INBOX_CONVERSATION, normalizeContact, parseParties } from '../inbox/index.js';
import { CALL_RECORDING, recordingRecordId } from '../phone/index.js';
import { INLINE_LISTING_MAX, listRecords, type ListingDeps } from '../records/index.js';
import { CRM_LISTINGS_JOB, type CrmListingRead } from './listings-job.js';
import { crmListing, sourcesOf, type CrmListing } from './listings.js';
import { LEAD_ACTOR, type LeadMsg, CUSTOMER_ACTIVITY_ACTOR, type ActivityInput, type ActivityMsg, SOCIAL_ACTOR, type IngestResult, type SocialItem, SUPPORT_TICKET_ACTOR, type Author, type TicketFields, type TicketMsg, type TicketReply } from './messages.js';
import { LEAD } from './leads.js';
import { normalizeEmail } from './customer-activity-actor.js';

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
  /** Opens a ticket (and, with a description, its first message). */
  createTicket(tenant: string, fields: TicketFields, description: string | undefined, author: Author): Promise<TicketReply>;
  /** 404 for an unknown ticket, 409 when `version` is not the stored one. */
  updateTicket(tenant: string, id: string, version: number, changes: Data, author: Author): Promise<TicketReply>;
  /** A public reply, emailed to the requester through the outbox in the same write; `status` optionally moves the ticket. */
  replyToTicket(tenant: string, id: string, reply: { body: string; subject?: string; status?: string }, author: Author): Promise<TicketReply>;
  /** An internal comment, never sent. */
  commentOnTicket(tenant: string, id: string, body: string, author: Author): Promise<TicketReply>;
  /** Records one activity of the person `activity.email` names (normalized here). */
  recordActivity(tenant: string, activity: ActivityInput): Promise<StoredRecord>;
  /** Erases every activity record of a person (right to erasure): the normalized email and how many went. */
  eraseActivity(tenant: string, email: string): Promise<{ email: string; erased: number }>;
  /** Stores social items (a repeat updates) and threads new inbound messages into the inbox (channel social). */
  ingestSocial(tenant: string, items: SocialItem[]): Promise<{ received: number; created: number; updated: number; threaded: number }>;
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
  const askTicket = (tenant: string, id: string, msg: TicketMsg) => runtime.ask<TicketReply>(tenant, SUPPORT_TICKET_ACTOR, id, msg);
  const askActivity = <R = StoredRecord>(tenant: string, email: string, msg: ActivityMsg) => runtime.ask<R>(tenant, CUSTOMER_ACTIVITY_ACTOR, email, msg);
  const inbox = createInboxApi(parts);
  /** A social direct message into the inbox, as a conversation with `<platform>:<author handle or id>`. */
  const threadSocial = async (tenant: string, rec: StoredRecord): Promise<void> => {
    const d = rec.data as SocialItem & { platform: string; at: string };
    const who = d.author?.handle ?? d.author?.id ?? '';
    await inbox.receive(tenant, {
      channel: 'social',
      contact: normalizeContact('social', `${d.platform}:${who}`),
      contactName: d.author?.name,
      body: String(d.text ?? ''),
      // The inbox ignores a repeat of the same platform message.
      externalId: `${d.platform}:${d.externalId}`,
      at: d.at,
      meta: { platform: d.platform, socialActivityId: rec.sk, ...(d.postId ? { postId: d.postId } : {}) },
    });
  };
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
    createTicket: (tenant, fields, description, author) => askTicket(tenant, newId(clock.now()), { type: 'create', fields, description, author }),
    updateTicket: (tenant, id, version, changes, author) => askTicket(tenant, id, { type: 'update', version, changes, author }),
    replyToTicket: (tenant, id, reply, author) => askTicket(tenant, id, { type: 'reply', body: reply.body, subject: reply.subject, status: reply.status, author }),
    commentOnTicket: (tenant, id, body, author) => askTicket(tenant, id, { type: 'comment', body, author }),
    recordActivity: (tenant, activity) => {
      const email = normalizeEmail(activity.email);
      return askActivity(tenant, email, { type: 'record', activity: { ...activity, email } });
    },
    eraseActivity: async (tenant, email) => {
      const who = normalizeEmail(email);
      const r = await askActivity<{ erased: number }>(tenant, who, { type: 'erase' });
      return { email: who, erased: r.erased };
    },
    ingestSocial: async (tenant, items) => {
      const res = await runtime.ask<IngestResult>(tenant, SOCIAL_ACTOR, 'ingest', { items });
      let threaded = 0;
      for (const rec of res.created) {
        if (rec.data.kind !== 'message' || rec.data.direction !== 'inbound') continue;
        await threadSocial(tenant, rec);
        threaded++;
      }
      return { received: items.length, created: res.created.length, updated: res.updated.length, threaded };
    },
  };
}
