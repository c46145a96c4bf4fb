// The workflow actor: one per tenant, the only writer of `task` records. Every state change of a
// task (and its escalation and snooze timers) is one message here, so two staff acting on one task
// are serialized and the loser gets a 409 that says why.
//
// Transitions (spec: "Workflow task stages ... transitions: not shown", so these are ours):
//   open ──advance──▶ open (next stage; 409 at the last stage: use complete)
//   open ──move-to──▶ open (any stage of the workflow; unknown stage 400; same stage: no change)
//   open ──complete──▶ completed        open ──cancel──▶ cancelled
//   finished (completed/cancelled) ──anything but note──▶ 409
// A stage with `slaMinutes` arms a durable escalation timer when entered; leaving the stage
// disarms it. Snoozing defers that escalation to the snooze's end.
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newRecord, nextVersion } from '../../core/store/record.js';
import { RecordView } from '../../core/store/record-view.js';
import { cancelJob, completeJob, scheduleJob } from '../../core/scheduler.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { CHECKIN_SERVING, CHECKIN_WORKFLOW, findDefinition, stageOf, TASK_DATATYPE, type StageDef, type WorkflowDef } from './definitions.js';
import {
  ESCALATION_JOB,
  SNOOZE_JOB,
  WORKFLOW_ACTOR,
  type CreateTaskInput,
  type CreateTaskReply,
  type Expect,
  type TaskData,
  type TaskFieldChanges,
  type TaskRecord,
  type WorkflowMessage,
} from './messages.js';
import { noteServed, SERVICE_TIMES_NS, type ServiceTimes } from './service-times.js';

interface WorkflowState {
  view: RecordView;
  /** Service-time samples of check-in locations as this actor last wrote them (service-times.ts). */
  serviceTimes: Map<string, ServiceTimes>;
}

const MAX_COMMENTS = 500;
const MAX_ESCALATIONS = 100;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function str(v: unknown, max: number): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim().slice(0, max) : undefined;
}

function loadTask(state: WorkflowState, taskId: string): TaskRecord {
  const rec = typeof taskId === 'string' ? state.view.get(TASK_DATATYPE, taskId) : undefined;
  if (!rec) throw appError('ERR_NOT_FOUND', `task ${taskId}`);
  return rec as TaskRecord;
}

function definitionOf(ctx: ActorContext, workflowId: string): WorkflowDef {
  const def = findDefinition(ctx.store, ctx.tenant, workflowId);
  if (!def) throw appError('ERR_VALIDATION', `unknown workflow "${workflowId}"`);
  return def;
}

function assertOpen(task: TaskRecord, action: string): void {
  if (task.data.status !== 'open') {
    throw appError('ERR_CONFLICT', `cannot ${action} task ${task.sk}: it is already ${task.data.status}`);
  }
}

function checkExpect(task: TaskRecord, expect: Expect | undefined, action: string): void {
  if (!expect) return;
  if (expect.workflowId !== undefined && task.data.workflowId !== expect.workflowId) {
    throw appError('ERR_NOT_FOUND', `${expect.workflowId} task ${task.sk}`);
  }
  if (expect.stageId !== undefined && task.data.stageId !== expect.stageId) {
    throw appError('ERR_CONFLICT', `cannot ${action} task ${task.sk}: it is in stage "${task.data.stageId}", not "${expect.stageId}"`);
  }
  if (expect.servicePointId !== undefined && task.data.servicePointId !== expect.servicePointId) {
    throw appError('ERR_CONFLICT', `cannot ${action} task ${task.sk}: it is not at service point ${expect.servicePointId}`);
  }
}

function write(state: WorkflowState, ctx: ActorContext, task: TaskRecord, data: TaskData): TaskRecord {
  const next = nextVersion(task, { data, state: data.status }, ctx.clock.now()) as TaskRecord;
  return state.view.put(ctx.batch, next, task.version) as TaskRecord;
}

