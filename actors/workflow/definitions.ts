// Workflow definitions: ordered stages, each with an optional SLA. Two are built in (`check-in`, whose
// tasks are the check-in queue, and `kitchen`, where POS lines are fired); a tenant adds its own, or
// renames stages and changes SLAs of a built-in, with `workflow_definition` records
// (`data: {id, name, stages: [{id, name, slaMinutes?}]}`) written through the record store. A
// built-in keeps its stage ids (the check-in routes rely on them); an override changes only names
// and SLAs of the stages it names.
import type { Store } from '../../core/store/store.js';

export const WORKFLOW_DEFINITION_DATATYPE = 'workflow_definition';
export const TASK_DATATYPE = 'task';

export const CHECKIN_WORKFLOW = 'check-in';
export const KITCHEN_WORKFLOW = 'kitchen';
/** Check-in stages: in the queue, then at a service point. */
export const CHECKIN_WAITING = 'waiting';
export const CHECKIN_SERVING = 'serving';

export interface StageDef {
  id: string;
  name: string;
  /** Minutes a task may stay in this stage before it is escalated. */
  slaMinutes?: number;
}

export interface WorkflowDef {
  id: string;
  name: string;
  stages: StageDef[];
  builtIn: boolean;
  /** The tenant record that defines or overrides it. */
  recordId?: string;
}

const BUILT_IN: readonly WorkflowDef[] = [
  {
    id: CHECKIN_WORKFLOW,
    name: 'Check-in',
    builtIn: true,
    stages: [
      { id: CHECKIN_WAITING, name: 'Waiting', slaMinutes: 15 },
      { id: CHECKIN_SERVING, name: 'Being served' },
    ],
  },
  {
    id: KITCHEN_WORKFLOW,
    name: 'Kitchen',
    builtIn: true,
    stages: [
      { id: 'queued', name: 'Queued', slaMinutes: 5 },
      { id: 'preparing', name: 'Preparing', slaMinutes: 15 },
      { id: 'ready', name: 'Ready to serve', slaMinutes: 10 },
    ],
  },
];

const ID_RE = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

function parseStages(raw: unknown): StageDef[] | undefined {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > 50) return undefined;
  const out: StageDef[] = [];
  const seen = new Set<string>();
  for (const s of raw) {
    if (!s || typeof s !== 'object') return undefined;
    const o = s as Record<string, unknown>;
    if (typeof o.id !== 'string' || !ID_RE.test(o.id) || seen.has(o.id)) return undefined;
    seen.add(o.id);
    const stage: StageDef = { id: o.id, name: typeof o.name === 'string' && o.name ? o.name : o.id };
    if (typeof o.slaMinutes === 'number' && Number.isFinite(o.slaMinutes) && o.slaMinutes > 0) stage.slaMinutes = o.slaMinutes;
    out.push(stage);
  }
  return out;
}

/** Every workflow of a tenant: the built-ins (with the tenant's overrides) and its own, by id. */
export function loadDefinitions(store: Store, tenant: string): WorkflowDef[] {
  const byId = new Map<string, WorkflowDef>(BUILT_IN.map((d) => [d.id, { ...d, stages: d.stages.map((s) => ({ ...s })) }]));
  for (const rec of store.scan(tenant, WORKFLOW_DEFINITION_DATATYPE)) {
    const data = rec.data;
    const id = typeof data.id === 'string' && ID_RE.test(data.id) ? data.id : rec.sk;
    const stages = parseStages(data.stages);
    const name = typeof data.name === 'string' && data.name ? data.name : id;
    const base = byId.get(id);
    if (base?.builtIn) {
      // Names and SLAs only; the stage list itself is fixed. `slaMinutes: null` switches an SLA off.
      const raw = new Map<string, Record<string, unknown>>();
      if (Array.isArray(data.stages)) {
        for (const x of data.stages as unknown[]) {
          if (x && typeof x === 'object' && typeof (x as Record<string, unknown>).id === 'string') {
            raw.set((x as Record<string, string>).id, x as Record<string, unknown>);
          }
        }
      }
      base.name = name;
      base.recordId = rec.sk;
      base.stages = base.stages.map((s) => {
        const o = raw.get(s.id);
        if (!o) return s;
        const merged: StageDef = { id: s.id, name: typeof o.name === 'string' && o.name ? o.name : s.name };
        const sla = 'slaMinutes' in o ? o.slaMinutes : s.slaMinutes;
        if (typeof sla === 'number' && Number.isFinite(sla) && sla > 0) merged.slaMinutes = sla;
        return merged;
      });
      continue;
    }
    if (!stages) continue;
    byId.set(id, { id, name, stages, builtIn: false, recordId: rec.sk });
  }
  return [...byId.values()];
}

export function findDefinition(store: Store, tenant: string, id: string): WorkflowDef | undefined {
  return loadDefinitions(store, tenant).find((d) => d.id === id);
}

export function stageOf(def: WorkflowDef, stageId: string): StageDef | undefined {
  return def.stages.find((s) => s.id === stageId);
}
