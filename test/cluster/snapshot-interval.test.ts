// Issue 35: a snapshot copies the whole tenant, so a large tenant's next snapshot waits for commits
// in proportion to its size (at least its last snapshot's keys / 10), whatever the count setting
// says: copying then costs each commit a bounded number of keys instead of growing with the tenant.
import t, { type Test } from 'tap';
import { jetstreamManager, type JetStreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ClusterNames } from '../../core/cluster/names.js';
import type { SnapshotManifest } from '../../core/cluster/snapshots.js';
import { decode } from '../../core/cluster/codec.js';
import { WriteBatch } from '../../core/store/store.js';
import { startClusterNode, thingRecord } from '../helpers/cluster-node.js';
import { startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** The tenant's last snapshot manifest, if it has one. */
async function latestManifest(jsm: JetStreamManager, names: ClusterNames, tenant: string): Promise<SnapshotManifest | undefined> {
  try {
    const m = await jsm.streams.getMessage(names.snapshotStream, { last_by_subj: names.snapshotManifest(tenant) });
    return m ? decode<SnapshotManifest>(m.data) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * A node `a` holding acme with the given snapshot settings, a connection of the test's own, and a
 * reader of acme's latest snapshot manifest.
 */
async function acmeOnNode(t: Test, prefix: string, opts: { snapshotEveryCommits: number; snapshotEveryMs: number }) {
  const a = await startClusterNode(t, { natsUrl: nats.url, nodeId: 'a', prefix, ...opts });
  t.equal(await a.node.takeTenant('acme'), 'a');
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const names = new ClusterNames(prefix);
  return { a, jsm, names, latest: () => latestManifest(jsm, names, 'acme') };
}

t.test("cluster snapshots - a large tenant's next snapshot waits for commits in proportion to its keys", async (t) => {
  const prefix = `si${Math.random().toString(36).slice(2, 8)}`;
  const { a, latest } = await acmeOnNode(t, prefix, { snapshotEveryCommits: 20, snapshotEveryMs: 0 });
  const waitFor = async (ok: (m: SnapshotManifest | undefined) => boolean, ms: number) => {
    const deadline = Date.now() + ms;
    let m = await latest();
    while (!ok(m) && Date.now() < deadline) {
      await sleep(100);
      m = await latest();
    }
    return m;
  };
  let v = 0;
  const small = async (n: number) => {
    for (let i = 0; i < n; i++) await a.node.store.commit(new WriteBatch().putRecord(thingRecord('acme', 'hot', ++v), v - 1));
  };

  // 1,000 records in 5 commits, then 20 more commits: the first snapshot is due (there is none).
  for (let b = 0; b < 5; b++) {
    const batch = new WriteBatch();
    for (let i = 0; i < 200; i++) batch.putRecord(thingRecord('acme', `r${b}-${i}`), 0);
    await a.node.store.commit(batch);
  }
  await small(20);
  const first = await waitFor((m) => m !== undefined, 10_000);
  t.ok(first, 'the first snapshot is written after 20 commits');
  const need = Math.ceil(first!.entries / 10);
  t.ok(need > 40, `it holds ${first!.entries} keys: the next waits for ${need} commits`);

  // 20 commits more (the count setting) and two snapshot checks: not yet.
  await small(20);
  await sleep(2500);
  t.equal((await latest())?.id, first!.id, `after 20 more commits (fewer than ${need}) the snapshot is still the first`);

  // Past keys / 10 commits since the first: the next one is written.
  await small(need - 20);
  const second = await waitFor((m) => m !== undefined && m.id !== first!.id, 10_000);
  t.not(second?.id, first!.id, `after ${need} commits the next snapshot is written`);
});

t.test('cluster snapshots - a large tenant quiet for the snapshot interval gets its tail covered once; while it writes, it waits for its commits', async (t) => {
  const prefix = `sq${Math.random().toString(36).slice(2, 8)}`;
  const ms = 1500;
  const { a, jsm, names, latest } = await acmeOnNode(t, prefix, { snapshotEveryCommits: 0, snapshotEveryMs: ms });
  const lastSeq = async () => (await jsm.streams.getMessage(names.stream, { last_by_subj: names.tenantSubject('acme') }))!.seq;
  for (let b = 0; b < 5; b++) {
    const batch = new WriteBatch();
    for (let i = 0; i < 200; i++) batch.putRecord(thingRecord('acme', `r${b}-${i}`), 0);
    await a.node.store.commit(batch);
  }
  let first: SnapshotManifest | undefined;
  for (const deadline = Date.now() + 10_000; !first && Date.now() < deadline; ) (first = await latest()) ?? (await sleep(100));
  t.ok(first, 'the first snapshot is written (there was none)');
  t.ok(first!.entries / 10 > 30, `it holds ${first!.entries} keys: a busy tenant waits for ${Math.ceil(first!.entries / 10)} commits`);

  // Busy: a commit every 200 ms for 3 s (15 commits, well below keys / 10): no snapshot meanwhile.
  let v = 0;
  for (let i = 0; i < 15; i++) {
    await a.node.store.commit(new WriteBatch().putRecord(thingRecord('acme', 'hot', ++v), v - 1));
    await sleep(200);
  }
  t.equal((await latest())?.id, first!.id, 'while the tenant writes, its few commits wait');

  // Quiet: within the interval and a timer tick, one snapshot covers the tail.
  const end = await lastSeq();
  let second: SnapshotManifest | undefined;
  for (const deadline = Date.now() + ms + 5000; Date.now() < deadline; await sleep(100)) {
    const m = await latest();
    if (m && m.id !== first!.id) {
      second = m;
      break;
    }
  }
  t.ok(second, 'a quiet tenant gets its tail covered');
  t.ok(second && second.seq >= end, `the snapshot covers its last commit (${second?.seq} ≥ ${end})`);
  // And no more while it stays quiet.
  await sleep(ms + 1000);
  t.equal((await latest())?.id, second?.id, 'and no other snapshot while it stays quiet');
});
