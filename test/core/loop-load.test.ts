// The event loop's utilization as background work reads it (core/loop-load.ts): near 1 after the
// loop was kept busy, near 0 after it waited, and one figure per window for every reader in it.
import t from 'tap';
import { loopLoad } from '../../core/loop-load.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('busy, then idle, then shared within a window', async (t) => {
  const use = loopLoad(20);
  await sleep(30);
  // Keep the loop busy in short synchronous stretches.
  const end = Date.now() + 150;
  while (Date.now() < end) {
    const stop = Date.now() + 10;
    while (Date.now() < stop);
    await new Promise((r) => setImmediate(r));
  }
  const busy = use();
  t.ok(busy > 0.6, `busy loop: ${busy.toFixed(2)}`);
  t.equal(use(), busy, 'a second read in the same window shares its figure');
  await sleep(150);
  const idle = use();
  t.ok(idle < 0.4, `idle loop: ${idle.toFixed(2)}`);
});
