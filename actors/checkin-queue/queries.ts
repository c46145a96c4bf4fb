// Read side of the check-in queue: the live queue of a location, its summary, a task's position,
// the history of finished tasks, and service point lists. The queue order is arrival order
// (`queuedAt`, then id). Reads go to the store (committed state).
import type { FindOptions, Filter } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { INLINE_LISTING_MAX, listRecords, type ListingDeps } from '../records/index.js';
import { isBusy, SERVICE_POINT_DATATYPE } from '../service-points/index.js';
import {
  CHECKIN_SERVING,
  CHECKIN_WAITING,
  CHECKIN_WORKFLOW,
  meanServiceMs,
  SERVICE_SAMPLE,
  SERVICE_TIMES_NS,
  TASK_DATATYPE,
  type ServiceTimes,
  type TaskRecord,
} from '../workflow/index.js';

/** Service time assumed before a location has served anyone. */
export const DEFAULT_SERVICE_MINUTES = 15;

function byArrival(a: StoredRecord, b: StoredRecord): number {
  const qa = String(a.data.queuedAt ?? a.createdate);
  const qb = String(b.data.queuedAt ?? b.createdate);
  return qa < qb ? -1 : qa > qb ? 1 : a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0;
}

/** Live (open) check-in tasks of a location in queue order: waiting and being served. */
export function liveTasks(store: Store, tenant: string, slug: string): TaskRecord[] {
  return (
    store.scan(tenant, TASK_DATATYPE, {
      'data.businessLocationId': slug,
      'data.workflowId': CHECKIN_WORKFLOW,
      'data.status': 'open',
    }) as TaskRecord[]
  ).sort(byArrival);
}

const minutes = (ms: number): number => Math.round((ms / 60_000) * 10) / 10;

/**
 * Average minutes from being served to completion over the location's last SERVICE_SAMPLE served
 * guests: one key-value read (workflow/service-times.ts). A location that served guests only before that
 * sample was kept is measured from its tasks while they are few (INLINE_LISTING_MAX); past that it
 * gets the default until its next served guest.
 */
export function averageServiceMinutes(store: Store, tenant: string, slug: string): number {
  const mean = meanServiceMs(store.getKv<ServiceTimes>(tenant, SERVICE_TIMES_NS, slug));
  if (mean !== undefined) return minutes(mean);
  const filter: Filter = { 'data.businessLocationId': slug, 'data.workflowId': CHECKIN_WORKFLOW, 'data.outcome': 'served' };
  if (store.candidatesUpTo(tenant, TASK_DATATYPE, filter, INLINE_LISTING_MAX + 1) > INLINE_LISTING_MAX) return DEFAULT_SERVICE_MINUTES;
  const served = store
    .scan(tenant, TASK_DATATYPE, filter)
    .filter((t) => typeof t.data.servedAt === 'string' && typeof t.data.finishedAt === 'string')
    .sort((a, b) => (String(a.data.finishedAt) < String(b.data.finishedAt) ? 1 : -1))
    .slice(0, SERVICE_SAMPLE);
  if (served.length === 0) return DEFAULT_SERVICE_MINUTES;
  const total = served.reduce((s, t) => s + (Date.parse(String(t.data.finishedAt)) - Date.parse(String(t.data.servedAt))), 0);
  return minutes(total / served.length);
}

export interface QueueSummary {
  businessLocationId: string;
  waiting: number;
  serving: number;
  /** Over the tasks waiting now: how long they have waited so far. */
  averageWaitMinutes: number;
  longestWaitMinutes: number;
  averageServiceMinutes: number;
  servicePoints: number;
  availableServicePoints: number;
}

export function summary(store: Store, tenant: string, slug: string, now: number): QueueSummary {
  const live = liveTasks(store, tenant, slug);
  const waiting = live.filter((t) => t.data.stageId === CHECKIN_WAITING);
  const waits = waiting.map((t) => now - Date.parse(t.data.queuedAt));
  const points = pointsAt(store, tenant, slug);
  return {
    businessLocationId: slug,
    waiting: waiting.length,
    serving: live.filter((t) => t.data.stageId === CHECKIN_SERVING).length,
    averageWaitMinutes: waits.length ? minutes(waits.reduce((a, b) => a + b, 0) / waits.length) : 0,
    longestWaitMinutes: waits.length ? minutes(Math.max(...waits)) : 0,
    averageServiceMinutes: averageServiceMinutes(store, tenant, slug),
    servicePoints: points.length,
    availableServicePoints: points.filter(isReady).length,
  };
}

