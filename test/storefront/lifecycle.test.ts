import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { openTab, point, sharedApp, shop } from './world.js';

const shared = await sharedApp(t, { modules: ['storefront', 'records', 'reference'] });

t.test('tab lifecycle - open, add lines, fire twice, settle in two payments, receipts, refund, closed list', async (t) => {
  const s = await shop(shared);
  const { app, org } = s;

  // Open at a service point, anonymously: the shop's organisation predates the closed default, so its storefront is open (the spec's mode).
  const opened = await s.pub.post('/storefront/pos/tab', { businessLocationId: s.slug, servicePointId: 'Table 1' });
  t.equal(opened.status, 201);
  const tab = opened.body;
  t.match(tab.data, { status: 'open', orderNumber: 1001, tabLabel: 'Table 1', servicePointId: s.points['Table 1'], servicePointName: 'Table 1', businessLocationId: 'main' });
  t.equal(tab.data.subtotal, 0);
  t.equal(point(s, 'Table 1').data.status, 'occupied', 'a tab at a point occupies it');
  const again = await s.pub.post('/storefront/pos/tab', { businessLocationId: s.slug, servicePointId: 'table 1' });
  t.equal(again.status, 200, 'the point already has an open tab: that one is answered');
  t.equal(again.body.sk, tab.sk);
  const second = await openTab(s, { tabLabel: 'Bar guest' });
  t.equal(second.data.orderNumber, 1002, 'order numbers are per tenant and never repeat');

  // Lines with money as strings and as numbers.
  const added = await s.pub.post(`/storefront/order/${tab.sk}/items`, [
    { productId: s.products.Margherita, quantity: '2', modifiers: [{ name: 'Extra cheese', price: '1.25' }, 'No basil'], notes: 'well done' },
    { productId: s.products.Cola, quantity: 3, unitPrice: '2.40' },
  ]);
  t.equal(added.status, 200);
  const [pizza, cola] = added.body.data.productItems;
  t.match(pizza, { name: 'Margherita', quantity: 2, unitPrice: 9.5, taxRate: 10, subtotal: 21.5, tax: 2.15, total: 23.65, notes: 'well done' });
  t.same(pizza.modifiers, [{ name: 'Extra cheese', price: 1.25 }, { name: 'No basil', price: 0 }]);
  t.match(cola, { name: 'Cola', quantity: 3, unitPrice: 2.4, taxRate: 0, subtotal: 7.2, tax: 0 });
  t.match(added.body.data, { subtotal: 28.7, tax: 2.15, total: 30.85, balanceDue: 30.85, amountPaid: 0 });

  // Fire: one kitchen task for the unfired lines; again: nothing.
  const fire1 = await s.pub.post(`/storefront/order/${tab.sk}/fire`);
  t.equal(fire1.status, 200);
  t.equal(fire1.body.fired, 2);
  t.match(fire1.body.task.data, { workflowId: 'kitchen', orderId: tab.sk, businessLocationId: 'main', servicePointName: 'Table 1', status: 'open' });
  t.same(fire1.body.order.data.productItems.map((l: { taskId: string }) => l.taskId), [fire1.body.task.sk, fire1.body.task.sk]);
  const fire2 = await s.pub.post(`/storefront/order/${tab.sk}/fire`);
  t.same([fire2.body.fired, fire2.body.task], [0, null], 'firing again adds nothing');
  t.equal(app.deps.store.count(org, 'task', { 'data.orderId': tab.sk }), 1, 'one task after two fires');

  // A later line fires on its own; the earlier lines keep their task.
  await s.pub.post(`/storefront/order/${tab.sk}/items`, { items: [{ productId: s.products.Espresso, quantity: 1 }] });
  const fire3 = await s.pub.post(`/storefront/order/${tab.sk}/fire`);
  t.equal(fire3.body.fired, 1);
  t.not(fire3.body.task.sk, fire1.body.task.sk);
  const lines = fire3.body.order.data.productItems;
  t.same(lines.map((l: { taskId: string }) => l.taskId), [fire1.body.task.sk, fire1.body.task.sk, fire3.body.task.sk]);
  t.match(fire3.body.order.data, { subtotal: 28.8, tax: 2.16, total: 30.96 });

  // Partial, then final payment (cash, with a tip, overpaid: change).
  const part = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '10', method: 'card' });
  t.equal(part.status, 200);
  t.match(part.body.transaction, { type: 'payment', method: 'card', amount: 10, applied: 10, change: 0 });
  t.match(part.body.order.data, { status: 'open', amountPaid: 10, balanceDue: 20.96 });
  t.equal(part.body.order.amountPaid, 10, 'amountPaid is also at the record root');
  const last = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 25, tip: '1.04' });
  t.equal(last.status, 200);
  t.match(last.body.transaction, { method: 'cash', amount: 25, applied: 22, change: 3, tip: 1.04 });
  t.match(last.body.order.data, { status: 'closed', tip: 1.04, total: 32, amountPaid: 32, changeDue: 3, balanceDue: 0 });
  t.ok(last.body.order.data.closedAt);
  t.equal(last.body.order.state, 'closed');
  t.equal(point(s, 'Table 1').data.status, 'dirty', 'the closed tab leaves its point dirty');
  const closedAgain = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 1 });
  t.equal(closedAgain.status, 409);
  t.match(closedAgain.body, { statusCode: 409, error: 'Conflict', message: /closed/ });

  // Receipt payloads, both copies.
  for (const copy of ['customer', 'merchant']) {
    const r = await s.pub.get(`/storefront/pos/tab/${tab.sk}/receipt-payload?copy=${copy}`);
    t.equal(r.status, 200);
    t.match(r.body, {
      type: 'receipt',
      copy,
      copyLabel: copy === 'customer' ? 'Customer copy' : 'Merchant copy',
      currency: 'USD',
      business: { orgId: org, name: org.replace('shop', 'Shop ') },
      location: { businessLocationId: 'main', name: 'Main Street', address: ['1 Main St', '12345 Springfield', 'US'], phone: '+1 555 0100' },
      order: { id: tab.sk, orderNumber: '1001', tabLabel: 'Table 1', status: 'closed' },
      subtotal: 28.8,
      tax: 2.16,
      tip: 1.04,
      total: 32,
      amountPaid: 32,
      change: 3,
      footer: 'See you soon!',
      signatureLine: copy === 'merchant',
    });
    t.equal(r.body.lines.length, 3);
    t.same(r.body.lines[0].modifiers, [{ name: 'Extra cheese', price: 1.25 }, { name: 'No basil', price: 0 }]);
    t.equal(r.body.payments.length, 2);
  }
  const check = await s.pub.get(`/storefront/pos/tab/${second.sk}/check-payload?copy=merchant`);
  t.match(check.body, { type: 'check', copy: 'merchant', balanceDue: 0, tipSuggestions: [{ percent: 15 }, { percent: 18 }, { percent: 20 }] });
  t.equal((await s.pub.get(`/storefront/pos/tab/${tab.sk}/receipt-payload?copy=kitchen`)).status, 400, 'copy is customer or merchant');

  // Refund part of it; never more than was paid.
  const refund = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: '5', reason: 'cold pizza' });
  t.equal(refund.status, 200);
  t.match(refund.body.transaction, { type: 'refund', amount: 5, reason: 'cold pizza', allocations: [{ transactionId: last.body.transaction.id, amount: 5 }] });
  t.match(refund.body.order.data, { status: 'closed', amountPaid: 32, amountRefunded: 5 });
  const tooMuch = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: 27.01 });
  t.equal(tooMuch.status, 400);
  t.match(tooMuch.body.message, 'more than the 27.00 USD paid');

  const payments = await s.pub.get(`/storefront/order/${tab.sk}/payments`);
  t.same(payments.body.data.map((p: { type: string }) => p.type), ['payment', 'payment', 'refund']);
  t.equal(payments.body.total, 3);

  // Lists: open tabs from the actor, closed tabs from the store.
  const open = await s.pub.get('/storefront/pos/tabs?businessLocationId=main');
  t.same(open.body.data.map((r: { sk: string }) => r.sk), [second.sk]);
  const closed = await s.pub.get('/storefront/pos/tabs/closed?businessLocationId=main');
  t.same(closed.body.data.map((r: { sk: string }) => r.sk), [tab.sk]);
  t.match(closed.body, { total: 1, hasNext: false, page: 1 });
  const today = new Date(app.deps.clock.now()).toISOString().slice(0, 10);
  t.equal((await s.pub.get(`/storefront/pos/tabs/closed?businessLocationId=main&from=${today}&to=${today}`)).body.total, 1, 'a bare date covers that day');
  t.equal((await s.pub.get('/storefront/pos/tabs/closed?businessLocationId=main&to=2001-01-01')).body.total, 0);
  t.same((await s.pub.get(`/storefront/pos/tabs?businessLocationId=${s.location.sk}`)).body, { data: [], total: 0, hasNext: false, page: 1, pageSize: 20 }, 'the location sk lists nothing (spec: Errors 10)');

  // Print jobs and a sent receipt go through the outbox.
  const printed = await s.pub.post(`/storefront/pos/tab/${tab.sk}/print-receipt`, { copy: 'merchant', printerId: 'front-printer' });
  t.equal(printed.status, 202);
  t.match(printed.body.queued, { channel: 'print', to: 'front-printer', kind: 'receipt' });
  const printCheck = await s.pub.post(`/storefront/pos/tab/${second.sk}/print-check`);
  t.match(printCheck.body.queued, { channel: 'print', to: 'default', kind: 'check' });
  // Staff may send to an address the order does not hold (without a token only its own contact: receipts.test.ts).
  const sent = await s.staff.post(`/storefront/pos/tab/${tab.sk}/send-receipt`, { email: 'Guest@Example.com', phone: '+1 (555) 0199' });
  t.equal(sent.status, 202);
  t.same(sent.body.queued.map((q: { channel: string; to: string }) => [q.channel, q.to]), [['email', 'guest@example.com'], ['sms', '+15550199']]);
  const outbox = readOutbox(app.deps.store, org);
  const job = outbox.find((m) => m.channel === 'print' && m.kind === 'receipt')!;
  t.match(job.payload, { copy: 'merchant', total: 32, order: { id: tab.sk } });
  t.match(job.body, /Margherita/);
  t.match(job.body, /Total USD\s+32\.00/);
  t.match(outbox.find((m) => m.channel === 'email')!.body, /Change\s+3\.00/);
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/send-receipt`, {})).status, 400, 'email or phone is needed: the order has no contact');
});

t.test('a location no record names - the 404 says how to make one, and doing what it says opens the tab', async (t) => {
  const s = await shop(shared);
  const missing = await s.pub.post('/storefront/pos/tab', { businessLocationId: 'main-bar' });
  t.equal(missing.status, 404);
  t.match(missing.body.message, /^location main-bar not found: .*POST \/repository\/create/);
  const made = await s.staff.post('/repository/create', JSON.parse(/POST \/repository\/create (\{.*\}) \(optional/.exec(missing.body.message)![1]));
  t.same([made.status, made.body.datatype, made.body.data], [201, 'location', { name: 'main-bar' }], 'the body the message gives');
  const opened = await s.pub.post('/storefront/pos/tab', { businessLocationId: 'main-bar', tabLabel: 'Bar stool' });
  t.same([opened.status, opened.body.data.businessLocationId, opened.body.data.currency], [201, 'main-bar', 'USD']);
  const doc = await s.pub.get(`/documentation/endpoint?method=POST&path=${encodeURIComponent('/storefront/pos/tab')}&format=json`);
  t.match(JSON.stringify(doc.body), /datatype\\?":\\?"location/, 'the reference says it too');
});

t.test('order reads - get, get/me by order number (another customer: 404), unknown ids 404', async (t) => {
  const s = await shop(shared);
  const mine = await openTab(s, { tabLabel: 'Alice' }, s.alice);
  t.equal(mine.data.customerId, 'c00000000000000000000a11', 'a customer token stamps the order');
  const got = await s.alice.get(`/storefront/order/get/me/${mine.data.orderNumber}`);
  t.equal(got.status, 200);
  t.equal(got.body.sk, mine.sk);
  t.equal((await s.bob.get(`/storefront/order/get/me/${mine.data.orderNumber}`)).status, 404, "another's order is not found");
  t.equal((await s.pub.get(`/storefront/order/get/me/${mine.data.orderNumber}`)).status, 401, 'needs a token');
  t.equal((await s.pub.get(`/storefront/order/${mine.sk}`)).body.sk, mine.sk);
  t.equal((await s.pub.get('/storefront/order/0123456789abcdef01234567')).status, 404);
  t.equal((await s.pub.post('/storefront/pos/tab/0123456789abcdef01234567/settle', { amount: 1 })).status, 404);
  t.equal((await s.pub.post('/storefront/pos/tab', { businessLocationId: 'nowhere' })).status, 404);
  const bySk = await s.pub.post('/storefront/pos/tab', { businessLocationId: s.location.sk });
  t.equal(bySk.status, 400);
  t.match(bySk.body.message, 'location slug ("main")');
  t.equal((await s.pub.post('/storefront/pos/tab', { businessLocationId: 'main', servicePointId: 'Table 9' })).status, 404);
});

t.test('service points - assign moves a tab, release frees it, the status route writes any string', async (t) => {
  const s = await shop(shared);
  const a = await openTab(s, { tabLabel: 'Walk-in' });
  const moved = await s.pub.post(`/storefront/pos/tab/${a.sk}/assign-service-point`, { servicePointId: 'Table 2' });
  t.equal(moved.status, 200);
  t.match(moved.body.data, { servicePointId: s.points['Table 2'], servicePointName: 'Table 2', tabLabel: 'Walk-in' });
  t.equal(point(s, 'Table 2').data.status, 'occupied');
  const b = await openTab(s, { servicePointId: 'Bar' });
  const taken = await s.pub.post(`/storefront/pos/tab/${b.sk}/assign-service-point`, { servicePointId: s.points['Table 2'] });
  t.equal(taken.status, 409);
  t.match(taken.body.message, 'already has open tab #');
  const toT1 = await s.pub.post(`/storefront/pos/tab/${b.sk}/assign-service-point`, { servicePointId: 'Table 1' });
  t.match(toT1.body.data, { servicePointName: 'Table 1', tabLabel: 'Table 1' }, 'a label that was the point name follows the point');
  t.equal(point(s, 'Bar').data.status, 'dirty', 'the point left behind is dirty');
  const released = await s.pub.post(`/storefront/pos/tab/${a.sk}/release-service-point`, { status: 'available' });
  t.equal(released.status, 200);
  t.notOk('servicePointId' in released.body.data);
  t.equal(point(s, 'Table 2').data.status, 'available');
  t.equal((await s.pub.post(`/storefront/pos/tab/${a.sk}/release-service-point`)).status, 409, 'nothing to release');
  const status = await s.pub.post(`/storefront/service-point/${s.points.Bar}/status`, { status: 'out-of-order' });
  t.equal(status.status, 200);
  t.equal(status.body.data.status, 'out-of-order');
  const byName = await s.pub.post('/storefront/service-point/Bar/status', { status: 'available', businessLocationId: 'main' });
  t.equal(byName.body.data.status, 'available');
  t.equal((await s.pub.post('/storefront/service-point/Nope/status', { status: 'x' })).status, 404);
});

t.test('tabs written through the record store while the POS is running - listed, found by label, dropped when closed', async (t) => {
  const s = await shop(shared);
  const first = await openTab(s, { tabLabel: 'Window seat' });
  t.equal((await s.pub.get(`/storefront/pos/tabs?businessLocationId=${s.slug}`)).body.total, 1, 'the POS actor is running');

  const made = await s.staff.post('/repository/create', { datatype: 'sf_order', isNew: true, data: { businessLocationId: s.slug, status: 'open', tabLabel: 'Imported', subtotal: '5.00' } });
  t.equal(made.status, 201, made.text);
  const listed = await s.pub.get(`/storefront/pos/tabs?businessLocationId=${s.slug}`);
  t.same(listed.body.data.map((o: { sk: string }) => o.sk).sort(), [first.sk, made.body.sk].sort(), 'the imported tab is listed');
  const same = await s.pub.post('/storefront/pos/tab', { businessLocationId: s.slug, tabLabel: 'imported' });
  t.equal(same.body.sk, made.body.sk, 'opening by its label finds it, no second tab');

  // A tab keyed by the point's name (the spec's form) is the tab at that point.
  const atBar = await s.staff.post('/repository/create', { datatype: 'sf_order', isNew: true, data: { businessLocationId: s.slug, status: 'open', servicePointId: 'bar' } });
  t.equal(atBar.status, 201);
  t.equal((await s.pub.post('/storefront/pos/tab', { businessLocationId: s.slug, servicePointId: 'Bar' })).body.sk, atBar.body.sk, 'found at the Bar by name');

  // Closed through the record store: no longer open here.
  const cur = (await s.staff.get(`/repository/get/sf_order/${made.body.sk}`)).body;
  t.equal((await s.staff.post(`/repository/update/sf_order/${made.body.sk}`, { data: { status: 'closed' }, version: cur.version })).status, 200);
  t.same((await s.pub.get(`/storefront/pos/tabs?businessLocationId=${s.slug}`)).body.data.map((o: { sk: string }) => o.sk).sort(), [first.sk, atBar.body.sk].sort());
});

t.test('legacy records - an open tab with only a string subtotal, and string lines, read and settle', async (t) => {
  const s = await shop(shared);
  const { seed } = await import('./world.js');
  const legacy = await seed(s.app, s.org, 'sf_order', { businessLocationId: 'main', status: 'open', orderNumber: 77, subtotal: '12.30' });
  const read = await s.pub.get(`/storefront/order/${legacy.sk}`);
  t.equal(read.status, 200);
  t.match(read.body.data, { subtotal: 12.3, tax: 0, total: 12.3, openingBalance: 12.3, balanceDue: 12.3, productItems: [] });
  const lines = await seed(s.app, s.org, 'sf_order', {
    businessLocationId: 'main',
    status: 'open',
    productItems: [{ name: 'Soup', quantity: '2', price: '3.35' }, { title: 'Bread', qty: 1, unitPrice: 1 }],
  });
  const read2 = await s.pub.get(`/storefront/order/${lines.sk}`);
  t.match(read2.body.data, { subtotal: 7.7, total: 7.7 });
  t.match(read2.body.data.productItems, [{ lineId: 'line-1', name: 'Soup', quantity: 2, unitPrice: 3.35, subtotal: 6.7 }, { lineId: 'line-2', name: 'Bread' }]);
  const open = await s.pub.get('/storefront/pos/tabs?businessLocationId=main');
  t.same(open.body.data.map((r: { sk: string }) => r.sk).sort(), [legacy.sk, lines.sk].sort(), 'the actor knows open tabs written elsewhere');
  const added = await s.pub.post(`/storefront/order/${legacy.sk}/items`, [{ name: 'Water', quantity: 1, unitPrice: '1.70' }]);
  t.match(added.body.data, { subtotal: 14, tax: 0.17, total: 14.17 }, 'the opening balance stays when lines are added');
  const paid = await s.pub.post(`/storefront/pos/tab/${legacy.sk}/settle`, { amount: '14.17' });
  t.match(paid.body.order.data, { status: 'closed', amountPaid: 14.17 });

  // A tab stored with a subtotal and a larger total owes the total: the difference is its tax.
  const taxed = await seed(s.app, s.org, 'sf_order', { businessLocationId: 'main', status: 'open', subtotal: '10.00', total: '11.00' });
  t.match((await s.pub.get(`/storefront/order/${taxed.sk}`)).body.data, { subtotal: 10, tax: 1, total: 11, balanceDue: 11, openingBalance: 10, openingTax: 1 });
  const more = await s.pub.post(`/storefront/order/${taxed.sk}/items`, [{ name: 'Tea', quantity: 1, unitPrice: '2.00' }]);
  t.match(more.body.data, { subtotal: 12, tax: 1.2, total: 13.2 }, 'the opening tax stays when lines are added');
  const receipt = await s.pub.get(`/storefront/pos/tab/${taxed.sk}/receipt-payload`);
  t.match(receipt.body.lines[0], { lineId: 'opening-balance', amount: 10, tax: 1 });
  const shares = await s.pub.post(`/storefront/pos/tab/${taxed.sk}/split`, { parts: 2 });
  t.equal(shares.status, 200, shares.text);
  t.same(shares.body.orders.map((x: any) => x.data.total), [6.6, 6.6], 'the shares add up to what is owed');

  // Lines our routes would refuse are read as written, not replaced: a line of 0 adds nothing, a
  // negative price is a discount, a quantity with 4 decimals is rounded to 3.
  const odd = await seed(s.app, s.org, 'sf_order', {
    businessLocationId: 'main',
    status: 'open',
    productItems: [
      { name: 'Nothing', quantity: 0, unitPrice: 4 },
      { name: 'Discount', quantity: 1, unitPrice: '-3' },
      { name: 'Cheese', quantity: '0.2505', unitPrice: 20 },
      { name: 'Coffee', quantity: 2, unitPrice: '2.50' },
    ],
  });
  const read3 = await s.pub.get(`/storefront/order/${odd.sk}`);
  t.match(read3.body.data, { subtotal: 7.02, tax: 0, total: 7.02, balanceDue: 7.02 });
  t.match(read3.body.data.productItems, [
    { name: 'Nothing', quantity: 0, subtotal: 0 },
    { name: 'Discount', quantity: 1, unitPrice: -3, subtotal: -3 },
    { name: 'Cheese', quantity: 0.251, subtotal: 5.02 },
    { name: 'Coffee', subtotal: 5 },
  ]);
  const settled = await s.pub.post(`/storefront/pos/tab/${odd.sk}/settle`, { amount: '7.02' });
  t.match(settled.body.order.data, { status: 'closed', amountPaid: 7.02, balanceDue: 0 });
});
