// Door scanning under load (issue 5): an event with 100,000 tickets; autocannon POSTs
// /events/checkin with a real staff JWT and a pool of distinct codes (in every 10 requests: 8 first
// entries, 1 repeat, 1 invalid code), against six servers in the same run:
//
//   raw uWS + memory      the ceiling: uWebSockets.js and the scan logic in memory, nothing else
//   service               the real node: edge, validation, auth, scanner actor, LMDB, output gate;
//                         a scan is answered once its log entry is flushed to disk (the default)
//   service (commit)      the same with STORE_DURABILITY=commit: answered once committed
//   service (device+list) the durable service where every scan names a check-in list of two ticket
//                         types and comes from an enrolled scanner device (`Authorization: Device`),
//                         both set up through the API on each fresh server (issue 31: within 5% of
//                         the plain scan)
//   Fastify + PostgreSQL  the durable peer a team would build: per scan pretix's check-in
//                         transaction (lock the ticket row, check, update, insert a check-in row),
//                         synchronous_commit on; skipped, saying why, without the Debian package
//   Fastify + memory      the same scan logic in memory on Fastify (no durability: generous)
//   Express + memory      the same on Express
//   service + webhook     the durable service with a webhook endpoint subscribed to
//                         `ticket.checked_in` (issue 34), delivered to a loopback receiver answering
//                         200 in its own process: scans/s and p99 against the plain service (aims
//                         ≥ 0.75×, ≤ 1.5×), and the time from the run's end until every check-in's
//                         event was received (aim ≤ 30 s)
//   scan-batch            offline uploads (issue 32): batches of 500 offline scans (unique nonces,
//                         mostly admissions, some conflicts and denials) to POST /events/checkin/batch
//                         on the durable service, one in flight; p50/p95 per batch and scans/s
//                         (aim p50 ≤ 100 ms; bench/scenarios/scan-batch-side.ts)
//
// Every side gets a fresh server per measured run (the service on a copy of one seeded store,
// PostgreSQL reset to the seeded tickets), so every run sees the same fresh tickets. Then the
// service's memory: RSS after start, after the scanner actor loaded the event, and after scanning,
// with 100,000 and 1,000,000 tickets. Aims (issue 19): service ≥ 0.6× raw, ≥ 1.0× Fastify in memory,
// ≥ 3× Fastify + PostgreSQL, p99 < 5 ms at 50 connections, the 1,000,000-ticket event within 10%
// of the 100,000 one.
//
// Knobs (env): BENCH_SECONDS measured seconds per side (10), BENCH_ROUNDS (2), BENCH_WARMUP (2),
// BENCH_CONNECTIONS (50), SCAN_TICKETS (100000), SCAN_BIG_TICKETS (1000000; 1 skips that step),
// SCAN_SIDES (comma-separated keys, e.g. "raw,service": measure only those sides; `scan-batch` for the
// offline uploads), SCAN_BATCHES measured batches per round (40), SCAN_BATCH_SIZE scans per batch (500).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';
import { startServer, writeResult, type RunningServer } from '../harness.js';
import { envInt, type Scenario } from '../scenario.js';
import { EVENT_ID, JWT_SECRET, ORG, scanBodies, seedScanStore, staffToken, TYPE_ID } from '../fixtures/scan-dataset.js';
import { TokenService } from '../../core/auth/tokens.js';
import { postgresBin, resetPostgres, seedPostgres, startPostgres, type Postgres } from '../fixtures/postgres.js';
import { freePort } from '../harness.js';
import { measureScanBatch, SCAN_BATCH_AIM_P50_MS, type ScanBatchRun } from './scan-batch-side.js';

const NAME = 'scan';
const DESCRIPTION = 'POST /events/checkin, 100,000-ticket event, 80% first entries / 10% repeats / 10% invalid: service vs raw uWS, Fastify + PostgreSQL, Fastify, Express';
const PATH = '/events/checkin';
const AIMS = { minRawRatio: 0.6, minFastifyRatio: 1.0, minPostgresRatio: 3, maxP99Ms: 5, minBigEventRatio: 0.9, minDeviceListRatio: 0.95, minWebhookRatio: 0.75, maxWebhookP99Ratio: 1.5, maxWebhookDrainMs: 30_000 };

