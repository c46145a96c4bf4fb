// Every feature area of the service by name, in start-up order, each imported only when a node
// runs it: a node started with a few modules (most tests start one or two) does not load the
// others' actors, routes and libraries. Adding a module here is all it takes for its actors,
// indexes and routes (and so its OpenAPI entries) to exist.
import type { Module, ModuleName } from './module.js';

const LOADERS: Record<ModuleName, () => Promise<Module>> = {
  auth: async () => (await import('./modules/auth.js')).authModule,
  records: async () => (await import('./modules/records.js')).recordsModule,
  workflow: async () => (await import('./modules/workflow.js')).workflowModule,
  reservations: async () => (await import('./modules/reservations.js')).reservationsModule,
  checkin: async () => (await import('./modules/checkin.js')).checkinModule,
  storefront: async () => (await import('./modules/storefront.js')).storefrontModule,
  events: async () => (await import('./modules/events.js')).eventsModule,
  chat: async () => (await import('./modules/chat.js')).chatModule,
  crm: async () => (await import('./modules/crm.js')).crmModule,
  phone: async () => (await import('./modules/phone.js')).phoneModule,
  webhooks: async () => (await import('./modules/webhooks.js')).webhooksModule,
  // Last by convention; it reads the complete route table.
  reference: async () => (await import('./modules/reference.js')).referenceModule,
};

/** Every module's name, in start-up order. */
export const MODULE_NAMES = Object.keys(LOADERS) as ModuleName[];

/** A module of the table (by name or as its object) or one a caller brings (a test's or a bench's own). */
export type ModuleRef = ModuleName | Module;

function isModuleName(name: string): name is ModuleName {
  return Object.hasOwn(LOADERS, name);
}

/**
 * The modules a node runs: those asked for (every module of the table when none is named), with
 * the modules each requires, in start-up order. A caller's own modules (not in the table) come
 * first, in the order given, then the table's; a module of the table passed as an object is that
 * module. Only these are imported.
 */
export async function loadModules(wanted: readonly ModuleRef[] = MODULE_NAMES): Promise<Module[]> {
  const table = new Map<ModuleName, Module>();
  const own: Module[] = [];
  const add = async (name: ModuleName, given?: Module): Promise<void> => {
    if (table.has(name)) return;
    const m = given ?? (await LOADERS[name]());
    table.set(name, m);
    for (const r of m.requires ?? []) await add(r);
  };
  for (const w of wanted) {
    if (typeof w === 'string') {
      if (!isModuleName(w)) throw new Error(`no module named ${w} (edge/modules.ts names ${MODULE_NAMES.join(', ')})`);
      await add(w);
    } else if (isModuleName(w.name)) {
      await add(w.name, w);
    } else {
      own.push(w);
      for (const r of w.requires ?? []) await add(r);
    }
  }
  return [...own, ...MODULE_NAMES.flatMap((n) => table.get(n) ?? [])];
}
