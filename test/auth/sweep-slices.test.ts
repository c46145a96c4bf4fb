// The auth sweep visits every organisation (about eight ranged reads each): with 10,000 of them
// it gives the event loop back as it goes rather than holding it for the whole visit.
import t from 'tap';
import { sweepExpired } from '../../actors/auth/index.js';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp } from '../helpers/app.js';

t.test('auth sweep - a visit of 10,000 organisations lets other work run between them', async (t) => {
  const app = await startTestApp(t);
  const createdate = new Date().toISOString();
  for (let i = 0; i < 10; i++) {
    const b = new WriteBatch();
    for (let j = 0; j < 1_000; j++) b.putOrg({ orgId: `sweep-org-${i}-${j}`, displayName: `Org ${j}`, createdate });
    await app.deps.store.commit(b);
  }
  t.ok(app.deps.store.listOrgIds().length >= 10_000);
  // Turns of the event loop while the sweep runs: a timer set before it fires during it.
  let turns = 0;
  let running = true;
  const tick = () => {
    if (!running) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  const started = performance.now();
  await sweepExpired(app.deps);
  const ms = performance.now() - started;
  running = false;
  t.ok(turns >= 2, `the loop turned ${turns} times during a ${ms.toFixed(0)} ms sweep`);
});
