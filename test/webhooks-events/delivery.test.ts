// Producers through the real delivery (issue 34, Must show): a settled tab and a created
// reservation each arrive once at a loopback receiver (node:http, port 0), signed, and verified
// with the `standardwebhooks` package as an integrator's receiver would.
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { caller, diningDefinition, seed } from '../reservations/world.js';
import { openTab, shop } from '../storefront/world.js';

interface Got {
  headers: Record<string, string>;
  body: string;
}

/** A receiver on a loopback port that answers 200 and keeps every request. */
async function receiver(tt: { teardown(fn: () => unknown): void }): Promise<{ url: string; got: Got[] }> {
  const got: Got[] = [];
  const server = createServer((req: IncomingMessage, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      got.push({ headers: req.headers as Record<string, string>, body: Buffer.concat(chunks).toString() });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  tt.teardown(() => new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  }));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`, got };
}

async function until(check: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!check()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

const settle = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The payload, verified as a receiver would (throws on a bad signature or an old timestamp). */
function verified(secret: string, g: Got): any {
  return new Webhook(secret).verify(g.body, {
    'webhook-id': g.headers['webhook-id'],
    'webhook-timestamp': g.headers['webhook-timestamp'],
    'webhook-signature': g.headers['webhook-signature'],
  });
}

// Every module: the webhooks module (endpoints, delivery) is h34-core's, named by no module list here.
const app = await startTestApp(t, {
  config: { webhooks: { allowHosts: ['127.0.0.1'], retryBaseMs: 50, retryMaxMs: 200, pollMs: 50 } },
});

async function subscribe(org: string, url: string, events: string[]): Promise<string> {
  const admin = client(app.url, { orgid: org, authorization: `Bearer ${tokenFor(app, { org, sub: 'admin-1', roles: ['Admin', 'User'] })}` });
  const r = await admin.post('/webhooks/endpoints', { url, events });
  if (r.status !== 201) throw new Error(`endpoint: ${r.status} ${r.text}`);
  return r.body.secret as string;
}

t.test('delivery - a settled tab arrives once, signed, verified with standardwebhooks', async (t) => {
  const rx = await receiver(t);
  const s = await shop({ app, orgs: 0 });
  const secret = await subscribe(s.org, rx.url, ['order.settled']);
  const tab = await openTab(s, { tabLabel: 'Table 9' });
  await s.pub.post(`/storefront/order/${tab.sk}/items`, [{ productId: s.products.Cola, quantity: 2 }]);
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '1' })).body.order.data.status, 'open', 'a part payment settles nothing');
  const settled = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 10 });
  t.equal(settled.body.order.data.status, 'closed');
  await until(() => rx.got.length >= 1);
  await settle(300);
  t.equal(rx.got.length, 1, 'once');
  const event = verified(secret, rx.got[0]);
  t.match(event, { type: 'order.settled', orgId: s.org, id: rx.got[0].headers['webhook-id'] });
  t.same(event.data, settled.body.order, 'data is the order as the settle answered it');
});

t.test('delivery - a created reservation arrives once, signed, verified with standardwebhooks', async (t) => {
  const rx = await receiver(t);
  const org = 'bistro';
  await createOrg(app, org);
  await seed(app, org, 'location', { name: 'downtown', timezone: 'Europe/Berlin' });
  const def = await seed(app, org, 'reservation_definition', diningDefinition());
  const secret = await subscribe(org, rx.url, ['reservation.created']);
  const day = new Date(Date.now() + 2 * 86_400_000);
  const startTime = new Date(Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 12)).toISOString();
  const alice = caller(app, org, { kind: 'customer', customerId: 'c0000000000000000000a11c', email: 'alice@example.com' });
  const booked = await alice.post('/crm/reservations/create', {
    reservationDefinitionId: def.sk,
    service: 'Table',
    startTime,
    partySize: 2,
    customer: { name: 'Alice Example', email: 'alice@example.com' },
    phone: '+4915100000001',
  });
  t.equal(booked.status, 201, booked.text);
  t.equal((await alice.post('/crm/reservations/update', { id: booked.body.sk, notes: 'window seat' })).status, 200, 'an update is not subscribed');
  await until(() => rx.got.length >= 1);
  await settle(300);
  t.equal(rx.got.length, 1, 'once');
  const event = verified(secret, rx.got[0]);
  t.match(event, { type: 'reservation.created', orgId: org });
  t.same(event.data, booked.body, 'data is the reservation as the create answered it');
});
