// Reads of a tenant's data made where the tenant is served (issue 35). In cluster mode a node's
// LMDB holds only the tenants it owns (commit-log.ts), so code that runs on any node (a socket's
// events, an SSE view, an AI answer) and reads a tenant's records, logs or kv reads them on the
// owner. A read is declared once per node under a name; calling it asks a stateless actor of the
// tenant, so it goes where every ask goes (the owner; this node on a single node or when it owns
// the tenant) and its answer comes back as an ask's does. Nothing is cached on the asking node.
import type { ActorKind } from '../actor/runtime.js';
import { appError } from '../errors.js';

export const OWNER_READS_ACTOR = 'owner-reads';

/** What runs a read: the node's actor runtime (ActorRuntime.ask). */
export interface Asker {
  ask<R = unknown>(tenant: string, kind: string, key: string, msg: unknown): Promise<R>;
}

interface ReadMsg {
  read: string;
  args: unknown;
}

/** A declared read: runs on the tenant's owner; its arguments and answer cross nodes (codec.ts). */
export type OnOwner<A, R> = (tenant: string, args: A) => Promise<R>;

/** The reads of one node, and the actor kind that serves them (register `actor` with the runtime). */
export class OwnerReads {
  private readonly reads = new Map<string, (tenant: string, args: unknown) => unknown>();

  /**
   * One actor per tenant and read name (one busy read does not queue the others), with no state;
   * a refusal (the 404 a read throws) has nothing to drop.
   */
  readonly actor: ActorKind<null, ReadMsg, unknown> = {
    kind: OWNER_READS_ACTOR,
    refusalKeepsState: true,
    activate: () => null,
    receive: (_state, msg, ctx) => {
      const read = this.reads.get(msg.read);
      if (!read) throw appError('ERR_BAD_REQUEST', `unknown read ${msg.read}`);
      return read(ctx.tenant, msg.args);
    },
  };

  constructor(private readonly asker: Asker) {}

  /** Declares `name` (once per node) and answers the function that runs it on the owner. */
  define<A, R>(name: string, read: (tenant: string, args: A) => R): OnOwner<A, Awaited<R>> {
    if (this.reads.has(name)) throw new Error(`owner read ${name} is declared twice`);
    this.reads.set(name, read as (tenant: string, args: unknown) => unknown);
    return (tenant, args) => this.asker.ask<Awaited<R>>(tenant, OWNER_READS_ACTOR, name, { read: name, args } satisfies ReadMsg);
  }
}
