// What the check-in queue actor accepts and answers, and its kind's name.
import type { StoredRecord } from '../../core/store/record.js';
import type { Contact, TaskRecord } from '../workflow/index.js';

export const CHECKIN_ACTOR = 'checkin-queue';

export type CheckinMessage =
  | { type: 'walk-in'; customer: Contact; partySize?: number; notes?: string; by: string }
  | { type: 'from-reservation'; reservationId: string; partySize?: number; notes?: string; by: string }
  | { type: 'assign'; taskId: string; servicePointId: string; by: string }
  | { type: 'leave'; taskId: string; by: string }
  | { type: 'no-show'; taskId: string; by: string }
  | { type: 'notify'; taskId: string; message?: string; channel?: 'email' | 'sms'; by: string }
  | { type: 'clear'; point: string; finalStatus: 'dirty' | 'available'; by: string };

export interface AssignReply {
  task: TaskRecord;
  servicePoint: StoredRecord;
}

export interface ClearReply {
  servicePoint: StoredRecord;
  /** The task(s) that were being served there, now completed. */
  completedTasks: TaskRecord[];
}
