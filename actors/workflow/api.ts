// The workflow area's API for the edge: one call per request. Changes are one message each to the
// tenant's workflow actor (actors/workflow/actor.ts); lists, SLA views and wait-time analytics read
// committed state from the store (queries.ts), at the node's clock.
import type { Asker } from '../../core/actor/asker.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import type { FindOptions } from '../../core/store/query.js';
import type { ListResult } from '../../core/store/record.js';
import type { ListingDeps } from '../records/index.js';
import { askWorkflow } from './client.js';
import { findDefinition, loadDefinitions, type WorkflowDef } from './definitions.js';
import type { TaskRecord, WorkflowMessage } from './messages.js';
import { listTasks, slaEntries, waitTimes, type SlaEntry, type StageWaitStats, type TaskFilters } from './queries.js';

/** The longest snooze: 30 days (the route's `minutes` has the same bound). */
const MAX_SNOOZE_MS = 43_200 * 60_000;

export interface WorkflowParts extends ListingDeps {
  readonly runtime: Asker;
  readonly clock: Clock;
}

export interface WorkflowApi {
  definitions(tenant: string): WorkflowDef[];
  tasks(tenant: string, f: TaskFilters, opts: FindOptions): Promise<ListResult>;
  /** One change to a task (advance, move, note, snooze, reassign...): the task as it now is. */
  change(tenant: string, msg: WorkflowMessage): Promise<TaskRecord>;
  /** Snoozes a task for `minutes` or until `until` (exactly one; in the future, within 30 days). */
  snooze(tenant: string, taskId: string, when: { minutes?: number; until?: string }, by: string | undefined): Promise<TaskRecord>;
  /** Time spent per stage of a workflow; 404 for an unknown workflow. */
  waitTimes(tenant: string, workflowId: string, f: { from?: number; to?: number; location?: string }): { def: WorkflowDef; stages: StageWaitStats[] };
  /** Open tasks past their stage's SLA, most overdue first. */
  breached(tenant: string, f: { workflow?: string; location?: string }): SlaEntry[];
  /** Open tasks whose stage SLA runs out within `withinMinutes`, soonest first. */
  upcoming(tenant: string, f: { workflow?: string; location?: string }, withinMinutes: number): SlaEntry[];
}

export function createWorkflowApi(parts: WorkflowParts): WorkflowApi {
  const { runtime, store, clock } = parts;
  return {
    definitions: (tenant) => loadDefinitions(store, tenant),
    tasks: (tenant, f, opts) => listTasks(parts, tenant, f, opts, clock.now()),
    change: (tenant, msg) => askWorkflow<TaskRecord>(runtime, tenant, msg),
    snooze(tenant, taskId, { minutes, until }, by) {
      if ((minutes === undefined) === (until === undefined)) {
        throw appError('ERR_VALIDATION', 'send exactly one of body/minutes or body/until');
      }
      const now = clock.now();
      const at = minutes !== undefined ? now + minutes * 60_000 : Date.parse(until!);
      if (!(at > now)) throw appError('ERR_VALIDATION', 'body/until must be in the future');
      if (at - now > MAX_SNOOZE_MS) throw appError('ERR_VALIDATION', 'body/until must be within 30 days');
      return askWorkflow<TaskRecord>(runtime, tenant, { type: 'snooze', taskId, until: at, by });
    },
    waitTimes(tenant, workflowId, f) {
      const def = findDefinition(store, tenant, workflowId);
      if (!def) throw appError('ERR_NOT_FOUND', `workflow ${workflowId}`);
      return { def, stages: waitTimes(store, tenant, def, f) };
    },
    breached(tenant, f) {
      const now = clock.now();
      return slaEntries(store, tenant, now, f).filter((e) => Date.parse(e.dueAt) <= now);
    },
    upcoming(tenant, f, withinMinutes) {
      const now = clock.now();
      const horizon = now + withinMinutes * 60_000;
      return slaEntries(store, tenant, now, f).filter((e) => {
        const due = Date.parse(e.dueAt);
        return due > now && due <= horizon;
      });
    },
  };
}
