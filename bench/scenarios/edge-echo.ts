// Edge vs raw ceiling on a small JSON POST: how much of raw uWebSockets.js throughput the edge
// keeps once it adds request ids, header capture, validation, serialization and metrics.
// Issue target: edge req/s ≥ 0.8 × raw req/s.
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';
import { compare, formatTable, startServer, writeResult, type RunningServer } from '../harness.js';
import { envInt, type Scenario } from '../scenario.js';

const NAME = 'edge-echo';
const DESCRIPTION = 'POST /bench/echo (small JSON body): the edge vs a raw uWebSockets.js server answering the same bytes';
const PATH = '/bench/echo';
// ~90 bytes: the size of a typical small staff-app write.
const BODY = JSON.stringify({ name: 'Table 12 - espresso doppio', qty: 2, tags: ['coffee', 'hot', 'bar-1', 'happy-hour'] });
const EXPECTED = JSON.stringify({ ok: true, ...JSON.parse(BODY) });
const HEADERS = { 'content-type': 'application/json' };
const MIN_RATIO = 0.8;

const script = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));

interface Answer {
  status: number;
  type: string | null;
  body: Buffer;
}

async function probe(server: RunningServer): Promise<Answer> {
  const res = await fetch(server.url + PATH, { method: 'POST', headers: HEADERS, body: BODY, signal: AbortSignal.timeout(5000) });
  return { status: res.status, type: res.headers.get('content-type'), body: Buffer.from(await res.arrayBuffer()) };
}

/** Both servers must answer the bench request identically, or the ratio compares different work. */
async function verifySameAnswer(raw: RunningServer, edge: RunningServer): Promise<void> {
  const [a, b] = [await probe(raw), await probe(edge)];
  const ok = (x: Answer) => x.status === 200 && x.type === 'application/json' && x.body.equals(Buffer.from(EXPECTED));
  if (!ok(a) || !ok(b)) {
    const show = (x: Answer) => `${x.status} ${x.type} ${x.body.toString('utf8')}`;
    throw new Error(`the servers do not answer the same bytes:\n  expected 200 application/json ${EXPECTED}\n  raw:  ${show(a)}\n  edge: ${show(b)}`);
  }
}

/** uWS silently falls back to a slow JS implementation when its binary does not load. */
function assertNativeUws(server: RunningServer, label: string): void {
  if (/fallback/i.test(server.output())) throw new Error(`${label} runs uWS's JS fallback, not the native binary:\n${server.output()}`);
}

export const edgeEcho: Scenario = {
  name: NAME,
  description: DESCRIPTION,
  async run() {
    const seconds = envInt('BENCH_SECONDS', 10);
    const connections = envInt('BENCH_CONNECTIONS', 50);
    const rounds = envInt('BENCH_ROUNDS', 2);
    const warmupSeconds = envInt('BENCH_WARMUP', 2);

    const servers: RunningServer[] = [];
    try {
      const raw = await startServer({ script: script('../baselines/raw-uws.js') });
      servers.push(raw);
      const edge = await startServer({ script: script('../servers/edge-echo.js') });
      servers.push(edge);
      assertNativeUws(raw, 'raw-uws');
      assertNativeUws(edge, 'edge');
      await verifySameAnswer(raw, edge);

      const comparison = await compare({
        baseline: { label: 'raw uWS (ceiling)', server: raw, path: PATH },
        subject: { label: 'edge', server: edge, path: PATH },
        load: { method: 'POST', body: BODY, headers: HEADERS, connections, pipelining: 1 },
        seconds,
        rounds,
        warmupSeconds,
        onRun: (label, kind, s) => console.log(`  ${kind.padEnd(7)} ${label} (${s} s)`),
      });

      const ratio = comparison.ratios.requestsPerSec;
      const meetsExpectation = ratio >= MIN_RATIO;
      console.log('\n' + formatTable(comparison));
      console.log(
        `\nedge keeps ${(ratio * 100).toFixed(1)}% of the raw ceiling (expected ≥ ${MIN_RATIO * 100}%)` +
          (meetsExpectation ? '' : ': BELOW EXPECTATION') +
          `; it spends ${comparison.ratios.cpuMicrosPerRequest.toFixed(2)}× the raw server's CPU per request`,
      );
      const result = {
        description: DESCRIPTION,
        request: { method: 'POST', path: PATH, headers: HEADERS, body: BODY, answer: EXPECTED },
        logLevel: process.env.BENCH_LOG_LEVEL ?? 'warn',
        expected: { minRequestsPerSecRatio: MIN_RATIO },
        meetsExpectation,
        ...comparison,
      };
      const busiest = Math.max(comparison.loadAverage.before, comparison.loadAverage.after);
      if (busiest > cpus().length) {
        console.log(`note: load average ${busiest.toFixed(1)} on ${cpus().length} CPUs: other work shared the machine; cpu µs/req is the steadier figure`);
      }
      console.log(`wrote ${writeResult(NAME, result)}`);
      return result;
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  },
};