/** A move's write: a check-in task entering `serving` has been given its service point. */
function moved(state: WorkflowState, ctx: ActorContext, task: TaskRecord, data: TaskData): TaskRecord {
  const written = write(state, ctx, task, data);
  if (data.workflowId === CHECKIN_WORKFLOW && data.stageId === CHECKIN_SERVING && task.data.stageId !== CHECKIN_SERVING) {
    queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'checkin.task.assigned', written, ctx.clock.now());
  }
  return written;
}

/** Arms the SLA timer of the stage being entered (if it has an SLA); returns the job id or null. */
function armEscalation(ctx: ActorContext, taskId: string, stage: StageDef | undefined, enteredAt: number): string | null {
  if (!stage?.slaMinutes) return null;
  const job = scheduleJob(ctx, ESCALATION_JOB, enteredAt + stage.slaMinutes * 60_000, {
    taskId,
    stageId: stage.id,
    enteredAt: iso(enteredAt),
  });
  return job.id;
}

function applyFields(data: TaskData, fields: TaskFieldChanges | undefined): void {
  if (!fields) return;
  for (const k of ['servicePointId', 'servicePointName', 'servedAt'] as const) {
    if (!(k in fields)) continue;
    const v = fields[k];
    if (v === null || v === undefined) delete data[k];
    else data[k] = v;
  }
}

/** The data of `task` moved into `stage` now (history closed and opened, timers re-armed). */
function enterStage(ctx: ActorContext, task: TaskRecord, stage: StageDef): TaskData {
  const now = ctx.clock.now();
  const at = iso(now);
  const data: TaskData = { ...task.data, stageHistory: closeVisit(task.data.stageHistory, at) };
  if (data.escalationJobId) cancelJob(ctx, data.escalationJobId);
  data.stageHistory.push({ stageId: stage.id, enteredAt: at });
  data.stageId = stage.id;
  data.stageEnteredAt = at;
  data.escalationJobId = armEscalation(ctx, task.sk, stage, now);
  return data;
}

function closeVisit(history: TaskData['stageHistory'], at: string): TaskData['stageHistory'] {
  const out = history.map((v) => ({ ...v }));
  const last = out[out.length - 1];
  if (last && !last.leftAt) last.leftAt = at;
  return out;
}

/** Finishes a task: history closed, timers disarmed. */
function finish(ctx: ActorContext, task: TaskRecord, status: 'completed' | 'cancelled', outcome: string | undefined): TaskData {
  const at = iso(ctx.clock.now());
  const data: TaskData = { ...task.data, stageHistory: closeVisit(task.data.stageHistory, at) };
  if (data.escalationJobId) cancelJob(ctx, data.escalationJobId);
  if (data.snoozeJobId) cancelJob(ctx, data.snoozeJobId);
  data.escalationJobId = null;
  data.snoozeJobId = null;
  data.snoozedUntil = null;
  data.status = status;
  data.outcome = outcome ?? status;
  data.finishedAt = at;
  return data;
}

function validateInput(ctx: ActorContext, input: CreateTaskInput): { def: WorkflowDef; stage: StageDef } {
  if (!input || typeof input !== 'object' || typeof input.workflowId !== 'string') {
    throw appError('ERR_VALIDATION', 'workflowId is required');
  }
  const def = definitionOf(ctx, input.workflowId);
  const stage = input.stageId === undefined ? def.stages[0] : stageOf(def, input.stageId);
  if (!stage) throw appError('ERR_VALIDATION', `unknown stage "${input.stageId}" of workflow "${def.id}"`);
  if (input.uniqueKey !== undefined && (typeof input.uniqueKey !== 'string' || !input.uniqueKey || input.uniqueKey.length > 200)) {
    throw appError('ERR_VALIDATION', 'uniqueKey must be a string of 1 to 200 characters');
  }
  if (input.partySize !== undefined && (!Number.isInteger(input.partySize) || input.partySize < 1 || input.partySize > 1000)) {
    throw appError('ERR_VALIDATION', 'partySize must be an integer from 1 to 1000');
  }
  if (input.payload !== undefined && (typeof input.payload !== 'object' || input.payload === null || Array.isArray(input.payload))) {
    throw appError('ERR_VALIDATION', 'payload must be an object');
  }
  return { def, stage };
}

