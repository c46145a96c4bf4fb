// The benchmark harness: start a server under test as a child process (its own temp DATA_DIR, a
// free port on 127.0.0.1), load it with autocannon, compare it with a baseline measured in the same
// run, print the table and keep the figures in bench/results/<scenario>.json.
//
// Servers run as separate processes so that autocannon (in this process) and the server never
// share an event loop: on a 2-core machine that is one core each.
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { cpus, loadavg, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import autocannon from 'autocannon';

const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 15_000;
const MAX_SECONDS = 120;
const MAX_CONNECTIONS = 1000;
/** How much of a child's output is kept for error messages. */
const OUTPUT_TAIL = 8 * 1024;

export interface ServerOptions {
  /** A compiled entry file (dist/...js), run with this process's node. */
  script: string;
  env?: Record<string, string>;
  /** Answers 200 once the server is ready (default /healthz). */
  readyPath?: string;
  /** Extra node flags, e.g. ['--cpu-prof'] when profiling. */
  nodeArgs?: string[];
}

export interface RunningServer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  readonly pid: number;
  /** Resident set size of the child, from /proc (0 once it has exited). */
  rssBytes(): number;
  /** CPU seconds (user + system) the child has used so far, from /proc. */
  cpuSeconds(): number;
  /** The last few KiB the child wrote to stdout and stderr. */
  output(): string;
  /** How the child exited (its code, -1 for a signal), undefined while it runs. */
  exited(): number | undefined;
  stop(): Promise<void>;
}

/** Children still running, killed if this process exits first (a crashed bench leaks nothing). */
const live = new Set<{ child: ChildProcess; dataDir: string }>();
process.on('exit', () => {
  for (const s of live) {
    s.child.kill('SIGKILL');
    rmSync(s.dataDir, { recursive: true, force: true });
  }
});

/** A port that was free a moment ago: bind 127.0.0.1:0, read it, close. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => (port ? resolve(port) : reject(new Error('no port assigned'))));
    });
  });
}

function rssOf(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Linux reports process times in clock ticks of 1/100 s (CLK_TCK on every mainstream arch). */
const CLK_TCK = 100;

/** CPU seconds (user + system) a live process used so far; 0 once it is gone. */
export function cpuOf(pid: number): number {
  try {
    // Fields after the `(comm)` one; utime and stime are the 14th and 15th of the whole line.
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
    return (Number(f[11]) + Number(f[12])) / CLK_TCK;
  } catch {
    return 0;
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const port = await freePort();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-data-'));
  // BENCH_CPU_PROF=<dir>: every server writes a V8 CPU profile there when it stops.
  const prof = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
  const child = spawn(process.execPath, [...prof, ...(opts.nodeArgs ?? []), opts.script], {
    env: {
      ...process.env,
      LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
      // A load test is far above any plan's limit: without this every scenario would measure 429s.
      // BENCH_RATE_LIMITS=true measures with the limiter on (each tenant is then capped by its plan).
      RATE_LIMITS: process.env.BENCH_RATE_LIMITS ?? 'false',
      ...opts.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const entry = { child, dataDir };
  live.add(entry);

  // Both pipes are drained (a full pipe would stall the server) and only their tail is kept.
  let tail = '';
  const keep = (chunk: Buffer) => {
    tail = (tail + chunk.toString('utf8')).slice(-OUTPUT_TAIL);
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  let exitCode: number | null | undefined;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      exitCode = code ?? (signal ? -1 : 0);
      resolve();
    }),
  );

  const cleanup = () => {
    live.delete(entry);
    rmSync(dataDir, { recursive: true, force: true });
  };
  const stop = async () => {
    if (exitCode === undefined) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await exited;
      clearTimeout(timer);
    }
    cleanup();
  };

  const url = `http://127.0.0.1:${port}`;
  const readyUrl = url + (opts.readyPath ?? '/healthz');
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (exitCode !== undefined) {
      cleanup();
      throw new Error(`${opts.script} exited with ${exitCode} before it was ready:\n${tail}`);
    }
    try {
      const res = await fetch(readyUrl, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`${opts.script} did not answer 200 on ${readyUrl} within ${START_TIMEOUT_MS} ms:\n${tail}`);
    }
    await sleep(50);
  }

  return {
    url,
    port,
    pid: child.pid!,
    rssBytes: () => (exitCode === undefined ? rssOf(child.pid!) : 0),
    cpuSeconds: () => (exitCode === undefined ? cpuOf(child.pid!) : 0),
    exited: () => (exitCode === null ? -1 : exitCode),
    output: () => tail,
    stop,
  };
}

export interface LoadOptions {
  /** Must target 127.0.0.1: the bench never loads another machine. */
  url: string;
  method?: string;
  body?: string;
  headers?: Record<string, string>;
  seconds: number;
  connections: number;
  pipelining?: number;
}

export interface LoadResult {
  /** Mean of autocannon's per-second samples. */
  requestsPerSec: number;
  latencyP50: number;
  latencyP99: number;
  latencyMean: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  totalRequests: number;
  seconds: number;
}

