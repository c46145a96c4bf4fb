// Runs the benchmark scenarios and writes bench/results/<scenario>.json for each.
//
//   npm run bench                    every registered scenario but soak and cluster-takeover (run only when named)
//   npm run bench -- edge-echo       only the named ones
//
// Knobs (env): BENCH_SECONDS measured seconds per side (10), BENCH_CONNECTIONS (50),
// BENCH_ROUNDS alternating runs per side (2), BENCH_WARMUP seconds (2), BENCH_LOG_LEVEL of the
// servers (warn). Servers listen on 127.0.0.1 only, each with a temp DATA_DIR removed afterwards.
// A scenario that throws makes the exit code 1; a low ratio is reported, not failed.
import type { Scenario } from './scenario.js';
import { chat } from './scenarios/chat.js';
import { cluster } from './scenarios/cluster.js';
import { clusterTakeover } from './scenarios/cluster-takeover.js';
import { doorStall } from './scenarios/door-stall.js';
import { edgeEcho } from './scenarios/edge-echo.js';
import { repository } from './scenarios/repository.js';
import { scan } from './scenarios/scan.js';
import { scanStore } from './scenarios/scan-store.js';
import { soak } from './scenarios/soak.js';

/** Adding a scenario: import it above and list it here. */
const scenarios: Scenario[] = [edgeEcho, repository, chat, scan, scanStore, cluster, clusterTakeover, soak, doorStall];
/** Run only when named (`npm run bench -- soak`): ten minutes by default; cluster-takeover seeds 1,000,000 records. */
const byNameOnly = new Set(['soak', 'cluster-takeover']);

async function main(): Promise<number> {
  const names = process.argv.slice(2).filter((a) => !a.startsWith('-'));
  const unknown = names.filter((n) => !scenarios.some((s) => s.name === n));
  if (unknown.length > 0) {
    console.error(`unknown scenario(s): ${unknown.join(', ')}; known: ${scenarios.map((s) => s.name).join(', ')}`);
    return 2;
  }
  const chosen = names.length > 0 ? scenarios.filter((s) => names.includes(s.name)) : scenarios.filter((s) => !byNameOnly.has(s.name));
  let failed = 0;
  for (const s of chosen) {
    console.log(`\n== ${s.name}: ${s.description}`);
    try {
      await s.run();
    } catch (err) {
      failed++;
      console.error(`scenario ${s.name} failed: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    }
  }
  return failed > 0 ? 1 : 0;
}

// Exit explicitly: a stray handle (a keep-alive socket) must not keep the bench running.
main().then(
  (code) => process.exit(code),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
