// Issue 35: the platform subjects are bounded. Every node's applier materialises the organisations
// and the `_` tenants from the stream's `x` subjects; a platform snapshot (one node at a time) covers
// them, and the subjects are purged below the previous snapshot. A node whose saved position is
// behind the purge (restarted late, or over an empty DATA_DIR) loads the snapshot before its
// applier reads on, so it still has every organisation and platform write. A running node's
// position is kept in a KV bucket for CLUSTER_POSITION_KEEP_MS after it last wrote it: a node cut
// off from NATS for less is waited for; one cut off for longer loads the snapshot before it
// applies more.
import t, { type Test } from 'tap';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ClusterNames } from '../../core/cluster/names.js';
import { ClusterNode } from '../../core/cluster/node.js';
import type { TenantEnvs } from '../../core/cluster/tenant-envs.js';
import { WriteBatch } from '../../core/store/store.js';
import { startClusterNode } from '../helpers/cluster-node.js';
import { startNatsServer } from '../helpers/nats-server.js';
import { startTcpRelay } from '../helpers/tcp-relay.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const BIG = 'x'.repeat(2000);

/** A node that snapshots every 20 commits (tenant or platform), checked every second. */
function start(t: Test, id: string, prefix: string, dir?: string, opts: { natsUrl?: string; positionKeepMs?: number } = {}) {
  return startClusterNode(t, { natsUrl: nats.url, nodeId: id, prefix, dir, snapshotEveryCommits: 20, snapshotEveryMs: 0, ...opts });
}

/** The platform subject's last sequence now, and whether the stream still holds a message. */
async function platformStream(prefix: string) {
  const nc = await connect({ servers: nats.url });
  const jsm = await jetstreamManager(nc);
  const names = new ClusterNames(prefix);
  return {
    async last(): Promise<number> {
      return (await jsm.streams.getMessage(names.stream, { last_by_subj: names.globalSubject }))?.seq ?? 0;
    },
    async holds(seq: number): Promise<boolean> {
      try {
        return (await jsm.streams.getMessage(names.stream, { seq }))?.seq === seq;
      } catch {
        return false;
      }
    },
    close: () => nc.close(),
  };
}

async function streamBytes(prefix: string): Promise<number> {
  const nc = await connect({ servers: nats.url });
  try {
    return (await (await jetstreamManager(nc)).streams.info(new ClusterNames(prefix).stream)).state.bytes;
  } finally {
    await nc.close();
  }
}

/** Waits until the platform subject keeps at most `max` messages (snapshots purged the rest), or 15 s; how many it keeps. */
async function waitPlatformPurged(prefix: string, max: number): Promise<number> {
  const nc = await connect({ servers: nats.url });
  try {
    const jsm = await jetstreamManager(nc);
    const names = new ClusterNames(prefix);
    const deadline = Date.now() + 15_000;
    for (;;) {
      const info = await jsm.streams.info(names.stream, { subjects_filter: names.globalSubject });
      const kept = info.state.subjects?.[names.globalSubject] ?? 0;
      if (kept <= max || Date.now() > deadline) return kept;
      await sleep(100);
    }
  } finally {
    await nc.close();
  }
}

/** `n` platform writes through `node`: organisations created, then patched, and `_global` keys. */
async function platformWrites(node: ClusterNode, round: number, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const org = `org${i % 20}`;
    const b = new WriteBatch();
    if (round === 0 && i < 20) b.putOrg({ orgId: org, displayName: `${org} ${BIG}`, createdate: '2026-01-01T00:00:00.000Z' });
    else if (i % 2 === 0) b.patchOrg(org, { displayName: `${org} r${round} ${BIG}` });
    else b.putKv('_global', 'dir', `k${i % 20}`, { round, text: BIG });
    await node.store.commit(b);
  }
}

t.test("platform snapshots - the stream's bytes stop growing under platform writes once snapshots cover them", async (t) => {
  const p = `ps${Math.random().toString(36).slice(2, 8)}`;
  const a = await start(t, 'a', p);
  await platformWrites(a.node, 0, 60);
  await sleep(2500); // two snapshot checks: a snapshot, and the purge of what the one before covered
  await platformWrites(a.node, 1, 40);
  // Snapshots every 20 platform batches, each purging below the one before: about 40 are kept.
  await waitPlatformPurged(p, 45);
  const before = await streamBytes(p);

  for (let round = 2; round < 7; round++) {
    await platformWrites(a.node, round, 40);
    await sleep(1200);
  }
  // About 40 again; a snapshot is due at a check once a second, so an interval may hold a few more
  // than 20 batches when a round straddles a check (46 seen under load): 60 is a fifth of them.
  const kept = await waitPlatformPurged(p, 45);
  const after = await streamBytes(p);
  t.ok(kept <= 60, `the platform subject keeps ${kept} of its 300 messages`);
  // 200 more writes of 2 KB add ~400 KB to a stream that keeps its history.
  t.ok(after < before + 100_000, `the stream's bytes stay bounded: ${before} then ${after} after 200 more platform writes`);
  t.equal(a.local.getOrg('org4')?.displayName, `org4 r6 ${BIG}`, 'the writer holds the last patch');
});

