// The workflow feature area: the per-tenant workflow actor (task records), its routes, and the
// durable escalation and snooze timers, whose handlers it registers on the node's scheduler (a port,
// core/scheduler.ts: the node starts and stops it). Its actors send through the node's outbox port.
import { workflowActor } from '../../actors/workflow/index.js';
import { askWorkflow, createWorkflowApi } from '../../actors/workflow/index.js';
import { TASK_DATATYPE } from '../../actors/workflow/index.js';
import { ESCALATION_JOB, SNOOZE_JOB } from '../../actors/workflow/index.js';
import type { Module } from '../module.js';
import { workflowRoutes } from '../routes/workflow/index.js';

export const workflowModule: Module = {
  name: 'workflow',
  actors: [workflowActor],
  // Most selective first: the store narrows a query by the first declared path it contains.
  indexes: [
    [TASK_DATATYPE, 'data.uniqueKey'],
    [TASK_DATATYPE, 'data.reservationId'],
    [TASK_DATATYPE, 'data.servicePointId'],
    [TASK_DATATYPE, 'data.businessLocationId'],
    [TASK_DATATYPE, 'data.status'],
    [TASK_DATATYPE, 'data.workflowId'],
  ],
  // Tasks oldest first, all, of one workflow or one stage of it, or of one status, page by index at
  // any size; other filters read the smallest of these narrowed.
  listings: [
    { datatype: TASK_DATATYPE, equals: ['data.status'], sort: 'createdate' },
    { datatype: TASK_DATATYPE, equals: [], sort: 'createdate' },
    { datatype: TASK_DATATYPE, equals: ['data.workflowId'], sort: 'createdate' },
    { datatype: TASK_DATATYPE, equals: ['data.workflowId', 'data.stageId'], sort: 'createdate' },
  ],
  routes: (deps) => workflowRoutes(createWorkflowApi(deps), deps.config),
  start(deps) {
    const scheduler = deps.services.scheduler;
    const task = (type: 'fire-escalation' | 'fire-snooze') => async (job: { id: string; tenant: string; payload: Record<string, unknown> }) => {
      await askWorkflow(deps.runtime, job.tenant, { type, jobId: job.id, taskId: String(job.payload.taskId) });
    };
    scheduler.register(ESCALATION_JOB, task('fire-escalation'));
    scheduler.register(SNOOZE_JOB, task('fire-snooze'));
  },
};
