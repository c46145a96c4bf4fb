import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { ConfigError, loadConfig } from '../../core/config.js';
import { createGateways } from '../../core/payments/index.js';
import { openTab, sharedApp, shop, type Shop, type Teardown } from './world.js';

const shared = await sharedApp(t, { modules: ['storefront'] });

async function tabFor(s: Shop, price: string) {
  const tab = await openTab(s, { servicePointId: 'Bar' });
  const res = await s.pub.post(`/storefront/order/${tab.sk}/items`, [{ name: 'Wine', quantity: 1, unitPrice: price }]);
  return res.body;
}

t.test('payment gateways - the configured list, and an unknown processor is 404', async (t) => {
  const s = await shop(shared);
  const list = await s.pub.get('/storefront/payment-gateways');
  t.same(list.body, [{ provider: 'local', publishableKey: null, default: true }]);
  for (const path of ['/storefront/nope/intent', '/storefront/stripe/terminal/intent', '/storefront/paypal/terminal/connection-token']) {
    const res = await s.pub.post(path, { amount: 5 });
    t.equal(res.status, 404, path);
    t.match(res.body, { statusCode: 404, error: 'Not Found', message: /payment processor/ });
  }
});

t.test('terminal intent → settle with ref - only a succeeded intent of that gateway, for that amount, once', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '18.00'); // 18.00 + 10 % tax
  t.equal(tab.data.total, 19.8);

  const created = await s.pub.post('/storefront/local/terminal/intent', { orderId: tab.sk });
  t.equal(created.status, 201);
  const intent = created.body;
  t.match(intent, { provider: 'local', amount: 19.8, currency: 'USD', status: 'requires_payment_method', paymentMethodTypes: ['card_present'], captureMethod: 'automatic', orderId: tab.sk });
  t.match(intent.id, /^pi_local_/);
  t.match(intent.clientSecret, new RegExp(`^${intent.id}_secret_`));

  const early = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 19.8, method: 'card', ref: intent.id });
  t.equal(early.status, 400);
  t.match(early.body.message, 'has not succeeded (status: requires_payment_method)');

  await s.local.simulate(s.org, intent.id, 'succeeded');
  const wrongAmount = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '10', method: 'card', ref: intent.id });
  t.equal(wrongAmount.status, 400);
  t.match(wrongAmount.body.message, 'does not match payment intent');
  const unknown = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: 'pi_local_nothing' });
  t.equal(unknown.status, 400);
  t.match(unknown.body.message, 'is not a payment intent of gateway local');
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: intent.id, gateway: 'stripe' })).status, 400, 'a gateway that is not configured');
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: intent.id, method: 'cash' })).status, 400, 'cash takes no ref');

  const paid = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: intent.id });
  t.equal(paid.status, 200);
  t.match(paid.body.transaction, { method: 'card', gateway: 'local', ref: intent.id, amount: 19.8, applied: 19.8 });
  t.match(paid.body.order.data, { status: 'closed', amountPaid: 19.8 });

  // The same intent cannot pay a second tab.
  const other = await tabFor(s, '18.00');
  const reuse = await s.pub.post(`/storefront/pos/tab/${other.sk}/settle`, { amount: '19.80', ref: intent.id });
  t.equal(reuse.status, 409);
  t.match(reuse.body.message, 'already applied to another order');

  // A declined card.
  const declined = (await s.pub.post('/storefront/local/terminal/intent', { orderId: other.sk })).body;
  await s.local.simulate(s.org, declined.id, 'failed');
  const refused = await s.pub.post(`/storefront/pos/tab/${other.sk}/settle`, { amount: '19.80', ref: declined.id });
  t.equal(refused.status, 400);
  t.match(refused.body.message, 'status: failed, card declined (simulated)');

  // A manual-capture intent is captured by settle.
  const manual = (await s.pub.post('/storefront/local/terminal/intent', { orderId: other.sk, captureMethod: 'manual' })).body;
  const authorised = await s.local.simulate(s.org, manual.id, 'succeeded');
  t.equal(authorised.status, 'requires_capture');
  const captured = await s.pub.post(`/storefront/pos/tab/${other.sk}/settle`, { amount: '19.80', ref: manual.id });
  t.equal(captured.status, 200);
  t.equal((await s.local.getIntent(s.org, manual.id))!.status, 'succeeded');

  // Refunding a card payment goes through its gateway.
  const refund = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: 5 });
  t.equal(refund.status, 200);
  t.match(refund.body.transaction.allocations[0], { transactionId: paid.body.transaction.id, amount: 5, gatewayRefundId: /^re_local_/ });

  // Another tenant cannot see this tenant's intents.
  const elsewhere = await shop(shared);
  const foreignTab = await tabFor(elsewhere, '18.00');
  const foreign = await elsewhere.pub.post(`/storefront/pos/tab/${foreignTab.sk}/settle`, { amount: '19.80', ref: manual.id });
  t.equal(foreign.status, 400);
});

