import { randomUUID } from 'node:crypto';
import t from 'tap';
import { openTab, point, sharedApp, shop, type Shop } from './world.js';

const shared = await sharedApp(t, { modules: ['storefront'] });

async function tabFor(s: Shop, total: string, at?: string) {
  const tab = await openTab(s, at ? { servicePointId: at } : { tabLabel: `t-${randomUUID()}` });
  // Cola has no tax: the total is exactly the price.
  const res = await s.pub.post(`/storefront/order/${tab.sk}/items`, [{ productId: s.products.Cola, quantity: 1, unitPrice: total }]);
  if (res.status !== 200) throw new Error(res.text);
  return res.body;
}

function stored(s: Shop, id: string) {
  return s.app.deps.store.getRecord(s.org, 'sf_order', id)!;
}

t.test('settle race - two full payments at once: one closes the tab, the other is refused, nothing lost', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '42.10', 'Table 2');
  const pointVersion = point(s, 'Table 2').version;
  const replies = await Promise.all([
    s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '42.10', method: 'card' }),
    s.staff.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 42.1, method: 'card' }),
  ]);
  t.same(replies.map((r) => r.status).sort(), [200, 409]);
  const loser = replies.find((r) => r.status === 409)!;
  t.match(loser.body.message, 'it is closed');
  const rec = stored(s, tab.sk);
  t.match(rec.data, { status: 'closed', amountPaid: 42.1 });
  t.equal((rec.data.payments as unknown[]).length, 1, 'one payment recorded');
  t.equal(point(s, 'Table 2').version, pointVersion + 1, 'the point was set dirty once');
  t.equal(point(s, 'Table 2').data.status, 'dirty');
});

t.test('settle race - many partial payments at once all land, and exactly one of them closes the tab', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '50.00');
  const replies = await Promise.all(
    Array.from({ length: 10 }, (_, i) => s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '5', method: i % 2 ? 'card' : 'cash' })),
  );
  t.same(replies.map((r) => r.status), Array(10).fill(200));
  t.equal(replies.filter((r) => r.body.order.data.status === 'closed').length, 1, 'closed once');
  t.same(replies.map((r) => r.body.order.data.amountPaid).sort((a, b) => a - b), [5, 10, 15, 20, 25, 30, 35, 40, 45, 50], 'each saw the one before');
  const rec = stored(s, tab.sk);
  t.match(rec.data, { status: 'closed', amountPaid: 50, balanceDue: 0 });
  t.equal((rec.data.payments as unknown[]).length, 10);
  t.equal(new Set((rec.data.payments as Array<{ id: string }>).map((p) => p.id)).size, 10);
});

t.test('settle race - card payments that together overshoot: the first lands, the rest are refused', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '10.00');
  const replies = await Promise.all([1, 2, 3].map(() => s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '6', method: 'card' })));
  t.same(replies.map((r) => r.status).sort(), [200, 400, 400]);
  t.match(stored(s, tab.sk).data, { status: 'open', amountPaid: 6 });
  const rest = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '4', method: 'card' });
  t.equal(rest.body.order.data.status, 'closed');
});

t.test('settle - idempotencyKey: a retry answers the first result and takes no second payment', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '20.00');
  const key = randomUUID();
  const first = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '8', idempotencyKey: key });
  t.equal(first.status, 200);
  const retry = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '8', idempotencyKey: key });
  t.equal(retry.status, 200);
  t.equal(retry.body.transaction.id, first.body.transaction.id);
  t.equal(retry.body.order.data.amountPaid, 8);
  const other = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '9', idempotencyKey: key });
  t.equal(other.status, 409, 'the same key with another body');
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '1', idempotencyKey: 'not-a-uuid' })).status, 400);

  // Concurrent duplicates (a client that retries before the first answer arrives).
  const key2 = randomUUID();
  const dup = await Promise.all([1, 2, 3].map(() => s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '2', idempotencyKey: key2 })));
  t.same(dup.map((r) => r.status), [200, 200, 200]);
  t.equal(new Set(dup.map((r) => r.body.transaction.id)).size, 1);
  const rec = stored(s, tab.sk);
  t.equal(rec.data.amountPaid, 10, '8 + 2, each taken once');
  t.equal((rec.data.payments as unknown[]).length, 2);

  // The key is kept across a restart of the actor (passivated) too.
  s.app.deps.runtime.passivateIdle();
  const later = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '2', idempotencyKey: key2 });
  t.equal(later.body.transaction.id, dup[0].body.transaction.id);
  t.equal(stored(s, tab.sk).data.amountPaid, 10);
});

