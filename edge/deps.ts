// What route handlers and modules are given: the node's parts, by interface.
import type { ActorKind, ActorRuntime } from '../core/actor/runtime.js';
import type { NodeServices } from '../core/actor/services.js';
import type { Principal, TokenService } from '../core/auth/tokens.js';
import type { Bus } from '../core/bus/bus.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { OutboxProvider } from '../core/outbox.js';
import type { QueryRunner } from '../core/query/pool.js';
import type { Store } from '../core/store/store.js';
import type { HttpEdge } from './http-server.js';
import type { PeriodicJobs } from './periodic.js';
import type { RouteDef } from './route.js';

/**
 * Turns request credentials into a principal. Returns undefined when the request carries none of
 * the credentials it understands; throws a 401 AppError when it carries them but they are bad.
 */
export type CredentialResolver = (
  headers: Readonly<Record<string, string>>,
  tenant: string | undefined,
) => Principal | undefined;

export interface AppDeps {
  readonly config: Config;
  readonly store: Store;
  /** Runs client queries (filters, sorts, projections, pipelines) in worker threads, under a budget. */
  readonly queries: QueryRunner;
  readonly runtime: ActorRuntime;
  readonly bus: Bus;
  readonly tokens: TokenService;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Email, SMS and print messages (default `local`: recorded in the store). */
  readonly outbox: OutboxProvider;
  /** The node's ports, the same object its actors reach as ctx.services (core/actor/services.ts). */
  readonly services: NodeServices;
  /** This node's background jobs (edge/periodic.ts: startPeriodic), stopped when the node closes. */
  readonly periodic: PeriodicJobs;
  /** Tried in order after the bearer token; modules add theirs (API keys, ...). */
  readonly credentials: CredentialResolver[];
  /** Routes registered so far (the reference and OpenAPI read it). */
  readonly routes: readonly RouteDef[];
  /** The OpenAPI document of the complete route table (built once, after every module registered). */
  openapi(): Record<string, unknown>;
}

/**
 * A feature area: its actors, indexes, routes and background work. A module object is shared by
 * every node in the process (tests start several), so it keeps no per-node state of its own: what
 * actors need from the node is a port (deps.services, core/actor/services.ts); what the module
 * itself keeps per node (a cache, a gate, an upload table, an unsubscriber) lives in the closure
 * of `perNode(deps)`, never in a module-level map keyed on AppDeps or Store.
 */
export interface Module {
  readonly name: string;
  readonly actors?: ActorKind<any, any, any>[];
  /** Secondary indexes its queries rely on: [datatype, field path]. */
  readonly indexes?: ReadonlyArray<readonly [string, string]>;
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