const script = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const MiB = (b: number) => Math.round((b / 2 ** 20) * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface SideDef {
  key: 'raw' | 'service' | 'serviceCommit' | 'serviceDevice' | 'serviceWebhook' | 'postgres' | 'fastify' | 'express';
  label: string;
  /** An acknowledged scan survives kill -9 (and, flushed, power loss). */
  durable: boolean;
  /** Before each measured run (PostgreSQL: back to the seeded tickets). */
  before?(): Promise<void>;
  /** CPU seconds of processes serving the side besides the server (PostgreSQL's backends). */
  extraCpu?(): number;
  script: string;
  env: Record<string, string>;
  /**
   * Set-up through the API once the server is up, before the probe: the headers the scans are
   * sent with and how each scan body is changed (stats are still read with the staff headers).
   */
  prepare?(server: RunningServer, headers: Record<string, string>): Promise<{ headers: Record<string, string>; body(b: string): string }>;
  /**
   * After the load: waits until every event the run caused was delivered; answers how long that
   * took after the load ended (ms) and the server CPU seconds spent meanwhile.
   */
  drained?(server: RunningServer, headers: Record<string, string>): Promise<{ ms: number; cpuSeconds: number }>;
  /** After the side's server stopped (its helper processes stop). */
  finish?(): Promise<void>;
  /** Counts of answered scans, to check the mix each run really had. */
  stats(server: RunningServer, headers: Record<string, string>): Promise<{ successful: number; denied: number }>;
}

interface Run {
  requestsPerSec: number;
  latencyP50: number;
  latencyP99: number;
  latencyMean: number;
  totalRequests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  cpuMicrosPerRequest: number;
  successful: number;
  denied: number;
  rssBytes: number;
  /** Webhook side: ms from the load's end until every event was delivered, and the CPU meanwhile. */
  drainMs?: number;
  drainCpuSeconds?: number;
}

async function sendJson(method: string, url: string, headers: Record<string, string>, body: unknown, status: number): Promise<any> {
  const send = () => fetch(url, { method, headers, body: JSON.stringify(body), signal: AbortSignal.timeout(30_000) });
  // Sent once more when the connection failed before any answer: seen once right after a server
  // started, on the keep-alive socket the readiness check left (a set-up step, never measured).
  const res = await send().catch(() => sleep(200).then(send)).catch((err: Error) => {
    throw new Error(`${method} ${url}: ${err.message} (${String((err.cause as Error | undefined)?.message ?? err.cause)})`);
  });
  const text = await res.text();
  if (res.status !== status) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/**
 * The device side's set-up on a fresh server: a second ticket type, a check-in list of both types,
 * and a scanner device enrolled at that list and initialized. Every scan then names the list (and
 * the device stamps it too) and authenticates with the device token.
 */
async function deviceAtList(server: RunningServer, staff: Record<string, string>) {
  const admin = { ...staff, authorization: `Bearer ${adminToken()}` };
  const ev = await sendJson('PUT', `${server.url}/events/${EVENT_ID}`, admin, { ticketTypes: [{ title: 'VIP', price: 90 }] }, 200);
  const vip = ev.ticketTypes.find((tt: any) => tt.data.title === 'VIP').sk as string;
  const list = await sendJson('POST', `${server.url}/events/${EVENT_ID}/checkin-lists`, admin, { name: 'Bench door', ticketTypeIds: [TYPE_ID, vip] }, 201);
  const { initToken } = await sendJson('POST', `${server.url}/events/devices`, admin, { name: 'Bench gate', listId: list.sk, checkpoint: 'gate-1' }, 201);
  const { token } = await sendJson('POST', `${server.url}/events/devices/initialize`, { 'content-type': 'application/json', orgid: ORG }, { initToken, hardwareId: 'bench' }, 200);
  const tail = `,"listId":"${list.sk}"}`;
  return { headers: { 'content-type': 'application/json', orgid: ORG, authorization: `Device ${token}` }, body: (b: string) => b.slice(0, -1) + tail };
}

function adminToken(): string {
  const tokens = new TokenService(JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 900, cacheSize: 0 });
  return tokens.signAccess({ sub: 'bench-admin', org: ORG, roles: ['User', 'Admin'], kind: 'staff', email: 'admin@bench.example' });
}

async function getJson(url: string, headers: Record<string, string> = {}): Promise<any> {
  const res = await fetch(url, { headers, signal: AbortSignal.timeout(120_000) });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${text}`);
  return JSON.parse(text);
}

/** autocannon with a different body per request, taken in order from `bodies`. */
async function load(url: string, headers: Record<string, string>, bodies: string[], seconds: number, connections: number) {
  if (new URL(url).hostname !== '127.0.0.1') throw new Error('the bench targets 127.0.0.1 only');
  let next = 0;
  const instance = autocannon({
    url,
    method: 'POST',
    headers,
    connections,
    duration: seconds,
    timeout: 10,
    requests: [
      {
        method: 'POST',
        path: PATH,
        headers,
        setupRequest: (req: Record<string, unknown>) => {
          req.body = bodies[next++ % bodies.length];
          return req;
        },
      },
    ],
  } as autocannon.Options);
  const guard = setTimeout(() => instance.stop(), (seconds + 30) * 1000);
  try {
    return await instance;
  } finally {
    clearTimeout(guard);
  }
}

/** Every side must answer a bench request the same way, or the ratios compare different work. */
async function probe(server: RunningServer, headers: Record<string, string>): Promise<string> {
  const res = await fetch(server.url + PATH, {
    method: 'POST',
    headers,
    body: JSON.stringify({ code: 'NOPE-0000', zone: 'main', eventId: EVENT_ID }),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (res.status !== 200) throw new Error(`probe of ${server.url}: ${res.status} ${text}`);
  return text;
}

async function measureSide(side: SideDef, headers: Record<string, string>, warm: string[], measured: string[], o: { warmup: number; seconds: number; connections: number }): Promise<Run> {
  await side.before?.();
  const server = await startServer({ script: side.script, env: side.env });
  try {
    if (/fallback/i.test(server.output())) throw new Error(`${side.label} runs uWS's JS fallback:\n${server.output()}`);
    let scanHeaders = headers;
    if (side.prepare) {
      const p = await side.prepare(server, headers);
      scanHeaders = p.headers;
      warm = warm.map(p.body);
      measured = measured.map(p.body);
    }
    const answer = await probe(server, scanHeaders);
    if (answer !== '{"success":false,"reason":"invalid_code"}') throw new Error(`${side.label} answered the probe with ${answer}`);
    if (o.warmup > 0) await load(server.url + PATH, scanHeaders, warm, o.warmup, o.connections);
    const before = await side.stats(server, headers);
    const cpuNow = () => server.cpuSeconds() + (side.extraCpu?.() ?? 0);
    const cpu0 = cpuNow();
    const r = await load(server.url + PATH, scanHeaders, measured, o.seconds, o.connections);
    const cpu = cpuNow() - cpu0;
    const drain = await side.drained?.(server, headers);
    const after = await side.stats(server, headers);
    return {
      ...(drain ? { drainMs: drain.ms, drainCpuSeconds: drain.cpuSeconds } : {}),
      requestsPerSec: r.requests.average,
      latencyP50: r.latency.p50,
      latencyP99: r.latency.p99,
      latencyMean: r.latency.average,
      totalRequests: r.requests.total,
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      cpuMicrosPerRequest: r.requests.total > 0 ? (cpu * 1e6) / r.requests.total : NaN,
      successful: after.successful - before.successful,
      denied: after.denied - before.denied,
      rssBytes: server.rssBytes(),
    };
  } finally {
    await server.stop();
    await side.finish?.();
  }
}