t.test('platform snapshots - a node whose saved position is behind the purge, or whose DATA_DIR is empty, has every organisation and platform write', async (t) => {
  const p = `ps${Math.random().toString(36).slice(2, 8)}`;
  const a = await start(t, 'a', p);
  let b = await start(t, 'b', p);
  await platformWrites(a.node, 0, 40);
  for (let i = 0; i < 100 && !b.local.getOrg('org19'); i++) await sleep(20);
  t.ok(b.local.getOrg('org19'), 'b read the first organisations');
  await b.close();

  // While b is away, an organisation and a key written once, then enough platform writes for
  // several snapshots: the subjects are purged past b, and past those two.
  await a.node.store.commit(new WriteBatch().putOrg({ orgId: 'mid', displayName: 'Mid', createdate: '' }).putKv('_global', 'dir', 'mid', 'once'));
  for (let round = 1; round < 6; round++) {
    await platformWrites(a.node, round, 40);
    await sleep(1200);
  }
  await waitPlatformPurged(p, 45);
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const names = new ClusterNames(p);
  const info = await (await jetstreamManager(nc)).streams.info(names.stream, { subjects_filter: names.globalSubject });
  const kept = info.state.subjects?.[names.globalSubject] ?? 0;
  t.ok(kept < 120, `the platform subject was purged past b's position (${kept} of its 241 messages kept)`);

  const expectState = (node: { local: TenantEnvs }, who: string) => {
    const orgs = Array.from({ length: 20 }, (_, i) => node.local.getOrg(`org${i}`)?.displayName === a.local.getOrg(`org${i}`)?.displayName);
    t.same(orgs.filter(Boolean).length, 20, `${who} has every organisation as last patched`);
    t.equal(node.local.getOrg('mid')?.displayName, 'Mid', `${who} has the organisation written once while b was away`);
    t.equal(node.local.getKv('_global', 'dir', 'mid'), 'once', `${who} has the key written with it`);
    t.same(node.local.listOrgIds().length, 21, `${who} lists the twenty-one organisations`);
    const keys = Array.from({ length: 20 }, (_, i) => JSON.stringify(node.local.getKv('_global', 'dir', `k${i}`)) === JSON.stringify(a.local.getKv('_global', 'dir', `k${i}`)));
    t.same(keys.filter(Boolean).length, 20, `${who} has every platform key as last written`);
  };
  b = await start(t, 'b', p, b.dir);
  expectState(b, 'b, restarted behind the purge');
  const c = await start(t, 'c', p);
  expectState(c, 'c, over an empty DATA_DIR');

  // And they read on: a platform write after the load reaches both.
  await a.node.store.commit(new WriteBatch().putOrg({ orgId: 'late', displayName: 'Late', createdate: '' }));
  for (let i = 0; i < 100 && !(b.local.getOrg('late') && c.local.getOrg('late')); i++) await sleep(20);
  t.ok(b.local.getOrg('late') && c.local.getOrg('late'), 'both read the platform writes after the snapshot');
});

t.test('platform snapshots - a running node whose applier lags is never overtaken by the purge', async (t) => {
  const p = `ps${Math.random().toString(36).slice(2, 8)}`;
  const a = await start(t, 'a', p);
  const b = await start(t, 'b', p);
  // b's applier stalls (a long pause): it stops reading once its batch in flight is full, so the
  // rest of what a writes stays in the stream, unread by b, while a snapshots and purges.
  const inner = (b.node as unknown as { log: { applied: Promise<unknown> } }).log;
  let resume!: () => void;
  inner.applied = new Promise<void>((r) => (resume = r));
  for (let i = 0; i < 2400; i++) {
    const batch = new WriteBatch();
    if (i === 1400) batch.putOrg({ orgId: 'mid', displayName: 'Mid', createdate: '' }).putKv('_global', 'dir', 'mid', 'once');
    else batch.putKv('_global', 'dir', `k${i % 20}`, { i });
    await a.node.store.commit(batch);
    if (i % 400 === 399) await sleep(1100); // a snapshot between
  }
  await sleep(1500);
  t.ok(a.local.getOrg('mid'), 'a wrote the organisation');
  resume();
  const last = () => JSON.stringify(b.local.getKv('_global', 'dir', 'k19')) === JSON.stringify(a.local.getKv('_global', 'dir', 'k19'));
  for (let i = 0; i < 200 && !(b.local.getOrg('mid') && last()); i++) await sleep(25);
  t.equal(b.local.getOrg('mid')?.displayName, 'Mid', 'b, reading on, has the organisation written while it lagged');
  t.equal(b.local.getKv('_global', 'dir', 'mid'), 'once', 'and the key written with it');
  t.same(b.local.getKv('_global', 'dir', 'k19'), a.local.getKv('_global', 'dir', 'k19'), 'and the last platform writes');
});