function createTask(state: WorkflowState, ctx: ActorContext, input: CreateTaskInput): CreateTaskReply {
  const { def, stage } = validateInput(ctx, input);
  if (input.uniqueKey) {
    const live = state.view.scan(TASK_DATATYPE, { 'data.uniqueKey': input.uniqueKey, 'data.status': 'open' });
    if (live.length > 0) return { task: live[0] as TaskRecord, created: false };
  }
  const now = ctx.clock.now();
  const at = iso(now);
  const data: TaskData = {
    workflowId: def.id,
    title: str(input.title, 200) ?? str(input.customer?.name, 200) ?? def.name,
    stageId: stage.id,
    status: 'open',
    queuedAt: at,
    stageEnteredAt: at,
    stageHistory: [{ stageId: stage.id, enteredAt: at }],
    comments: [],
    escalations: [],
    escalationLevel: 0,
  };
  const optional: Array<[keyof CreateTaskInput, number]> = [
    ['businessLocationId', 200],
    ['uniqueKey', 200],
    ['reservationId', 64],
    ['orderId', 64],
    ['lineId', 64],
    ['servicePointId', 64],
    ['servicePointName', 200],
    ['notes', 2000],
    ['by', 200],
  ];
  for (const [k, max] of optional) {
    const v = str(input[k], max);
    if (v !== undefined) (data as Record<string, unknown>)[k === 'by' ? 'createdBy' : k] = v;
  }
  const assignee = str(input.assignee, 200);
  if (assignee) data.assignee = assignee;
  if (input.customer && typeof input.customer === 'object') {
    const c: TaskData['customer'] = {};
    for (const k of ['name', 'email', 'phone'] as const) {
      const v = str(input.customer[k], 200);
      if (v) c[k] = v;
    }
    data.customer = c;
  }
  if (input.partySize !== undefined) data.partySize = input.partySize;
  if (typeof input.priority === 'number' && Number.isFinite(input.priority)) data.priority = input.priority;
  if (input.payload) data.payload = structuredClone(input.payload);
  const rec = newRecord(ctx.tenant, TASK_DATATYPE, data, { now, state: 'open' }) as TaskRecord;
  rec.data.escalationJobId = armEscalation(ctx, rec.sk, stage, now);
  state.view.put(ctx.batch, rec, 0);
  if (def.id === CHECKIN_WORKFLOW) queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'checkin.task.created', rec, now);
  return { task: rec, created: true };
}

/** Sends the customer a message through the outbox, in the batch that stamps the task. */
async function notify(
  state: WorkflowState,
  msg: Extract<WorkflowMessage, { type: 'notify' }>,
  ctx: ActorContext,
): Promise<TaskRecord> {
  const task = loadTask(state, msg.taskId);
  checkExpect(task, msg.expect, 'notify');
  assertOpen(task, 'notify');
  const c = task.data.customer ?? {};
  const channel = msg.channel ?? (c.phone ? 'sms' : 'email');
  const to = channel === 'sms' ? c.phone : c.email;
  if (!to) {
    throw appError('ERR_CONFLICT', `task ${task.sk} has no ${channel === 'sms' ? 'phone number' : 'email address'} to notify`);
  }
  const who = c.name ? `${c.name}, ` : '';
  const where = task.data.servicePointName ? ` Please come to ${task.data.servicePointName}.` : ' Please come to the front desk.';
  const body = str(msg.message, 1000) ?? `${who}we are ready for you.${where}`;
  const now = ctx.clock.now();
  await ctx.services.outbox.send(
    ctx.tenant,
    {
      channel,
      to,
      subject: channel === 'email' ? 'We are ready for you' : undefined,
      body,
      kind: 'checkin-notify',
      payload: { taskId: task.sk },
    },
    ctx.batch,
  );
  return write(state, ctx, task, { ...task.data, notifiedAt: iso(now), notifications: (task.data.notifications ?? 0) + 1 });
}

