// A JetStream KV bucket whose keys expire when not rewritten within its TTL (one value per key): what
// leases (leases.ts) and applier positions (applier-positions.ts) are kept in.
import { Kvm, type KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';

/** Creates the bucket, or opens it as it is when it exists (maybe with another TTL from an older configuration). */
export async function openTtlBucket(nc: NatsConnection, bucket: string, ttlMs: number, replicas: number): Promise<KV> {
  const kvm = new Kvm(nc);
  try {
    return await kvm.create(bucket, { ttl: ttlMs, history: 1, replicas });
  } catch {
    return kvm.open(bucket);
  }
}
