// Queries are shared fairly (issue 29, item 3): ten organisations each keep four aggregations that
// run to the time budget queued, and another organisation's plain find still answers within
// QUERY_TIMEOUT_MS plus 100 ms, every time (first come, first served, it waited 12.7 s). And the
// workers are started and warm before /readyz answers ready, so the first query after a start
// does not wait for one (it waited 0.5-1 s).
import t from 'tap';
import type { QueryPool } from '../../core/query/pool.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { createOrg, startTestApp, staffHeaders } from '../helpers/app.js';
import { client, request } from '../helpers/http.js';

const TIMEOUT_MS = 2000;
/** Nested $map over $range 2000 x 2000: ~5 s run to its end, so always stopped by the budget. */
const OVER_BUDGET = [
  { $project: { x: { $map: { input: { $range: [0, 2000] }, as: 'i', in: { $size: { $map: { input: { $range: [0, 2000] }, in: { $add: ['$$i', '$$this'] } } } } } } } },
];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function untilReady(url: string): Promise<void> {
  for (;;) {
    const r = await request(url, '/readyz');
    if (r.status === 200) return;
    await sleep(20);
  }
}

t.test('query pool - the first query after a start waits for no worker to start once /readyz says ready (50 ms on a quiet machine)', async (t) => {
  // A node as `npm start` runs it: its routes compile before it says ready (COMPILE_ROUTES_AT_START).
  const app = await startTestApp(t, { modules: ['records'], config: { query: { timeoutMs: TIMEOUT_MS }, http: { compileAtStart: true } } });
  await createOrg(app, 'acme');
  await app.deps.store.commit(new WriteBatch().putRecord(newRecord('acme', 'product', { name: 'widget' })));
  const a = client(app.url, staffHeaders(app, 'acme'));
  await untilReady(app.url);
  const pool = app.deps.queries as QueryPool;
  t.equal(pool.dispatched, 0, 'no query has run yet');
  t.ok(pool.warm, 'every worker had started, its job modules loaded, when /readyz said ready');
  const timed = async () => {
    const started = performance.now();
    const r = await a.post('/dynamic-query/find', { datatype: 'product', filter: { 'data.name': 'widget' } });
    t.equal(r.status, 200);
    t.equal(r.body.data.length, 1);
    return performance.now() - started;
  };
  const first = await timed();
  // The same query again, warm by any measure: what the first costs beyond it is what a worker's
  // start would add (0.5-1 s before). Compared within the run, so a loaded machine (the suite runs
  // files in parallel) slows both alike.
  const again = [await timed(), await timed(), await timed()].sort((x, y) => x - y)[1];
  // Within 50 ms more on a quiet machine; under the suite's parallel load the first query's one-time
  // costs (its first reads and compiled paths) stretch as the machine slows (80 against 12.6 ms
  // seen, and 69.9 against 5.4 ms), so a first query within 8× the warm one, or within 250 ms, passes
  // too. A worker started on demand (0.5-1 s) fails either way; `pool.warm` above is the mechanism.
  t.ok(first < Math.max(again + 50, again * 8, 250), `the first answered in ${first.toFixed(1)} ms, the same query again in ${again.toFixed(1)} ms`);
  t.equal(pool.dispatched, 4, 'each ran in a worker that was started before ready');
});

t.test('query pool - ten organisations keeping four over-budget aggregations queued do not hold another\'s find past QUERY_TIMEOUT_MS + 100 ms', async (t) => {
  const app = await startTestApp(t, { modules: ['records'], config: { query: { timeoutMs: TIMEOUT_MS, workers: 2 } } });
  const attackers = Array.from({ length: 10 }, (_, i) => `attacker${i}`);
  for (const org of [...attackers, 'bystander']) await createOrg(app, org);
  const batch = new WriteBatch();
  for (const org of [...attackers, 'bystander']) batch.putRecord(newRecord(org, 'product', { name: 'widget' }));
  await app.deps.store.commit(batch);
  await untilReady(app.url);
  const bystander = staffHeaders(app, 'bystander');
  const find = { datatype: 'product', filter: { 'data.name': 'widget' } };
  // The bystander has used the service before, as an organisation does: one find.
  t.equal((await request(app.url, '/dynamic-query/find', { method: 'POST', headers: bystander, body: find })).status, 200);
  const pool = app.deps.queries as QueryPool;

  let attacking = true;
  const attackReplies: number[] = [];
  const keepFourQueued = async (org: string) => {
    const headers = staffHeaders(app, org);
    const one = async () => {
      while (attacking) {
        const body = { datatype: 'product', pipeline: OVER_BUDGET };
        const status = await request(app.url, '/dynamic-query/aggregate', { method: 'POST', headers, body, timeoutMs: 120_000 }).then(
          (r) => r.status,
          () => 0,
        );
        if (attacking) attackReplies.push(status);
      }
    };
    await Promise.all([one(), one(), one(), one()]);
  };
  const attack = Promise.all(attackers.map(keepFourQueued));

  // The bystander's finds, one after another, from the attack's first moments on for five times
  // the budget: through attackers' first queries (not yet known to be slow) and later ones.
  const waits: number[] = [];
  await sleep(50);
  const until = Date.now() + 5 * TIMEOUT_MS;
  while (Date.now() < until) {
    const started = performance.now();
    // Far past the aim is a failure all the same: give up at 5 x the budget.
    const status = await request(app.url, '/dynamic-query/find', { method: 'POST', headers: bystander, body: find, timeoutMs: 5 * TIMEOUT_MS }).then(
      (r) => r.status,
      () => 0,
    );
    waits.push(performance.now() - started);
    t.equal(status, 200, 'the find answers');
    await sleep(150);
  }
  attacking = false;
  // What is still queued is answered at once (503, shutting down) rather than run out.
  const stopped = pool.stopped;
  await pool.close();
  await attack;
  const sorted = [...waits].sort((x, y) => x - y);
  const figure = `${waits.length} finds: median ${sorted[sorted.length >> 1].toFixed(0)} ms, max ${sorted[sorted.length - 1].toFixed(0)} ms`;
  t.comment(figure);
  // Slow organisations share all workers but one, so few of theirs run in this time.
  t.ok(stopped >= 2, `the attack ran: ${stopped} aggregations stopped by the budget`);
  t.ok(attackReplies.every((s) => s === 400), 'each over-budget aggregation answered is stopped by the budget');
  t.ok(sorted[sorted.length - 1] <= TIMEOUT_MS + 100, `every find within QUERY_TIMEOUT_MS + 100 ms (${figure})`);
});
