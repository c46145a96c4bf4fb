// What the service-points actor accepts and answers, and its kind's name.
import type { StoredRecord } from '../../core/store/record.js';

export const SERVICE_POINTS_ACTOR = 'service-points';

export type ServicePointMessage =
  | { type: 'create'; data: Record<string, unknown> }
  | { type: 'update'; point: string; changes: Record<string, unknown>; version?: number }
  | { type: 'delete'; point: string }
  | { type: 'occupy'; point: string; taskId: string }
  | { type: 'release'; point: string; status: string; onlyIfTaskId?: string }
  | { type: 'set-status'; point: string; status: string };

export interface OccupyReply {
  point: StoredRecord;
  previousStatus: string | null;
}

export interface ReleaseReply {
  point: StoredRecord;
  /** The task that was being served there (if the point knew one). */
  taskId: string | null;
}