t.test('present-card - the local reader takes a card: terminal intent → present card → settle, offline, over HTTP', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '18.00');
  const intent = (await s.pub.post('/storefront/local/terminal/intent', { orderId: tab.sk })).body;
  const present = (id: string, body: unknown = {}) => s.pub.post(`/storefront/local/terminal/intent/${id}/present-card`, body);

  const declined = await present(intent.id, { outcome: 'declined' });
  t.match([declined.status, declined.body], [200, { id: intent.id, status: 'failed', failureMessage: 'card declined (simulated reader)', amount: 19.8 }]);
  const refused = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 19.8, ref: intent.id });
  t.match([refused.status, refused.body.message], [400, /has not succeeded \(status: failed, card declined/]);

  const approved = await present(intent.id);
  t.match([approved.status, approved.body], [200, { id: intent.id, status: 'succeeded', paymentMethodTypes: ['card_present'] }], 'a card presented again');
  t.notOk('failureMessage' in approved.body);
  const paid = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: intent.id });
  t.match([paid.status, paid.body.transaction, paid.body.order.data.status], [200, { gateway: 'local', ref: intent.id, amount: 19.8 }, 'closed']);
  const again = await present(intent.id);
  t.match([again.status, again.body.message], [409, /is succeeded: it takes no card now/]);

  const online = (await s.pub.post('/storefront/local/intent', { amount: 5 })).body;
  const notTerminal = await present(online.id);
  t.match([notTerminal.status, notTerminal.body.message], [400, /is not a terminal intent \(card_present\)/]);
  t.equal((await present('pi_local_nothing')).status, 404, 'an unknown intent');
  t.equal((await s.pub.post(`/storefront/nope/terminal/intent/${intent.id}/present-card`, {})).status, 404, 'an unknown processor');
  t.equal((await present(online.id, { outcome: 'maybe' })).status, 400);
});

t.test('intents, connection tokens and terminal locations of the local processor', async (t) => {
  const s = await shop(shared);
  const free = await s.pub.post('/storefront/local/intent', { amount: '12.5', currency: 'eur', description: 'deposit' });
  t.equal(free.status, 201);
  t.match(free.body, { amount: 12.5, currency: 'EUR', paymentMethodTypes: ['card'], status: 'requires_payment_method' });
  t.equal((await s.pub.post('/storefront/local/intent', {})).status, 400, 'an amount or an order');
  t.equal((await s.pub.post('/storefront/local/intent', { amount: '-1' })).status, 400);
  t.equal((await s.pub.post('/storefront/local/intent', { amount: 1, currency: 'XXQ' })).status, 400);
  t.equal((await s.pub.post('/storefront/local/intent', { orderId: '0123456789abcdef01234567' })).status, 404);
  const key = '3b241101-e2bb-4255-8caf-4136c566a962';
  const a = await s.pub.post('/storefront/local/intent', { amount: 3, idempotencyKey: key });
  const b = await s.pub.post('/storefront/local/intent', { amount: 3, idempotencyKey: key });
  t.equal(a.body.id, b.body.id, 'a retried create makes one intent');

  const token = await s.pub.post('/storefront/local/terminal/connection-token', { terminalLocationId: 'tml_x' });
  t.equal(token.status, 200);
  t.match(token.body, { secret: /^pst_local_/, location: 'tml_x' });
  const first = await s.pub.post('/storefront/local/terminal/location/ensure', { businessLocationId: 'main' });
  t.match(first.body, { provider: 'local', businessLocationId: 'main', displayName: 'Main Street', created: true });
  const second = await s.pub.post('/storefront/local/terminal/location/ensure', { businessLocationId: 'main' });
  t.match(second.body, { id: first.body.id, created: false });
  t.equal((await s.pub.post('/storefront/local/terminal/location/ensure', { businessLocationId: 'nowhere' })).status, 404);

  const paidTab = await tabFor(s, '1.00');
  await s.pub.post(`/storefront/pos/tab/${paidTab.sk}/settle`, { amount: '1.10' });
  const late = await s.pub.post('/storefront/local/intent', { orderId: paidTab.sk });
  t.equal(late.status, 409, 'a closed tab takes no new intent');
});