const clamp = (n: number, lo: number, hi: number) => Math.min(hi, Math.max(lo, Math.floor(n)));

export async function runAutocannon(opts: LoadOptions): Promise<LoadResult> {
  const target = new URL(opts.url);
  if (target.hostname !== '127.0.0.1') throw new Error(`refusing to load ${target.host}: the bench targets 127.0.0.1 only`);
  const seconds = clamp(opts.seconds, 1, MAX_SECONDS);
  const instance = autocannon({
    url: opts.url,
    method: opts.method ?? 'GET',
    body: opts.body,
    headers: opts.headers,
    duration: seconds,
    connections: clamp(opts.connections, 1, MAX_CONNECTIONS),
    pipelining: clamp(opts.pipelining ?? 1, 1, 64),
    timeout: 10,
  });
  // autocannon stops itself after `duration`; this only guards against a hung run.
  const guard = setTimeout(() => instance.stop(), (seconds + 30) * 1000);
  try {
    const r = await instance;
    return {
      requestsPerSec: r.requests.average,
      latencyP50: r.latency.p50,
      latencyP99: r.latency.p99,
      latencyMean: r.latency.average,
      non2xx: r.non2xx,
      errors: r.errors,
      timeouts: r.timeouts,
      totalRequests: r.requests.total,
      seconds: r.duration,
    };
  } finally {
    clearTimeout(guard);
  }
}

export interface Side {
  label: string;
  server: RunningServer;
  /** Path under the server's url that is loaded. */
  path: string;
}

export interface CompareOptions {
  baseline: Side;
  subject: Side;
  load: Omit<LoadOptions, 'url' | 'seconds'>;
  /** Measured seconds per side, split evenly over the rounds. */
  seconds: number;
  /** Measured runs per side (default 2). */
  rounds?: number;
  /** Unrecorded run per side before measuring, so both are JIT-warm (default 2 s). */
  warmupSeconds?: number;
  /** Told before each run (progress on a long bench). */
  onRun?(label: string, kind: 'warm-up' | 'measure', seconds: number): void;
}

/** One measured run: the load figures plus what the run cost the server. */
export interface MeasuredRun extends LoadResult {
  /** Server CPU time per answered request: unlike req/s, barely moved by other load on the machine. */
  cpuMicrosPerRequest: number;
  /** Cores the server kept busy: well under 1, the load generator (not the server) was the limit. */
  serverCores: number;
}

export interface SideSummary {
  label: string;
  requestsPerSec: number;
  cpuMicrosPerRequest: number;
  serverCores: number;
  latencyP50: number;
  latencyP99: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  totalRequests: number;
  /** RSS after the warm-up and after each measured run. */
  rssBytes: number[];
  runs: MeasuredRun[];
}

export interface Comparison {
  params: {
    method: string;
    connections: number;
    pipelining: number;
    secondsPerSide: number;
    rounds: number;
    warmupSeconds: number;
    bodyBytes: number;
  };
  /** 1-minute load average before and after: above the CPU count, other work shared the machine. */
  loadAverage: { before: number; after: number };
  baseline: SideSummary;
  subject: SideSummary;
  /** subject / baseline. */
  ratios: { requestsPerSec: number; cpuMicrosPerRequest: number; latencyP50: number; latencyP99: number; rss: number };
}

const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / Math.max(1, xs.length);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

function summarize(label: string, runs: MeasuredRun[], rss: number[]): SideSummary {
  return {
    label,
    requestsPerSec: mean(runs.map((r) => r.requestsPerSec)),
    cpuMicrosPerRequest: mean(runs.map((r) => r.cpuMicrosPerRequest)),
    serverCores: mean(runs.map((r) => r.serverCores)),
    // Means of the per-run percentiles; every run's own figures are kept in `runs`.
    latencyP50: mean(runs.map((r) => r.latencyP50)),
    latencyP99: mean(runs.map((r) => r.latencyP99)),
    non2xx: sum(runs.map((r) => r.non2xx)),
    errors: sum(runs.map((r) => r.errors)),
    timeouts: sum(runs.map((r) => r.timeouts)),
    totalRequests: sum(runs.map((r) => r.totalRequests)),
    rssBytes: rss,
    runs,
  };
}

/**
 * Loads baseline and subject alternately, in ABBA order (baseline, subject, subject, baseline,
 * ...), so that noise and drift on a shared machine fall on both sides alike. Reports the ratio
 * of the means.
 */
