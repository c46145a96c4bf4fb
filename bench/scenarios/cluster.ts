// Cluster mode (issue 12): door scanning with tenants spread over nodes. Four organisations, each
// with an event of SCAN_TICKETS tickets (default 60,000, so no side on a fast machine runs out of
// tickets that have not entered: see Load.pastMix), scanned with the scan bench's mix (8 in
// 10 first entries, 1 repeat, 1 invalid code), the requests of every tenant interleaved. Sides:
//
//   single          one node, no NATS: today's single-node service
//   cluster x1      one node in cluster mode: every write also appended to JetStream first
//   cluster x2      two nodes, two tenants each; every tenant's requests go to its owner (what a
//                   load balancer routing on the orgid header would do)
//   cluster x2 any  two nodes; requests go to either node, so half of them are forwarded
//
// Every side gets fresh servers on copies of one seeded store and a fresh nats-server (JetStream,
// file storage, one replica). A cluster side warms up until every tenant has its first snapshot,
// as in a running cluster: the first copies the whole seeded tenant, once. The scaling factor is cluster x2 over cluster x1; everything runs on
// this one machine (servers, nats-server and autocannon share its cores), so it is a floor, not a
// prediction for separate machines.
//
// Knobs (env): BENCH_SECONDS measured seconds per side (5), BENCH_ROUNDS (1), BENCH_WARMUP (2),
// BENCH_CONNECTIONS (50, split over the target nodes), SCAN_TICKETS per tenant (60000), BENCH_SIDES
// (a comma list of side keys to run: single, cluster1, cluster2, cluster2any; all by default),
// BENCH_BASE_DIST (another build's dist directory: each side runs a second time on that build, as
// `<side>@base`, in the same run, so a change is measured against its baseline under one load; with
// BENCH_ROUNDS=2 the order alternates), BENCH_BASE_LAYOUT (`single`: the base build's cluster nodes
// start on the single node's layout, as builds before each tenant had an environment of its own
// expect; `cluster` by default).
import { spawn, type ChildProcess } from 'node:child_process';
import { accessSync, constants, mkdtempSync, rmSync } from 'node:fs';
import { connect as tcpConnect } from 'node:net';
import { cpus, loadavg, tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { TokenService } from '../../core/auth/tokens.js';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ClusterNames } from '../../core/cluster/names.js';
import { rendezvous } from '../../core/cluster/placement.js';
import { EVENT_ID, JWT_SECRET, scanBodies, seedScanStore } from '../fixtures/scan-dataset.js';
import { cpuOf, freePort, startServer, writeResult, type RunningServer } from '../harness.js';
import { envInt, type Scenario } from '../scenario.js';

const NAME = 'cluster';
const DESCRIPTION = 'POST /events/checkin over 4 tenants: one node vs two nodes in cluster mode (NATS JetStream), tenants spread by rendezvous hashing';
const PATH = '/events/checkin';
const NODE_IDS = ['bench-1', 'bench-2'];
/** The servers' CLUSTER_PREFIX (config/default.json). */
const CLUSTER_PREFIX = 'bp';

const script = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const fmt = (n: number, digits = 0) =>
  Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-';

/** Four organisation ids, two placed on each node by rendezvous hashing over both nodes. */
function tenants(): string[] {
  const byNode: Record<string, string[]> = { [NODE_IDS[0]]: [], [NODE_IDS[1]]: [] };
  for (let i = 0; byNode[NODE_IDS[0]].length < 2 || byNode[NODE_IDS[1]].length < 2; i++) {
    const org = `bench-org-${i}`;
    const node = rendezvous(org, NODE_IDS)!;
    if (byNode[node].length < 2) byNode[node].push(org);
  }
  return [...byNode[NODE_IDS[0]], ...byNode[NODE_IDS[1]]];
}

