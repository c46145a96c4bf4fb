// Workflow routes (spec: Endpoints → Workflow (staff)). Every change is one message to the tenant's
// workflow actor; lists and SLA views read the store.
import { Type } from '@sinclair/typebox';
import type { SlaEntry, WorkflowApi, WorkflowMessage } from '../../../actors/workflow/index.js';
import type { Config } from '../../../core/config.js';
import { pageItems } from '../../../core/store/query.js';
import { route, type RouteDef } from '../../route.js';
import { AfterCursor } from '../../schemas.js';
import { byOf, IdParam, ISODateTime, ListOf, Paging, RecordList, RecordSchema, StringEnum } from './schemas.js';

const TAG = 'Workflow';
const TaskId = IdParam('id', 'Task id (sk)');

const StageSchema = Type.Object({ id: Type.String(), name: Type.String(), slaMinutes: Type.Optional(Type.Number()) });
const DefinitionSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  builtIn: Type.Boolean(),
  recordId: Type.Optional(Type.String()),
  stages: Type.Array(StageSchema),
});

const SlaEntrySchema = Type.Object({
  taskId: Type.String(),
  workflowId: Type.String(),
  stageId: Type.String(),
  stageName: Type.String(),
  slaMinutes: Type.Number(),
  dueAt: Type.String(),
  overdueMinutes: Type.Number({ description: 'Minutes past due; negative: minutes left' }),
  escalationLevel: Type.Integer(),
  assignee: Type.Union([Type.String(), Type.Null()]),
  businessLocationId: Type.Union([Type.String(), Type.Null()]),
  task: RecordSchema,
});

type Change = 'advance' | 'complete' | 'cancel' | 'escalate-now';

function change(workflow: WorkflowApi, type: Change, summary: string, description: string): RouteDef {
  return route({
    method: 'POST',
    path: `/workflow/task/:id/${type}`,
    auth: 'staff',
    tag: TAG,
    summary,
    description,
    params: TaskId,
    response: RecordSchema,
    errors: [404, 409],
    handler: (ctx) => workflow.change(ctx.tenant, { type, taskId: ctx.params.id, by: byOf(ctx.principal) } as WorkflowMessage),
  });
}