/**
 * The webhook side's hooks (issue 34): on each fresh server a receiver process and an endpoint
 * subscribed to `ticket.checked_in`; after the load, the wait until it received every check-in.
 */
function webhookSide(): Pick<SideDef, 'prepare' | 'drained' | 'finish'> {
  let receiver: RunningServer | undefined;
  return {
    async prepare(server, headers) {
      receiver = await startServer({ script: script('../fixtures/webhook-receiver.js'), env: {}, readyPath: '/healthz' });
      const admin = { ...headers, authorization: `Bearer ${adminToken()}` };
      await sendJson('POST', `${server.url}/webhooks/endpoints`, admin, { url: `${receiver.url}/hook`, events: ['ticket.checked_in'] }, 201);
      return { headers, body: (b) => b };
    },
    async drained(server, headers) {
      const ended = performance.now();
      const cpu0 = server.cpuSeconds();
      const want = (await getJson(`${server.url}/events/${EVENT_ID}/checkin-stats`, headers)).successful as number;
      const deadline = ended + 120_000;
      for (;;) {
        const got = (await getJson(`${receiver!.url}/count`)).events as number;
        if (got >= want) break;
        if (performance.now() > deadline) return { ms: NaN, cpuSeconds: server.cpuSeconds() - cpu0 };
        await sleep(20);
      }
      return { ms: performance.now() - ended, cpuSeconds: server.cpuSeconds() - cpu0 };
    },
    async finish() {
      await receiver?.stop();
      receiver = undefined;
    },
  };
}

