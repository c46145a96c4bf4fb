// What the auth area needs from its node: only core interfaces (the edge passes its AppDeps,
// which has these members).
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { NodeServices } from '../../core/actor/services.js';
import type { TokenService } from '../../core/auth/tokens.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/log.js';
import type { OutboxProvider } from '../../core/outbox.js';
import type { QueryRunner } from '../../core/query/pool.js';
import type { Store } from '../../core/store/store.js';

export interface AuthDeps {
  readonly store: Store;
  /** Listings run in its workers (actors/records/reads.ts listRecords). */
  readonly queries: QueryRunner;
  /** The node's ports; listings reach the door's barrier there (actors/records/reads.ts). */
  readonly services: NodeServices;
  readonly runtime: ActorRuntime;
  readonly tokens: TokenService;
  readonly clock: Clock;
  readonly outbox: OutboxProvider;
  readonly logger: Logger;
  readonly config: {
    readonly auth: { readonly accessTokenTtlSeconds: number; readonly refreshTokenTtlSeconds: number };
    readonly rateLimits?: { readonly signupPlan?: string | null };
    /** Where the local outbox's codes file is kept (see LOCAL_CODES_FILE in code-sender.ts). */
    readonly dataDir?: string;
  };
}