export function workflowRoutes(workflow: WorkflowApi, config: Config): RouteDef[] {
  const slaPage = (entries: SlaEntry[], q: { page?: number; pageSize?: number }) => pageItems(entries, q.page, q.pageSize, config.store);
  return [
    route({
      method: 'GET',
      path: '/workflow/definition',
      auth: 'staff',
      tag: TAG,
      summary: 'Workflow definitions and their stages',
      description:
        'The built-in `check-in` (stages `waiting`, `serving`) and `kitchen` (`queued`, `preparing`, `ready`) workflows, with the ' +
        "tenant's overrides of their stage names and SLAs, and the tenant's own workflows (`workflow_definition` records " +
        '`{id, name, stages: [{id, name, slaMinutes?}]}`).',
      response: ListOf(DefinitionSchema),
      handler: (ctx) => {
        const defs = workflow.definitions(ctx.tenant);
        return { data: defs, total: defs.length, hasNext: false, page: 1, pageSize: Math.max(defs.length, 1) };
      },
    }),

    route({
      method: 'GET',
      path: '/workflow/task',
      auth: 'staff',
      tag: TAG,
      summary: 'Tasks, filtered and paged (oldest first)',
      description:
        'All tasks, those of one `workflow` (and one `stage` of it), or of one `status`, are read by index: any page answers as ' +
        'fast as the first, with `total` exact, by `page` or by cursor (send back as `after` the `next` of the previous page). ' +
        'Other filters beside those read the smallest such listing\'s tasks and test each, the same way while they are at most ' +
        '1,000; beyond, pages are by number only.',
      query: Type.Object({
        workflow: Type.Optional(Type.String({ maxLength: 64, description: 'Workflow id, e.g. check-in or kitchen' })),
        stage: Type.Optional(Type.String({ maxLength: 64 })),
        status: Type.Optional(StringEnum(['open', 'completed', 'cancelled', 'snoozed'])),
        assignee: Type.Optional(Type.String({ maxLength: 200 })),
        location: Type.Optional(Type.String({ maxLength: 200, description: 'Location slug' })),
        sortType: Type.Optional(StringEnum(['asc', 'desc'])),
        ...Paging,
        ...AfterCursor,
      }),
      response: RecordList,
      handler: (ctx) => {
        const q = ctx.query;
        return workflow.tasks(ctx.tenant, q, { page: q.page, pageSize: q.pageSize, after: q.after, sortType: q.sortType ?? 'asc' });
      },
    }),

    change(workflow, 'advance', 'Move a task to the next stage of its workflow', 'At the last stage: 409 (complete it instead). Finished tasks: 409.'),
    change(workflow, 'complete', 'Complete a task', 'Finished tasks: 409.'),
    change(workflow, 'cancel', 'Cancel a task', 'Finished tasks: 409.'),
    change(
      workflow,
      'escalate-now',
      'Escalate a task now',
      "Records a manual escalation on the task (escalationLevel + 1) and drops the stage's pending SLA escalation. Finished tasks: 409.",
    ),

    route({
      method: 'POST',
      path: '/workflow/task/:id/move-to/:stageId',
      auth: 'staff',
      tag: TAG,
      summary: 'Move a task to any stage of its workflow',
      description: 'Unknown stage: 400. Finished tasks: 409. Moving to the stage the task is in changes nothing.',
      params: Type.Object({
        id: Type.String({ minLength: 1, maxLength: 64 }),
        stageId: Type.String({ minLength: 1, maxLength: 64 }),
      }),
      response: RecordSchema,
      errors: [404, 409],
      handler: (ctx) =>
        workflow.change(ctx.tenant, { type: 'move-to', taskId: ctx.params.id, stageId: ctx.params.stageId, by: byOf(ctx.principal) }),
    }),

    route({
      method: 'POST',
      path: '/workflow/task/:id/note',
      auth: 'staff',
      tag: TAG,
      summary: 'Append a note to a task',
      description: 'Appends `{comment, by, at}` to `data.comments` (finished tasks too).',
      params: TaskId,
      body: Type.Object({ comment: Type.String({ minLength: 1, maxLength: 5000 }) }),
      response: RecordSchema,
      errors: [404, 409],
      handler: (ctx) => workflow.change(ctx.tenant, { type: 'note', taskId: ctx.params.id, comment: ctx.body.comment, by: byOf(ctx.principal) }),
    }),

    route({
      method: 'POST',
      path: '/workflow/task/:id/snooze',
      auth: 'staff',
      tag: TAG,
      summary: 'Snooze a task for some minutes or until a time',
      description:
        'Send exactly one of `minutes` (1 to 43,200) or `until` (a future ISO instant). The task carries `snoozedUntil`; ' +
        'its SLA escalation is deferred to the end of the snooze; a durable timer clears the snooze when it ends (also after a restart).',
      params: TaskId,
      body: Type.Object({
        minutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 43_200 })),
        until: Type.Optional(ISODateTime),
      }),
      response: RecordSchema,
      errors: [404, 409],
      handler: (ctx) => {
        return workflow.snooze(ctx.tenant, ctx.params.id, ctx.body, byOf(ctx.principal));
      },
    }),

    route({
      method: 'POST',
      path: '/workflow/task/:id/reassign',
      auth: 'staff',
      tag: TAG,
      summary: 'Give a task to someone else (null: unassign)',
      params: TaskId,
      body: Type.Object({ assignee: Type.Union([Type.String({ minLength: 1, maxLength: 200 }), Type.Null()]) }),
      response: RecordSchema,
      errors: [404, 409],
      handler: (ctx) =>
        workflow.change(ctx.tenant, { type: 'reassign', taskId: ctx.params.id, assignee: ctx.body.assignee, by: byOf(ctx.principal) }),
    }),

    route({
      method: 'GET',
      path: '/workflow/analytics/:workflowId/wait-times',
      auth: 'staff',
      tag: TAG,
      summary: 'Time spent per stage: count, average, p50, p90 (minutes)',
      description:
        'Over stage visits that ended within [from, to) (default: all). Percentiles are nearest-rank. A stage with no ended visit has nulls.',
      params: Type.Object({ workflowId: Type.String({ minLength: 1, maxLength: 64 }) }),
      query: Type.Object({
        from: Type.Optional(ISODateTime),
        to: Type.Optional(ISODateTime),
        location: Type.Optional(Type.String({ maxLength: 200, description: 'Location slug' })),
      }),
      response: Type.Object({
        workflowId: Type.String(),
        from: Type.Union([Type.String(), Type.Null()]),
        to: Type.Union([Type.String(), Type.Null()]),
        stages: Type.Array(
          Type.Object({
            stageId: Type.String(),
            name: Type.String(),
            count: Type.Integer(),
            averageMinutes: Type.Union([Type.Number(), Type.Null()]),
            p50Minutes: Type.Union([Type.Number(), Type.Null()]),
            p90Minutes: Type.Union([Type.Number(), Type.Null()]),
          }),
        ),
      }),
      errors: [404],
      handler: (ctx) => {
        const from = ctx.query.from ? Date.parse(ctx.query.from) : undefined;
        const to = ctx.query.to ? Date.parse(ctx.query.to) : undefined;
        const { def, stages } = workflow.waitTimes(ctx.tenant, ctx.params.workflowId, { from, to, location: ctx.query.location });
        return { workflowId: def.id, from: ctx.query.from ?? null, to: ctx.query.to ?? null, stages };
      },
    }),

    route({
      method: 'GET',
      path: '/workflow/escalation/breached',
      auth: 'staff',
      tag: TAG,
      summary: "Open tasks past their stage's SLA, most overdue first",
      description: 'A snoozed task is due at the end of its snooze at the earliest.',
      query: Type.Object({
        workflow: Type.Optional(Type.String({ maxLength: 64 })),
        location: Type.Optional(Type.String({ maxLength: 200 })),
        ...Paging,
      }),
      response: ListOf(SlaEntrySchema),
      handler: (ctx) => {
        return slaPage(workflow.breached(ctx.tenant, ctx.query), ctx.query);
      },
    }),

    route({
      method: 'GET',
      path: '/workflow/escalation/upcoming',
      auth: 'staff',
      tag: TAG,
      summary: 'Open tasks whose stage SLA runs out within the next minutes, soonest first',
      query: Type.Object({
        workflow: Type.Optional(Type.String({ maxLength: 64 })),
        location: Type.Optional(Type.String({ maxLength: 200 })),
        withinMinutes: Type.Optional(Type.Integer({ minimum: 1, maximum: 10_080, description: 'Look-ahead (default 60)' })),
        ...Paging,
      }),
      response: ListOf(SlaEntrySchema),
      handler: (ctx) => {
        return slaPage(workflow.upcoming(ctx.tenant, ctx.query, ctx.query.withinMinutes ?? 60), ctx.query);
      },
    }),
  ];
}
