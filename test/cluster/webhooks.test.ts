// Issue 34: every node of a cluster applies the commit stream, yet each webhook event is delivered
// once: only the node owning the organisation dispatches its deliveries.
import t from 'tap';
import { client } from '../helpers/http.js';
import { receiver, sleep, verify } from '../webhooks/receiver.js';
import { signupEverywhere, TestCluster } from './helpers.js';

// The nodes inherit the environment: loopback receivers are allowed.
process.env.WEBHOOK_ALLOW_HOSTS = '127.0.0.1';
const cluster = await TestCluster.start(t, { nodes: 3, orgs: [] });

t.test('cluster - a webhook event is delivered once although every node applies the commit stream', async (t) => {
  const rx = await receiver(t);
  const { orgId, token } = await signupEverywhere(t, cluster, 0, 'Webhook Cluster');
  const nodes = cluster.nodes.map((n) => client(n.url, { orgid: orgId, authorization: `Bearer ${token}` }));
  const ep = await nodes[1].post('/webhooks/endpoints', { url: rx.url, events: ['ticket.checked_in'] });
  t.equal(ep.status, 201, 'endpoint created through node 2');
  const ev = (await nodes[0].post('/events', { name: 'Cluster gig', zones: [{ id: 'main', name: 'Main' }], ticketTypes: [{ title: 'GA' }] })).body;
  const comp = await nodes[0].post('/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: 3, holderEmail: 'x@example.com' }] });
  const tickets = comp.body.tickets;
  // Through each node in turn: the subscription reached every node over the bus.
  for (const [i, c] of nodes.entries()) {
    const r = await c.post('/events/checkin', { code: tickets[i].data.number, eventId: ev.sk });
    t.equal(r.body.success, true, `checked in through node ${i + 1}`);
  }
  await rx.waitFor(3, 15_000);
  await sleep(1500);
  const ids = rx.got.map((g) => (verify(ep.body.secret, g) as any).id);
  t.equal(rx.got.length, 3, 'three requests');
  t.equal(new Set(ids).size, 3, 'three events, each once');
  t.same(rx.got.map((g) => g.json.data.ticket.sk).sort(), tickets.map((x: any) => x.sk).sort());
});