export interface Position {
  taskId: string;
  businessLocationId: string | null;
  status: string;
  stageId: string;
  /** 1-based place among the waiting tasks; 0 when not waiting. */
  position: number;
  ahead: number;
  estimatedWaitMinutes: number;
}

/**
 * Where a task stands. The estimate assumes each service point serves one party at a time for the
 * location's average service time: with P points, S parties being served and A waiting ahead,
 * nobody waits while A + S < P; otherwise the wait is about ceil((A + S - P + 1) / P) services.
 */
export function position(store: Store, tenant: string, task: TaskRecord): Position {
  const slug = task.data.businessLocationId ?? '';
  const base = { taskId: task.sk, businessLocationId: task.data.businessLocationId ?? null, status: task.data.status, stageId: task.data.stageId };
  if (task.data.status !== 'open' || task.data.stageId !== CHECKIN_WAITING) {
    return { ...base, position: 0, ahead: 0, estimatedWaitMinutes: 0 };
  }
  const live = liveTasks(store, tenant, slug);
  const waiting = live.filter((t) => t.data.stageId === CHECKIN_WAITING);
  const ahead = Math.max(0, waiting.findIndex((t) => t.sk === task.sk));
  const serving = live.length - waiting.length;
  const points = Math.max(1, pointsAt(store, tenant, slug).length);
  const rounds = ahead + serving < points ? 0 : Math.ceil((ahead + serving - points + 1) / points);
  return { ...base, position: ahead + 1, ahead, estimatedWaitMinutes: Math.round(rounds * averageServiceMinutes(store, tenant, slug)) };
}

/** Finished check-in tasks of a location, most recent first, optionally within [from, to). */
export function history(
  deps: ListingDeps,
  tenant: string,
  slug: string | undefined,
  range: { from?: number; to?: number },
  opts: FindOptions,
): Promise<ListResult> {
  const filter: Filter = { 'data.workflowId': CHECKIN_WORKFLOW, 'data.status': { $in: ['completed', 'cancelled'] } };
  if (slug) filter['data.businessLocationId'] = slug;
  const at: Record<string, string> = {};
  if (range.from !== undefined) at.$gte = new Date(range.from).toISOString();
  if (range.to !== undefined) at.$lt = new Date(range.to).toISOString();
  if (Object.keys(at).length) filter['data.finishedAt'] = at;
  return listRecords(deps, tenant, TASK_DATATYPE, filter, { sort: 'data.finishedAt', sortType: 'desc', ...opts });
}

export function pointsAt(store: Store, tenant: string, slug: string): StoredRecord[] {
  return store.scan(tenant, SERVICE_POINT_DATATYPE, { 'data.businessLocationId': slug });
}

/** Ready to seat someone: not occupied, reserved or dirty. */
export function isReady(p: StoredRecord): boolean {
  return !isBusy(p.data.status) && String(p.data.status ?? '').trim().toLowerCase() !== 'dirty';
}

export function listPoints(
  deps: ListingDeps,
  tenant: string,
  f: { location?: string; status?: string; availableOnly?: boolean },
  opts: FindOptions,
): Promise<ListResult> {
  const filter: Filter = {};
  if (f.location !== undefined) filter['data.businessLocationId'] = f.location;
  const status: Filter[] = [];
  if (f.status) status.push({ 'data.status': f.status });
  // Mirrors isReady: the statuses are free strings, so compare without case.
  if (f.availableOnly) status.push({ 'data.status': { $not: { $regex: '^\\s*(occupied|reserved|dirty)\\s*$', $options: 'i' } } });
  if (status.length) filter.$and = status;
  return listRecords(deps, tenant, SERVICE_POINT_DATATYPE, filter, { sort: 'data.name', sortType: 'asc', ...opts });
}
