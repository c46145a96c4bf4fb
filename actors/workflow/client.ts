// Typed calls into the workflow actor, for other areas and routes. Each is one `ask` of the tenant's
// workflow actor; errors arrive as AppErrors (404 unknown task, 409 illegal move, 400 bad input).
//
//   import { createTask } from '../../actors/workflow/index.js';
//   const task = await createTask(deps.runtime, tenant, {
//     workflowId: 'kitchen', title: '2 × Margherita', orderId, lineId,
//     uniqueKey: `order:${orderId}:line:${lineId}`, businessLocationId, servicePointName,
//     payload: { productId, quantity: 2, modifiers },
//   });
//   // task.sk is the line's taskId. Firing the same line again with the same uniqueKey returns the
//   // same live task instead of a second one.
import type { Asker } from '../../core/actor/asker.js';
import {
  WORKFLOW_ACTOR,
  WORKFLOW_KEY,
  type CreateTaskInput,
  type CreateTaskReply,
  type TaskRecord,
  type WorkflowMessage,
} from './messages.js';

/** Sends any workflow message; prefer the named functions below. */
export function askWorkflow<R = unknown>(runtime: Asker, tenant: string, msg: WorkflowMessage): Promise<R> {
  return runtime.ask<R>(tenant, WORKFLOW_ACTOR, WORKFLOW_KEY, msg);
}

/** Creates a task (or returns the live one with the same `uniqueKey`). */
export async function createTask(runtime: Asker, tenant: string, input: CreateTaskInput): Promise<TaskRecord> {
  return (await createTaskDetailed(runtime, tenant, input)).task;
}

/** Like createTask, and says whether the task is new (`created: false`: an existing live task). */
export function createTaskDetailed(runtime: Asker, tenant: string, input: CreateTaskInput): Promise<CreateTaskReply> {
  return askWorkflow<CreateTaskReply>(runtime, tenant, { type: 'create-task', input });
}

export function getTask(runtime: Asker, tenant: string, taskId: string): Promise<TaskRecord> {
  return askWorkflow<TaskRecord>(runtime, tenant, { type: 'get-task', taskId });
}

export function advanceTask(runtime: Asker, tenant: string, taskId: string, by?: string): Promise<TaskRecord> {
  return askWorkflow<TaskRecord>(runtime, tenant, { type: 'advance', taskId, by });
}

export function completeTask(runtime: Asker, tenant: string, taskId: string, opts: { by?: string; outcome?: string } = {}): Promise<TaskRecord> {
  return askWorkflow<TaskRecord>(runtime, tenant, { type: 'complete', taskId, ...opts });
}

export function cancelTask(runtime: Asker, tenant: string, taskId: string, opts: { by?: string; outcome?: string } = {}): Promise<TaskRecord> {
  return askWorkflow<TaskRecord>(runtime, tenant, { type: 'cancel', taskId, ...opts });
}