function findNatsServer(): string {
  for (const dir of [...(process.env.PATH ?? '').split(delimiter), '/usr/sbin', '/usr/bin', '/usr/local/bin']) {
    const p = join(dir, 'nats-server');
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // not here
    }
  }
  throw new Error('nats-server not found: apt-get install -y nats-server');
}

interface Nats {
  url: string;
  pid: number;
  /** Messages nats-server has received and sent so far (its monitoring endpoint's /varz). */
  messages(): Promise<number>;
  stop(): Promise<void>;
}

export async function startNats(): Promise<Nats> {
  const port = await freePort();
  const monitor = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'bench-nats-'));
  const child: ChildProcess = spawn(findNatsServer(), ['-js', '-sd', dir, '-a', '127.0.0.1', '-p', String(port), '-m', String(monitor)], { stdio: 'ignore' });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const up = await new Promise<boolean>((resolve) => {
      const s = tcpConnect({ host: '127.0.0.1', port });
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`nats-server did not start on ${port}`);
    await sleep(25);
  }
  return {
    url: `nats://127.0.0.1:${port}`,
    pid: child.pid!,
    async messages() {
      try {
        const v = (await (await fetch(`http://127.0.0.1:${monitor}/varz`, { signal: AbortSignal.timeout(5000) })).json()) as { in_msgs: number; out_msgs: number };
        return v.in_msgs + v.out_msgs;
      } catch {
        return NaN;
      }
    },
    async stop() {
      if (child.exitCode === null) {
        const gone = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

interface Target {
  url: string;
  tenants: string[];
  connections: number;
}

interface Load {
  requestsPerSec: number;
  total: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /**
   * Requests sent after a tenant's bodies ran out and started over: by then every ticket of the
   * measured mix has entered, so they are all cheap refusals and the side's CPU per scan no longer
   * measures the mix (a faster side ran out first). Reported; SCAN_TICKETS raises the supply.
   */
  pastMix: number;
}

/** Whether every tenant has a snapshot in the cluster's snapshot stream. */
async function snapshotted(natsUrl: string, orgs: string[]): Promise<boolean> {
  const nc = await connect({ servers: natsUrl });
  try {
    const jsm = await jetstreamManager(nc);
    const names = new ClusterNames(CLUSTER_PREFIX);
    for (const org of orgs) {
      const m = await jsm.streams.getMessage(names.snapshotStream, { last_by_subj: names.snapshotManifest(org) }).catch(() => undefined);
      if (!m) return false;
    }
    return true;
  } finally {
    await nc.close();
  }
}

/** One autocannon per target node, all at once; each rotates over its tenants. */
async function load(targets: Target[], headers: Record<string, Record<string, string>>, bodies: string[], seconds: number, next: Record<string, number> = {}): Promise<Load> {
  // Shared by every target (and by the calls given the same `next`): a tenant sent to both nodes
  // still walks through its bodies once.
  const runs = targets.map((tg) => {
    let k = 0;
    const inst = autocannon({
      url: tg.url,
      connections: tg.connections,
      duration: seconds,
      timeout: 10,
      requests: [
        {
          method: 'POST',
          path: PATH,
          setupRequest: (req: Record<string, unknown>) => {
            const org = tg.tenants[k++ % tg.tenants.length];
            const i = (next[org] = (next[org] ?? -1) + 1);
            req.headers = { ...headers[org] }; // autocannon writes content-length into it
            req.body = bodies[i % bodies.length];
            return req;
          },
        },
      ],
    } as autocannon.Options);
    const guard = setTimeout(() => inst.stop(), (seconds + 30) * 1000);
    return inst.then((r) => {
      clearTimeout(guard);
      return r;
    });
  });
  const rs = await Promise.all(runs);
  return {
    requestsPerSec: rs.reduce((a, r) => a + r.requests.average, 0),
    total: rs.reduce((a, r) => a + r.requests.total, 0),
    p50: Math.max(...rs.map((r) => r.latency.p50)),
    p99: Math.max(...rs.map((r) => r.latency.p99)),
    non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
    errors: rs.reduce((a, r) => a + r.errors + r.timeouts, 0),
    pastMix: Object.values(next).reduce((a, i) => a + Math.max(0, i + 1 - bodies.length), 0),
  };
}

async function successful(url: string, orgs: string[], headers: Record<string, Record<string, string>>): Promise<number> {
  let n = 0;
  for (const org of orgs) {
    const res = await fetch(`${url}/events/${EVENT_ID}/checkin-stats`, { headers: headers[org], signal: AbortSignal.timeout(60_000) });
    const body = (await res.json()) as { successful?: number };
    if (res.status !== 200) throw new Error(`stats of ${org}: ${res.status} ${JSON.stringify(body)}`);
    n += body.successful ?? 0;
  }
  return n;
}

/** A side: single, cluster1, cluster2, cluster2any, or one of them on the base build (`@base`). */
type SideKey = string;

interface SideDef {
  key: SideKey;
  label: string;
  nodes: number;
  nats: boolean;
  route: 'owner' | 'any';
  /** The server to start (another build's, for a baseline side). */
  script?: string;
  /** The seeded layout it starts on: a single node's, or a cluster node's (the default when `nats`). */
  layout?: keyof Templates;
}

interface Run extends Load {
  scansAdmitted: number;
  cpuMicrosPerRequest: number;
  /** nats-server's share of cpuMicrosPerRequest. */
  natsMicrosPerRequest: number;
  /** Messages nats-server received and sent per scan (folding shows here, free of the machine's noise). */
  natsMessagesPerRequest: number;
  serverCores: number;
}

/** The seeded stores the sides start on: a single node's layout, and a cluster node's (a store per tenant). */
interface Templates {
  single: string;
  cluster: string;
}

async function measure(side: SideDef, orgs: string[], templates: Templates, headers: Record<string, Record<string, string>>, warm: string[], measured: string[], o: { seconds: number; warmup: number; connections: number }): Promise<Run> {
  const nats = side.nats ? await startNats() : undefined;
  const servers: RunningServer[] = [];
  try {
    for (let i = 0; i < side.nodes; i++) {
      const env: Record<string, string> = { SCAN_TEMPLATE_DIR: templates[side.layout ?? (side.nats ? 'cluster' : 'single')], JWT_SECRET };
      if (nats) Object.assign(env, { NATS_URL: nats.url, NODE_ID: NODE_IDS[i] });
      servers.push(await startServer({ script: side.script ?? script('../fixtures/scan-server.js'), env }));
    }
    // Both nodes hear each other's heartbeats before any tenant is placed.
    if (side.nodes > 1) await sleep(2500);
    // First request of each tenant to its rendezvous node: that node claims it.
    const ownerOf = (org: string) => (side.nodes > 1 ? NODE_IDS.indexOf(rendezvous(org, NODE_IDS)!) : 0);
    for (const org of orgs) {
      const to = servers[ownerOf(org)];
      const res = await fetch(to.url + PATH, {
        method: 'POST',
        headers: headers[org],
        body: JSON.stringify({ code: 'NOPE-0000', zone: 'main', eventId: EVENT_ID }),
        signal: AbortSignal.timeout(60_000),
      }).catch((err: unknown) => {
        throw new Error(`${side.label}: probe of ${org} failed (${String((err as Error).cause ?? err)}):\n${to.output()}`);
      });
      const text = await res.text();
      if (text !== '{"success":false,"reason":"invalid_code"}') throw new Error(`${side.label}: probe of ${org} answered ${res.status} ${text}`);
    }
    const targets: Target[] =
      side.nodes === 1
        ? [{ url: servers[0].url, tenants: orgs, connections: o.connections }]
        : servers.map((s, i) => ({
            url: s.url,
            tenants: side.route === 'owner' ? orgs.filter((org) => ownerOf(org) === i) : orgs,
            connections: Math.round(o.connections / servers.length),
          }));
    // A running cluster holds a snapshot of every tenant: the first one of a tenant seeded outside
    // the stream copies all of it at once, a cost a steady state does not pay per scan. Warm-up
    // goes on until every tenant has one (a count-due snapshot, CLUSTER_SNAPSHOT_EVERY_COMMITS).
    const walked: Record<string, number> = {};
    if (nats) {
      const deadline = performance.now() + 120_000;
      while (!(await snapshotted(nats.url, orgs))) {
        if (performance.now() > deadline) throw new Error(`${side.label}: no snapshot of every tenant after 120 s of warm-up`);
        await load(targets, headers, warm, 2, walked);
      }
    }
    if (o.warmup > 0) await load(targets, headers, warm, o.warmup, walked);
    const before = await successful(servers[0].url, orgs, headers);
    // Servers and nats-server: the whole cluster's CPU per scan.
    const cpu = () => servers.reduce((a, s) => a + s.cpuSeconds(), 0) + (nats ? cpuOf(nats.pid) : 0);
    const natsCpu = () => (nats ? cpuOf(nats.pid) : 0);
    const msgs0 = nats ? await nats.messages() : 0;
    const cpu0 = cpu();
    const nats0 = natsCpu();
    const t0 = performance.now();
    const r = await load(targets, headers, measured, o.seconds);
    const secs = (performance.now() - t0) / 1000;
    const used = cpu() - cpu0;
    const natsUsed = natsCpu() - nats0;
    const msgs = nats ? (await nats.messages()) - msgs0 : NaN;
    const after = await successful(servers[0].url, orgs, headers);
    return { ...r, scansAdmitted: after - before, cpuMicrosPerRequest: r.total > 0 ? (used * 1e6) / r.total : NaN, natsMicrosPerRequest: r.total > 0 ? (natsUsed * 1e6) / r.total : NaN, natsMessagesPerRequest: r.total > 0 ? msgs / r.total : NaN, serverCores: used / secs };
  } finally {
    for (const s of servers) await s.stop();
    await nats?.stop();
  }
}

export const cluster: Scenario = {
  name: NAME,
  description: DESCRIPTION,
  async run() {
    const seconds = envInt('BENCH_SECONDS', 5);
    const rounds = envInt('BENCH_ROUNDS', 1);
    const warmup = envInt('BENCH_WARMUP', 2);
    const connections = envInt('BENCH_CONNECTIONS', 50);
    const tickets = envInt('SCAN_TICKETS', 60_000);
    const orgs = tenants();
    const templates: Templates = { single: mkdtempSync(join(tmpdir(), 'bench-cluster-')), cluster: mkdtempSync(join(tmpdir(), 'bench-cluster-envs-')) };
    try {
      const t0 = performance.now();
      await seedScanStore(templates.single, tickets, { orgs });
      await seedScanStore(templates.cluster, tickets, { orgs, cluster: true });
      console.log(`  seeded ${orgs.length} tenants × ${fmt(tickets)} tickets in ${fmt((performance.now() - t0) / 1000, 1)} s: ${orgs.join(', ')}`);
      const tokens = new TokenService(JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 3600, cacheSize: 0 });
      const headers: Record<string, Record<string, string>> = {};
      for (const org of orgs) {
        const tok = tokens.signAccess({ sub: 'bench-staff', org, roles: ['User'], kind: 'staff', email: 'door@bench.example' });
        headers[org] = { 'content-type': 'application/json', orgid: org, authorization: `Bearer ${tok}` };
      }
      // 70% of the tickets for the measured mix, 30% for warm-up (which runs until every tenant's
      // first snapshot, due after CLUSTER_SNAPSHOT_EVERY_COMMITS commits of it).
      const split = Math.floor(tickets * 0.7);
      const measured = scanBodies(0, split, Math.ceil(split / 0.8));
      const warm = scanBodies(split, tickets, Math.max(1000, Math.ceil((tickets - split) / 0.8)));
      const sides: SideDef[] = [
        { key: 'single', label: 'single node (no NATS)', nodes: 1, nats: false, route: 'owner' },
        { key: 'cluster1', label: 'cluster, 1 node', nodes: 1, nats: true, route: 'owner' },
        { key: 'cluster2', label: 'cluster, 2 nodes, to the owner', nodes: 2, nats: true, route: 'owner' },
        { key: 'cluster2any', label: 'cluster, 2 nodes, to any node', nodes: 2, nats: true, route: 'any' },
      ];
      const only = (process.env.BENCH_SIDES ?? '').split(',').map((x) => x.trim()).filter(Boolean);
      if (only.length > 0) sides.splice(0, sides.length, ...sides.filter((s) => only.includes(s.key)));
      if (sides.length === 0) throw new Error(`BENCH_SIDES names no side (single, cluster1, cluster2, cluster2any)`);
      const base = process.env.BENCH_BASE_DIST;
      if (base) {
        const baseScript = join(base, 'bench/fixtures/scan-server.js');
        accessSync(baseScript, constants.R_OK);
        // Each side next to its baseline: the two see the same load.
        const layout = process.env.BENCH_BASE_LAYOUT === 'single' ? ('single' as const) : undefined;
        sides.splice(0, sides.length, ...sides.flatMap((s) => [s, { ...s, key: `${s.key}@base`, label: `${s.label} [base]`, script: baseScript, layout }]));
      }
      const runs = new Map<SideKey, Run[]>(sides.map((s) => [s.key, []]));
      const perRun = Math.max(1, Math.round(seconds / rounds));
      const loadBefore = loadavg()[0];
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
          console.log(`  round ${round + 1}: ${side.label} (${warmup} s warm-up, ${perRun} s measured)`);
          const run = await measure(side, orgs, templates, headers, warm, measured, { seconds: perRun, warmup, connections });
          if (run.pastMix > 0) console.log(`  WARNING: ${side.label} ran out of tickets that had not entered: ${fmt(run.pastMix)} of its ${fmt(run.total)} scans were refusals past the mix, so its CPU per scan is too low; raise SCAN_TICKETS`);
          runs.get(side.key)!.push(run);
        }
      }
      const summary = Object.fromEntries(
        sides.map((s) => {
          const rs = runs.get(s.key)!;
          return [
            s.key,
            {
              label: s.label,
              requestsPerSec: mean(rs.map((r) => r.requestsPerSec)),
              admittedPerSec: mean(rs.map((r) => r.scansAdmitted)) / perRun,
              latencyP50: mean(rs.map((r) => r.p50)),
              latencyP99: mean(rs.map((r) => r.p99)),
              cpuMicrosPerRequest: mean(rs.map((r) => r.cpuMicrosPerRequest)),
              natsMicrosPerRequest: mean(rs.map((r) => r.natsMicrosPerRequest)),
              natsMessagesPerRequest: mean(rs.map((r) => r.natsMessagesPerRequest)),
              serverCores: mean(rs.map((r) => r.serverCores)),
              non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
              errors: rs.reduce((a, r) => a + r.errors, 0),
              runs: rs,
            },
          ];
        }),
      ) as Record<SideKey, { label: string; requestsPerSec: number; admittedPerSec: number; latencyP50: number; latencyP99: number; cpuMicrosPerRequest: number; natsMicrosPerRequest: number; natsMessagesPerRequest: number; serverCores: number; non2xx: number; errors: number; runs: Run[] }>;

      const rows = [['side', 'scans/s', 'admitted/s', 'cpu µs/scan', 'of it nats', 'nats msgs/scan', 'cores', 'p50 ms', 'p99 ms', 'non2xx', 'errors']];
      for (const s of sides) {
        const x = summary[s.key];
        rows.push([x.label, fmt(x.requestsPerSec), fmt(x.admittedPerSec), fmt(x.cpuMicrosPerRequest, 1), fmt(x.natsMicrosPerRequest, 1), fmt(x.natsMessagesPerRequest, 2), fmt(x.serverCores, 2), fmt(x.latencyP50, 2), fmt(x.latencyP99, 2), fmt(x.non2xx), fmt(x.errors)]);
      }
      const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
      console.log('\n' + rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n'));
      // Sides left out (BENCH_SIDES) read as NaN, printed '-'.
      const rps = (k: SideKey) => summary[k]?.requestsPerSec ?? NaN;
      const cpuOf = (k: SideKey) => summary[k]?.cpuMicrosPerRequest ?? NaN;
      const scaling = {
        twoNodesOverOne: rps('cluster2') / rps('cluster1'),
        twoNodesAnyOverOne: rps('cluster2any') / rps('cluster1'),
        twoNodesOverSingle: rps('cluster2') / rps('single'),
        clusterOneOverSingle: rps('cluster1') / rps('single'),
      };
      // The aims are CPU per scan ratios within one run.
      const cpuRatios = {
        clusterOneOverSingle: cpuOf('cluster1') / cpuOf('single'),
        twoNodesOverOne: cpuOf('cluster2') / cpuOf('cluster1'),
        twoNodesAnyOverOne: cpuOf('cluster2any') / cpuOf('cluster1'),
      };
      const baseRatios = base
        ? {
            clusterOneOverSingle: cpuOf('cluster1@base') / cpuOf('single@base'),
            twoNodesOverOne: cpuOf('cluster2@base') / cpuOf('cluster1@base'),
            twoNodesAnyOverOne: cpuOf('cluster2any@base') / cpuOf('cluster1@base'),
            clusterOneOverBase: cpuOf('cluster1') / cpuOf('cluster1@base'),
          }
        : undefined;
      console.log(
        `\nscaling: 2 nodes / 1 node (cluster mode) ${fmt(scaling.twoNodesOverOne, 2)}× routed to the owner, ${fmt(scaling.twoNodesAnyOverOne, 2)}× to any node; ` +
          `2 nodes / single node without NATS ${fmt(scaling.twoNodesOverSingle, 2)}×; cluster mode on 1 node costs ${fmt((1 - scaling.clusterOneOverSingle) * 100, 0)}% of single-node throughput. ` +
          `(all on this ${cpus().length}-core machine, load average ${fmt(loadBefore, 1)} before)`,
      );
      console.log(
        `cpu per scan: cluster 1 node / single ${fmt(cpuRatios.clusterOneOverSingle, 2)}×; 2 nodes / 1 cluster node ${fmt(cpuRatios.twoNodesOverOne, 2)}× to the owner, ${fmt(cpuRatios.twoNodesAnyOverOne, 2)}× to any node`,
      );
      if (baseRatios) {
        console.log(
          `base build: cluster 1 node / single ${fmt(baseRatios.clusterOneOverSingle, 2)}×; 2 nodes / 1 cluster node ${fmt(baseRatios.twoNodesOverOne, 2)}× to the owner, ${fmt(baseRatios.twoNodesAnyOverOne, 2)}× to any node; ` +
            `cluster 1 node, this build / base ${fmt(baseRatios.clusterOneOverBase, 2)}×`,
        );
      }
      const result = {
        description: DESCRIPTION,
        request: { method: 'POST', path: PATH, mix: '80% first entries, 10% repeats, 10% invalid codes', tenants: orgs, ticketsPerTenant: tickets },
        params: { connections, secondsPerSide: perRun * rounds, rounds, warmupSeconds: warmup },
        loadAverage: { before: loadBefore, after: loadavg()[0] },
        scaling,
        cpuRatios,
        ...(baseRatios ? { base, baseRatios } : {}),
        sides: summary,
      };
      console.log(`wrote ${writeResult(NAME, result)}`);
      return result;
    } finally {
      rmSync(templates.single, { recursive: true, force: true });
      rmSync(templates.cluster, { recursive: true, force: true });
    }
  },
};