/** Synchronous except for `notify` (an outbox provider may do I/O). */
function receive(state: WorkflowState, msg: WorkflowMessage, ctx: ActorContext): unknown {
  state.view.prune();
  switch (msg.type) {
    case 'create-task':
      return createTask(state, ctx, msg.input);

    case 'get-task':
      return loadTask(state, msg.taskId);

    case 'advance': {
      const task = loadTask(state, msg.taskId);
      checkExpect(task, msg.expect, 'advance');
      assertOpen(task, 'advance');
      const def = definitionOf(ctx, task.data.workflowId);
      const i = def.stages.findIndex((s) => s.id === task.data.stageId);
      const next = def.stages[i + 1];
      if (!next) {
        throw appError('ERR_CONFLICT', `cannot advance task ${task.sk}: "${task.data.stageId}" is the last stage of ${def.id}; complete it instead`);
      }
      return moved(state, ctx, task, enterStage(ctx, task, next));
    }

    case 'move-to': {
      const task = loadTask(state, msg.taskId);
      checkExpect(task, msg.expect, 'move');
      const def = definitionOf(ctx, task.data.workflowId);
      const stage = stageOf(def, msg.stageId);
      if (!stage) throw appError('ERR_VALIDATION', `unknown stage "${msg.stageId}" of workflow "${def.id}"`);
      assertOpen(task, 'move');
      if (stage.id === task.data.stageId && !msg.fields) return task;
      const data = stage.id === task.data.stageId ? { ...task.data } : enterStage(ctx, task, stage);
      applyFields(data, msg.fields);
      return moved(state, ctx, task, data);
    }

    case 'complete':
    case 'cancel': {
      const task = loadTask(state, msg.taskId);
      checkExpect(task, msg.expect, msg.type);
      assertOpen(task, msg.type);
      const outcome = str(msg.outcome, 40);
      const data = finish(ctx, task, msg.type === 'complete' ? 'completed' : 'cancelled', outcome);
      const written = write(state, ctx, task, data);
      noteServed(state.serviceTimes, (slug) => ctx.store.getKv<ServiceTimes>(ctx.tenant, SERVICE_TIMES_NS, slug), ctx.batch, ctx.tenant, data);
      if (msg.type === 'complete') queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'workflow.task.completed', written, ctx.clock.now());
      return written;
    }

    case 'set-fields': {
      const task = loadTask(state, msg.taskId);
      checkExpect(task, msg.expect, 'change');
      const data = { ...task.data };
      applyFields(data, msg.fields);
      return write(state, ctx, task, data);
    }

    case 'note': {
      const task = loadTask(state, msg.taskId);
      const comment = str(msg.comment, 5000);
      if (!comment) throw appError('ERR_VALIDATION', 'body/comment must be a non-empty string');
      if (task.data.comments.length >= MAX_COMMENTS) {
        throw appError('ERR_CONFLICT', `task ${task.sk} already has ${MAX_COMMENTS} notes`);
      }
      const entry = { comment, at: iso(ctx.clock.now()), ...(msg.by ? { by: msg.by } : {}) };
      return write(state, ctx, task, { ...task.data, comments: [...task.data.comments, entry] });
    }

    case 'snooze': {
      const task = loadTask(state, msg.taskId);
      assertOpen(task, 'snooze');
      const now = ctx.clock.now();
      if (!Number.isFinite(msg.until) || msg.until <= now) throw appError('ERR_VALIDATION', 'the snooze must end in the future');
      const data: TaskData = { ...task.data };
      if (data.snoozeJobId) cancelJob(ctx, data.snoozeJobId);
      data.snoozedUntil = iso(msg.until);
      data.snoozeJobId = scheduleJob(ctx, SNOOZE_JOB, msg.until, { taskId: task.sk }).id;
      return write(state, ctx, task, data);
    }

    case 'escalate-now': {
      const task = loadTask(state, msg.taskId);
      assertOpen(task, 'escalate');
      const data: TaskData = { ...task.data };
      // A manual escalation stands for this stage visit: its SLA timer has nothing left to say.
      if (data.escalationJobId) cancelJob(ctx, data.escalationJobId);
      data.escalationJobId = null;
      const e = { stageId: data.stageId, at: iso(ctx.clock.now()), reason: 'manual' as const, ...(msg.by ? { by: msg.by } : {}) };
      data.escalations = [...data.escalations, e].slice(-MAX_ESCALATIONS);
      data.escalationLevel = (data.escalationLevel ?? 0) + 1;
      data.escalatedAt = e.at;
      return write(state, ctx, task, data);
    }

    case 'reassign': {
      const task = loadTask(state, msg.taskId);
      assertOpen(task, 'reassign');
      const data: TaskData = { ...task.data };
      const assignee = msg.assignee === null ? null : str(msg.assignee, 200);
      if (assignee === undefined) throw appError('ERR_VALIDATION', 'body/assignee must be a non-empty string or null');
      if (assignee === null) delete data.assignee;
      else data.assignee = assignee;
      return write(state, ctx, task, data);
    }

    case 'notify':
      return notify(state, msg, ctx);

    case 'fire-escalation': {
      completeJob(ctx, msg.jobId);
      const task = state.view.get(TASK_DATATYPE, msg.taskId) as TaskRecord | undefined;
      // Stale firings (the task moved on, finished, or was escalated by hand) only clean up.
      if (!task || task.data.status !== 'open' || task.data.escalationJobId !== msg.jobId) return { fired: false };
      const now = ctx.clock.now();
      const data: TaskData = { ...task.data };
      const snoozed = data.snoozedUntil ? Date.parse(data.snoozedUntil) : 0;
      if (snoozed > now) {
        data.escalationJobId = scheduleJob(ctx, ESCALATION_JOB, snoozed, {
          taskId: task.sk,
          stageId: data.stageId,
          enteredAt: data.stageEnteredAt,
        }).id;
        write(state, ctx, task, data);
        return { fired: false, deferredTo: iso(snoozed) };
      }
      const def = findDefinition(ctx.store, ctx.tenant, data.workflowId);
      const sla = def && stageOf(def, data.stageId)?.slaMinutes;
      const dueAt = Date.parse(data.stageEnteredAt) + (sla ?? 0) * 60_000;
      const e = {
        stageId: data.stageId,
        at: iso(now),
        reason: 'sla' as const,
        overdueMinutes: Math.max(0, Math.round((now - dueAt) / 60_000)),
      };
      data.escalations = [...data.escalations, e].slice(-MAX_ESCALATIONS);
      data.escalationLevel = (data.escalationLevel ?? 0) + 1;
      data.escalatedAt = e.at;
      data.escalationJobId = null;
      write(state, ctx, task, data);
      ctx.publish(`workflow.${ctx.tenant}.escalated`, { taskId: task.sk, workflowId: data.workflowId, stageId: data.stageId, at: e.at });
      return { fired: true };
    }

    case 'fire-snooze': {
      completeJob(ctx, msg.jobId);
      const task = state.view.get(TASK_DATATYPE, msg.taskId) as TaskRecord | undefined;
      if (!task || task.data.status !== 'open' || task.data.snoozeJobId !== msg.jobId) return { fired: false };
      const at = iso(ctx.clock.now());
      write(state, ctx, task, { ...task.data, snoozedUntil: null, snoozeJobId: null, wokeAt: at });
      return { fired: true };
    }

    default:
      throw appError('ERR_BAD_REQUEST', `unknown workflow message ${(msg as { type?: unknown }).type}`);
  }
}

export const workflowActor: ActorKind<WorkflowState, WorkflowMessage, unknown> = {
  kind: WORKFLOW_ACTOR,
  activate: (ctx) => ({ view: new RecordView(ctx.store, ctx.tenant), serviceTimes: new Map() }),
  receive,
};
