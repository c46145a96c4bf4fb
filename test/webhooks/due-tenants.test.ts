// The webhook dispatcher's poll looks for lanes only in organisations that may have one: those
// told of queued keys (a queued event, a retry, an outcome), those with work, and, a bounded number
// a poll, those not looked at since start. 3,000 organisations without webhooks cost no lane read.
import t from 'tap';
import defaults from '../../config/default.json' with { type: 'json' };
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import { WebhookDispatcher } from '../../core/webhooks/dispatcher.js';
import { LANE_NS, laneKey } from '../../core/webhooks/model.js';
import { tempDir } from '../helpers/app.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

t.test('webhook dispatch - a poll reads the lanes of organisations told of keys, not of every organisation', async (t) => {
  const store = new LmdbStore({ path: tempDir(t, 'bp-webhook-due-'), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const tenants = Array.from({ length: 3_000 }, (_, i) => `org-${String(i).padStart(4, '0')}`);
  // The real store, counting the ranged reads of lanes per organisation.
  const reads = new Map<string, number>();
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'rangeKv') return typeof v === 'function' ? v.bind(target) : v;
      return (...args: Parameters<LmdbStore['rangeKv']>) => {
        if (args[1] === LANE_NS) reads.set(args[0], (reads.get(args[0]) ?? 0) + 1);
        return store.rangeKv(...args);
      };
    },
  });
  const total = () => [...reads.values()].reduce((a, b) => a + b, 0);
  const w = defaults.webhooks;
  const d = new WebhookDispatcher({
    store: counted,
    tenants: () => tenants,
    onFailing: async () => undefined,
    settings: { ...w, pollMs: 10, responseCap: w.responseCapBytes, allowHosts: [] },
  });
  t.teardown(() => d.stop());
  d.start();
  const deadline = Date.now() + 10_000;
  while (reads.size < tenants.length && Date.now() < deadline) await sleep(10);
  t.equal(reads.size, tenants.length, 'every organisation was looked at once after start');
  t.ok(total() <= tenants.length + 10, `about once each: ${total()} lane reads`);

  await sleep(50);
  reads.clear();
  await sleep(200);
  t.equal(total(), 0, 'polls with no lane anywhere read none');

  // A key put in one organisation's lane by any write is looked for at the next poll.
  await store.commit(new WriteBatch().putKv('org-2345', LANE_NS, laneKey('ep-gone', Date.now(), 'ev-1'), 1));
  const until = Date.now() + 5_000;
  while (!reads.has('org-2345') && Date.now() < until) await sleep(10);
  t.ok(reads.has('org-2345'), 'the organisation with a new lane key was read');
  t.same([...reads.keys()], ['org-2345'], 'and no other');
});
