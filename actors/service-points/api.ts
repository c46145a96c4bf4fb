// The service-points area's API for the edge: one call per request. A point is changed by the
// service-points actor of its location; a read by id goes to the store.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { SERVICE_POINT_DATATYPE } from './actor.js';
import type { ServicePointMessage } from './messages.js';
import { askServicePoints, locationOfPoint, setServicePointStatus } from './client.js';

export interface ServicePointsParts {
  readonly runtime: Pick<ActorRuntime, 'ask'>;
  readonly store: Store;
}

export interface ServicePointsApi {
  /** The point with sk `id`; 404 when there is none. */
  get(tenant: string, id: string): StoredRecord;
  /** Creates a point at `location` (a slug the caller checked). */
  create(tenant: string, location: string, data: Record<string, unknown>): Promise<StoredRecord>;
  /** Changes the point with sk `id` in its location's actor; 404 when there is none. */
  update(tenant: string, id: string, changes: Record<string, unknown>, version: number | undefined): Promise<StoredRecord>;
  remove(tenant: string, id: string): Promise<{ deleted: boolean; id: string }>;
  /** The location slug owning a point given by id or name (409 when a name is ambiguous, 404 when unknown). */
  locationOf(tenant: string, ref: string, businessLocationId?: string): string;
  /** Writes a point's status (a free string); the point is its sk, or its name (client.ts). */
  setStatus(tenant: string, input: { servicePointId: string; status: string; businessLocationId?: string }): Promise<StoredRecord>;
  /** One message to the actor of `location`. */
  ask<R>(tenant: string, location: string, msg: ServicePointMessage): Promise<R>;
}

export function createServicePointsApi(parts: ServicePointsParts): ServicePointsApi {
  const { runtime, store } = parts;
  const get = (tenant: string, id: string): StoredRecord => {
    const rec = store.getRecord(tenant, SERVICE_POINT_DATATYPE, id);
    if (!rec) throw appError('ERR_NOT_FOUND', `service point ${id}`);
    return rec;
  };
  const locationOfRecord = (rec: StoredRecord) => String(rec.data.businessLocationId ?? '');
  return {
    get,
    create: (tenant, location, data) => askServicePoints(runtime, tenant, location, { type: 'create', data }),
    update(tenant, id, changes, version) {
      const rec = get(tenant, id);
      return askServicePoints(runtime, tenant, locationOfRecord(rec), { type: 'update', point: rec.sk, changes, version });
    },
    remove(tenant, id) {
      const rec = get(tenant, id);
      return askServicePoints(runtime, tenant, locationOfRecord(rec), { type: 'delete', point: rec.sk });
    },
    locationOf: (tenant, ref, businessLocationId) => locationOfPoint(store, tenant, ref, businessLocationId),
    setStatus: (tenant, input) => setServicePointStatus({ runtime, store }, tenant, input),
    ask: (tenant, location, msg) => askServicePoints(runtime, tenant, location, msg),
  };
}