/** RSS of the service with `n` tickets: after start, after its scanner loaded the event, after scanning. */
async function memoryOf(n: number, template: string, headers: Record<string, string>, connections: number) {
  const server = await startServer({ script: script('../fixtures/scan-server.js'), env: { SCAN_TEMPLATE_DIR: template, JWT_SECRET } });
  try {
    await sleep(500);
    const started = server.rssBytes();
    const t0 = performance.now();
    await getJson(`${server.url}/events/${EVENT_ID}/occupancy`, headers);
    const activationMs = performance.now() - t0;
    const loaded = server.rssBytes();
    // A cold run (JIT, first touch of the data file's pages), then a measured one on other tickets.
    const bodies = scanBodies(0, n, 120_000);
    await load(server.url + PATH, headers, bodies.slice(0, 60_000), 3, connections);
    const r = await load(server.url + PATH, headers, bodies.slice(60_000), 3, connections);
    const scanned = server.rssBytes();
    return { tickets: n, activationMs: Math.round(activationMs), rssAfterStart: started, rssAfterLoad: loaded, rssAfterScans: scanned, scansPerSec: r.requests.average, scanP99: r.latency.p99 };
  } finally {
    await server.stop();
  }
}

/** RSS of an in-memory baseline holding `n` tickets, for comparison. */
async function baselineMemory(n: number, scriptPath: string): Promise<number> {
  const server = await startServer({ script: scriptPath, env: { SCAN_TICKETS: String(n) } });
  try {
    await sleep(500);
    return server.rssBytes();
  } finally {
    await server.stop();
  }
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-';
}

