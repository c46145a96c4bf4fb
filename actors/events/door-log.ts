// The door's undo and its readable scan log through the events API: an annulment is a message to
// the event's scanner (which decides and logs it); the log is read from the store in key order,
// with whether each scan was annulled asked of the scanner's memory.
import type { DeviceScope } from '../../core/auth/tokens.js';
import { appError } from '../../core/errors.js';
import type { ScheduledJob } from '../../core/scheduler.js';
import {
  type AnnulCaller,
  type AnnulReply,
  parseScanId,
  readScanLog,
  SCAN_LOG_PREFIX,
  scanItem,
  type ScanFilter,
  type ScanLogItem,
} from '../scanner/index.js';
import type { EventsApi, EventsDeps } from './api.js';

/** Names the scan to annul: its id (from the scan log), or its nonce with its event (or list). */
export interface AnnulRef {
  scanId?: string;
  nonce?: string;
  eventId?: string;
  listId?: string;
}

/**
 * Annuls one scan for `caller`. A scanner device (`device`, its enrolment's scope) may annul only
 * at its own events, and only its own scans (the caller id is the device's, as its scans' `by` is).
 */
export function annulScan(svc: EventsApi<EventsDeps>, tenant: string, ref: AnnulRef, caller: AnnulCaller, windowMs: number, device?: DeviceScope): Promise<AnnulReply> {
  if (ref.scanId !== undefined) {
    const id = parseScanId(ref.scanId);
    if (!id) throw appError('ERR_VALIDATION', 'body/scanId must be a scan id as the scan log answers it (`<eventId>-<sequence>`)');
    const ev = svc.findEvent(tenant, id.eventId);
    if (!ev) throw appError('ERR_NOT_FOUND', `scan ${ref.scanId}`);
    svc.deviceMay(device, ev);
    return svc.scanner<AnnulReply>(tenant, id.eventId, { type: 'annul', seq: id.seq, caller, windowMs });
  }
  if (ref.nonce === undefined) throw appError('ERR_VALIDATION', 'body/scanId or body/nonce is required');
  // A nonce is unique within its event's scans: the event (or the list's) is named with it.
  const { ev } = svc.scanTarget(tenant, { eventId: ref.eventId, listId: ref.listId });
  if (!ev) throw appError('ERR_VALIDATION', 'body/eventId or body/listId is required with body/nonce');
  svc.deviceMay(device, ev);
  return svc.scanner<AnnulReply>(tenant, ev.sk, { type: 'annul', nonce: ref.nonce, caller, windowMs });
}

export interface ScanLogQuery extends Omit<ScanFilter, 'since'> {
  since?: string;
  after?: string;
  limit?: number;
}

/** One page of an event's scan log in log order, and the cursor to the next (null at the end). */
export async function scansOf(svc: EventsApi<EventsDeps>, tenant: string, eventRef: string, q: ScanLogQuery, pageSize: number): Promise<{ data: ScanLogItem[]; next: string | null }> {
  const ev = svc.event(tenant, eventRef);
  const { since, after, limit, ...rest } = q;
  const f: ScanFilter = rest;
  if (since !== undefined) f.since = Date.parse(since);
  const from = after === undefined ? 0 : Number(after);
  if (!Number.isSafeInteger(from) || from < 0) throw appError('ERR_VALIDATION', 'querystring/after must be a cursor this route answered (`next`)');
  const page = readScanLog(svc.deps.store, tenant, SCAN_LOG_PREFIX + ev.sk, f, from, limit ?? pageSize);
  const annulled = page.entries.length
    ? await svc.scanner<number[]>(tenant, ev.sk, { type: 'annulled', seqs: page.entries.map((e) => e.seq) })
    : [];
  return {
    data: page.entries.map(({ seq, entry }, i) => scanItem(ev.sk, seq, entry, annulled[i] > 0)),
    next: page.next === null ? null : String(page.next),
  };
}

/** Runs a list's `exitAllAt` timer (registered with the node's scheduler by edge/modules/events.ts). */
export async function runExitAll(svc: EventsApi<EventsDeps>, job: ScheduledJob): Promise<void> {
  const p = job.payload as { eventId: string; listId: string; at: string };
  await svc.scanner(job.tenant, p.eventId, { type: 'exit-all', listId: p.listId, jobId: job.id, at: p.at });
}
