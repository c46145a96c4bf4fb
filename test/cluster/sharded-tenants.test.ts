// Issue 35: a node materialises only the tenants it holds. Four tenants on two nodes: each node's
// LMDB holds the data of the two it serves and none of the other two (organisations, platform
// data, are everywhere). After kill -9 of one node the other takes its tenants over from the
// commit stream, which it had never applied, and serves all four with everything acknowledged.
import t from 'tap';
import { rendezvous } from '../../core/cluster/placement.js';
import { sleep, staffClient, TestCluster } from './helpers.js';

const NODES = ['node-1', 'node-2'];

/** Four organisation ids, two that rendezvous places on each node (so the split is known). */
function fourTenants(): string[] {
  const by: Record<string, string[]> = { 'node-1': [], 'node-2': [] };
  for (let i = 0; by['node-1'].length < 2 || by['node-2'].length < 2; i++) {
    const id = `shard${i}`;
    const list = by[rendezvous(id, NODES)!];
    if (list.length < 2) list.push(id);
  }
  return [...by['node-1'], ...by['node-2']];
}

t.test('cluster - four tenants on two nodes: each LMDB holds the two its node serves; after kill -9 the other serves all four with everything acknowledged', async (t) => {
  const orgs = fourTenants();
  const cluster = await TestCluster.start(t, { nodes: 2, orgs, leaseTtlMs: 3000, retryMs: 12_000, env: { REPORT_HOLDS: '1' } });
  const clients = orgs.map((org) => cluster.nodes.map((n) => staffClient(n.url, org)));

  // Records of every tenant written through both nodes (half of them forwarded to the owner).
  const acked = new Map<string, string[]>(orgs.map((o) => [o, []]));
  for (let i = 0; i < 12; i++) {
    const replies = await Promise.all(
      orgs.map((org, k) => clients[k][i % 2].post('/repository/create', { datatype: 'note', data: { i, org, text: 'x'.repeat(200) }, isNew: true })),
    );
    for (const [k, r] of replies.entries()) {
      t.equal(r.status, 201, `${orgs[k]} note ${i} through node ${(i % 2) + 1}`);
      acked.get(orgs[k])!.push(r.body.sk);
    }
  }
  const owners = await Promise.all(orgs.map((o) => cluster.waitOwner(o)));
  t.same(owners, [0, 0, 1, 1], 'each node serves the two tenants rendezvous gives it');

  // Each store's tenants: the two its node serves, not the other two.
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline && !(cluster.holds(0).join() === orgs.slice(0, 2).join() && cluster.holds(1).join() === orgs.slice(2).join())) await sleep(50);
  t.same(cluster.holds(0), orgs.slice(0, 2).sort(), `node 1's LMDB holds ${orgs[0]} and ${orgs[1]} only`);
  t.same(cluster.holds(1), orgs.slice(2).sort(), `node 2's LMDB holds ${orgs[2]} and ${orgs[3]} only`);

  // Node 1 dies: node 2 takes its two tenants over from the stream and serves all four.
  await cluster.kill9(0);
  for (const [k, org] of orgs.entries()) {
    let list = await clients[k][1].post('/repository/find/note', { options: { pageSize: 100 } });
    // A request caught in the hand-over answers 503 with Retry-After (failover.test.ts): a client retries.
    for (let attempt = 1; list.status === 503 && attempt <= 5; attempt++) {
      t.ok(list.headers['retry-after'], `503 carries Retry-After (${list.text})`);
      await sleep(Number(list.headers['retry-after']) * 1000);
      list = await clients[k][1].post('/repository/find/note', { options: { pageSize: 100 } });
    }
    t.equal(list.status, 200, `${org} answers through node 2`);
    t.same(
      (list.body.data as Array<{ sk: string }>).map((r) => r.sk).sort(),
      [...acked.get(org)!].sort(),
      `all ${acked.get(org)!.length} acknowledged notes of ${org} are there`,
    );
    // A filter the event loop does not run ($or) goes to a query worker, which reads the tenant's
    // environment on node 2 as the node does.
    const inWorker = await clients[k][1].post('/repository/find/note', { query: { $or: [{ 'data.org': org }, { 'data.i': -1 }] }, options: { pageSize: 100 } });
    t.equal(inWorker.status, 200, inWorker.text);
    t.equal((inWorker.body.data as unknown[]).length, acked.get(org)!.length, `a query worker finds all of ${org}'s notes too`);
  }
  t.same([await cluster.waitOwner(orgs[0], 5000), await cluster.waitOwner(orgs[1], 5000)], [1, 1], 'node 2 serves the tenants of node 1 now');
  const more = await clients[0][1].post('/repository/create', { datatype: 'note', data: { after: true }, isNew: true });
  t.equal(more.status, 201, 'and takes writes for them');
  while (Date.now() < deadline + 10_000 && cluster.holds(1).length < 4) await sleep(50);
  t.same(cluster.holds(1), [...orgs].sort(), 'node 2 holds all four now');
});
