// Where each node's applier stands in the stream's platform subjects (commit-log.ts), kept in a
// JetStream KV bucket whose TTL is the keep time (CLUSTER_POSITION_KEEP_MS). A node rewrites its key
// every second at the revision it wrote last. The platform purge (platform-snapshots.ts) stays below
// the lowest position in the bucket, so no applier is overtaken while its key lives: a node cut off
// from NATS, or stalled, for less than the keep time reads on where it stopped, and nothing it has
// not read is gone. A node away for longer finds out on its next rewrite (its revision is gone with
// the key): like a node restarted late, it loads the platform snapshot if that is past its position
// before it applies anything more (CommitLog.recheckPosition).
import type { KV } from '@nats-io/kv';
import type { NatsConnection } from '@nats-io/transport-node';
import type { ClusterNames } from './names.js';
import { openTtlBucket } from './ttl-bucket.js';
import { isWrongLastSequence } from './wrong-last-sequence.js';

/** Longest a write of a position waits for its acknowledgement (one made while cut off may never get one). */
const WRITE_TIMEOUT_MS = 2000;

export class ApplierPositions {
  private revision = 0;
  /** When this node's key was last written and confirmed (Date.now()); 0 before the first write. */
  confirmedAt = 0;

  private constructor(
    private readonly kv: KV,
    private readonly nodeId: string,
    /** How long a key lives without a rewrite: the bucket's TTL (this node's setting for a bucket made without one). */
    readonly keepMs: number,
  ) {}

  static async open(nc: NatsConnection, names: ClusterNames, nodeId: string, keepMs: number, replicas: number): Promise<ApplierPositions> {
    const kv = await openTtlBucket(nc, names.positionBucket, keepMs, replicas);
    // The bucket's own TTL is what expires a key (an older configuration's may differ from ours).
    const ttl = (await kv.status()).ttl;
    return new ApplierPositions(kv, nodeId, ttl > 0 ? ttl : keepMs);
  }

  /**
   * Writes this node's position. True when its key lived on since this node's last write, so no
   * purge passed the position written then; false when it had to be written afresh (the first
   * write, or the key expired while this node was away), and a purge may have passed it.
   */
  async tell(position: number): Promise<boolean> {
    const value = String(position);
    if (this.revision > 0) {
      try {
        this.revision = await bounded(this.kv.update(this.nodeId, value, this.revision, WRITE_TIMEOUT_MS));
        this.confirmedAt = Date.now();
        return true;
      } catch (err) {
        if (!isWrongLastSequence(err)) throw err;
      }
    }
    this.revision = await bounded(this.kv.put(this.nodeId, value, { timeout: WRITE_TIMEOUT_MS }));
    this.confirmedAt = Date.now();
    return false;
  }

  /** The lowest position a node's key holds now (undefined when none does): no purge goes past it. */
  async lowest(): Promise<number | undefined> {
    let low: number | undefined;
    for await (const key of await this.kv.keys()) {
      const e = await this.kv.get(key);
      if (!e || e.operation !== 'PUT') continue;
      const n = Number(e.string());
      if (Number.isSafeInteger(n) && n >= 0 && (low === undefined || n < low)) low = n;
    }
    return low;
  }

  /** Takes this node's key away (a clean stop): purges no longer wait for it. */
  async forget(): Promise<void> {
    if (this.revision === 0) return;
    try {
      await this.kv.delete(this.nodeId, { previousSeq: this.revision });
    } catch {
      // rewritten by a newer process of this node, or NATS is gone: the TTL takes it either way
    }
    this.revision = 0;
  }
}

/** `p`, or a timeout error once WRITE_TIMEOUT_MS passed (a request buffered across a reconnect may never settle). */
function bounded<T>(p: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('timed out writing the applier position')), WRITE_TIMEOUT_MS + 500);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}