/** Writes `mid` while b is cut off, then five rounds of platform writes over ~8 s (snapshots between). */
async function writeWhileCut(a: ClusterNode, stream: Awaited<ReturnType<typeof platformStream>>): Promise<number> {
  await a.store.commit(new WriteBatch().putOrg({ orgId: 'mid', displayName: 'Mid', createdate: '' }).putKv('_global', 'dir', 'mid', 'once'));
  const midSeq = await stream.last();
  for (let round = 1; round < 6; round++) {
    await platformWrites(a, round, 40);
    await sleep(1600);
  }
  return midSeq;
}

async function expectCaughtUp(t: Test, a: { local: TenantEnvs }, b: { local: TenantEnvs }): Promise<void> {
  const same = () => b.local.getOrg('mid') && JSON.stringify(b.local.getKv('_global', 'dir', 'k19')) === JSON.stringify(a.local.getKv('_global', 'dir', 'k19')) && b.local.getOrg('org18')?.displayName === a.local.getOrg('org18')?.displayName;
  for (let i = 0; i < 400 && !same(); i++) await sleep(25);
  t.equal(b.local.getOrg('mid')?.displayName, 'Mid', 'b has the organisation written while it was cut off');
  t.equal(b.local.getKv('_global', 'dir', 'mid'), 'once', 'and the key written with it');
  const orgs = Array.from({ length: 20 }, (_, i) => b.local.getOrg(`org${i}`)?.displayName === a.local.getOrg(`org${i}`)?.displayName);
  t.equal(orgs.filter(Boolean).length, 20, 'and every organisation as last patched');
  t.same(b.local.getKv('_global', 'dir', 'k19'), a.local.getKv('_global', 'dir', 'k19'), 'and the last platform writes');
}

/** Nodes a and b (b through a relay that can cut it off), both keeping positions `keepMs`; b has read a's first platform writes. */
async function cutOffPair(t: Test, keepMs: number) {
  const p = `ps${Math.random().toString(36).slice(2, 8)}`;
  const relay = await startTcpRelay(t, nats.port);
  const a = await start(t, 'a', p, undefined, { positionKeepMs: keepMs });
  const b = await start(t, 'b', p, undefined, { positionKeepMs: keepMs, natsUrl: relay.url });
  const stream = await platformStream(p);
  t.teardown(() => stream.close());
  await platformWrites(a.node, 0, 40);
  for (let i = 0; i < 200 && !b.local.getOrg('org19'); i++) await sleep(20);
  t.ok(b.local.getOrg('org19'), 'b read the first organisations');
  return { p, relay, a, b, stream };
}

t.test('platform snapshots - a node cut off from NATS for less than CLUSTER_POSITION_KEEP_MS is waited for: the purge keeps what it has not read', async (t) => {
  const { a, b, relay, stream } = await cutOffPair(t, 30_000);
  await sleep(1200); // b's position after them is written

  relay.cut();
  const midSeq = await writeWhileCut(a.node, stream);
  t.ok(await stream.holds(midSeq), `the stream still holds the organisation b has not read (${midSeq}), ~8 s after b was cut off`);
  t.notOk(await stream.holds(2), 'and platform snapshots purged what b had read');
  relay.mend();
  await expectCaughtUp(t, a, b);
});

t.test('platform snapshots - a node cut off from NATS for longer than CLUSTER_POSITION_KEEP_MS loads the platform snapshot before it applies more', async (t) => {
  const { p, a, b, relay, stream } = await cutOffPair(t, 3000);

  relay.cut();
  const midSeq = await writeWhileCut(a.node, stream);
  await waitPlatformPurged(p, 45);
  t.notOk(await stream.holds(midSeq), `the purge went past b once its position expired: the organisation's message (${midSeq}) is gone`);
  relay.mend();
  await expectCaughtUp(t, a, b);

  // And it reads on: a platform write after the load reaches it.
  await a.node.store.commit(new WriteBatch().putOrg({ orgId: 'late', displayName: 'Late', createdate: '' }));
  for (let i = 0; i < 200 && !b.local.getOrg('late'); i++) await sleep(20);
  t.ok(b.local.getOrg('late'), 'b reads the platform writes after the snapshot');
});
