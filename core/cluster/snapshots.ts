// Snapshots of the tenants a node holds (DESIGN: Cluster mode), so a takeover loads a tenant's state
// at once instead of replaying its whole history, and the commit stream can drop what a snapshot
// covers (commit-log.ts). One JetStream stream per cluster (names.ts `snapshotStream`):
//   `<snap>.c.<tenant>`  chunks: a header (CHUNK_HEAD), then the next bytes of an environment's file
//                        (ENV_FORMAT) or one frame of entries (lmdb-copy-frame.ts)
//   `<snap>.m.<tenant>`  manifests: the last one names the tenant's complete snapshot
// A tenant's snapshot is its LMDB environment's file (tenant-envs.ts): a copy LMDB makes (not
// compacted: see LmdbStore.backup) in a thread of its own, sent in chunks of raw bytes
// (ENV_FORMAT), and received into a file that the taking node opens as the tenant's environment,
// with no work per key on either side. The
// platform's snapshot (platform-snapshots.ts), and tenants' snapshots an older version wrote, are
// frames of keys (lmdb-copy-frame.ts) written into the environment key by key. A snapshot is
// written chunk by chunk from one consistent LMDB read, then its manifest, and only then are the
// older snapshot's chunks and manifests purged: a takeover always finds a complete snapshot, the
// previous one until the new one is whole. The manifest is published expecting the subject's last
// sequence the writer read before it began, so of two nodes that both believe they hold a tenant
// (a lease changing hands) one snapshot wins and the other purges nothing. Everything here stays on the cluster's own NATS, which holds every write already.
import { AckPolicy, DeliverPolicy, type JetStreamClient, type JetStreamManager } from '@nats-io/jetstream';
import { randomBytes } from 'node:crypto';
import { open as openFile } from 'node:fs/promises';
import { join } from 'node:path';
import { appError } from '../errors.js';
import type { Logger } from '../log.js';
import { FRAME_FORMAT } from '../store/lmdb-copy-frame.js';
import { CopyDb, type CopyEntry, type CopyFrame } from '../store/lmdb-tenant-copy.js';
import { decode, encode } from './codec.js';
import type { ClusterNames } from './names.js';
import type { TenantEnvs } from './tenant-envs.js';

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
  /** The chunks' format (CHUNK_FORMAT, or ENV_FORMAT for an environment's file); a snapshot in another one is not loaded. */
  f?: number;
}

/**
 * A chunk: format u8, snapshot id (8 bytes), index u32, entries u32, then the frame. The id and
 * index tie it to its manifest: a chunk of another snapshot (one written meanwhile) stops the load.
 * The format is its frame's (lmdb-copy-frame.ts): a node writes FRAME_FORMAT and reads 2 as well
 * (a snapshot an older node wrote), and format 1 (readChunkV1).
 */
const CHUNK_FORMAT = FRAME_FORMAT;
/** A chunk of an environment's file: its next bytes (the header's `entries` is their length). */
export const ENV_FORMAT = 4;
const READABLE_FORMATS = new Set([2, FRAME_FORMAT, ENV_FORMAT]);
const CHUNK_HEAD = 17;

export interface ChunkHead {
  format: number;
  id: string;
  k: number;
  entries: number;
  frame: Uint8Array;
}