t.test('payments config - stripe needs its secret key, unknown gateways are refused', async (t) => {
  const clock = { now: () => Date.now() };
  const store = shared.app.deps.store;
  t.throws(() => createGateways(loadConfig({ payments: { gateways: ['local', 'stripe'] } }, {}), store, clock), ConfigError);
  t.throws(() => loadConfig({}, { PAYMENT_GATEWAYS: 'local,paypal' }), /payments\/gateways/);
  t.throws(() => loadConfig({}, { STRIPE_SECRET_KEY: 'not-a-key' }), /STRIPE_SECRET_KEY/);
  const withKey = createGateways(loadConfig({}, { STRIPE_SECRET_KEY: 'sk_test_abc', STRIPE_PUBLISHABLE_KEY: 'pk_test_abc' }), store, clock);
  t.same(withKey.list().map((g) => [g.name, g.publishableKey]), [['local', null], ['stripe', 'pk_test_abc']], 'a secret key enables stripe');
});

// ---- the stripe adapter, against a local stand-in for the Stripe API (no network) ----------------

interface Recorded {
  method: string;
  path: string;
  params: URLSearchParams;
  headers: IncomingMessage['headers'];
}

async function stripeStandIn(t: Teardown) {
  const requests: Recorded[] = [];
  const intents = new Map<string, Record<string, unknown>>();
  /** Payment intents whose refunds the stand-in declines. */
  const refuseRefunds = new Set<string>();
  let n = 0;
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const url = new URL(req.url ?? '/', 'http://x');
      const params = new URLSearchParams(req.method === 'GET' ? url.search : Buffer.concat(chunks).toString());
      requests.push({ method: req.method ?? '', path: url.pathname, params, headers: req.headers });
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { 'content-type': 'application/json', 'request-id': `req_${++n}` });
        res.end(JSON.stringify(body));
      };
      const metadata = () => Object.fromEntries([...params].filter(([k]) => k.startsWith('metadata[')).map(([k, v]) => [k.slice(9, -1), v]));
      const m = /^\/v1\/payment_intents\/([^/]+)(\/capture)?$/.exec(url.pathname);
      if (req.method === 'POST' && url.pathname === '/v1/payment_intents') {
        const id = `pi_stub${++n}`;
        const pi = {
          id,
          object: 'payment_intent',
          amount: Number(params.get('amount')),
          currency: params.get('currency'),
          status: 'requires_payment_method',
          client_secret: `${id}_secret_x`,
          allowed_payment_method_types: params.getAll('allowed_payment_method_types[0]'),
          payment_method_types: params.getAll('allowed_payment_method_types[0]'),
          capture_method: params.get('capture_method'),
          metadata: metadata(),
          created: 1_700_000_000,
        };
        intents.set(id, pi);
        return send(200, pi);
      }
      if (m) {
        const pi = intents.get(m[1]);
        if (!pi) return send(404, { error: { type: 'invalid_request_error', code: 'resource_missing', message: `No such payment_intent: '${m[1]}'` } });
        if (m[2]) pi.status = 'succeeded';
        return send(200, pi);
      }
      if (url.pathname === '/v1/refunds') {
        if (refuseRefunds.has(params.get('payment_intent') ?? '')) {
          return send(402, { error: { type: 'card_error', code: 'refund_declined', message: 'refund declined (stand-in)' } });
        }
        return send(200, { id: `re_stub${++n}`, object: 'refund', amount: Number(params.get('amount')), currency: 'usd', status: 'succeeded', created: 1_700_000_000, payment_intent: params.get('payment_intent') });
      }
      if (url.pathname === '/v1/terminal/connection_tokens') return send(200, { object: 'terminal.connection_token', secret: 'pst_test_stub', location: params.get('location') });
      if (url.pathname === '/v1/terminal/locations') return send(200, { id: `tml_stub${++n}`, object: 'terminal.location', display_name: params.get('display_name') });
      send(404, { error: { type: 'invalid_request_error', message: `unknown path ${url.pathname}` } });
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => server.close(() => r())));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, intents, refuseRefunds };
}

