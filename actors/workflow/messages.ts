// The workflow actor's messages (one actor per tenant: kind `workflow`, key `main`). Other areas
// (the check-in queue, the storefront firing order lines into `kitchen`) talk to it only through
// these messages, or the typed functions of client.ts. The shapes are a stable API: add optional
// fields, never change the meaning of existing ones.
import type { StoredRecord } from '../../core/store/record.js';

export const WORKFLOW_ACTOR = 'workflow';
export const WORKFLOW_KEY = 'main';

export type TaskStatus = 'open' | 'completed' | 'cancelled';
export const LIVE_STATUS: TaskStatus = 'open';

export interface Contact {
  name?: string;
  email?: string;
  phone?: string;
}

export interface StageVisit {
  stageId: string;
  enteredAt: string;
  leftAt?: string;
}

export interface TaskComment {
  comment: string;
  by?: string;
  at: string;
}

export interface Escalation {
  stageId: string;
  at: string;
  reason: 'sla' | 'manual';
  by?: string;
  /** For an SLA escalation: minutes past the stage's SLA when it fired. */
  overdueMinutes?: number;
}

/** `data` of a `task` record. */
export interface TaskData {
  workflowId: string;
  title: string;
  stageId: string;
  status: TaskStatus;
  /** How a finished task ended: `completed`, `cancelled`, or the caller's word (`served`, `left`, `no_show`). */
  outcome?: string;
  assignee?: string | null;
  /** Location slug (`data.name` of the location record). */
  businessLocationId?: string;
  /** At most one live task per key (e.g. `reservation:<id>`, `order:<id>:line:<n>`). */
  uniqueKey?: string;
  reservationId?: string;
  orderId?: string;
  lineId?: string;
  servicePointId?: string;
  servicePointName?: string;
  customer?: Contact;
  partySize?: number;
  notes?: string;
  priority?: number;
  /** Free-form details (a kitchen line's product, quantity, modifiers). */
  payload?: Record<string, unknown>;
  queuedAt: string;
  stageEnteredAt: string;
  stageHistory: StageVisit[];
  comments: TaskComment[];
  escalations: Escalation[];
  escalationLevel: number;
  snoozedUntil?: string | null;
  snoozeJobId?: string | null;
  escalationJobId?: string | null;
  servedAt?: string;
  notifiedAt?: string;
  notifications?: number;
  finishedAt?: string;
  createdBy?: string;
  [field: string]: unknown;
}

export type TaskRecord = StoredRecord<TaskData>;

/** Input of `create-task`. Only `workflowId` is required. */
export interface CreateTaskInput {
  workflowId: string;
  title?: string;
  /** Defaults to the workflow's first stage. */
  stageId?: string;
  assignee?: string | null;
  businessLocationId?: string;
  /**
   * When a live (open) task already has this key, nothing is created and the reply carries that
   * task with `created: false`: firing the same order line twice yields one task.
   */
  uniqueKey?: string;
  reservationId?: string;
  orderId?: string;
  lineId?: string;
  servicePointId?: string;
  servicePointName?: string;
  customer?: Contact;
  partySize?: number;
  notes?: string;
  priority?: number;
  payload?: Record<string, unknown>;
  /** Who creates it (a user id), for the audit trail. */
  by?: string;
}

/** Fields a state change may set on the task at the same time (check-in: the service point). */
export interface TaskFieldChanges {
  servicePointId?: string | null;
  servicePointName?: string | null;
  servedAt?: string;
}

/** Guards: the change is refused with 409 unless the task is in this state. */
export interface Expect {
  workflowId?: string;
  stageId?: string;
  servicePointId?: string;
}

export type WorkflowMessage =
  | { type: 'create-task'; input: CreateTaskInput }
  | { type: 'get-task'; taskId: string }
  | { type: 'advance'; taskId: string; by?: string; expect?: Expect }
  | { type: 'complete'; taskId: string; by?: string; outcome?: string; expect?: Expect }
  | { type: 'cancel'; taskId: string; by?: string; outcome?: string; expect?: Expect }
  | { type: 'move-to'; taskId: string; stageId: string; by?: string; expect?: Expect; fields?: TaskFieldChanges }
  | { type: 'note'; taskId: string; comment: string; by?: string }
  | { type: 'snooze'; taskId: string; until: number; by?: string }
  | { type: 'escalate-now'; taskId: string; by?: string; reason?: string }
  | { type: 'reassign'; taskId: string; assignee: string | null; by?: string }
  | { type: 'notify'; taskId: string; by?: string; message?: string; channel?: 'email' | 'sms'; expect?: Expect }
  | { type: 'set-fields'; taskId: string; fields: TaskFieldChanges; expect?: Expect }
  | { type: 'fire-escalation'; jobId: string; taskId: string }
  | { type: 'fire-snooze'; jobId: string; taskId: string };

export interface CreateTaskReply {
  task: TaskRecord;
  /** false when a live task with the same `uniqueKey` already existed (it is the one returned). */
  created: boolean;
}

/** Job kinds this area schedules (core/scheduler.ts). */
export const ESCALATION_JOB = 'workflow.escalation';
export const SNOOZE_JOB = 'workflow.snooze';
