import t from 'tap';
import { openTab, sharedApp, shop, type Shop } from './world.js';

const shared = await sharedApp(t, { modules: ['storefront'] });

const cents = (n: number) => Math.round(n * 100);
const sumCents = (orders: Array<{ data: Record<string, number> }>, field: string) => orders.reduce((a, o) => a + cents(o.data[field]), 0);

async function tabWith(s: Shop, items: unknown[]) {
  const tab = await openTab(s, { servicePointId: 'Table 1' });
  const res = await s.pub.post(`/storefront/order/${tab.sk}/items`, items);
  if (res.status !== 200) throw new Error(res.text);
  return res.body;
}

t.test('split by items - the lines move to a new open tab and the sums equal the original', async (t) => {
  const s = await shop(shared);
  const before = await tabWith(s, [
    { productId: s.products.Margherita, quantity: 1 },
    { productId: s.products.Cola, quantity: 2 },
    { productId: s.products.Espresso, quantity: 3 },
  ]);
  t.match(before.data, { subtotal: 14.8, tax: 0.98, total: 15.78 });
  const fired = await s.pub.post(`/storefront/order/${before.sk}/fire`);
  const [pizza, cola, espresso] = fired.body.order.data.productItems;

  const res = await s.pub.post(`/storefront/pos/tab/${before.sk}/split`, { itemIds: [cola.lineId, espresso.lineId] });
  t.equal(res.status, 200);
  const { order, orders } = res.body;
  t.equal(orders.length, 1);
  const child = orders[0];
  t.same(order.data.productItems.map((l: { lineId: string }) => l.lineId), [pizza.lineId]);
  t.same(child.data.productItems.map((l: { lineId: string }) => l.lineId), [cola.lineId, espresso.lineId]);
  t.equal(child.data.productItems[0].taskId, cola.taskId, 'fired lines keep their task');
  t.match(child.data, { status: 'open', splitFrom: before.sk, orderNumber: before.data.orderNumber + 1, tabLabel: 'Table 1 (split)', servicePointName: 'Table 1' });
  t.match(order.data, { status: 'open', splitInto: [child.sk], subtotal: 9.5, tax: 0.95, total: 10.45 });
  t.match(child.data, { subtotal: 5.3, tax: 0.03, total: 5.33 });
  for (const f of ['subtotal', 'tax', 'total']) t.equal(sumCents([order, child], f), cents(before.data[f]), `${f} adds up`);

  const open = await s.pub.get('/storefront/pos/tabs?businessLocationId=main');
  t.same(open.body.data.map((r: { sk: string }) => r.sk), [before.sk, child.sk]);
  const again = await s.pub.post('/storefront/pos/tab', { businessLocationId: 'main', servicePointId: 'Table 1' });
  t.equal(again.body.sk, before.sk, 'the point still answers its oldest open tab');

  const refusals: Array<[unknown, number, RegExp]> = [
    [{ itemIds: ['nope'] }, 400, /has no line nope/],
    [{ itemIds: [pizza.lineId] }, 400, /nothing would be left/],
    [{ itemIds: [pizza.lineId], parts: 2 }, 400, /either/],
    [{}, 400, /either/],
    [{ parts: 1 }, 400, /parts/],
    [{ parts: '2' }, 400, /parts/],
  ];
  for (const [body, status, message] of refusals) {
    const r = await s.pub.post(`/storefront/pos/tab/${before.sk}/split`, body);
    t.equal(r.status, status, JSON.stringify(body));
    t.match(String(r.body.message), message);
  }
});

t.test('split in parts - n new tabs, remainder cents on the first, sums exactly the original', async (t) => {
  const s = await shop(shared);
  const before = await tabWith(s, [{ name: 'Platter', quantity: 1, unitPrice: 10 }]);
  t.match(before.data, { subtotal: 10, tax: 1, total: 11 });
  const res = await s.pub.post(`/storefront/pos/tab/${before.sk}/split`, { parts: 3 });
  t.equal(res.status, 200);
  const { order, orders } = res.body;
  t.equal(orders.length, 3);
  t.same(orders.map((o: { data: { subtotal: number } }) => o.data.subtotal), [3.34, 3.33, 3.33]);
  t.same(orders.map((o: { data: { tax: number } }) => o.data.tax), [0.34, 0.33, 0.33]);
  t.same(orders.map((o: { data: { total: number } }) => o.data.total), [3.68, 3.66, 3.66]);
  for (const f of ['subtotal', 'tax', 'total']) t.equal(sumCents(orders, f), cents(before.data[f]), `${f} adds up`);
  t.match(order.data, { status: 'split', splitInto: orders.map((o: { sk: string }) => o.sk) });
  t.ok(order.data.closedAt);
  t.same(orders.map((o: { data: { orderNumber: number } }) => o.data.orderNumber), [2, 3, 4].map((i) => before.data.orderNumber + i - 1));
  t.same(orders.map((o: { data: { tabLabel: string } }) => o.data.tabLabel), ['Table 1 (1/3)', 'Table 1 (2/3)', 'Table 1 (3/3)']);
  const open = await s.pub.get('/storefront/pos/tabs?businessLocationId=main');
  t.same(open.body.data.map((r: { sk: string }) => r.sk), orders.map((o: { sk: string }) => o.sk), 'the original is no longer open');
  t.equal((await s.pub.post(`/storefront/pos/tab/${before.sk}/split`, { parts: 2 })).status, 409, 'a split tab cannot be split again');
  t.equal((await s.pub.post(`/storefront/pos/tab/${before.sk}/settle`, { amount: 1 })).status, 409, 'nor settled');

  // Each part pays on its own; the point is freed only when the last open tab there closes.
  for (const [i, o] of orders.entries()) {
    const paid = await s.pub.post(`/storefront/pos/tab/${o.sk}/settle`, { amount: o.data.total, method: 'card' });
    t.equal(paid.body.order.data.status, 'closed');
    const status = s.app.deps.store.getRecord(s.org, 'service_point', s.points['Table 1'])!.data.status;
    t.equal(status, i === orders.length - 1 ? 'dirty' : 'occupied', `point after part ${i + 1}`);
  }

  // Odd amounts into many parts still add up.
  const odd = await tabWith(s, [{ name: 'Odd', quantity: '7', unitPrice: '1.37' }]);
  const many = await s.pub.post(`/storefront/pos/tab/${odd.sk}/split`, { parts: 7 });
  for (const f of ['subtotal', 'tax', 'total']) t.equal(sumCents(many.body.orders, f), cents(odd.data[f]), `${f} adds up over 7 parts`);
});

t.test('split - a tab with payments is refused', async (t) => {
  const s = await shop(shared);
  const tab = await tabWith(s, [{ name: 'Soup', quantity: 2, unitPrice: 4 }]);
  await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 1 });
  const res = await s.pub.post(`/storefront/pos/tab/${tab.sk}/split`, { parts: 2 });
  t.equal(res.status, 409);
  t.match(res.body.message, 'has payments');
  const empty = await openTab(s, { tabLabel: 'empty' });
  t.equal((await s.pub.post(`/storefront/pos/tab/${empty.sk}/split`, { parts: 2 })).status, 400, 'nothing to split');
});