export const scan: Scenario = {
  name: NAME,
  description: DESCRIPTION,
  async run() {
    const seconds = envInt('BENCH_SECONDS', 10);
    const connections = envInt('BENCH_CONNECTIONS', 50);
    const rounds = envInt('BENCH_ROUNDS', 2);
    const warmup = envInt('BENCH_WARMUP', 2);
    const tickets = envInt('SCAN_TICKETS', 100_000);
    const big = envInt('SCAN_BIG_TICKETS', 1_000_000);
    const perRun = Math.max(1, Math.round(seconds / rounds));
    const templates: string[] = [];
    let postgres: Postgres | undefined;
    try {
      const template = mkdtempSync(join(tmpdir(), 'bench-scan-'));
      templates.push(template);
      let t0 = performance.now();
      await seedScanStore(template, tickets);
      const seedMs = performance.now() - t0;
      console.log(`  seeded ${fmt(tickets)} tickets in ${fmt(seedMs / 1000, 1)} s`);

      // Signed afresh for each server: the service accepts tokens of at most 900 s, and a full run is longer.
      const authHeaders = () => ({ 'content-type': 'application/json', orgid: ORG, authorization: `Bearer ${staffToken(900)}` });
      // Measured runs use the first 80% of the tickets, warm-ups the rest: every run starts fresh.
      const split = Math.floor(tickets * 0.8);
      const measured = scanBodies(0, split, Math.ceil(split / 0.8));
      const warm = scanBodies(split, tickets, 30_000);
      const memStats = async (s: RunningServer) => getJson(`${s.url}/bench/stats`);
      const only = (process.env.SCAN_SIDES ?? '').split(',').map((k) => k.trim()).filter(Boolean);
      let postgresSkipped: string | undefined;
      const bin = postgresBin();
      if (only.length > 0 && !only.includes('postgres')) postgresSkipped = 'not in SCAN_SIDES';
      else if (!bin) postgresSkipped = 'PostgreSQL is not installed (apt-get install -y postgresql): the Fastify + PostgreSQL side is skipped';
      else {
        t0 = performance.now();
        postgres = startPostgres(bin, await freePort());
        await seedPostgres(postgres, tickets);
        console.log(`  PostgreSQL (${bin}) seeded with ${fmt(tickets)} tickets in ${fmt((performance.now() - t0) / 1000, 1)} s`);
      }
      if (postgresSkipped && only.length === 0) console.log(`  ${postgresSkipped}`);
      const pgServer = postgres;
      const sides: SideDef[] = [
        { key: 'raw', label: 'raw uWS + memory (ceiling)', durable: false, script: script('../baselines/scan-raw-uws.js'), env: { SCAN_TICKETS: String(tickets) }, stats: memStats },
        {
          key: 'service',
          durable: true,
          label: 'service (durable)',
          script: script('../fixtures/scan-server.js'),
          env: { SCAN_TEMPLATE_DIR: template, JWT_SECRET },
          stats: (s, h) => getJson(`${s.url}/events/${EVENT_ID}/checkin-stats`, h),
        },
        {
          // STORE_DURABILITY=commit: answered once committed, flushed to disk just after (a killed
          // process loses nothing; power loss may lose the last few milliseconds).
          key: 'serviceCommit',
          durable: true,
          label: 'service (commit durability)',
          script: script('../fixtures/scan-server.js'),
          env: { SCAN_TEMPLATE_DIR: template, JWT_SECRET, STORE_DURABILITY: 'commit' },
          stats: (s, h) => getJson(`${s.url}/events/${EVENT_ID}/checkin-stats`, h),
        },
        {
          key: 'serviceDevice',
          durable: true,
          label: 'service, device + two-type list',
          script: script('../fixtures/scan-server.js'),
          env: { SCAN_TEMPLATE_DIR: template, JWT_SECRET },
          prepare: deviceAtList,
          stats: (s, h) => getJson(`${s.url}/events/${EVENT_ID}/checkin-stats`, h),
        },
        {
          key: 'serviceWebhook',
          durable: true,
          label: 'service + webhook endpoint',
          script: script('../fixtures/scan-server.js'),
          env: { SCAN_TEMPLATE_DIR: template, JWT_SECRET, WEBHOOK_ALLOW_HOSTS: '127.0.0.1' },
          ...webhookSide(),
          stats: (s, h) => getJson(`${s.url}/events/${EVENT_ID}/checkin-stats`, h),
        },
        ...(pgServer
          ? [
              {
                key: 'postgres',
                durable: true,
                label: 'Fastify + PostgreSQL (durable)',
                script: script('../baselines/scan-fastify-postgres.js'),
                env: { PG_SOCKET_DIR: pgServer.socketDir, PG_PORT: String(pgServer.port) },
                before: () => resetPostgres(pgServer),
                extraCpu: () => pgServer.cpuSeconds(),
                stats: memStats,
              } satisfies SideDef,
            ]
          : []),
        { key: 'fastify', label: 'Fastify + memory', durable: false, script: script('../baselines/scan-fastify.js'), env: { SCAN_TICKETS: String(tickets) }, stats: memStats },
        { key: 'express', label: 'Express + memory', durable: false, script: script('../baselines/scan-express.js'), env: { SCAN_TICKETS: String(tickets) }, stats: memStats },
      ];
      const batchSide = only.length === 0 || only.includes('scan-batch');
      if (only.length > 0) sides.splice(0, sides.length, ...sides.filter((s) => only.includes(s.key)));
      if (sides.length === 0 && !batchSide) throw new Error(`SCAN_SIDES names no side (keys: raw, service, serviceCommit, serviceDevice, serviceWebhook, postgres, fastify, express, scan-batch)`);
      const runs = new Map<string, Run[]>(sides.map((s) => [s.key, []]));
      for (let round = 0; round < rounds; round++) {
        for (const side of round % 2 === 0 ? sides : [...sides].reverse()) {
          console.log(`  round ${round + 1}: ${side.label} (${warmup} s warm-up, ${perRun} s measured)`);
          runs.get(side.key)!.push(await measureSide(side, authHeaders(), warm, measured, { warmup, seconds: perRun, connections }));
        }
      }
      const summary = Object.fromEntries(
        sides.map((s) => {
          const rs = runs.get(s.key)!;
          return [
            s.key,
            {
              label: s.label,
              durable: s.durable,
              requestsPerSec: mean(rs.map((r) => r.requestsPerSec)),
              latencyP50: mean(rs.map((r) => r.latencyP50)),
              latencyP99: mean(rs.map((r) => r.latencyP99)),
              cpuMicrosPerRequest: mean(rs.map((r) => r.cpuMicrosPerRequest)),
              successShare: mean(rs.map((r) => r.successful / Math.max(1, r.successful + r.denied))),
              non2xx: rs.reduce((a, r) => a + r.non2xx, 0),
              errors: rs.reduce((a, r) => a + r.errors + r.timeouts, 0),
              rssBytes: rs.at(-1)!.rssBytes,
              runs: rs,
            },
          ];
        }),
      ) as Record<SideDef['key'], { label: string; durable: boolean; requestsPerSec: number; latencyP50: number; latencyP99: number; cpuMicrosPerRequest: number; successShare: number; non2xx: number; errors: number; rssBytes: number; runs: Run[] }>;

      const rows = [['side', 'durable', 'scans/s', 'cpu µs/scan', 'p50 ms', 'p99 ms', 'allowed', 'non2xx', 'errors', 'rss MiB']];
      for (const s of sides) {
        const x = summary[s.key];
        rows.push([x.label, x.durable ? 'yes' : 'no', fmt(x.requestsPerSec), fmt(x.cpuMicrosPerRequest, 1), fmt(x.latencyP50, 2), fmt(x.latencyP99, 2), `${fmt(x.successShare * 100, 1)}%`, fmt(x.non2xx), fmt(x.errors), fmt(MiB(x.rssBytes), 1)]);
      }
      const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
      if (sides.length > 0) console.log('\n' + rows.map((r) => r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join('  ')).join('\n'));

      // Issue 32: offline uploads, batch after batch, on a fresh durable service per round.
      let scanBatch: { runs: ScanBatchRun[]; latencyP50: number; latencyP95: number; scansPerSec: number; meetsP50: boolean } | null = null;
      if (batchSide) {
        const o = { batches: envInt('SCAN_BATCHES', 40), warmup: 5, size: Math.min(500, envInt('SCAN_BATCH_SIZE', 500)), tickets };
        if ((o.batches + o.warmup) * o.size > tickets) throw new Error(`scan-batch: ${o.batches + o.warmup} batches of ${o.size} need ${(o.batches + o.warmup) * o.size} tickets (SCAN_TICKETS is ${tickets})`);
        const runsB: ScanBatchRun[] = [];
        for (let round = 0; round < rounds; round++) {
          console.log(`  round ${round + 1}: scan-batch (${o.warmup} batches warm-up, ${o.batches} measured, ${o.size} offline scans each)`);
          runsB.push(await measureScanBatch(script('../fixtures/scan-server.js'), template, authHeaders(), o));
        }
        const p50 = mean(runsB.map((r) => r.latencyP50));
        scanBatch = { runs: runsB, latencyP50: p50, latencyP95: mean(runsB.map((r) => r.latencyP95)), scansPerSec: mean(runsB.map((r) => r.scansPerSec)), meetsP50: p50 <= SCAN_BATCH_AIM_P50_MS };
        for (const r of runsB) {
          console.log(
            `  scan-batch: ${r.batches} × ${r.batchSize} offline scans: p50 ${fmt(r.latencyP50, 1)} ms, p95 ${fmt(r.latencyP95, 1)} ms, max ${fmt(r.latencyMax, 1)} ms per batch; ` +
              `${fmt(r.scansPerSec)} scans/s at ${fmt(r.cpuMicrosPerScan, 1)} µs CPU a scan; ${fmt(r.admitted)} admitted (${fmt(r.conflicts)} conflicts), ${fmt(r.denied)} denied, ${fmt(r.itemErrors)} item errors`,
          );
        }
        console.log(`scan-batch: p50 ${fmt(p50, 1)} ms per batch of ${o.size} (aim ≤ ${SCAN_BATCH_AIM_P50_MS})${scanBatch.meetsP50 ? '' : ' ABOVE AIM'}`);
      }

      // Issue 31: a device scanning at a two-type list costs no more than a plain staff scan.
      const device = summary.serviceDevice && summary.service ? summary.serviceDevice.requestsPerSec / summary.service.requestsPerSec : null;
      if (device !== null) {
        console.log(`\nservice, device + two-type list: ${fmt(device, 3)}× the plain scan (aim ≥ ${AIMS.minDeviceListRatio})${device >= AIMS.minDeviceListRatio ? '' : ' BELOW AIM'}`);
      }
      // Issue 34: an endpoint listening to every check-in, against the plain scan.
      const hook = summary.serviceWebhook;
      let webhook: Record<string, number | boolean | null> | null = null;
      if (hook) {
        const drains = hook.runs.map((r) => r.drainMs ?? NaN);
        const drainMs = Math.max(...drains);
        // The server's CPU for the run and its drain, beyond the plain scan's, per event delivered.
        const extra = summary.service
          ? mean(hook.runs.map((r) => ((r.cpuMicrosPerRequest - summary.service.cpuMicrosPerRequest) * r.totalRequests + (r.drainCpuSeconds ?? 0) * 1e6) / Math.max(1, r.successful)))
          : NaN;
        webhook = {
          vsPlain: summary.service ? hook.requestsPerSec / summary.service.requestsPerSec : null,
          p99VsPlain: summary.service ? hook.latencyP99 / summary.service.latencyP99 : null,
          drainMs,
          cpuMicrosPerDelivery: extra,
        };
        console.log(
          `\nservice + webhook endpoint: ` +
            (summary.service
              ? `${fmt(webhook.vsPlain as number, 3)}× the plain scan's scans/s (aim ≥ ${AIMS.minWebhookRatio}), p99 ${fmt(webhook.p99VsPlain as number, 2)}× (aim ≤ ${AIMS.maxWebhookP99Ratio}), `
              : '') +
            `every event delivered ${drains.map((d) => fmt(d)).join(' / ')} ms after the run's end (aim ≤ ${AIMS.maxWebhookDrainMs}); ~${fmt(extra, 1)} µs server CPU per delivery`,
        );
      }
      // A partial run (SCAN_SIDES) is for profiling: it prints its table and writes no result.
      if (only.length > 0) return { partial: true, sides: summary, scanBatch, webhook };
      const svc = summary.service;
      const ratios = {
        vsRaw: svc.requestsPerSec / summary.raw.requestsPerSec,
        vsFastify: svc.requestsPerSec / summary.fastify.requestsPerSec,
        vsPostgres: summary.postgres ? svc.requestsPerSec / summary.postgres.requestsPerSec : null,
        vsExpress: svc.requestsPerSec / summary.express.requestsPerSec,
        deviceListVsPlain: device,
        bigEvent: null as number | null,
      };
      const meets = {
        raw: ratios.vsRaw >= AIMS.minRawRatio,
        fastify: ratios.vsFastify >= AIMS.minFastifyRatio,
        postgres: ratios.vsPostgres === null ? null : ratios.vsPostgres >= AIMS.minPostgresRatio,
        p99: svc.latencyP99 < AIMS.maxP99Ms,
        deviceList: device === null ? null : device >= AIMS.minDeviceListRatio,
        bigEvent: null as boolean | null,
      };
      console.log(
        `\nservice (durable): ${fmt(ratios.vsRaw, 2)}× raw (aim ≥ ${AIMS.minRawRatio})${meets.raw ? '' : ' BELOW AIM'}, ` +
          `${fmt(ratios.vsFastify, 2)}× Fastify in memory (aim ≥ ${AIMS.minFastifyRatio})${meets.fastify ? '' : ' BELOW AIM'}, ` +
          (ratios.vsPostgres === null
            ? `Fastify + PostgreSQL not measured (${postgresSkipped}), `
            : `${fmt(ratios.vsPostgres, 2)}× Fastify + PostgreSQL durable (aim ≥ ${AIMS.minPostgresRatio})${meets.postgres ? '' : ' BELOW AIM'}, `) +
          `${fmt(ratios.vsExpress, 2)}× Express; p99 ${fmt(svc.latencyP99, 2)} ms (aim < ${AIMS.maxP99Ms})${meets.p99 ? '' : ' ABOVE AIM'}`,
      );
      const commit = summary.serviceCommit;
      console.log(
        `service with commit durability: ${fmt(commit.requestsPerSec / summary.raw.requestsPerSec, 2)}× raw, ` +
          `${fmt(commit.requestsPerSec / summary.fastify.requestsPerSec, 2)}× Fastify, p99 ${fmt(commit.latencyP99, 2)} ms`,
      );

      console.log('\n  memory of the service by event size');
      const memory = [await memoryOf(tickets, template, authHeaders(), connections)];
      const baselines = [{ tickets, fastifyRss: await baselineMemory(tickets, script('../baselines/scan-fastify.js')) }];
      if (big > 1) {
        const bigTemplate = mkdtempSync(join(tmpdir(), 'bench-scan-big-'));
        templates.push(bigTemplate);
        t0 = performance.now();
        await seedScanStore(bigTemplate, big, {
          onProgress: (done) => console.log(`  seeding ${fmt(done)} / ${fmt(big)}`),
        });
        console.log(`  seeded ${fmt(big)} tickets in ${fmt((performance.now() - t0) / 1000, 1)} s`);
        memory.push(await memoryOf(big, bigTemplate, authHeaders(), connections));
        baselines.push({ tickets: big, fastifyRss: await baselineMemory(big, script('../baselines/scan-fastify.js')) });
      }
      if (memory.length > 1) {
        ratios.bigEvent = memory[1].scansPerSec / memory[0].scansPerSec;
        meets.bigEvent = ratios.bigEvent >= AIMS.minBigEventRatio;
        console.log(`  ${fmt(big)} tickets: ${fmt(ratios.bigEvent, 2)}× the scans/s of ${fmt(tickets)} (aim ≥ ${AIMS.minBigEventRatio})${meets.bigEvent ? '' : ' BELOW AIM'}`);
      }
      for (const m of memory) {
        const b = baselines.find((x) => x.tickets === m.tickets)!;
        console.log(
          `  ${fmt(m.tickets).padStart(9)} tickets: RSS ${fmt(MiB(m.rssAfterStart), 1)} MiB started, ${fmt(MiB(m.rssAfterLoad), 1)} MiB with the event loaded ` +
            `(activation ${fmt(m.activationMs)} ms), ${fmt(MiB(m.rssAfterScans), 1)} MiB after 6 s of scans (second 3 s: ${fmt(m.scansPerSec)} scans/s, p99 ${fmt(m.scanP99, 1)} ms); ` +
            `Fastify + memory holding them: ${fmt(MiB(b.fastifyRss), 1)} MiB`,
        );
      }

      const result = {
        description: DESCRIPTION,
        request: { method: 'POST', path: PATH, mix: '80% first entries, 10% repeats, 10% invalid codes', tickets, body: JSON.parse(measured[0]) },
        params: { connections, secondsPerSide: perRun * rounds, rounds, warmupSeconds: warmup, logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn' },
        aims: AIMS,
        meets,
        ratios,
        sides: summary,
        scanBatch,
        webhook,
        memory: memory.map((m) => ({ ...m, fastifyRssSameTickets: baselines.find((b) => b.tickets === m.tickets)!.fastifyRss })),
        seedSeconds: seedMs / 1000,
      };
      console.log(`wrote ${writeResult(NAME, result)}`);
      return result;
    } finally {
      postgres?.stop();
      for (const d of templates) rmSync(d, { recursive: true, force: true });
    }
  },
};
