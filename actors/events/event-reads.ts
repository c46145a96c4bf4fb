// The events area's reads that need no serialization with writes: small, index-narrowed LMDB reads
// in place (DESIGN: the flow of one request). Whether a route's read waits for the door first is
// declared on the route (edge/routes/events/door-wait.ts).
import type { StoredRecord } from '../../core/store/record.js';
import { byCredentialCode, byNumberIndex, byStaticCode } from '../scanner/index.js';
import {
  EVENT,
  EVENT_MEDIA,
  EVENT_SESSION,
  nameKeys,
  normalizeEmail,
  SOLD_NS,
  TICKET,
  TICKET_TYPE,
  ticketOfEvent,
  type SoldCounts,
} from '../event-records/index.js';
import { byCreated, type EventsApi } from './api.js';

/** The stored event (fresh, not the lookup cache) and its ticket types, oldest first. */
export function eventRecordWithTypes(api: EventsApi, tenant: string, eventId: string): { ev: StoredRecord | undefined; types: StoredRecord[] } {
  const ev = api.deps.store.getRecord(tenant, EVENT, eventId);
  return { ev, types: ev ? api.deps.store.scan(tenant, TICKET_TYPE, { 'data.event': eventId }).sort(byCreated) : [] };
}

/** An event's ticket types, oldest first, with the counts sold. */
export function ticketTypesOf(api: EventsApi, tenant: string, eventId: string): { types: StoredRecord[]; sold: SoldCounts | undefined } {
  const sold = api.deps.store.getKv<SoldCounts>(tenant, SOLD_NS, eventId);
  const types = api.deps.store.scan(tenant, TICKET_TYPE, { 'data.event': eventId });
  types.sort(byCreated);
  return { types, sold };
}

export function ticketTypeRecord(api: EventsApi, tenant: string, id: string): StoredRecord | undefined {
  return api.deps.store.getRecord(tenant, TICKET_TYPE, id);
}

/** An event's sessions by start time, ties by id. */
export function sessionsOf(api: EventsApi, tenant: string, eventId: string): StoredRecord[] {
  const sessions = api.deps.store.scan(tenant, EVENT_SESSION, { 'data.event': eventId });
  sessions.sort((a, b) => Date.parse(String(a.data.startTime)) - Date.parse(String(b.data.startTime)) || (a.sk < b.sk ? -1 : 1));
  return sessions;
}

export function mediaOf(api: EventsApi, tenant: string, eventId: string): StoredRecord[] {
  return api.deps.store.scan(tenant, EVENT_MEDIA, { 'data.event': eventId });
}

export function mediaRecords(api: EventsApi, tenant: string, ids: string[]): Array<StoredRecord | undefined> {
  return ids.map((id) => api.deps.store.getRecord(tenant, EVENT_MEDIA, id));
}

export function ticketRecord(api: EventsApi, tenant: string, id: string): StoredRecord | undefined {
  return api.deps.store.getRecord(tenant, TICKET, id);
}

/** Event tickets held under a proven email or one of the caller's customer ids. */
export function ticketsOfHolder(api: EventsApi, tenant: string, holder: { email?: string; customerIds: string[] }): StoredRecord[] {
  const byId = new Map<string, StoredRecord>();
  if (holder.email) for (const t of api.deps.store.scan(tenant, TICKET, { 'data.holderEmail': holder.email })) byId.set(t.sk, t);
  for (const id of holder.customerIds) for (const t of api.deps.store.scan(tenant, TICKET, { 'data.customerId': id })) byId.set(t.sk, t);
  // Event tickets only: records of datatype `ticket` written elsewhere without an event are not tickets to show.
  return [...byId.values()].filter((t) => typeof t.data.event === 'string');
}

/**
 * The tickets of event `ev` that `q` names: a ticket number (any case) or credential code exactly,
 * a holder email exactly, or whole words of the holder name; oldest first. Indexes only.
 */
export function lookupTickets(api: EventsApi, tenant: string, ev: StoredRecord, q: string): StoredRecord[] {
  const refs = { id: ev.sk, slug: String(ev.data.slug ?? '') };
  const store = api.deps.store;
  const read = (datatype: string, sk: string) => store.getRecord(tenant, datatype, sk);
  const exact = byStaticCode(read, q) ?? byCredentialCode(read, q);
  let matches: StoredRecord[] = exact ? [exact] : byNumberIndex(store, tenant, q);
  if (matches.length === 0 && q.includes('@')) matches = store.scan(tenant, TICKET, { 'data.holderEmail': normalizeEmail(q) });
  else if (matches.length === 0) {
    const words = nameKeys(q);
    if (words.length > 0) {
      matches = store
        .scan(tenant, TICKET, { 'data.holderNameKeys': words[0] })
        .filter((t) => words.every((w) => (t.data.holderNameKeys as string[]).includes(w)));
    }
  }
  matches = matches.filter((t) => ticketOfEvent(t, refs));
  matches.sort(byCreated);
  return matches;
}

