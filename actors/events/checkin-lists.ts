// Check-in lists through the events API: each is written by its event's scanner actor (which
// keeps it in memory for the door: actors/scanner/checkin-list.ts) and read from the store. A
// list is named by its id alone; another organisation's list is simply not found.
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import { CHECKIN_LIST, type CheckinStats, type ListFigures, type ListInput, type ZoneOccupancy } from '../scanner/index.js';
import { byCreated, type EventsApi, type EventsDeps } from './api.js';

/** The list `id`, or a 404. */
export function checkinListRecord(svc: EventsApi<EventsDeps>, tenant: string, id: string): StoredRecord {
  const rec = svc.deps.store.getRecord(tenant, CHECKIN_LIST, id);
  if (!rec) throw appError('ERR_NOT_FOUND', `check-in list ${id}`);
  return rec;
}

/** The lists of an event (by id or slug), oldest first, one page of them. */
export function checkinListsOf(svc: EventsApi<EventsDeps>, tenant: string, eventRef: string, q: { page?: number; pageSize?: number }) {
  const ev = svc.event(tenant, eventRef);
  const lists = svc.deps.store.scan(tenant, CHECKIN_LIST, { 'data.event': ev.sk }).sort(byCreated);
  return svc.page(lists, q);
}

export function createCheckinList(svc: EventsApi<EventsDeps>, tenant: string, eventRef: string, input: ListInput & { name: string }, by: string | null): Promise<StoredRecord> {
  const ev = svc.event(tenant, eventRef);
  return svc.scanner<StoredRecord>(tenant, ev.sk, { type: 'list-create', input, by });
}

export async function updateCheckinList(svc: EventsApi<EventsDeps>, tenant: string, id: string, input: ListInput, version?: number): Promise<StoredRecord> {
  const cur = checkinListRecord(svc, tenant, id);
  const rec = await svc.scanner<StoredRecord>(tenant, String(cur.data.event), { type: 'list-update', listId: id, input, version });
  svc.listChanged();
  return rec;
}

export async function deleteCheckinList(svc: EventsApi<EventsDeps>, tenant: string, id: string): Promise<void> {
  const cur = checkinListRecord(svc, tenant, id);
  await svc.scanner(tenant, String(cur.data.event), { type: 'list-delete', listId: id });
  svc.listChanged();
}

/** The event's id, and `listId` when given checked to be one of its lists (a 404 otherwise). */
function doorOf(svc: EventsApi<EventsDeps>, tenant: string, eventRef: string, listId: string | undefined): { eventId: string; list?: string } {
  const ev = svc.event(tenant, eventRef);
  if (listId === undefined) return { eventId: ev.sk };
  if (svc.findList(tenant, listId)?.eventId !== ev.sk) throw appError('ERR_NOT_FOUND', `check-in list ${listId} of event ${eventRef}`);
  return { eventId: ev.sk, list: listId };
}

/** The event's check-in figures with each list's (`byList`), or one list's alone. */
export function checkinStats(svc: EventsApi<EventsDeps>, tenant: string, eventRef: string, listId?: string) {
  const { eventId, list } = doorOf(svc, tenant, eventRef, listId);
  return svc.scanner<CheckinStats & { byList: Record<string, ListFigures> }>(tenant, eventId, { type: 'stats', ...(list ? { list } : {}) });
}

/** Occupancy of the event's zones, or of one list's (its zones, its entries and exits). */
export function occupancy(svc: EventsApi<EventsDeps>, tenant: string, eventRef: string, listId?: string) {
  const { eventId, list } = doorOf(svc, tenant, eventRef, listId);
  return svc.scanner<Record<string, ZoneOccupancy>>(tenant, eventId, { type: 'occupancy', ...(list ? { list } : {}) });
}
