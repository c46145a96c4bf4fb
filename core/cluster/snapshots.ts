// Snapshots of the tenants a node holds (DESIGN: Cluster mode), so a takeover loads a tenant's state
// at once instead of replaying its whole history, and the commit stream can drop what a snapshot
// covers (commit-log.ts). One JetStream stream per cluster (names.ts `snapshotStream`):
//   `<snap>.c.<tenant>`  chunks: { i: snapshot id, k: index, e: [db, key, value][] } (lmdb-tenant-copy.ts)
//   `<snap>.m.<tenant>`  manifests: the last one names the tenant's complete snapshot
// A snapshot is written chunk by chunk from one consistent LMDB read of the tenant, then its
// manifest, and only then are the older snapshot's chunks and manifests purged: a takeover always
// finds a complete snapshot, the previous one until the new one is whole. The manifest is published
// expecting the subject's last sequence the writer read before it began, so of two nodes that both
// believe they hold a tenant (a lease changing hands) one snapshot wins and the other purges
// nothing. Everything here stays on the cluster's own NATS, which holds every write already.
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { randomBytes } from 'node:crypto';
import { appError } from '../errors.js';
import type { Logger } from '../log.js';
import type { CopyEntry } from '../store/lmdb-tenant-copy.js';
import type { LmdbStore } from '../store/lmdb-store.js';
import { decode, encode } from './codec.js';
import type { ClusterNames } from './names.js';

/** What a tenant's last manifest says. */
export interface SnapshotManifest {
  /** Snapshot id: every chunk carries it. */
  id: string;
  /** The tenant's stream mark the snapshot holds ([seq, n]: applied-mark.ts). */
  seq: number;
  n: number;
  /** Stream sequence of the first chunk (0 when there is none) and how many. */
  first: number;
  chunks: number;
  entries: number;
  bytes: number;
  at: string;
  /** The node that wrote it. */
  o: string;
}

interface Chunk {
  i: string;
  k: number;
  e: CopyEntry[];
}

/** Keys read per step of a snapshot: each step is one synchronous read of a few ms at most. */
const STEP_ENTRIES = 2_000;
/** Rough value bytes per chunk, well under the server's max_payload. */
const STEP_BYTES = 256 * 1024;
/** Keys deleted per transaction when a tenant is cleared before a load. */
const CLEAR_STEP = 5_000;
/** Chunks fetched at once while loading (each written in its own transaction). */
const LOAD_FETCH = 32;

export interface SnapshotOptions {
  js: JetStreamClient;
  jsm: JetStreamManager;
  names: ClusterNames;
  local: LmdbStore;
  nodeId: string;
  logger: Logger;
  publishTimeoutMs: number;
  /** Largest message the server takes, less room for the envelope. */
  maxPayload: number;
  /** What a snapshot copies out and in, when the scope is not a tenant (platform-snapshots.ts); a tenant's keys by default. */
  copy?: SnapshotCopy;
}

/** A scope's keys read out (one consistent read, in chunks) and written in. */
export interface SnapshotCopy {
  export(scope: string): { readonly mark: [number, number]; next(maxEntries: number, maxBytes: number): CopyEntry[] | undefined; close(): void };
  clearSome(scope: string, max: number): Promise<number>;
  put(scope: string, entries: CopyEntry[]): Promise<void>;
  finish(scope: string, mark: [number, number]): Promise<void>;
}

export class TenantSnapshots {
  private readonly copy: SnapshotCopy;
  constructor(private readonly opts: SnapshotOptions) {
    const l = opts.local;
    this.copy = opts.copy ?? { export: (t) => l.exportTenant(t), clearSome: (t, max) => l.clearTenantSome(t, max), put: (t, e) => l.putTenantEntries(t, e), finish: (t, m) => l.finishTenantImport(t, m) };
  }

  /** Creates the cluster's snapshot stream if needed. */
  static async ensureStream(jsm: JetStreamManager, names: ClusterNames, replicas: number): Promise<void> {
    try {
      await jsm.streams.info(names.snapshotStream);
    } catch {
      await jsm.streams.add({
        name: names.snapshotStream,
        subjects: [`${names.snap}.>`],
        storage: 'file',
        num_replicas: replicas,
        retention: 'limits',
        discard: 'old',
        max_msgs: -1,
        max_bytes: -1,
        max_age: 0,
      });
    }
  }

  /** The tenant's complete snapshot and its manifest's stream sequence, if it has one. */
  async latest(tenant: string): Promise<{ manifest: SnapshotManifest; seq: number } | undefined> {
    try {
      const m = await this.opts.jsm.streams.getMessage(this.opts.names.snapshotStream, { last_by_subj: this.opts.names.snapshotManifest(tenant) });
      if (!m) return undefined;
      return { manifest: decode<SnapshotManifest>(m.data), seq: m.seq };
    } catch (err) {
      if (isNoMessage(err)) return undefined;
      throw err;
    }
  }

