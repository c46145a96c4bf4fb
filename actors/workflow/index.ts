// The workflow area's public surface (for other areas: the storefront fires POS lines here).
export { workflowActor } from './actor.js';
export {
  advanceTask,
  askWorkflow,
  cancelTask,
  completeTask,
  createTask,
  createTaskDetailed,
  getTask,
} from './client.js';
export {
  CHECKIN_SERVING,
  CHECKIN_WAITING,
  CHECKIN_WORKFLOW,
  KITCHEN_WORKFLOW,
  TASK_DATATYPE,
  WORKFLOW_DEFINITION_DATATYPE,
  findDefinition,
  loadDefinitions,
  type StageDef,
  type WorkflowDef,
} from './definitions.js';
export * from './messages.js';
export { meanServiceMs, SERVICE_SAMPLE, SERVICE_TIMES_NS, type ServiceTimes } from './service-times.js';
export { createWorkflowApi, type WorkflowApi, type WorkflowParts } from './api.js';
export type { SlaEntry, TaskFilters } from './queries.js';
