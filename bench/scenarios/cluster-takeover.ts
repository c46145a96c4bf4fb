// Cluster mode (issue 35): how long a large tenant is unavailable when its owner dies. One tenant of
// TAKEOVER_RECORDS tickets (default 1,000,000) seeded straight into node 1's data directory (as the
// scan bench seeds its stores, in a cluster node's layout: the tenant in an environment of its own),
// node 2 started over a store that holds the organisation only. Node 1
// takes the tenant, snapshots it into JetStream (CLUSTER_SNAPSHOT_EVERY_MS), and is killed with
// SIGKILL; the figure is the time from the kill until node 2 answers a read of the tenant's last
// ticket, against the aim of the lease TTL plus 10 s. Node 2 loads the snapshot (it never held the
// tenant), then replays the stream's tail, then serves. The tail is empty unless TAKEOVER_TAIL_SCANS
// door scans go to node 1 after its snapshot (a busy tenant's commits wait for keys / 10 of them
// before the next snapshot): node 1 is killed as the last one is answered, before the snapshot a
// quiet tenant gets, so node 2 replays every one.
//
// Knobs (env): TAKEOVER_RECORDS (1000000), TAKEOVER_TAIL_SCANS (0), CLUSTER_LEASE_TTL_MS (6000, the
// default of the setting).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { TokenService } from '../../core/auth/tokens.js';
import { ClusterNames } from '../../core/cluster/names.js';
import { rendezvous } from '../../core/cluster/placement.js';
import { decode } from '../../core/cluster/codec.js';
import type { SnapshotManifest } from '../../core/cluster/snapshots.js';
import autocannon from 'autocannon';
import { EVENT_ID, JWT_SECRET, scanBodies, seedScanStore, ticketId } from '../fixtures/scan-dataset.js';
import { startServer, writeResult, type RunningServer } from '../harness.js';
import { envInt, type Scenario } from '../scenario.js';
import { startNats } from './cluster.js';
import { takeoverFloor } from '../store/takeover-floor.js';

const NAME = 'cluster-takeover';
const DESCRIPTION = 'kill -9 of the owner of a 1,000,000-record tenant: time until another node serves it (snapshot load + tail replay), against the lease TTL + 10 s';
const NODE_IDS = ['bench-1', 'bench-2'];
const PREFIX = 'bp';

const script = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-');

/** An organisation rendezvous places on node 1 while both nodes live (so node 1 takes it first). */
function tenantOnNode1(): string {
  for (let i = 0; ; i++) if (rendezvous(`bench-big-${i}`, NODE_IDS) === NODE_IDS[0]) return `bench-big-${i}`;
}

