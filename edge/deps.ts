// What route handlers and modules are given: the node's parts, by interface.
import type { OwnerReads } from '../core/cluster/owner-reads-actor.js';
import type { ActorRuntime } from '../core/actor/runtime.js';
import type { NodeServices } from '../core/actor/services.js';
import type { Principal, TokenService } from '../core/auth/tokens.js';
import type { Bus } from '../core/bus/bus.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config.js';
import type { Logger } from '../core/log.js';
import type { OutboxProvider } from '../core/outbox.js';
import type { QueryRunner } from '../core/query/pool.js';
import type { Store } from '../core/store/store.js';
import type { PeriodicJobs } from './periodic.js';

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
  /**
   * Reads of a tenant's data by code that runs on any node (sockets, SSE views): declared here,
   * they run on the tenant's owner (core/cluster/owner-reads-actor.ts). Routes need none: a request
   * reaches the owner before its handler runs.
   */
  readonly ownerReads: OwnerReads;
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
  // `routes`, the route table registered so far, is declared beside RouteDef (route.ts).
  /** The OpenAPI document of the complete route table (built once, after every module registered). */
  openapi(): Record<string, unknown>;
}