t.test('stripe adapter - terminal intent with card_present, settle with its ref, refund, through the official SDK', async (t) => {
  const stripe = await stripeStandIn(t);
  const app = await sharedApp(t, {
    modules: ['storefront'],
    config: { payments: { gateways: ['local'], defaultProcessor: 'stripe', currency: 'USD', stripe: { secretKey: 'sk_test_123', publishableKey: 'pk_test_123', apiBase: stripe.url } } },
  });
  const s = await shop(app);
  t.same((await s.pub.get('/storefront/payment-gateways')).body, [
    { provider: 'local', publishableKey: null, default: false },
    { provider: 'stripe', publishableKey: 'pk_test_123', default: true },
  ]);
  const tab = await tabFor(s, '18.00');
  const created = await s.pub.post('/storefront/stripe/terminal/intent', { orderId: tab.sk, idempotencyKey: '9f1c7e0a-5d43-4a8b-9e2f-1b6a7c3d5e70' });
  t.equal(created.status, 201);
  t.match(created.body, { provider: 'stripe', amount: 19.8, currency: 'USD', status: 'requires_payment_method', paymentMethodTypes: ['card_present'], clientSecret: /_secret_/ });
  const sent = stripe.requests.find((r) => r.path === '/v1/payment_intents')!;
  t.equal(sent.headers.authorization, 'Bearer sk_test_123');
  t.equal(sent.params.get('amount'), '1980', 'minor units');
  t.equal(sent.params.get('currency'), 'usd');
  t.equal(sent.params.get('allowed_payment_method_types[0]'), 'card_present');
  t.equal(sent.params.get('metadata[tenant]'), s.org, 'the intent names its tenant');
  t.equal(sent.params.get('metadata[orderId]'), tab.sk);
  t.equal(sent.headers['idempotency-key'], `${s.org}:9f1c7e0a-5d43-4a8b-9e2f-1b6a7c3d5e70`);

  const id = created.body.id as string;
  const notYet = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: id });
  t.equal(notYet.status, 400, 'the reader has not taken the card yet');
  const simulated = await s.pub.post(`/storefront/stripe/terminal/intent/${id}/present-card`, {});
  t.match([simulated.status, simulated.body.message], [400, /simulates a reader of the local gateway; processor stripe takes real cards/], 'present-card is the local gateway’s only');
  stripe.intents.get(id)!.status = 'succeeded';
  const paid = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: id });
  t.equal(paid.status, 200);
  t.match(paid.body.transaction, { gateway: 'stripe', ref: id, method: 'card' });
  t.equal(paid.body.order.data.status, 'closed');
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '1', ref: 'pi_missing' })).status, 409, 'closed');

  const other = await tabFor(s, '18.00');
  t.equal((await s.pub.post(`/storefront/pos/tab/${other.sk}/settle`, { amount: '19.80', ref: 'pi_missing' })).status, 400, 'an intent Stripe does not know');
  stripe.intents.set('pi_foreign', { ...stripe.intents.get(id)!, id: 'pi_foreign', metadata: { tenant: 'someone-else' } });
  const foreign = await s.pub.post(`/storefront/pos/tab/${other.sk}/settle`, { amount: '19.80', ref: 'pi_foreign' });
  t.equal(foreign.status, 400, "another tenant's intent reads as unknown");

  const refund = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: '4.80', reason: 'corked' });
  t.equal(refund.status, 200);
  const r = stripe.requests.find((x) => x.path === '/v1/refunds')!;
  t.equal(r.params.get('payment_intent'), id);
  t.equal(r.params.get('amount'), '480');
  t.equal(r.params.get('metadata[reason]'), 'corked');
  t.match(refund.body.transaction.allocations[0].gatewayRefundId, /^re_stub/);

  const token = await s.pub.post('/storefront/stripe/terminal/connection-token', { terminalLocationId: 'tml_1' });
  t.same(token.body, { secret: 'pst_test_stub', location: 'tml_1' });
  const loc1 = await s.pub.post('/storefront/stripe/terminal/location/ensure', { businessLocationId: 'main' });
  const loc2 = await s.pub.post('/storefront/stripe/terminal/location/ensure', { businessLocationId: 'main' });
  t.match(loc1.body, { provider: 'stripe', displayName: 'Main Street', created: true });
  t.match(loc2.body, { id: loc1.body.id, created: false });
  const locReq = stripe.requests.filter((x) => x.path === '/v1/terminal/locations');
  t.equal(locReq.length, 1, 'created once');
  t.equal(locReq[0].params.get('address[country]'), 'US');
  t.equal(locReq[0].params.get('address[line1]'), '1 Main St');
});

