// Tenant ownership leases in a JetStream KV bucket. The bucket's TTL is the lease: a key not
// rewritten within it disappears, so the tenant of a dead node becomes free. A claim creates the
// key (compare-and-set on "no value"), a renewal rewrites it at the revision we hold, a release
// deletes it at that revision: each fails when someone else holds the key, and that failure is how
// a node learns it lost a tenant.
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterNames } from './names.js';
import { openTtlBucket } from './ttl-bucket.js';
import { isWrongLastSequence } from './wrong-last-sequence.js';

export interface Holder {
  node: string;
  revision: number;
}

export type RenewResult = { ok: true; revision: number } | { ok: false; lost: boolean; err: unknown };

export class TenantLeases {
  private constructor(
    private readonly kv: KV,
    private readonly names: ClusterNames,
    readonly nodeId: string,
  ) {}

  static async open(nc: NatsConnection, names: ClusterNames, nodeId: string, ttlMs: number, replicas: number): Promise<TenantLeases> {
    return new TenantLeases(await openTtlBucket(nc, names.leaseBucket, ttlMs, replicas), names, nodeId);
  }

  private value(): string {
    return JSON.stringify({ node: this.nodeId });
  }

  /** The node holding `tenant`'s lease now, if any. */
  async holder(tenant: string): Promise<Holder | undefined> {
    const e = await this.kv.get(this.names.leaseKey(tenant));
    if (!e || e.operation !== 'PUT' || e.length === 0) return undefined;
    try {
      const node = (e.json() as { node?: unknown }).node;
      return typeof node === 'string' ? { node, revision: e.revision } : undefined;
    } catch {
      return undefined;
    }
  }

  /** Claims `tenant`: resolves our revision, or the holder that was first. */
  async claim(tenant: string): Promise<{ revision: number } | { holder: Holder | undefined }> {
    try {
      return { revision: await this.kv.create(this.names.leaseKey(tenant), this.value()) };
    } catch (err) {
      if (!isWrongLastSequence(err) && !/exists/i.test(String((err as Error).message))) throw err;
      return { holder: await this.holder(tenant) };
    }
  }

  /** Rewrites our lease at `revision` (renewal, or adopting our own lease after a restart). */
  async renew(tenant: string, revision: number): Promise<RenewResult> {
    try {
      return { ok: true, revision: await this.kv.update(this.names.leaseKey(tenant), this.value(), revision) };
    } catch (err) {
      return { ok: false, lost: isWrongLastSequence(err), err };
    }
  }

  /** Gives the tenant up at once (a clean stop), unless someone else holds it by now. */
  async release(tenant: string, revision: number): Promise<void> {
    try {
      await this.kv.delete(this.names.leaseKey(tenant), { previousSeq: revision });
    } catch {
      // Not ours any more, or NATS is gone: the TTL frees it either way.
    }
  }
}
