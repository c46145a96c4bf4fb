// What bounds a takeover of a large tenant (issue 35), measured on the very snapshot the takeover
// bench's node 2 loaded. Three figures, each a part of the takeover with the rest taken away:
//   fetch   the snapshot's chunks pulled from JetStream into memory (transport only, nothing written);
//   import  the same frames written into a fresh LmdbStore through its own import (putTenantFrame,
//           one transaction per frame, as a takeover writes them), with no NATS;
//   floor   the same keys and value bytes put into a fresh LMDB environment through lmdb-js with no
//           encoding at all (raw keys and values, one synchronous transaction per frame, in the
//           frames' order, which is each database's key order): what LMDB itself costs per key.
//   append  the same again, each database's keys put with MDB_APPEND (no search from the root, no
//           key comparisons but one against the last key): what a load costs where the tenant's
//           keys are the last of their databases, as in an LMDB environment of the tenant's own.
//           In the node's one environment other tenants' keys follow, so a load cannot append.
// The takeover's aim leaves (aim - lease TTL) for the load; the floor says whether per-key inserts
// can fit in it at all. A snapshot that is an environment's file (snapshots.ts ENV_FORMAT, what a
// node writes now) has no keys to put: its `import` is the file written from the fetched chunks
// and opened as a store (not flushed, as a node with unflushed tenant environments receives it:
// core/cluster/tenant-envs.ts), and there is no floor or append to measure.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { open, type Database, type PutOptions } from 'lmdb';
import type { ClusterNames } from '../../core/cluster/names.js';
import { ENV_FORMAT, readChunkHead, type SnapshotManifest } from '../../core/cluster/snapshots.js';
import { open as openFile } from 'node:fs/promises';
import { CopyDb, readCopyFrame } from '../../core/store/lmdb-copy-frame.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { COPY_DB_NAMES, RAW_KEYS } from '../../core/store/lmdb-tenant-copy.js';

export interface FloorPart {
  wallSeconds: number;
  cpuSeconds: number;
  cpuMicrosPerKey: number;
}

export interface TakeoverFloor {
  keys: number;
  fetch: FloorPart;
  import: FloorPart;
  floor?: FloorPart;
  append?: FloorPart;
}

async function measure(keys: number, work: () => Promise<void>): Promise<FloorPart> {
  const c0 = process.cpuUsage();
  const w0 = performance.now();
  await work();
  const c = process.cpuUsage(c0);
  const cpuSeconds = (c.user + c.system) / 1e6;
  return {
    wallSeconds: Math.round((performance.now() - w0) / 10) / 100,
    cpuSeconds: Math.round(cpuSeconds * 100) / 100,
    cpuMicrosPerKey: Math.round(((cpuSeconds * 1e6) / Math.max(1, keys)) * 100) / 100,
  };
}

export async function takeoverFloor(nc: NatsConnection, names: ClusterNames, tenant: string, manifest: SnapshotManifest): Promise<TakeoverFloor> {
  const frames: Array<{ frame: Uint8Array; entries: number; format: number }> = [];
  const fetch = await measure(manifest.entries, async () => {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.consumers.add(names.snapshotStream, {
      filter_subject: names.snapshotChunks(tenant),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: manifest.first,
      ack_policy: AckPolicy.None,
      mem_storage: true,
    });
    try {
      const messages = await (await jetstream(nc).consumers.get(names.snapshotStream, info.name)).consume({ max_messages: 16, expires: 5000 }); // as a takeover pulls (snapshots.ts LOAD_PULL)
      const stall = setTimeout(() => void messages.stop(), 30_000);
      for await (const m of messages) {
        stall.refresh();
        const chunk = readChunkHead(Buffer.from(m.data), tenant);
        frames.push({ frame: chunk.frame, entries: chunk.entries, format: chunk.format });
        if (frames.length === manifest.chunks) break;
      }
      clearTimeout(stall);
      await messages.close().catch(() => undefined);
    } finally {
      await jsm.consumers.delete(names.snapshotStream, info.name).catch(() => undefined);
    }
  });
  if (frames.length !== manifest.chunks) throw new Error(`fetched ${frames.length} of ${manifest.chunks} chunks`);

  if (manifest.f === ENV_FORMAT) return { keys: manifest.entries, fetch, import: await writeFile(manifest.entries, frames) };
  const dirs = [mkdtempSync(join(tmpdir(), 'bench-floor-import-')), mkdtempSync(join(tmpdir(), 'bench-floor-raw-')), mkdtempSync(join(tmpdir(), 'bench-floor-append-'))];
  try {
    const store = new LmdbStore({ path: dirs[0], durability: 'commit' });
    let imported: FloorPart;
    try {
      imported = await measure(manifest.entries, async () => {
        for (const f of frames) await store.putTenantFrame(tenant, f.frame, f.entries, f.format);
      });
    } finally {
      await store.close();
    }

    const floor = await rawPuts(dirs[1], manifest.entries, frames, false);
    const append = await rawPuts(dirs[2], manifest.entries, frames, true);
    return { keys: manifest.entries, fetch, import: imported, floor, append };
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

/** The chunks of an environment's file written into a file and opened as a store, as a takeover installs it. */
async function writeFile(keys: number, chunks: Array<{ frame: Uint8Array }>): Promise<FloorPart> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-floor-file-'));
  try {
    return await measure(keys, async () => {
      const fh = await openFile(join(dir, 'data.mdb'), 'w');
      let at = 0;
      for (const c of chunks) {
        await fh.write(c.frame, 0, c.frame.length, at);
        at += c.frame.length;
      }
      await fh.close();
      const store = new LmdbStore({ path: dir });
      store.appliedKeys();
      await store.close();
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The frames' keys and values put raw into a fresh environment at `dir`, with MDB_APPEND where `append` (but `meta`'s few keys, which a copy gives out of order). */
async function rawPuts(dir: string, keys: number, frames: Array<{ frame: Uint8Array; entries: number; format: number }>, append: boolean): Promise<FloorPart> {
  const root = open({ path: dir, maxDbs: 16, mapSize: 64 * 1024 ** 3, compression: false, noSync: true });
  const raw = COPY_DB_NAMES.map((name) => root.openDB<Uint8Array, Uint8Array>({ name, encoding: 'binary', keyEncoder: RAW_KEYS } as { name: string }) as Database<Uint8Array, Uint8Array>);
  const appending: PutOptions = { append: true };
  const plain: PutOptions = {};
  try {
    return await measure(keys, async () => {
      for (const f of frames) {
        root.transactionSync(() => {
          readCopyFrame(f.frame, f.entries, (db, _kind, key, value) => void raw[db].putSync(key, value, append && db !== CopyDb.Meta ? appending : plain), undefined, f.format);
        });
      }
    });
  } finally {
    await root.close();
  }
}