export async function compare(opts: CompareOptions): Promise<Comparison> {
  const rounds = clamp(opts.rounds ?? 2, 1, 20);
  const perRun = Math.max(1, Math.round(opts.seconds / rounds));
  const warmup = clamp(opts.warmupSeconds ?? 2, 0, MAX_SECONDS);
  const sides = [opts.baseline, opts.subject];
  const loadBefore = loadavg()[0];
  const runs: MeasuredRun[][] = [[], []];
  const rss: number[][] = [[], []];
  const load = async (i: number, seconds: number): Promise<MeasuredRun> => {
    const server = sides[i].server;
    const cpu0 = server.cpuSeconds();
    const r = await runAutocannon({ ...opts.load, url: server.url + sides[i].path, seconds });
    const cpu = server.cpuSeconds() - cpu0;
    return {
      ...r,
      cpuMicrosPerRequest: r.totalRequests > 0 ? (cpu * 1e6) / r.totalRequests : NaN,
      serverCores: r.seconds > 0 ? cpu / r.seconds : NaN,
    };
  };

  for (const i of [0, 1]) {
    if (warmup === 0) break;
    opts.onRun?.(sides[i].label, 'warm-up', warmup);
    await load(i, warmup);
    rss[i].push(sides[i].server.rssBytes());
  }
  for (let round = 0; round < rounds; round++) {
    for (const i of round % 2 === 0 ? [0, 1] : [1, 0]) {
      opts.onRun?.(sides[i].label, 'measure', perRun);
      runs[i].push(await load(i, perRun));
      rss[i].push(sides[i].server.rssBytes());
    }
  }

  const baseline = summarize(opts.baseline.label, runs[0], rss[0]);
  const subject = summarize(opts.subject.label, runs[1], rss[1]);
  const ratio = (a: number, b: number) => (b > 0 ? a / b : NaN);
  return {
    params: {
      method: opts.load.method ?? 'GET',
      connections: opts.load.connections,
      pipelining: opts.load.pipelining ?? 1,
      secondsPerSide: perRun * rounds,
      rounds,
      warmupSeconds: warmup,
      bodyBytes: opts.load.body ? Buffer.byteLength(opts.load.body) : 0,
    },
    loadAverage: { before: loadBefore, after: loadavg()[0] },
    baseline,
    subject,
    ratios: {
      requestsPerSec: ratio(subject.requestsPerSec, baseline.requestsPerSec),
      cpuMicrosPerRequest: ratio(subject.cpuMicrosPerRequest, baseline.cpuMicrosPerRequest),
      latencyP50: ratio(subject.latencyP50, baseline.latencyP50),
      latencyP99: ratio(subject.latencyP99, baseline.latencyP99),
      rss: ratio(subject.rssBytes.at(-1) ?? 0, baseline.rssBytes.at(-1) ?? 0),
    },
  };
}

function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toLocaleString('en-US', { minimumFractionDigits: digits, maximumFractionDigits: digits }) : '-';
}

/** The comparison as a text table: one row per side, then the ratio row. */
export function formatTable(c: Comparison): string {
  const mb = (b: number[]) => fmt((b.at(-1) ?? 0) / 2 ** 20, 1);
  const rows = [
    ['side', 'req/s', 'cpu µs/req', 'cores', 'p50 ms', 'p99 ms', 'non2xx', 'errors', 'rss MiB'],
    ...[c.baseline, c.subject].map((s) => [
      s.label,
      fmt(s.requestsPerSec),
      fmt(s.cpuMicrosPerRequest, 1),
      fmt(s.serverCores, 2),
      fmt(s.latencyP50, 2),
      fmt(s.latencyP99, 2),
      fmt(s.non2xx),
      fmt(s.errors + s.timeouts),
      mb(s.rssBytes),
    ]),
    [
      'ratio (subject/baseline)',
      fmt(c.ratios.requestsPerSec, 3),
      fmt(c.ratios.cpuMicrosPerRequest, 2),
      '',
      fmt(c.ratios.latencyP50, 2),
      fmt(c.ratios.latencyP99, 2),
      '',
      '',
      fmt(c.ratios.rss, 2),
    ],
  ];
  const widths = rows[0].map((_, col) => Math.max(...rows.map((r) => r[col].length)));
  const line = (r: string[]) => r.map((cell, col) => (col === 0 ? cell.padEnd(widths[col]) : cell.padStart(widths[col]))).join('  ');
  const rule = widths.map((w) => '-'.repeat(w)).join('  ');
  const table = [line(rows[0]), rule, ...rows.slice(1, -1).map(line), rule, line(rows.at(-1)!)];
  // A side answering errors measures the error path, not the work: say so under the table.
  for (const side of [c.baseline, c.subject]) {
    const share = side.non2xx / Math.max(1, side.totalRequests);
    if (share > 0.01 && c.baseline.non2xx !== c.subject.non2xx) {
      table.push(`WARNING: ${side.label} answered ${(share * 100).toFixed(1)}% non-2xx: compare with care`);
    }
  }
  return table.join('\n');
}

/** The package root: the nearest folder above this file holding package.json (works from dist/). */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const up = dirname(dir);
    if (up === dir) throw new Error('package.json not found above the bench harness');
    dir = up;
  }
  return dir;
}

/** Writes bench/results/<scenario>.json with the machine it ran on; returns the path. */
export function writeResult(scenario: string, result: object): string {
  const dir = join(packageRoot(), 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, `${scenario}.json`);
  const cpu = cpus();
  const doc = {
    scenario,
    date: new Date().toISOString(),
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpu.length,
    cpuModel: cpu[0]?.model ?? 'unknown',
    memoryBytes: totalmem(),
    ...result,
  };
  writeFileSync(file, JSON.stringify(doc, null, 2) + '\n');
  return file;
}