function writeChunkHead(chunk: Buffer, id: Buffer, k: number, entries: number, format = CHUNK_FORMAT): void {
  chunk[0] = format;
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
  local: TenantEnvs;
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
  /** Tenants: snapshots are environment files (the copy reads older snapshots' frames only). */
  private readonly files: boolean;
  constructor(private readonly opts: SnapshotOptions) {
    const l = opts.local;
    this.files = opts.copy === undefined;
    this.copy = opts.copy ?? {
      export: () => {
        throw new Error('a tenant snapshot is its environment file');
      },
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
    const before = await this.latest(tenant);
    const sent = this.files ? await this.sendFile(tenant, live) : await this.sendFrames(tenant, live);
    if (!sent) return undefined;
    const { manifest, readMs } = sent;
    return this.publishManifest(tenant, before, manifest, readMs, settled);
  }

  /** Publishes the chunks in order, PUBLISH_WINDOW in flight; `first` is set from the first chunk's acknowledgement. */
  private publisher(tenant: string): { send(chunk: Buffer): Promise<void>; done(): Promise<void>; first: number; chunks: number } {
    const { js, names } = this.opts;
    const inFlight: Promise<void>[] = [];
    const p = {
      first: 0,
      chunks: 0,
      send: async (chunk: Buffer): Promise<void> => {
        const k = p.chunks++;
        const sent = js.publish(names.snapshotChunks(tenant), chunk, { timeout: this.opts.publishTimeoutMs }).then((ack) => {
          if (k === 0) p.first = ack.seq;
        });
        sent.catch(() => undefined);
        inFlight.push(sent);
        if (inFlight.length >= PUBLISH_WINDOW) await inFlight.shift();
      },
      done: async (): Promise<void> => {
        await Promise.all(inFlight);
      },
    };
    return p;
  }

  /** A tenant's snapshot: its environment copied (backupTenant), sent in chunks of its bytes. */
  private async sendFile(tenant: string, live: () => boolean): Promise<{ manifest: SnapshotManifest; readMs: number } | undefined> {
    const read0 = performance.now();
    const copy = await this.opts.local.backupTenant(tenant);
    if (!copy) return undefined;
    const readMs = performance.now() - read0;
    const idBytes = randomBytes(8);
    const pub = this.publisher(tenant);
    try {
      const fh = await openFile(copy.file, 'r');
      try {
        const piece = this.opts.maxPayload - CHUNK_HEAD;
        for (let at = 0; at < copy.bytes; at += piece) {
          if (!live()) return undefined;
          const len = Math.min(piece, copy.bytes - at);
          const chunk = Buffer.allocUnsafe(CHUNK_HEAD + len);
          const { bytesRead } = await fh.read(chunk, CHUNK_HEAD, len, at);
          if (bytesRead !== len) throw new Error(`tenant ${tenant}'s copy ended at ${at + bytesRead} of ${copy.bytes} bytes`);
          writeChunkHead(chunk, idBytes, pub.chunks, len, ENV_FORMAT);
          await pub.send(chunk);
        }
        await pub.done();
      } finally {
        await fh.close();
      }
    } finally {
      this.opts.local.discard(copy.dir);
    }
    const manifest: SnapshotManifest = { id: idBytes.toString('hex'), seq: copy.mark[0], n: copy.mark[1], first: pub.first, chunks: pub.chunks, entries: copy.entries, bytes: copy.bytes, at: new Date().toISOString(), o: this.opts.nodeId, f: ENV_FORMAT };
    return { manifest, readMs };
  }

  /** A scope's snapshot in frames of keys from one consistent read (the platform's). */
  private async sendFrames(tenant: string, live: () => boolean): Promise<{ manifest: SnapshotManifest; readMs: number } | undefined> {
    const exp = this.copy.export(tenant);
    const idBytes = randomBytes(8);
    const read0 = performance.now();
    const pub = this.publisher(tenant);
    let entries = 0;
    let bytes = 0;
    let readMs: number;
    try {
      // A few publishes in flight: each waits for its acknowledgement, the read goes on meanwhile.
      for (let f = exp.next(STEP_ENTRIES, this.opts.maxPayload - CHUNK_HEAD, CHUNK_HEAD); f !== undefined; f = exp.next(STEP_ENTRIES, this.opts.maxPayload - CHUNK_HEAD, CHUNK_HEAD)) {
        // A tenant released (or a node closing) stops between steps; its chunks are purged by the next snapshot.
        if (!live()) return undefined;
        writeChunkHead(f.frame, idBytes, pub.chunks, f.entries);
        entries += f.entries;
        bytes += f.frame.length;
        await pub.send(f.frame);
      }
      readMs = performance.now() - read0;
      await pub.done();
    } finally {
      exp.close();
    }
    const manifest: SnapshotManifest = { id: idBytes.toString('hex'), seq: exp.mark[0], n: exp.mark[1], first: pub.first, chunks: pub.chunks, entries, bytes, at: new Date().toISOString(), o: this.opts.nodeId, f: CHUNK_FORMAT };
    return { manifest, readMs };
  }

  /** Publishes a written snapshot's manifest (expecting the last one's sequence), then purges what it replaces. */
  private async publishManifest(
    tenant: string,
    before: { seq: number } | undefined,
    manifest: SnapshotManifest,
    readMs: number,
    settled?: (mark: [number, number]) => Promise<boolean>,
  ): Promise<SnapshotManifest | undefined> {
    const { js, jsm, names } = this.opts;
    if (settled && !(await settled([manifest.seq, manifest.n]))) return undefined;
    let seq: number;
    try {
      seq = (await js.publish(names.snapshotManifest(tenant), encode(manifest), { expect: { lastSubjectSequence: before?.seq ?? 0 }, timeout: this.opts.publishTimeoutMs })).seq;
    } catch (err) {
      this.opts.logger.warn({ err, tenant }, 'cluster: a snapshot lost to another one written meanwhile');
      return undefined;
    }
    const { entries, bytes, chunks, f } = manifest;
    this.opts.logger.info({ tenant, entries, bytes, chunks, format: f, readMs: Math.round(readMs) }, 'cluster: tenant snapshot written');
    // The older snapshots (and any left half-written) go; this one's chunks start at `first`.
    await purgeBelow(jsm, names.snapshotStream, names.snapshotManifest(tenant), seq);
    await purgeBelow(jsm, names.snapshotStream, names.snapshotChunks(tenant), manifest.first || seq);
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
    if (manifest.f !== undefined && !READABLE_FORMATS.has(manifest.f)) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot is in chunk format ${manifest.f}; this node reads ${[...READABLE_FORMATS].join(', ')} and 1`);
    if (manifest.f === ENV_FORMAT) return this.loadFile(tenant, manifest);
    while ((await this.copy.clearSome(tenant, CLEAR_STEP)) > 0);
    // A chunk's write transaction is queued as it arrives and the next chunks keep arriving meanwhile.
    await this.receive(tenant, manifest, (chunk) => ('frame' in chunk ? this.copy.putFrame(tenant, chunk.frame, chunk.entries, chunk.format) : this.copy.putEntries(tenant, chunk.e)));
    await this.copy.finish(tenant, [manifest.seq, manifest.n]);
    this.opts.logger.info({ tenant, seq: manifest.seq, entries: manifest.entries, bytes: manifest.bytes }, 'cluster: tenant loaded from its snapshot');
  }

  /**
   * An environment's file, received chunk by chunk into a file of its own (positional writes, a few
   * in flight), then installed as the tenant's environment (tenant-envs.ts), which
   * checks that it holds the manifest's mark. What this node held of the tenant stays until then.
   */
  private async loadFile(tenant: string, manifest: SnapshotManifest): Promise<void> {
    if (!this.files) throw appError('ERR_UNAVAILABLE', `the platform's snapshot cannot be an environment's file`);
    const local = this.opts.local;
    const dir = local.receiving(manifest.bytes);
    try {
      const fh = await openFile(join(dir, 'data.mdb'), 'w');
      let at = 0;
      try {
        await this.receive(tenant, manifest, (chunk) => {
          if (!('frame' in chunk) || chunk.entries !== chunk.frame.length) throw appError('ERR_UNAVAILABLE', `a chunk of tenant ${tenant}'s snapshot file is malformed`);
          const pos = at;
          at += chunk.frame.length;
          if (at > manifest.bytes) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot file is longer than its manifest's ${manifest.bytes} bytes`);
          return fh.write(chunk.frame, 0, chunk.frame.length, pos);
        });
        if (at !== manifest.bytes) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot file has ${at} bytes, its manifest says ${manifest.bytes}`);
        // Where environments are flushed per commit, this one is on disk before it serves (else a
        // machine that goes down drops them all anyway: tenant-envs.ts).
        if (!local.unflushed) await fh.datasync();
      } finally {
        await fh.close();
      }
      await local.installTenant(tenant, dir, [manifest.seq, manifest.n]);
    } finally {
      local.discard(dir);
    }
    this.opts.logger.info({ tenant, seq: manifest.seq, entries: manifest.entries, bytes: manifest.bytes }, 'cluster: tenant loaded from its snapshot file');
  }

  /**
   * Reads the snapshot's chunks in order and hands each to `put` (LOAD_PULL pulled ahead, at most
   * LOAD_WRITES puts outstanding); resolves once every chunk was put and every put settled.
   */
  private async receive(tenant: string, manifest: SnapshotManifest, put: (chunk: ChunkHead | { id: string; k: number; e: CopyEntry[] }) => Promise<unknown>): Promise<void> {
    if (manifest.chunks === 0) return;
    const { js, jsm, names } = this.opts;
    const info = await jsm.consumers.add(names.snapshotStream, {
      filter_subject: names.snapshotChunks(tenant),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: manifest.first,
      ack_policy: AckPolicy.None,
      inactive_threshold: 60_000 * 1e6,
      mem_storage: true,
    });
    const writes: Promise<unknown>[] = [];
    let k = 0;
    try {
      const consumer = await js.consumers.get(names.snapshotStream, info.name);
      const messages = await consumer.consume({ max_messages: LOAD_PULL, expires: 5000 });
      const stall = setTimeout(() => void messages.stop(), LOAD_STALL_MS);
      try {
        for await (const m of messages) {
          stall.refresh();
          // Its own copy: the write runs after this turn, and reads the bytes then.
          const chunk = manifest.f !== undefined ? readChunkHead(Buffer.from(m.data), tenant) : readChunkV1(m.data, tenant);
          if (chunk.id !== manifest.id || chunk.k !== k) throw appError('ERR_UNAVAILABLE', `tenant ${tenant}'s snapshot was replaced while it loaded`);
          if ('format' in chunk && chunk.format !== manifest.f) throw appError('ERR_UNAVAILABLE', `a chunk of tenant ${tenant}'s snapshot is in format ${chunk.format}, its manifest says ${manifest.f}`);
          const w = put(chunk);
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
