import t from 'tap';
import type { AppDeps } from '../../edge/deps.js';
import { PeriodicJobs, startPeriodic, stopPeriodic } from '../../edge/periodic.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('periodic - first run after firstMs, then every everyMs; failures are logged; stop ends it', async (t) => {
  const warned: string[] = [];
  const logger = { warn: (_o: unknown, msg: string) => warned.push(msg) };
  const deps = { logger, periodic: new PeriodicJobs(logger) } as unknown as AppDeps;
  let runs = 0;
  startPeriodic(deps, 'job', async () => {
    runs++;
    if (runs === 2) throw new Error('boom');
  }, 20, 5);
  await sleep(2);
  t.equal(runs, 0, 'not before firstMs');
  await sleep(120);
  t.ok(runs >= 3, `repeats, past a failure (${runs} runs)`);
  t.same(warned.slice(0, 1), ['job failed']);
  stopPeriodic(deps, 'job');
  const at = runs;
  await sleep(80);
  t.equal(runs, at, 'stopped');
  // Starting again replaces the job rather than running two.
  startPeriodic(deps, 'job', async () => void runs++, 1000, 1000);
  startPeriodic(deps, 'job', async () => void runs++, 1000, 1000);
  stopPeriodic(deps, 'job');
  await sleep(20);
  t.equal(runs, at);
});
