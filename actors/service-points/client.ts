// Typed calls into the service-points actors, for routes and other areas. The storefront writes a
// point's status through `setServicePointStatus`, so its writes and check-in's assign/clear go
// through the same per-location mailbox:
//
//   import { setServicePointStatus } from '../../actors/service-points/index.js';
//   const point = await setServicePointStatus(deps, tenant, { servicePointId: req.params.id, status: 'dirty' });
//
// `servicePointId` is the point's sk, or its name (then `businessLocationId` narrows it to one
// location; without it the name must be unique in the tenant).
import type { Asker } from '../../core/actor/asker.js';
import { appError } from '../../core/errors.js';
import { isId } from '../../core/ids.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { SERVICE_POINT_DATATYPE } from './actor.js';
import { SERVICE_POINTS_ACTOR, type OccupyReply, type ReleaseReply, type ServicePointMessage } from './messages.js';

export interface PointDeps {
  runtime: Asker;
  store: Store;
}

export function askServicePoints<R = unknown>(runtime: Asker, tenant: string, location: string, msg: ServicePointMessage): Promise<R> {
  return runtime.ask<R>(tenant, SERVICE_POINTS_ACTOR, location, msg);
}

/**
 * The location slug that owns a point given by id or name. A name found at several locations
 * without `businessLocationId` to choose is a 409; nothing found is a 404.
 */
export function locationOfPoint(store: Store, tenant: string, ref: string, businessLocationId?: string): string {
  if (businessLocationId) return businessLocationId;
  if (isId(ref)) {
    const rec = store.getRecord(tenant, SERVICE_POINT_DATATYPE, ref);
    if (rec) return typeof rec.data.businessLocationId === 'string' ? rec.data.businessLocationId : '';
  }
  const named = store.scan(tenant, SERVICE_POINT_DATATYPE, { 'data.name': ref });
  const locations = [...new Set(named.map((r) => (typeof r.data.businessLocationId === 'string' ? r.data.businessLocationId : '')))];
  if (locations.length === 1) return locations[0];
  if (locations.length > 1) throw appError('ERR_CONFLICT', `service point name "${ref}" is used at several locations; send its id or businessLocationId`);
  throw appError('ERR_NOT_FOUND', `service point ${ref}`);
}

/** Writes a point's status (a free string: `dirty`, `available`, `occupied`, `out-of-order`, ...). */
export async function setServicePointStatus(
  deps: PointDeps,
  tenant: string,
  input: { servicePointId: string; status: string; businessLocationId?: string },
): Promise<StoredRecord> {
  const location = locationOfPoint(deps.store, tenant, input.servicePointId, input.businessLocationId);
  return askServicePoints<StoredRecord>(deps.runtime, tenant, location, { type: 'set-status', point: input.servicePointId, status: input.status });
}

/** Marks a free point occupied by a task (409 when it is occupied or reserved). */
export function occupyServicePoint(runtime: Asker, tenant: string, location: string, point: string, taskId: string): Promise<OccupyReply> {
  return askServicePoints<OccupyReply>(runtime, tenant, location, { type: 'occupy', point, taskId });
}

/** Frees a point with a final status; `onlyIfTaskId` makes it a no-op unless that task holds it. */
export function releaseServicePoint(
  runtime: Asker,
  tenant: string,
  location: string,
  point: string,
  status: string,
  onlyIfTaskId?: string,
): Promise<ReleaseReply> {
  return askServicePoints<ReleaseReply>(runtime, tenant, location, { type: 'release', point, status, onlyIfTaskId });
}
