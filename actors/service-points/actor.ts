// The service-points actor: one per location (key: the location slug), the one writer of the
// `service_point` records of that location. Assigning a point, clearing it, the storefront's status
// writes and venue edits all pass through its mailbox, so two staff seating people at the same free
// table at once get exactly one success (spec: States and transitions, task and service point).
//
// `data.status` is a free string (spec: Fields known per kind, service_point). Assign refuses
// `occupied` and `reserved` (compared without case); clear writes `dirty` or `available`.
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { isId } from '../../core/ids.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { RecordView } from '../../core/store/record-view.js';
import { type OccupyReply, type ReleaseReply, SERVICE_POINTS_ACTOR, type ServicePointMessage } from './messages.js';
export const SERVICE_POINT_DATATYPE = 'service_point';

/** Statuses assign refuses. */
export const BUSY_STATUSES: ReadonlySet<string> = new Set(['occupied', 'reserved']);
export const OCCUPIED = 'occupied';

/** Fields only this actor sets (assign and clear); edits cannot write them. */
const MANAGED = ['currentTaskId', 'occupiedAt', 'clearedAt', 'businessLocationId'] as const;

interface State {
  slug: string;
  view: RecordView;
}

export function isBusy(status: unknown): boolean {
  return typeof status === 'string' && BUSY_STATUSES.has(status.trim().toLowerCase());
}

function pointName(p: StoredRecord): string {
  return typeof p.data.name === 'string' ? p.data.name : p.sk;
}

function locationPoints(state: State): StoredRecord[] {
  return state.view.scan(SERVICE_POINT_DATATYPE, { 'data.businessLocationId': state.slug });
}

/** A point of this location by id or by name (exact first, then case-insensitive and unique). */
function resolve(state: State, ref: string): StoredRecord {
  if (typeof ref !== 'string' || !ref) throw appError('ERR_VALIDATION', 'servicePointId is required');
  if (isId(ref)) {
    const byId = state.view.get(SERVICE_POINT_DATATYPE, ref);
    if (byId && byId.data.businessLocationId === state.slug) return byId;
  }
  const points = locationPoints(state);
  const exact = points.filter((p) => p.data.name === ref);
  if (exact.length === 1) return exact[0];
  const loose = points.filter((p) => typeof p.data.name === 'string' && p.data.name.toLowerCase() === ref.toLowerCase());
  if (loose.length === 1) return loose[0];
  if (exact.length + loose.length > 1) throw appError('ERR_CONFLICT', `several service points are named "${ref}"; use the id`);
  throw appError('ERR_NOT_FOUND', `service point ${ref} at location ${state.slug}`);
}

function assertNameFree(state: State, name: string, exceptSk?: string): void {
  const taken = locationPoints(state).some(
    (p) => p.sk !== exceptSk && typeof p.data.name === 'string' && p.data.name.toLowerCase() === name.toLowerCase(),
  );
  if (taken) throw appError('ERR_CONFLICT', `a service point named "${name}" already exists at location ${state.slug}`);
}

function checkName(v: unknown): string {
  if (typeof v !== 'string' || !v.trim() || v.length > 100) throw appError('ERR_VALIDATION', 'name must be a string of 1 to 100 characters');
  return v.trim();
}

function checkStatus(v: unknown, field = 'status'): string {
  if (typeof v !== 'string' || !v.trim() || v.length > 40) throw appError('ERR_VALIDATION', `${field} must be a string of 1 to 40 characters`);
  return v.trim();
}

function write(state: State, ctx: ActorContext, p: StoredRecord, data: Record<string, unknown>): StoredRecord {
  const status = typeof data.status === 'string' ? data.status : p.state;
  // Written back by its sk, at the version read (spec: "the record is written back by its sk").
  return state.view.put(ctx.batch, nextVersion(p, { data, state: status }, ctx.clock.now()), p.version);
}

