// Snapshots of the tenants a node holds (DESIGN: Cluster mode), so a takeover loads a tenant's state
// at once instead of replaying its whole history, and the commit stream can drop what a snapshot
// covers (commit-log.ts). One JetStream stream per cluster (names.ts `snapshotStream`):
//   `<snap>.c.<tenant>`  chunks: a header (CHUNK_HEAD) and one frame of entries (lmdb-copy-frame.ts)
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
import type { LmdbStore } from '../store/lmdb-store.js';
import { FRAME_FORMAT } from '../store/lmdb-copy-frame.js';
import { CopyDb, type CopyEntry, type CopyFrame } from '../store/lmdb-tenant-copy.js';
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
  /** The chunks' format (CHUNK_FORMAT); a snapshot in another one is not loaded. */
  f?: number;
}

/**
 * A chunk: format u8, snapshot id (8 bytes), index u32, entries u32, then the frame. The id and
 * index tie it to its manifest: a chunk of another snapshot (one written meanwhile) stops the load.
 * The format is its frame's (lmdb-copy-frame.ts): a node writes FRAME_FORMAT and reads 2 as well
 * (a snapshot an older node wrote), and format 1 (readChunkV1).
 */
const CHUNK_FORMAT = FRAME_FORMAT;
const READABLE_FORMATS = new Set([2, FRAME_FORMAT]);
const CHUNK_HEAD = 17;

export interface ChunkHead {
  format: number;
  id: string;
  k: number;
  entries: number;
  frame: Uint8Array;
}

function writeChunkHead(chunk: Buffer, id: Buffer, k: number, entries: number): void {
  chunk[0] = CHUNK_FORMAT;
  id.copy(chunk, 1);
  chunk.writeUInt32LE(k, 9);
  chunk.writeUInt32LE(entries, 13);
}

/** A chunk's header, checked (its frame is checked entry by entry when written). */
export function readChunkHead(data: Uint8Array, tenant: string): ChunkHead {
  if (data.length < CHUNK_HEAD || !READABLE_FORMATS.has(data[0])) throw appError('ERR_UNAVAILABLE', `a chunk of tenant ${tenant}'s snapshot is malformed: ${data.length} bytes, format ${data[0]}`);
  const b = Buffer.from(data.buffer, data.byteOffset, data.byteLength);
  return { format: data[0], id: b.toString('hex', 1, 9), k: b.readUInt32LE(9), entries: b.readUInt32LE(13), frame: data.subarray(CHUNK_HEAD) };
}

/**
 * A chunk of a snapshot written before CHUNK_FORMAT 2 (its manifest has no `f`): msgpack
 * { i: id, k: index, e: [db, key, value][] }. Read so that a node of this version can still take
 * over a tenant whose last snapshot an older node wrote; its shape is checked before use.
 */
function readChunkV1(data: Uint8Array, tenant: string): { id: string; k: number; e: CopyEntry[] } {
  let c: { i?: unknown; k?: unknown; e?: unknown };
  try {
    c = decode(data);
  } catch (err) {
    throw appError('ERR_UNAVAILABLE', `a chunk of tenant ${tenant}'s snapshot does not decode: ${(err as Error).message}`);
  }
  const entryOk = (x: unknown) => Array.isArray(x) && x.length === 3 && Number.isInteger(x[0]) && x[0] >= CopyDb.Records && x[0] <= CopyDb.Meta && x[1] !== undefined;
  if (typeof c?.i !== 'string' || !Number.isInteger(c.k) || !Array.isArray(c.e) || !c.e.every(entryOk)) {
    throw appError('ERR_UNAVAILABLE', `a chunk of tenant ${tenant}'s snapshot is malformed (format 1)`);
  }
  return { id: c.i, k: c.k as number, e: c.e as CopyEntry[] };
}

/** Keys read per step of a snapshot at most: each step is one synchronous read of a few ms. */
const STEP_ENTRIES = 16_000;
/** Chunks of a snapshot published and not yet acknowledged. */
const PUBLISH_WINDOW = 4;
/** Keys deleted per transaction when a tenant is cleared before a load. */
const CLEAR_STEP = 5_000;
/** Chunks pulled ahead while loading (each up to max_payload, so this bounds the memory held). */
const LOAD_PULL = 16;
/** Chunks whose write transactions may be queued and not committed: they overlap the next pulls. */
const LOAD_WRITES = 8;
/** A load that receives no chunk for this long stops (the snapshot was purged meanwhile). */
const LOAD_STALL_MS = 10_000;

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
  /** A consistent read in frames: `next` gives up to `maxEntries` in at most `maxBytes`, with `room` bytes free at the start. */
  export(scope: string): { readonly mark: [number, number]; next(maxEntries: number, maxBytes: number, room: number): CopyFrame | undefined; close(): void };
  clearSome(scope: string, max: number): Promise<number>;
  /** Writes one frame (a chunk of format 2 or 3: its frame's format, lmdb-copy-frame.ts). */
  putFrame(scope: string, frame: Uint8Array, entries: number, format: number): Promise<unknown>;
  /** Writes entries made from values (a chunk of format 1). */
  putEntries(scope: string, entries: CopyEntry[]): Promise<unknown>;
  finish(scope: string, mark: [number, number]): Promise<void>;
}