t.test('refund over two card payments - when the second gateway refund fails, the first is recorded and the answer says so', async (t) => {
  const stripe = await stripeStandIn(t);
  const app = await sharedApp(t, {
    modules: ['storefront'],
    config: { payments: { gateways: ['local'], defaultProcessor: 'stripe', currency: 'USD', stripe: { secretKey: 'sk_test_123', publishableKey: 'pk_test_123', apiBase: stripe.url } } },
  });
  const s = await shop(app);
  const tab = await tabFor(s, '20.00');
  const pay = async (amount: string) => {
    const intent = await s.pub.post('/storefront/stripe/terminal/intent', { orderId: tab.sk, amount });
    t.equal(intent.status, 201, intent.text);
    stripe.intents.get(intent.body.id)!.status = 'succeeded';
    const settled = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount, ref: intent.body.id });
    t.equal(settled.status, 200, settled.text);
    return intent.body.id as string;
  };
  const older = await pay('10.00');
  await pay('12.00');
  // Newest payment first: its refund goes through, the older one's is declined.
  stripe.refuseRefunds.add(older);
  const key = '0d9c8b7a-6f5e-4d3c-8b2a-1f0e9d8c7b6a';
  const failed = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { reason: 'closing early', idempotencyKey: key });
  t.equal(failed.status, 402, failed.text);
  // A retry with the same key answers the same, and refunds nothing more.
  const again = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { reason: 'closing early', idempotencyKey: key });
  t.same([again.status, again.body.message], [402, failed.body.message]);
  t.match(failed.body.message, /refund declined \(stand-in\).*12\.00 USD was refunded to the first 1 payment\(s\) and is recorded/);
  const order = (await s.pub.get(`/storefront/order/${tab.sk}`)).body;
  t.equal(order.data.amountRefunded, 12, 'what the gateway refunded is on the order');
  t.match(order.data.payments.at(-1), { type: 'refund', amount: 12 });

  // The rest, once the gateway takes it.
  stripe.refuseRefunds.clear();
  const rest = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, {});
  t.equal(rest.status, 200, rest.text);
  t.equal(rest.body.transaction.amount, 10);
  t.equal(rest.body.order.data.amountRefunded, 22);
  const refunds = stripe.requests.filter((r) => r.path === '/v1/refunds').map((r) => [r.params.get('payment_intent'), r.params.get('amount')]);
  t.same(refunds.filter(([pi]) => pi === older).map(([, a]) => a), ['1000', '1000'], 'the declined refund, then the new request');
  t.equal(refunds.length, 3, 'the newer payment was refunded once; the keyed retry reached no gateway');
});

t.test('payment intents with idempotencyKey - retries together make one intent; a retry after the tab is paid answers the first', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '18.00');
  const key = '3b2f8c1e-6a4d-4f7b-9c0e-5d1a2b3c4d5e';
  const body = { orderId: tab.sk, idempotencyKey: key };
  const together = await Promise.all(Array.from({ length: 5 }, () => s.pub.post('/storefront/local/intent', body)));
  t.same(together.map((r) => r.status), [201, 201, 201, 201, 201]);
  const ids = new Set(together.map((r) => r.body.id));
  t.equal(ids.size, 1, 'one intent');
  const id = [...ids][0] as string;

  await s.local.simulate(s.org, id, 'succeeded');
  const paid = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '19.80', ref: id });
  t.match(paid.body.order.data, { status: 'closed' });
  const retry = await s.pub.post('/storefront/local/intent', body);
  t.equal(retry.status, 201, retry.text);
  t.equal(retry.body.id, id, 'the first answer, though the tab is closed now');
  const other = await s.pub.post('/storefront/local/intent', { orderId: tab.sk, amount: '1.00', idempotencyKey: key });
  t.equal(other.status, 409, 'the same key with another request');
  t.equal((await s.pub.post('/storefront/local/intent', { orderId: tab.sk })).status, 409, 'without a key: the tab is closed');
});