function receive(state: State, msg: ServicePointMessage, ctx: ActorContext): unknown {
  state.view.prune();
  const now = ctx.clock.now();
  switch (msg.type) {
    case 'create': {
      const name = checkName(msg.data.name);
      const status = msg.data.status === undefined ? 'available' : checkStatus(msg.data.status);
      assertNameFree(state, name);
      const data: Record<string, unknown> = { ...msg.data, name, status, businessLocationId: state.slug };
      delete data.currentTaskId;
      delete data.occupiedAt;
      delete data.clearedAt;
      const rec = newRecord(ctx.tenant, SERVICE_POINT_DATATYPE, data, { now, state: status });
      return state.view.put(ctx.batch, rec, 0);
    }

    case 'update': {
      const p = resolve(state, msg.point);
      if (msg.version !== undefined && msg.version !== p.version) {
        throw appError('ERR_VERSION_CONFLICT', `service_point ${p.sk}`, msg.version, p.version);
      }
      const changes = { ...msg.changes };
      if ('businessLocationId' in changes && changes.businessLocationId !== state.slug) {
        throw appError('ERR_VALIDATION', 'businessLocationId cannot change: delete the point and create it at the other location');
      }
      for (const k of MANAGED) delete changes[k];
      if ('name' in changes) {
        changes.name = checkName(changes.name);
        if (changes.name !== p.data.name) assertNameFree(state, changes.name as string, p.sk);
      }
      if ('status' in changes) changes.status = checkStatus(changes.status);
      return write(state, ctx, p, { ...p.data, ...changes });
    }

    case 'delete': {
      const p = resolve(state, msg.point);
      if (typeof p.data.status === 'string' && p.data.status.toLowerCase() === OCCUPIED && p.data.currentTaskId) {
        throw appError('ERR_CONFLICT', `service point ${pointName(p)} is occupied; clear it before deleting it`);
      }
      state.view.delete(ctx.batch, p);
      return { deleted: true, id: p.sk };
    }

    case 'occupy': {
      const p = resolve(state, msg.point);
      if (isBusy(p.data.status)) {
        throw appError('ERR_CONFLICT', `service point ${pointName(p)} is ${String(p.data.status).trim().toLowerCase()}; choose another one`);
      }
      const previousStatus = typeof p.data.status === 'string' ? p.data.status : null;
      const point = write(state, ctx, p, { ...p.data, status: OCCUPIED, currentTaskId: msg.taskId, occupiedAt: new Date(now).toISOString() });
      return { point, previousStatus } satisfies OccupyReply;
    }

    case 'release': {
      const p = resolve(state, msg.point);
      const status = checkStatus(msg.status, 'finalStatus');
      const taskId = typeof p.data.currentTaskId === 'string' ? p.data.currentTaskId : null;
      // A compensation (undoing an assign whose task changed meanwhile) must not free a point
      // that has been given to someone else since.
      if (msg.onlyIfTaskId !== undefined && taskId !== msg.onlyIfTaskId) return { point: p, taskId } satisfies ReleaseReply;
      const data: Record<string, unknown> = { ...p.data, status, clearedAt: new Date(now).toISOString() };
      delete data.currentTaskId;
      return { point: write(state, ctx, p, data), taskId } satisfies ReleaseReply;
    }

    case 'set-status': {
      const p = resolve(state, msg.point);
      const status = checkStatus(msg.status);
      const data: Record<string, unknown> = { ...p.data, status };
      if (status.toLowerCase() !== OCCUPIED) delete data.currentTaskId;
      return write(state, ctx, p, data);
    }

    default:
      throw appError('ERR_BAD_REQUEST', `unknown service-points message ${(msg as { type?: unknown }).type}`);
  }
}

export const servicePointsActor: ActorKind<State, ServicePointMessage, unknown> = {
  kind: SERVICE_POINTS_ACTOR,
  activate: (ctx) => ({ slug: ctx.key, view: new RecordView(ctx.store, ctx.tenant) }),
  receive,
};