  /**
   * Writes a snapshot of `tenant` as this node's LMDB holds it now, in bounded steps; resolves its
   * manifest once it is the tenant's snapshot (undefined when another node's won meanwhile, or
   * `live` turned false between two steps, or `settled` answered false for the mark it holds).
   */
  async write(tenant: string, live: () => boolean, settled?: (mark: [number, number]) => Promise<boolean>): Promise<SnapshotManifest | undefined> {
    const { js, jsm, names, local } = this.opts;
    const before = await this.latest(tenant);
    const exp = this.copy.export(tenant);
    const id = randomBytes(8).toString('hex');
    let first = 0;
    let chunks = 0;
    let entries = 0;
    let bytes = 0;
    try {
      const publish = async (e: CopyEntry[]): Promise<void> => {
        const data = encode({ i: id, k: chunks, e } satisfies Chunk);
        if (data.length > this.opts.maxPayload && e.length > 1) {
          await publish(e.slice(0, e.length >> 1));
          return publish(e.slice(e.length >> 1));
        }
        if (data.length > this.opts.maxPayload) throw appError('ERR_PAYLOAD_TOO_LARGE', this.opts.maxPayload);
        const ack = await js.publish(names.snapshotChunks(tenant), data, { timeout: this.opts.publishTimeoutMs });
        if (first === 0) first = ack.seq;
        chunks++;
        entries += e.length;
        bytes += data.length;
      };
      for (let e = exp.next(STEP_ENTRIES, STEP_BYTES); e !== undefined; e = exp.next(STEP_ENTRIES, STEP_BYTES)) {
        // A tenant released (or a node closing) stops between steps; its chunks are purged by the next snapshot.
        if (!live()) return undefined;
        await publish(e);
      }
    } finally {
      exp.close();
    }
    const manifest: SnapshotManifest = { id, seq: exp.mark[0], n: exp.mark[1], first, chunks, entries, bytes, at: new Date().toISOString(), o: this.opts.nodeId };
    if (settled && !(await settled(exp.mark))) return undefined;
    let seq: number;
    try {
      seq = (await js.publish(names.snapshotManifest(tenant), encode(manifest), { expect: { lastSubjectSequence: before?.seq ?? 0 }, timeout: this.opts.publishTimeoutMs })).seq;
    } catch (err) {
      this.opts.logger.warn({ err, tenant }, 'cluster: a snapshot lost to another one written meanwhile');
      return undefined;
    }
    // The older snapshots (and any left half-written) go; this one's chunks start at `first`.
    await purgeBelow(jsm, names.snapshotStream, names.snapshotManifest(tenant), seq);
    await purgeBelow(jsm, names.snapshotStream, names.snapshotChunks(tenant), first || seq);
    return manifest;
  }

  /**
   * Replaces what this node holds of `tenant` with its snapshot: clears the tenant (its mark first,
   * so a node stopped half-way starts over), loads the chunks in bounded write batches, then sets
   * the tenant's mark to the snapshot's. Retries once with the newer snapshot when the one it read
   * was replaced (its chunks purged) during the load.
   */
  async restore(tenant: string, manifest: SnapshotManifest): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.load(tenant, manifest);
        return;
      } catch (err) {
        const now = await this.latest(tenant);
        if (attempt >= 2 || !now || now.manifest.id === manifest.id) throw err;
        manifest = now.manifest;
      }
    }
  }

  private async load(tenant: string, manifest: SnapshotManifest): Promise<void> {
    const { js, jsm, names, local } = this.opts;
    while ((await this.copy.clearSome(tenant, CLEAR_STEP)) > 0);
    if (manifest.chunks > 0) {
      const info = await jsm.consumers.add(names.snapshotStream, {
        filter_subject: names.snapshotChunks(tenant),
        deliver_policy: DeliverPolicy.StartSequence,
        opt_start_seq: manifest.first,
        ack_policy: AckPolicy.None,
        inactive_threshold: 60_000 * 1e6,
        mem_storage: true,
      });
      try {
        const consumer = await js.consumers.get(names.snapshotStream, info.name);
        let k = 0;
        // One fetch of chunks written at a time: LMDB folds their transactions into few commits
        // (one flush each), and at most LOAD_FETCH chunks are held in memory.
        let writes: Promise<void>[] = [];
        while (k < manifest.chunks) {
          let got = 0;
          const batch = await consumer.fetch({ max_messages: Math.min(LOAD_FETCH, manifest.chunks - k), expires: 5000 });
          for await (const m of batch) {
            got++;
            const chunk = decode<Chunk>(m.data);
            if (chunk.i !== manifest.id || chunk.k !== k) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot was replaced while it loaded`);
            writes.push(this.copy.put(tenant, chunk.e));
            if (++k === manifest.chunks) break;
          }
          if (got === 0) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot is incomplete`);
          await Promise.all(writes);
          writes = [];
        }
      } finally {
        await jsm.consumers.delete(names.snapshotStream, info.name).catch(() => undefined);
      }
    }
    await this.copy.finish(tenant, [manifest.seq, manifest.n]);
    this.opts.logger.info({ tenant, seq: manifest.seq, entries: manifest.entries, bytes: manifest.bytes }, 'cluster: tenant loaded from its snapshot');
  }
}

/**
 * Purges `subject`'s messages below stream sequence `seq`. Never with `seq` 1: nats-server reads a
 * purge from sequence 1 or less as "the whole subject".
 */
export async function purgeBelow(jsm: JetStreamManager, stream: string, subject: string, seq: number): Promise<void> {
  if (seq > 1) await jsm.streams.purge(stream, { filter: subject, seq });
}

export function isNoMessage(err: unknown): boolean {
  return (err as { code?: number }).code === 10037 || /no message found/i.test(String((err as Error)?.message));
}