export const clusterTakeover: Scenario = {
  name: NAME,
  description: DESCRIPTION,
  async run() {
    const records = envInt('TAKEOVER_RECORDS', 1_000_000);
    const ttl = envInt('CLUSTER_LEASE_TTL_MS', 6000);
    const tailScans = envInt('TAKEOVER_TAIL_SCANS', 0);
    const org = tenantOnNode1();
    const full = mkdtempSync(join(tmpdir(), 'bench-takeover-'));
    const bare = mkdtempSync(join(tmpdir(), 'bench-takeover-bare-'));
    const nats = await startNats();
    const servers: RunningServer[] = [];
    const nc = await connect({ servers: nats.url });
    try {
      const t0 = performance.now();
      await seedScanStore(full, records, { orgs: [org], cluster: true });
      await seedScanStore(bare, 0, { orgs: [org], cluster: true });
      console.log(`  seeded ${org} with ${fmt(records)} tickets in ${fmt((performance.now() - t0) / 1000, 1)} s`);
      const tok = new TokenService(JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 3600, cacheSize: 0 }).signAccess({ sub: 'bench-staff', org, roles: ['User'], kind: 'staff', email: 'door@bench.example' });
      const headers = { orgid: org, authorization: `Bearer ${tok}` };
      const env = (i: number, template: string): Record<string, string> => ({
        SCAN_TEMPLATE_DIR: template,
        JWT_SECRET,
        NATS_URL: nats.url,
        NODE_ID: NODE_IDS[i],
        CLUSTER_PREFIX: PREFIX,
        CLUSTER_LEASE_TTL_MS: String(ttl),
        CLUSTER_SNAPSHOT_EVERY_MS: '1000',
      });
      servers.push(await startServer({ script: script('../fixtures/scan-server.js'), env: env(0, full) }));
      servers.push(await startServer({ script: script('../fixtures/scan-server.js'), env: env(1, bare) }));
      await sleep(2500);
      const last = ticketId(records - 1);
      const read = (s: RunningServer) => fetch(`${s.url}/repository/get/ticket/${last}`, { headers, signal: AbortSignal.timeout(60_000) });
      const first = await read(servers[0]);
      if (first.status !== 200) throw new Error(`node 1 did not serve ${org}: ${first.status} ${await first.text()}\n${servers[0].output()}`);

      // The snapshot node 1 writes of the seeded tenant (no commits: by time, as it has none yet).
      const jsm = await jetstreamManager(nc);
      const names = new ClusterNames(PREFIX);
      const s0 = performance.now();
      let manifest: SnapshotManifest | undefined;
      while (!manifest) {
        try {
          manifest = decode<SnapshotManifest>((await jsm.streams.getMessage(names.snapshotStream, { last_by_subj: names.snapshotManifest(org) }))!.data);
        } catch {
          if (performance.now() - s0 > 600_000) throw new Error(`no snapshot of ${org} in 10 minutes\n${servers[0].output()}`);
          await sleep(200);
        }
      }
      const snapMs = performance.now() - s0;
      console.log(`  snapshot: ${fmt(manifest.entries)} keys in ${fmt(manifest.chunks)} chunks, ${fmt(manifest.bytes / 1048576, 1)} MiB, ready ${fmt(snapMs / 1000, 1)} s after node 1 served`);

      // A busy tenant's tail: door scans answered by node 1 past its snapshot (none by default).
      let tail = { scans: 0, admitted: 0, messages: 0, seconds: 0 };
      if (tailScans > 0) {
        const bodies = scanBodies(0, records - 1, tailScans);
        let k = 0;
        const a0 = performance.now();
        const r = await autocannon({
          url: servers[0].url,
          connections: 50,
          amount: tailScans,
          timeout: 10,
          requests: [{ method: 'POST', path: '/events/checkin', setupRequest: (req: Record<string, unknown>) => ({ ...req, headers: { ...headers, 'content-type': 'application/json' }, body: bodies[k++ % bodies.length] }) }],
        } as autocannon.Options);
        tail = { scans: r.requests.total, admitted: r['2xx'], messages: 0, seconds: (performance.now() - a0) / 1000 };
      }

      const cpu1 = servers[1].cpuSeconds();
      const k0 = performance.now();
      process.kill(servers[0].pid, 'SIGKILL');
      if (tailScans > 0) {
        const info = await jsm.streams.info(names.stream, { subjects_filter: names.tenantSubject(org) });
        tail.messages = Object.values(info.state.subjects ?? {}).reduce((a, b) => a + b, 0);
        const later = decode<SnapshotManifest>((await jsm.streams.getMessage(names.snapshotStream, { last_by_subj: names.snapshotManifest(org) }))!.data);
        if (later.id !== manifest.id) throw new Error(`node 1 wrote another snapshot during the tail: raise TAKEOVER_RECORDS or lower TAKEOVER_TAIL_SCANS`);
        console.log(`  tail: ${fmt(tail.scans)} door scans (${fmt(tail.admitted)} answered 2xx) to node 1 in ${fmt(tail.seconds, 1)} s past its snapshot, ${fmt(tail.messages)} stream messages of ${org} at the kill`);
      }
      let served = 0;
      let tries = 0;
      for (;;) {
        tries++;
        const r = await read(servers[1]).catch(() => undefined);
        if (r?.status === 200) {
          const body = (await r.json()) as { sk?: string };
          if (body.sk !== last) throw new Error(`node 2 answered another record: ${JSON.stringify(body).slice(0, 200)}`);
          served = performance.now() - k0;
          break;
        }
        await r?.text();
        if (servers[1].exited() !== undefined) throw new Error(`node 2 exited (${servers[1].exited()}) while taking ${org} over\n${servers[1].output()}`);
        if (performance.now() - k0 > 600_000) throw new Error(`node 2 did not serve ${org} within 10 minutes\n${servers[1].output()}`);
        await sleep(100);
      }
      const loadCpu = servers[1].cpuSeconds() - cpu1;
      const aimMs = ttl + 10_000;
      const row = {
        records,
        snapshotKeys: manifest.entries,
        snapshotBytes: manifest.bytes,
        snapshotReadyMs: Math.round(snapMs),
        leaseTtlMs: ttl,
        servedAfterKillMs: Math.round(served),
        aimMs,
        met: served <= aimMs,
        node2CpuSeconds: Math.round(loadCpu * 10) / 10,
        // What a takeover of a large tenant spends per key it loads (issue 35: the figure that bounds it).
        node2CpuMicrosPerKey: Math.round((loadCpu * 1e6) / Math.max(1, manifest.entries) * 100) / 100,
        keysLoadedPerSecondAfterTtl: served > ttl ? Math.round(manifest.entries / ((served - ttl) / 1000)) : null,
        tries,
        tail,
        eventId: EVENT_ID,
      };
      console.log(`  kill -9 of node 1 → node 2 serves ${org}'s last ticket after ${fmt(served / 1000, 1)} s (aim ${fmt(aimMs / 1000, 1)} s: lease TTL ${fmt(ttl / 1000, 1)} s + 10 s) ${row.met ? 'MET' : 'MISSED'}; node 2 used ${fmt(loadCpu, 1)} CPU s (${fmt(row.node2CpuMicrosPerKey, 2)} µs a key)`);

      // What bounds it: the same snapshot fetched alone, imported alone, and put into LMDB raw.
      await servers[1].stop();
      // Node 2 may have written a snapshot of its own meanwhile (replacing node 1's): the latest one.
      const now = decode<SnapshotManifest>((await jsm.streams.getMessage(names.snapshotStream, { last_by_subj: names.snapshotManifest(org) }))!.data);
      const floor = await takeoverFloor(nc, names, org, now);
      const part = (label: string, p: { wallSeconds: number; cpuSeconds: number; cpuMicrosPerKey: number }) => `${label} ${fmt(p.wallSeconds, 1)} s wall, ${fmt(p.cpuSeconds, 1)} CPU s (${fmt(p.cpuMicrosPerKey, 2)} µs a key)`;
      const parts = [part('fetch from JetStream', floor.fetch), part(floor.floor ? 'store import' : 'the environment file written and opened', floor.import)];
      if (floor.floor) parts.push(part('LMDB raw puts (the floor)', floor.floor));
      if (floor.append) parts.push(part('raw puts appended (an environment of its own)', floor.append));
      console.log(`  the same ${fmt(floor.keys)} keys, each part alone in this process: ${parts.join('; ')}; the aim leaves ${fmt((aimMs - ttl) / 1000, 1)} s after the lease TTL`);
      const file = writeResult(NAME, { description: DESCRIPTION, ...row, floor });
      console.log(`  wrote ${file}`);
      return row;
    } finally {
      await nc.close().catch(() => undefined);
      for (const s of servers) await s.stop().catch(() => undefined);
      await nats.stop();
      rmSync(full, { recursive: true, force: true });
      rmSync(bare, { recursive: true, force: true });
    }
  },
};