t.test('refund bound - never more than was paid, per payment or in total, even when racing', async (t) => {
  const s = await shop(shared);
  const tab = await tabFor(s, '20.00');
  const p1 = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '12', method: 'card' });
  const p2 = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '8' });
  t.equal(p2.body.order.data.status, 'closed');

  const over = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { transactionId: p2.body.transaction.id, amount: '8.01' });
  t.equal(over.status, 400);
  t.match(over.body.message, 'more than the 8.00 USD left of payment');
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: '20.01' })).status, 400);
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: 0 })).status, 400);
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { transactionId: 'nope' })).status, 400);

  const racing = await Promise.all([1, 2].map(() => s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: '15' })));
  t.same(racing.map((r) => r.status).sort(), [200, 400], 'two refunds of 15 on 20 paid: one lands');
  const ok = racing.find((r) => r.status === 200)!;
  t.same(ok.body.transaction.allocations.map((a: { transactionId: string; amount: number }) => [a.transactionId, a.amount]), [
    [p2.body.transaction.id, 8],
    [p1.body.transaction.id, 7],
  ], 'newest payment first');
  const all = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, {});
  t.equal(all.status, 200);
  t.equal(all.body.transaction.amount, 5, 'without an amount: what is left');
  t.match(all.body.order.data, { amountPaid: 20, amountRefunded: 20, status: 'closed' });
  const none = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, {});
  t.equal(none.status, 400);
  t.match(none.body.message, 'nothing to refund');
  const unpaid = await tabFor(s, '3.00');
  t.equal((await s.pub.post(`/storefront/pos/tab/${unpaid.sk}/refund`, { amount: 1 })).status, 400, 'an unpaid tab has nothing to refund');
});

t.test('order numbers - per tenant, unique across locations opening at once, and after the actors restart', async (t) => {
  const s = await shop(shared);
  const { seed } = await import('./world.js');
  await seed(s.app, s.org, 'location', { name: 'uptown' });
  const opened = await Promise.all(
    Array.from({ length: 20 }, (_, i) => s.pub.post('/storefront/pos/tab', { businessLocationId: i % 2 ? 'uptown' : 'main', tabLabel: `guest ${i}` })),
  );
  t.same(opened.map((r) => r.status), Array(20).fill(201));
  const numbers = opened.map((r) => r.body.data.orderNumber).sort((a, b) => a - b);
  t.same(numbers, Array.from({ length: 20 }, (_, i) => 1001 + i));
  s.app.deps.runtime.passivateIdle();
  t.equal(s.app.deps.runtime.isLive(s.org, 'pos-tabs', 'main'), false);
  const next = await openTab(s, { tabLabel: 'after restart' });
  t.equal(next.data.orderNumber, 1021);
  const open = await s.pub.get('/storefront/pos/tabs?businessLocationId=main&pageSize=50');
  t.equal(open.body.total, 11, 'the open tabs are found again on activation');
  const same = await s.pub.post('/storefront/pos/tab', { businessLocationId: 'main', tabLabel: 'GUEST 0' });
  t.equal(same.status, 200, 'and still answer by label');
  t.equal(same.body.sk, opened[0].body.sk);
});