export class TenantSnapshots {
  private readonly copy: SnapshotCopy;
  constructor(private readonly opts: SnapshotOptions) {
    const l = opts.local;
    this.copy = opts.copy ?? {
      export: (t) => l.exportTenant(t),
      clearSome: (t, max) => l.clearTenantSome(t, max),
      putFrame: (t, frame, entries, format) => l.putTenantFrame(t, frame, entries, format),
      putEntries: (t, e) => l.putTenantEntries(t, e),
      finish: (t, m) => l.finishTenantImport(t, m),
    };
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
    const { js, jsm, names } = this.opts;
    const before = await this.latest(tenant);
    const exp = this.copy.export(tenant);
    const idBytes = randomBytes(8);
    const id = idBytes.toString('hex');
    const read0 = performance.now();
    let first = 0;
    let chunks = 0;
    let entries = 0;
    let bytes = 0;
    let readMs: number;
    try {
      // A few publishes in flight: each waits for its acknowledgement, the read goes on meanwhile.
      const inFlight: Promise<void>[] = [];
      for (let f = exp.next(STEP_ENTRIES, this.opts.maxPayload - CHUNK_HEAD, CHUNK_HEAD); f !== undefined; f = exp.next(STEP_ENTRIES, this.opts.maxPayload - CHUNK_HEAD, CHUNK_HEAD)) {
        // A tenant released (or a node closing) stops between steps; its chunks are purged by the next snapshot.
        if (!live()) return undefined;
        writeChunkHead(f.frame, idBytes, chunks, f.entries);
        const k = chunks++;
        entries += f.entries;
        bytes += f.frame.length;
        const sent = js.publish(names.snapshotChunks(tenant), f.frame, { timeout: this.opts.publishTimeoutMs }).then((ack) => {
          if (k === 0) first = ack.seq;
        });
        sent.catch(() => undefined);
        inFlight.push(sent);
        if (inFlight.length >= PUBLISH_WINDOW) await inFlight.shift();
      }
      readMs = performance.now() - read0;
      await Promise.all(inFlight);
    } finally {
      exp.close();
    }
    const manifest: SnapshotManifest = { id, seq: exp.mark[0], n: exp.mark[1], first, chunks, entries, bytes, at: new Date().toISOString(), o: this.opts.nodeId, f: CHUNK_FORMAT };
    if (settled && !(await settled(exp.mark))) return undefined;
    let seq: number;
    try {
      seq = (await js.publish(names.snapshotManifest(tenant), encode(manifest), { expect: { lastSubjectSequence: before?.seq ?? 0 }, timeout: this.opts.publishTimeoutMs })).seq;
    } catch (err) {
      this.opts.logger.warn({ err, tenant }, 'cluster: a snapshot lost to another one written meanwhile');
      return undefined;
    }
    this.opts.logger.info({ tenant, entries, bytes, chunks, readMs: Math.round(readMs) }, 'cluster: tenant snapshot written');
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
    const { js, jsm, names } = this.opts;
    if (manifest.f !== undefined && !READABLE_FORMATS.has(manifest.f)) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot is in chunk format ${manifest.f}; this node reads ${[...READABLE_FORMATS].join(', ')} and 1`);
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
      // A chunk's write transaction is queued as it arrives and the next chunks keep arriving
      // meanwhile; at most LOAD_WRITES outstanding. Each is awaited (or settled) before the load ends.
      const writes: Promise<unknown>[] = [];
      let k = 0;
      try {
        const consumer = await js.consumers.get(names.snapshotStream, info.name);
        const messages = await consumer.consume({ max_messages: LOAD_PULL, expires: 5000 });
        const stall = setTimeout(() => void messages.stop(), LOAD_STALL_MS);
        try {
          for await (const m of messages) {
            stall.refresh();
            // Its own copy: the write transaction runs after this turn, and reads the frame then.
            const chunk = manifest.f !== undefined ? readChunkHead(Buffer.from(m.data), tenant) : readChunkV1(m.data, tenant);
            if (chunk.id !== manifest.id || chunk.k !== k) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot was replaced while it loaded`);
            if ('format' in chunk && chunk.format !== manifest.f) throw appError('ERR_UNAVAILABLE', `a chunk of tenant ${tenant}'s snapshot is in format ${chunk.format}, its manifest says ${manifest.f}`);
            const w = 'frame' in chunk ? this.copy.putFrame(tenant, chunk.frame, chunk.entries, chunk.format) : this.copy.putEntries(tenant, chunk.e);
            w.catch(() => undefined);
            writes.push(w);
            if (writes.length >= LOAD_WRITES) await writes.shift();
            if (++k === manifest.chunks) break;
          }
        } finally {
          clearTimeout(stall);
          await messages.close().catch(() => undefined);
        }
        if (k < manifest.chunks) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot is incomplete: ${k} of ${manifest.chunks} chunks`);
        await Promise.all(writes);
      } finally {
        await Promise.allSettled(writes);
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
