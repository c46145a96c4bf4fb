// A request for a tenant another node serves goes to that owner over NATS and nowhere else: the
// owner serves it through its own pipeline, so no header a client sends can make a node that does
// not hold the tenant answer it from its own (empty) copy.
import { createHash } from 'node:crypto';
import t from 'tap';
import { TEST_JWT_SECRET } from '../helpers/app.js';
import { staffClient, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 2, orgs: ['acme'] });
const acme = cluster.nodes.map((n) => staffClient(n.url, 'acme'));

t.test('cluster - a client sending the old hop header with a valid token is still sent to the owner, which answers', async (t) => {
  const created = await acme[0].post('/repository/create', { datatype: 'note', data: { text: 'held by the owner' }, isNew: true });
  t.equal(created.status, 201);
  const owner = await cluster.waitOwner('acme');
  const other = acme[1 - owner];
  // What the edge once took as proof that a request came from another node (derived from the
  // shared JWT secret): a node must not serve a tenant it does not hold because of it.
  const hop = createHash('sha256').update('cluster-hop\u0000').update(TEST_JWT_SECRET).digest('base64url');
  const got = await other.get(`/repository/get/note/${created.body.sk}`, { 'x-cluster-hop': hop, 'x-cluster-client-ip': '203.0.113.9' });
  t.equal(got.status, 200, 'answered by the owner, not from the other node’s copy');
  t.equal(got.body?.data?.text, 'held by the owner');
});
