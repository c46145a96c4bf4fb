// Issue 32: the live door view on a node that does not hold the event's scanner. The scanner tells
// the edge over the bus (NATS here), so a view opened on either node shows a scan made through
// the other within a second.
import t from 'tap';
import { client } from '../helpers/http.js';
import { openSse } from '../helpers/sse.js';
import { signupEverywhere, TestCluster } from './helpers.js';

const cluster = await TestCluster.start(t, { nodes: 2, orgs: [] });

t.test('cluster - a door view on either node shows a scan made through the other within a second', async (t) => {
  const { orgId, token } = await signupEverywhere(t, cluster, 0, 'Door View Cluster');
  const headers = { orgid: orgId, authorization: `Bearer ${token}` };
  const [a, b] = cluster.nodes.map((n) => client(n.url, headers));
  const ev = await a.post('/events', { name: 'Cluster gig', zones: [{ id: 'main', name: 'Main', capacity: 100 }], ticketTypes: [{ title: 'GA' }] });
  t.equal(ev.status, 201);
  const ticket = await a.post(`/events/${ev.body.sk}/tickets`, { ticketTypeId: ev.body.ticketTypes[0].sk, holderEmail: 'ada@example.com' });
  t.equal(ticket.status, 201);
  const owner = await cluster.waitOwner(orgId);
  t.ok(owner === 0 || owner === 1, `node ${owner + 1} holds the scanner`);

  const views = await Promise.all(cluster.nodes.map((n) => openSse(n.url, `/events/${ev.body.sk}/door/stream`, headers)));
  t.teardown(() => views.forEach((v) => v.close()));
  for (const [i, v] of views.entries()) {
    t.equal(v.status, 200, `a view on node ${i + 1}`);
    t.match((await v.next((e) => e.event === 'door')).data, { inside: 0 });
  }
  // In through the node that does not hold the scanner (it forwards), out through the one that does.
  const steps: Array<[string, number, number]> = [
    ['/events/checkin', 1 - owner, 1],
    ['/events/checkout', owner, 0],
  ];
  for (const [path, via, inside] of steps) {
    const from = views.map((v) => v.events.length);
    const sent = performance.now();
    const r = await [a, b][via].post(path, { code: ticket.body.data.number, eventId: ev.body.sk, zone: 'main' });
    t.equal(r.body.success, true, `${path} through node ${via + 1}`);
    for (const [i, v] of views.entries()) {
      const e = await v.next((x) => x.event === 'door' && x.data.inside === inside, 2000, from[i]);
      t.ok(e.at - sent < 1000, `node ${i + 1} shows ${inside} inside ${Math.round(e.at - sent)} ms after it was sent`);
    }
  }
});
