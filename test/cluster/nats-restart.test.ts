// The cluster outlives its nats-server: after a restart every node reconnects, the commit stream and
// the leases are still there (JetStream file storage), and every node serves again.
import t from 'tap';
import { client } from '../helpers/http.js';
import { signupEverywhere, sleep, staffClient, TestCluster } from './helpers.js';

t.test('cluster - nats-server restarted: nodes reconnect and serve, nothing acknowledged is lost', async (t) => {
  const cluster = await TestCluster.start(t, { nodes: 3, orgs: ['acme', 'globex'] });
  const acme = cluster.nodes.map((n) => staffClient(n.url, 'acme'));
  const globex = cluster.nodes.map((n) => staffClient(n.url, 'globex'));
  const before: string[] = [];
  for (let i = 0; i < 6; i++) {
    const r = await (i % 2 ? globex : acme)[i % 3].post('/repository/create', { datatype: 'note', data: { i }, isNew: true });
    t.equal(r.status, 201);
    before.push(r.body.sk);
  }

  await cluster.nats.restart();

  // Every node answers again through the cluster within a bounded time.
  const deadline = Date.now() + 20_000;
  const after: string[] = [];
  for (let i = 0; i < 3; i++) {
    for (;;) {
      const r = await acme[i].post('/repository/create', { datatype: 'note', data: { after: i }, isNew: true });
      if (r.status === 201) {
        after.push(r.body.sk);
        break;
      }
      t.equal(r.status, 503, 'while reconnecting, a request is refused with 503, not left hanging');
      t.ok(r.headers['retry-after'], 'with Retry-After');
      if (Date.now() > deadline) throw new Error(`node ${i + 1} did not serve again within 20 s`);
      await sleep(200);
    }
  }
  t.equal(after.length, 3, 'every node serves writes again');
  const g = await globex[2].post('/repository/create', { datatype: 'note', data: { after: 'g' }, isNew: true });
  t.equal(g.status, 201);

  for (const [i, c] of acme.entries()) {
    const list = await c.post('/repository/find/note', { options: { pageSize: 50 } });
    t.equal(list.status, 200);
    t.equal(list.body.data.length, 3 + 3, `node ${i + 1} lists acme's notes from before and after`);
  }
  const gl = await globex[0].post('/repository/find/note', { options: { pageSize: 50 } });
  t.equal(gl.body.data.length, 3 + 1);
  // A node reports what it owns every 50 ms through its stdout, so the report may trail the answers
  // above: wait (bounded) for it to settle on exactly one owner.
  const owner = await cluster.waitOwner('acme', 5_000);
  t.equal(cluster.owners('acme').length, 1, `still exactly one owner of acme (node ${owner + 1})`);

  // Every node's applier is back on the stream: an organisation made now reaches all of them.
  const { orgId, token } = await signupEverywhere(t, cluster, 2, 'After Restart');
  const r = await client(cluster.nodes[0].url, { orgid: orgId, authorization: `Bearer ${token}` }).post('/repository/create', { datatype: 'note', data: {}, isNew: true });
  t.equal(r.status, 201);
});
