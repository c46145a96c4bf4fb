// Issue 31: a scanner device revoked through one node is refused through the other, as an API key
// is (test/cluster/revocation.test.ts): the device token is read from the store on every request,
// and the revocation reaches every node's store through the commit stream.
import t from 'tap';
import { client } from '../helpers/http.js';
import { signupEverywhere, sleep, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 2, orgs: [] });

t.test('cluster - a scanner device revoked through one node is refused through the other', async (t) => {
  const { orgId, token } = await signupEverywhere(t, cluster, 0, 'Device Cluster');
  const [a, b] = cluster.nodes.map((n) => client(n.url, { orgid: orgId }));
  const admin = { authorization: `Bearer ${token}` };
  const ev = await a.post('/events', { name: 'Cluster gig', zones: [{ id: 'main', name: 'Main', capacity: 100 }], ticketTypes: [{ title: 'GA' }] }, admin);
  t.equal(ev.status, 201);
  const enrolled = await a.post('/events/devices', { name: 'Gate', eventIds: [ev.body.sk] }, admin);
  t.equal(enrolled.status, 201);
  const init = await b.post('/events/devices/initialize', { initToken: enrolled.body.initToken });
  t.equal(init.status, 200, 'initialized through node 2');
  const device = { authorization: `Device ${init.body.token}` };
  const scan = (c: typeof a) => c.post('/events/checkin', { code: 'NOPE-1234', eventId: ev.body.sk }, device);
  for (const [i, c] of [a, b].entries()) t.same((await scan(c)).body, { success: false, reason: 'invalid_code' }, `the device scans through node ${i + 1}`);

  t.equal((await a.post(`/events/devices/${init.body.deviceId}/revoke`, {}, admin)).status, 200, 'revoked through node 1');
  const start = Date.now();
  let status = 0;
  while (Date.now() - start < 5000 && (status = (await scan(b)).status) !== 401) await sleep(20);
  t.equal(status, 401, `node 2 refuses the revoked device (after ${Date.now() - start} ms)`);
});
