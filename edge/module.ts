// A feature area as the edge assembles it (edge/modules/*.ts): what it registers with a node.
import type { ActorKind } from '../core/actor/runtime.js';
import type { AppDeps } from './deps.js';
import type { HttpEdge } from './http-server.js';
import type { RouteDef } from './route.js';
import type { ListingShape } from '../core/store/listing-plan.js';

/**
 * A feature area: its actors, indexes, routes and background work. A module object is shared by
 * every node in the process (tests start several), so it keeps no per-node state of its own: what
 * actors need from the node is a port (deps.services, core/actor/services.ts); what the module
 * itself keeps per node (a cache, a gate, an upload table, an unsubscriber) lives in the closure
 * of `perNode(deps)`, never in a module-level map keyed on AppDeps or Store.
 */
/** The modules of the table (edge/modules.ts), which a node or a test starts by name. */
export type ModuleName = 'auth' | 'records' | 'workflow' | 'reservations' | 'checkin' | 'storefront' | 'events' | 'chat' | 'crm' | 'phone' | 'webhooks' | 'reference';

export interface Module {
  readonly name: string;
  /**
   * The modules whose actors this module's actors or routes ask (a node that runs it runs them
   * too). Not auth for its x-api-key credential: every route takes a bearer token without it.
   */
  readonly requires?: readonly ModuleName[];
  readonly actors?: ActorKind<any, any, any>[];
  /** Secondary indexes its queries rely on: [datatype, field path]. */
  readonly indexes?: ReadonlyArray<readonly [string, string]>;
  /** Listings its routes page by index at any size (core/store/listing-plan.ts). */
  readonly listings?: ReadonlyArray<ListingShape>;
  /**
   * Called once per node, at the module's turn when the routes are built (every module's actors
   * and indexes are registered by then): the module's part of this node. Its routes, attach, start
   * and stop run right after the module's own hooks of the same name (stop: right before).
   */
  perNode?(deps: AppDeps): ModuleNode;
  routes?(deps: AppDeps): RouteDef[];
  /** Called with the edge before it listens: socket.io and SSE attach here. */
  attach?(edge: HttpEdge, deps: AppDeps): void;
  start?(deps: AppDeps): void | Promise<void>;
  stop?(deps: AppDeps): void | Promise<void>;
}

/** A module's part of one node (Module.perNode): the same hooks, bound to the state of one node. */
export interface ModuleNode {
  readonly routes?: RouteDef[];
  attach?(edge: HttpEdge): void;
  start?(): void | Promise<void>;
  stop?(): void | Promise<void>;
}
