// Read side of workflow tasks: lists, SLA escalation views and wait-time analytics. Reads go to the
// store directly (committed state; every reply a client has seen was committed before it was sent).
import type { FindOptions, Filter } from '../../core/store/query.js';
import type { ListResult } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { loadDefinitions, stageOf, TASK_DATATYPE, type WorkflowDef } from './definitions.js';
import type { TaskData, TaskRecord } from './messages.js';
import { listRecords, type ListingDeps } from '../records/index.js';

export interface TaskFilters {
  workflow?: string;
  stage?: string;
  /** `open`, `completed`, `cancelled`, or `snoozed` (open and snoozed now). */
  status?: string;
  assignee?: string;
  /** Location slug. */
  location?: string;
}

export function taskFilter(f: TaskFilters, now: number): Filter {
  const q: Filter = {};
  if (f.workflow) q['data.workflowId'] = f.workflow;
  if (f.stage) q['data.stageId'] = f.stage;
  if (f.location) q['data.businessLocationId'] = f.location;
  if (f.assignee) q['data.assignee'] = f.assignee;
  if (f.status === 'snoozed') {
    q['data.status'] = 'open';
    q['data.snoozedUntil'] = { $gt: new Date(now).toISOString() };
  } else if (f.status) q['data.status'] = f.status;
  return q;
}

export function listTasks(deps: ListingDeps, tenant: string, f: TaskFilters, opts: FindOptions, now: number): Promise<ListResult> {
  return listRecords(deps, tenant, TASK_DATATYPE, taskFilter(f, now), { sort: 'createdate', sortType: 'asc', ...opts });
}

export interface SlaEntry {
  taskId: string;
  workflowId: string;
  stageId: string;
  stageName: string;
  slaMinutes: number;
  /** When the stage's SLA runs out (deferred to the end of a snooze). */
  dueAt: string;
  /** Positive: minutes past due (breached); negative: minutes left (upcoming). */
  overdueMinutes: number;
  escalationLevel: number;
  assignee: string | null;
  businessLocationId: string | null;
  task: TaskRecord;
}

/** Open tasks whose current stage has an SLA, with their due time, soonest first. */
export function slaEntries(store: Store, tenant: string, now: number, f: { workflow?: string; location?: string } = {}): SlaEntry[] {
  const defs = new Map<string, WorkflowDef>(loadDefinitions(store, tenant).map((d) => [d.id, d]));
  const filter: Filter = { 'data.status': 'open' };
  if (f.workflow) filter['data.workflowId'] = f.workflow;
  if (f.location) filter['data.businessLocationId'] = f.location;
  const out: SlaEntry[] = [];
  for (const rec of store.scan(tenant, TASK_DATATYPE, filter) as TaskRecord[]) {
    const d = rec.data;
    const def = defs.get(d.workflowId);
    const stage = def && stageOf(def, d.stageId);
    if (!stage?.slaMinutes) continue;
    const sla = Date.parse(d.stageEnteredAt) + stage.slaMinutes * 60_000;
    const snoozed = d.snoozedUntil ? Date.parse(d.snoozedUntil) : 0;
    const due = Math.max(sla, snoozed);
    out.push({
      taskId: rec.sk,
      workflowId: d.workflowId,
      stageId: d.stageId,
      stageName: stage.name,
      slaMinutes: stage.slaMinutes,
      dueAt: new Date(due).toISOString(),
      overdueMinutes: Math.round(((now - due) / 60_000) * 10) / 10,
      escalationLevel: d.escalationLevel ?? 0,
      assignee: d.assignee ?? null,
      businessLocationId: d.businessLocationId ?? null,
      task: rec,
    });
  }
  return out.sort((a, b) => Date.parse(a.dueAt) - Date.parse(b.dueAt) || (a.taskId < b.taskId ? -1 : 1));
}

export interface StageWaitStats {
  stageId: string;
  name: string;
  /** Stage visits that ended in the period. */
  count: number;
  averageMinutes: number | null;
  p50Minutes: number | null;
  p90Minutes: number | null;
}

/** Nearest-rank percentile of an ascending list. */
export function percentile(sorted: number[], p: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1];
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/**
 * Time spent in each stage of `def`, over stage visits that ended within [from, to) (ISO
 * instants; open-ended when absent), optionally at one location.
 */
export function waitTimes(
  store: Store,
  tenant: string,
  def: WorkflowDef,
  f: { from?: number; to?: number; location?: string } = {},
): StageWaitStats[] {
  const filter: Filter = { 'data.workflowId': def.id };
  if (f.location) filter['data.businessLocationId'] = f.location;
  const samples = new Map<string, number[]>(def.stages.map((s) => [s.id, []]));
  for (const rec of store.scan(tenant, TASK_DATATYPE, filter)) {
    for (const v of (rec.data as TaskData).stageHistory ?? []) {
      if (!v.leftAt) continue;
      const left = Date.parse(v.leftAt);
      if (f.from !== undefined && left < f.from) continue;
      if (f.to !== undefined && left >= f.to) continue;
      samples.get(v.stageId)?.push((left - Date.parse(v.enteredAt)) / 60_000);
    }
  }
  return def.stages.map((s) => {
    const xs = (samples.get(s.id) ?? []).sort((a, b) => a - b);
    const sum = xs.reduce((a, b) => a + b, 0);
    const p50 = percentile(xs, 50);
    const p90 = percentile(xs, 90);
    return {
      stageId: s.id,
      name: s.name,
      count: xs.length,
      averageMinutes: xs.length ? round2(sum / xs.length) : null,
      p50Minutes: p50 === null ? null : round2(p50),
      p90Minutes: p90 === null ? null : round2(p90),
    };
  });
}
