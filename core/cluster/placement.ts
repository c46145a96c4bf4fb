// Placement: which node owns a tenant (DESIGN: core → placement). A single node owns every tenant
// and needs nothing of this; in cluster mode ClusterNode implements it with leases in a JetStream
// KV bucket (leases.ts), and a tenant nobody owns goes to the live node that rendezvous hashing
// ranks first for it, so tenants spread evenly and every node picks the same one.
import { createHash } from 'node:crypto';

export interface Placement {
  readonly nodeId: string;
  /** True when this node owns `tenant` now and may serve it (lease held, stream caught up). */
  owns(tenant: string): boolean;
  /**
   * The node that owns `tenant`. When nobody does and this node is the one to take it, it claims
   * it first (and has caught up on its writes when this resolves).
   */
  ownerOf(tenant: string): Promise<string>;
}

/** One node: it owns everything. */
export class LocalPlacement implements Placement {
  constructor(readonly nodeId: string) {}
  owns(): boolean {
    return true;
  }
  ownerOf(): Promise<string> {
    return Promise.resolve(this.nodeId);
  }
}

/** Highest-random-weight (rendezvous) choice of a node for `tenant` among `nodes`. */
export function rendezvous(tenant: string, nodes: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const node of nodes) {
    const score = createHash('sha1').update(tenant).update('\u0000').update(node).digest().readUInt32BE(0);
    if (score > bestScore || (score === bestScore && best !== undefined && node < best)) {
      best = node;
      bestScore = score;
    }
  }
  return best;
}
