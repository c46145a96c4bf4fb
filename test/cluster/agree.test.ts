// Three nodes on one nats-server: whichever node a request reaches, the tenant's owner answers it,
// so records, scans and stats agree everywhere, and the scanner's rules hold cluster-wide.
import t from 'tap';
import { client } from '../helpers/http.js';
import { signupEverywhere, staffClient, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 3, orgs: ['acme', 'globex'] });
const acme = cluster.nodes.map((n) => staffClient(n.url, 'acme'));
const globex = cluster.nodes.map((n) => staffClient(n.url, 'globex'));

t.test('cluster - records written through every node read the same through every node', async (t) => {
  const ids: string[] = [];
  for (let i = 0; i < 9; i++) {
    const r = await acme[i % 3].post('/repository/create', { datatype: 'sf_order', data: { n: i, via: i % 3 }, isNew: true });
    t.equal(r.status, 201, `create ${i} through node ${i % 3}`);
    ids.push(r.body.sk);
  }
  t.equal(cluster.owners('acme').length, 1, 'exactly one node serves acme');
  // An update through one node, with the version read through another.
  const got = await acme[2].get(`/repository/get/sf_order/${ids[0]}`);
  const upd = await acme[1].post(`/repository/update/sf_order/${ids[0]}`, { data: { n: 100 }, version: got.body.version });
  t.equal(upd.status, 200);
  t.equal((await acme[0].post(`/repository/update/sf_order/${ids[0]}`, { data: { n: 101 }, version: got.body.version })).status, 409, 'a stale version is refused on any node');
  const views = await Promise.all(acme.map((c) => c.post('/repository/find/sf_order', { options: { pageSize: 50 } })));
  for (const v of views) t.equal(v.status, 200);
  t.equal(views[0].body.data.length, 9);
  t.same(views[1].body, views[0].body, 'node 2 answers what node 1 answers');
  t.same(views[2].body, views[0].body, 'node 3 answers what node 1 answers');
  t.equal(views[0].body.data.find((r: any) => r.sk === ids[0]).data.n, 100);
  // Another tenant is isolated, and may well live on another node.
  t.same((await globex[1].post('/repository/find/sf_order', {})).body.data, []);
  const g = await globex[2].post('/repository/create', { datatype: 'sf_order', data: { n: 1 }, isNew: true });
  t.equal(g.status, 201);
  t.equal((await globex[0].get(`/repository/get/sf_order/${g.body.sk}`)).body.data.n, 1);
  t.equal((await acme[0].get(`/repository/get/sf_order/${g.body.sk}`)).status, 404);
});

t.test('cluster - scans through all three nodes agree, and 50 concurrent scans of one ticket let one in', async (t) => {
  const ev = (await acme[0].post('/events', { name: 'Cluster Fest', zones: [{ id: 'main', name: 'Main' }], ticketTypes: [{ title: 'GA' }] })).body;
  const comp = await acme[1].post('/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: 31, holderEmail: 'crowd@example.com' }] });
  t.equal(comp.status, 201);
  const codes: string[] = comp.body.tickets.map((x: any) => x.data.number);

  // One ticket, 50 doors, three nodes: exactly one admission.
  const door = codes[0];
  const replies = await Promise.all(Array.from({ length: 50 }, (_, i) => acme[i % 3].post('/events/checkin', { code: door, zone: 'main', eventId: ev.sk })));
  t.ok(replies.every((r) => r.status === 200), 'every scan answered');
  t.equal(replies.filter((r) => r.body.success).length, 1, 'exactly one success');
  t.equal(replies.filter((r) => r.body.reason === 'already_checked_in').length, 49, 'the other 49 are already inside');

  // Thirty more tickets, each scanned through a different node.
  const scans = await Promise.all(codes.slice(1).map((code, i) => acme[i % 3].post('/events/checkin', { code, zone: 'main', eventId: ev.sk })));
  t.equal(scans.filter((r) => r.body.success).length, 30);
  const stats = await Promise.all(acme.map((c) => c.get(`/events/${ev.sk}/checkin-stats`)));
  t.equal(stats[0].body.successful, 31);
  t.same(stats[1].body, stats[0].body, 'stats through node 2');
  t.same(stats[2].body, stats[0].body, 'stats through node 3');
  const occupancy = await Promise.all(acme.map((c) => c.get(`/events/${ev.sk}/occupancy`)));
  for (const o of occupancy) t.equal(o.body.main.currentOccupancy, 31);
});

t.test('cluster - requests without a tenant are answered where they arrive; forwarded answers keep their headers', async (t) => {
  for (const n of cluster.nodes) t.equal((await staffClient(n.url, 'acme').get('/healthz')).status, 200);
  const owner = await cluster.waitOwner('acme');
  const other = acme[(owner + 1) % 3];
  const direct = await acme[owner].get('/repository/get/sf_order/000000000000000000000000', { 'x-request-id': 'probe-1' });
  const relayed = await other.get('/repository/get/sf_order/000000000000000000000000', { 'x-request-id': 'probe-1' });
  t.equal(relayed.status, direct.status);
  t.same(relayed.body, direct.body);
  for (const h of ['content-type', 'x-request-id', 'x-content-type-options', 'cache-control']) t.equal(relayed.headers[h], direct.headers[h], h);
  t.notOk(relayed.headers['x-cluster-hop'], 'no cluster header leaks out');
});

t.test('cluster - an organisation signed up through one node is served through every node', async (t) => {
  const { orgId, token } = await signupEverywhere(t, cluster, 1, 'Signup Co');
  for (const [i, n] of cluster.nodes.entries()) {
    const c = client(n.url, { orgid: orgId, authorization: `Bearer ${token}` });
    const r = await c.post('/repository/create', { datatype: 'note', data: { via: i }, isNew: true });
    t.equal(r.status, 201, `node ${i + 1} serves ${orgId}`);
  }
  const list = await client(cluster.nodes[0].url, { orgid: orgId, authorization: `Bearer ${token}` }).post('/repository/find/note', {});
  t.equal(list.body.data.length, 3);
});
