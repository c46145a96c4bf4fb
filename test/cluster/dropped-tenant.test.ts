// Issue 35: a tenant a node let go leaves its disk. After CLUSTER_DROPPED_KEEP_MS, unless the node
// holds the tenant again, its copy is cleared in bounded steps between other work; a lease that
// flaps back within the time finds its copy and catches up from it. A node restarted without
// taking back a tenant it held before lets that copy go the same way.
import t, { type Test } from 'tap';
import { ClusterNode } from '../../core/cluster/node.js';
import type { TenantEnvs } from '../../core/cluster/tenant-envs.js';
import { WriteBatch } from '../../core/store/store.js';
import { startClusterNode, thingRecord } from '../helpers/cluster-node.js';
import { startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function start(t: Test, id: string, prefix: string, droppedKeepMs: number, dir?: string) {
  return startClusterNode(t, { natsUrl: nats.url, nodeId: id, prefix, dir, snapshotEveryCommits: 0, snapshotEveryMs: 0, droppedKeepMs });
}

/** How many keys of `tenant` the store holds (its copy). */
function keysOf(local: TenantEnvs, tenant: string): number {
  const exp = local.exportTenant(tenant);
  let n = 0;
  for (let e = exp.next(10_000, 1 << 30, 0); e; e = exp.next(10_000, 1 << 30, 0)) n += e.entries;
  exp.close();
  return n;
}

async function writeMany(node: ClusterNode, tenant: string, n: number): Promise<void> {
  for (let i = 0; i < n; i += 500) {
    const b = new WriteBatch();
    for (let j = i; j < Math.min(n, i + 500); j++) b.putRecord(thingRecord(tenant, `r${j}`), 0);
    await node.store.commit(b);
  }
}

t.test('dropped tenants - a tenant let go is cleared after the keep time, in steps between other work', async (t) => {
  const p = `dt${Math.random().toString(36).slice(2, 8)}`;
  const a = await start(t, 'a', p, 1500);
  const b = await start(t, 'b', p, 1500);
  t.equal(await a.node.takeTenant('acme'), 'a');
  await writeMany(a.node, 'acme', 6000);
  const held = keysOf(a.local, 'acme');
  t.ok(held >= 6000, `a holds acme (${held} keys)`);

  // a lets acme go (a lease moving) and b takes it.
  a.node.drop('acme', true);
  await sleep(200);
  t.equal(keysOf(a.local, 'acme'), held, 'within the keep time a keeps its copy');
  let owner = '';
  for (let i = 0; i < 50 && (owner = await b.node.takeTenant('acme').catch(() => '')) !== 'b'; i++) await sleep(20);
  t.equal(owner, 'b', 'b takes acme over');

  // The loop keeps turning while the copy is cleared.
  let gap = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const now = performance.now();
    gap = Math.max(gap, now - last);
    last = now;
  }, 2);
  for (let i = 0; i < 100 && keysOf(a.local, 'acme') > 0; i++) await sleep(50);
  clearInterval(ticker);
  t.equal(keysOf(a.local, 'acme'), 0, 'after it a holds no key of acme');
  t.notOk(a.local.hasAppliedMark('acme'), 'nor its mark');
  t.ok(gap < 500, `the longest the loop was held meanwhile: ${gap.toFixed(0)} ms`);
  t.equal(b.local.getRecord('acme', 'thing', 'r5999')?.version, 1, 'b serves acme whole');

  // a takes acme back later: it starts from the stream, and has it all.
  await b.close();
  for (let i = 0; i < 100 && (await a.node.ownerOf('acme').catch(() => '')) !== 'a'; i++) await sleep(50);
  t.equal(await a.node.takeTenant('acme'), 'a');
  t.equal(keysOf(a.local, 'acme'), held, 'a rebuilt acme from the stream');
});

t.test('dropped tenants - a tenant held again within the keep time keeps its copy', async (t) => {
  const p = `dt${Math.random().toString(36).slice(2, 8)}`;
  const a = await start(t, 'a', p, 600);
  t.equal(await a.node.takeTenant('acme'), 'a');
  await writeMany(a.node, 'acme', 100);
  a.node.drop('acme', true);
  t.equal(await a.node.takeTenant('acme'), 'a', 'the lease flaps back');
  await sleep(1200);
  t.equal(a.local.getRecord('acme', 'thing', 'r99')?.version, 1, 'the copy is still there after the keep time');
  t.ok(a.local.hasAppliedMark('acme'));
});

t.test('dropped tenants - a node restarted without taking a tenant back clears the copy it kept', async (t) => {
  const p = `dt${Math.random().toString(36).slice(2, 8)}`;
  let a = await start(t, 'a', p, 400);
  const b = await start(t, 'b', p, 400);
  t.equal(await a.node.takeTenant('acme'), 'a');
  await writeMany(a.node, 'acme', 100);
  await a.close();
  t.equal(await b.node.takeTenant('acme'), 'b');
  a = await start(t, 'a', p, 400, a.dir);
  t.equal(a.local.getRecord('acme', 'thing', 'r99')?.version, 1, 'a restarts with its old copy');
  for (let i = 0; i < 60 && keysOf(a.local, 'acme') > 0; i++) await sleep(50);
  t.equal(keysOf(a.local, 'acme'), 0, 'and clears it once the keep time passed');
});
