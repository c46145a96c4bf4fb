// How long a location's most recent guests were served: [servedAt, finishedAt] (epoch ms) of its
// last SERVICE_SAMPLE served check-in tasks, oldest first, in one key-value entry per location.
// The workflow actor, the tenant's one writer of tasks, appends to it in the batch that completes
// a served task, so the queue's wait estimate (polled by every waiting guest) reads one entry
// instead of every task the location ever served.
import type { WriteBatch } from '../../core/store/store.js';
import { CHECKIN_WORKFLOW } from './definitions.js';
import type { TaskData } from './messages.js';

export const SERVICE_TIMES_NS = 'checkin-service-times';
/** Served guests the average is taken over. */
export const SERVICE_SAMPLE = 50;

export type ServiceTimes = Array<[servedAt: number, finishedAt: number]>;

/** The location and sample point of a finished task, when it is a served check-in guest. */
export function servedSample(d: TaskData): { slug: string; sample: [number, number] } | undefined {
  if (d.workflowId !== CHECKIN_WORKFLOW || d.outcome !== 'served' || !d.businessLocationId) return undefined;
  const served = Date.parse(String(d.servedAt));
  const finished = Date.parse(String(d.finishedAt));
  if (!Number.isFinite(served) || !Number.isFinite(finished)) return undefined;
  return { slug: d.businessLocationId, sample: [served, finished] };
}

/**
 * Adds a served guest to its location's sample and queues the write. `known` holds the samples
 * this actor has written (its batches may not be committed yet); `read` loads one from the store.
 */
export function noteServed(
  known: Map<string, ServiceTimes>,
  read: (slug: string) => ServiceTimes | undefined,
  batch: WriteBatch,
  tenant: string,
  d: TaskData,
): void {
  const s = servedSample(d);
  if (!s) return;
  const next = [...(known.get(s.slug) ?? read(s.slug) ?? []), s.sample].slice(-SERVICE_SAMPLE) as ServiceTimes;
  known.set(s.slug, next);
  batch.putKv(tenant, SERVICE_TIMES_NS, s.slug, next);
}

/** Mean minutes from served to finished over a sample; undefined when it is empty. */
export function meanServiceMs(times: ServiceTimes | undefined): number | undefined {
  if (!times || times.length === 0) return undefined;
  return times.reduce((sum, [s, f]) => sum + (f - s), 0) / times.length;
}
