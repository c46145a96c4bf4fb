import t from 'tap';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { tempDir } from '../helpers/app.js';
import { runFixture } from '../helpers/child.js';

const fixture = new URL('../fixtures/store-writer.ts', import.meta.url).pathname;

for (const durability of ['flush', 'commit']) t.test(`LmdbStore (durability ${durability}) - writes acknowledged before SIGKILL are all there on reopen`, async (t) => {
  for (const target of [200, 2000]) {
    const dir = tempDir(t);
    const child = runFixture(fixture, [dir, durability]);
    await child.waitFor((lines) => lines.length >= target);
    await child.kill9();
    t.equal(child.proc.signalCode, 'SIGKILL', 'the writer was killed, not stopped');
    const acked = child.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4));
    t.ok(acked.length >= target, `${acked.length} writes acknowledged before the kill`);
    const store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
    const missing = acked.filter((sk) => !store.getRecord('acme', 'order', sk));
    t.same(missing, [], 'no acknowledged write is missing');
    // Atomic batches: every record stored has its log entry, and the reverse.
    const logged = new Set(store.readLog<{ sk: string }>('acme', 'log').map((e) => e.entry.sk));
    const stored = store.scan('acme', 'order');
    t.equal(logged.size, stored.length, 'records and log entries were committed together');
    t.ok(stored.every((r) => logged.has(r.sk)));
    await store.close();
  }
});
