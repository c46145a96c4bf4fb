import fc from 'fast-check';
import t from 'tap';
import { AppError } from '../../core/errors.js';
import { currencyExponent, divide, formatMinor, lineAmount, parseMoney, parseQuantity, parseRate, taxOn, toMajor } from '../../core/money.js';
import { openTab, seed, sharedApp, shop } from './world.js';

const shared = await sharedApp(t, { modules: ['storefront'] });

t.test('money - parsing numbers and numeric strings into minor units', async (t) => {
  t.equal(parseMoney('12.50', 'x', 2), 1250);
  t.equal(parseMoney(12.5, 'x', 2), 1250);
  t.equal(parseMoney(' 3 ', 'x', 2), 300);
  t.equal(parseMoney('.5', 'x', 2), 50);
  t.equal(parseMoney(0.1 + 0.2, 'x', 2), 30, '0.30000000000000004 is 30 cents');
  t.equal(parseMoney(1.005, 'x', 2), 101, 'the decimal the client meant, rounded half away from zero');
  t.equal(parseMoney('2.345', 'x', 2), 235);
  t.equal(parseMoney('2.344', 'x', 2), 234);
  t.equal(parseMoney(1e-7, 'x', 2), 0);
  t.equal(parseMoney('-0', 'x', 2), 0);
  t.equal(parseMoney('150.4', 'x', currencyExponent('JPY')), 150);
  t.equal(parseMoney('1.2345', 'x', currencyExponent('KWD')), 1235);
  for (const bad of ['abc', '', '1e3', '12,50', '$5', '1.2.3', '--1', 'Infinity', true, null, {}, [1], Number.NaN, Number.POSITIVE_INFINITY]) {
    t.throws(() => parseMoney(bad, 'body/amount', 2), AppError, `${JSON.stringify(bad)} is refused`);
  }
  t.throws(() => parseMoney(-1, 'body/amount', 2), { message: 'body/amount must not be negative', statusCode: 400 });
  t.throws(() => parseMoney('0', 'body/amount', 2, { zero: false }), { message: 'body/amount must be greater than 0' });
  t.throws(() => parseMoney('10000000000000.01', 'x', 2), { message: 'x is too large' });
  t.throws(() => parseMoney(1e21, 'x', 2), { message: 'x is too large' });
  t.equal(parseQuantity('1.5', 'q'), 1500);
  t.throws(() => parseQuantity('0.0001', 'q'), { message: 'q takes at most 3 decimals' });
  t.equal(parseQuantity('2.5000', 'q'), 2500, 'trailing zeros are not extra decimals');
  t.throws(() => parseQuantity(0, 'q'), { message: 'q must be greater than 0' });
  t.throws(() => parseQuantity('1000000001', 'q'), /too large/);
  t.equal(parseRate('8.875', 'r'), 88750);
  t.throws(() => parseRate(101, 'r'), /at most 100/);
  t.throws(() => currencyExponent('EURO'), /ISO 4217/);
});

t.test('money - integer arithmetic: products rounded once, shares that add up', async (t) => {
  t.equal(lineAmount(1500, 99), 149, '1.5 × 0.99 = 1.485 → 1.49');
  t.equal(lineAmount(3000, 10), 30);
  t.equal(lineAmount(1500, -99), -149, 'a discount rounds half away from zero too: -1.485 → -1.49');
  t.equal(lineAmount(-1000, 250), -250, 'a returned unit');
  t.equal(lineAmount(-1000, -250), 250);
  t.ok(Object.is(lineAmount(0, -250), 0), 'zero, not -0');
  t.equal(taxOn(-1075, 100_000), -108);
  t.equal(taxOn(1075, 100_000), 108, '10 % of 10.75 = 1.075 → 1.08');
  t.equal(taxOn(1, 88_750), 0);
  t.same(divide(1000, 3), [334, 333, 333], 'the remainder cent goes to the first share');
  t.same(divide(2, 3), [2, 0, 0]);
  t.same(divide(-100, 3), [-34, -33, -33], 'a negative amount splits as evenly');
  t.equal(toMajor(30, 2), 0.3);
  t.equal(formatMinor(5, 2), '0.05');
  t.equal(formatMinor(-1234, 2), '-12.34');
  t.equal(formatMinor(150, 0), '150');
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 1, max: 50 }), (amount, n) => {
      const parts = divide(amount, n);
      return parts.length === n && parts.reduce((a, b) => a + b, 0) === amount && parts.every((p) => Number.isInteger(p) && p >= 0) && parts[0] - parts[n - 1] < n;
    }),
  );
  fc.assert(
    fc.property(fc.integer({ min: 0, max: 99_999_999 }), (cents) => parseMoney(toMajor(cents, 2), 'x', 2) === cents && parseMoney(formatMinor(cents, 2), 'x', 2) === cents),
    { numRuns: 2000 },
  );
});

t.test('numeric edge cases over HTTP - 0.1 + 0.2, large quantities, negative and non-numeric input', async (t) => {
  const s = await shop(shared, { taxRate: 0 });
  const tab = await openTab(s, { tabLabel: 'numbers' });
  const items = (body: unknown) => s.pub.post(`/storefront/order/${tab.sk}/items`, body);

  const sum = await items([
    { productId: s.products.Espresso, quantity: 1 },
    { productId: s.products.Cookie, quantity: '1' },
  ]);
  t.equal(sum.status, 200);
  t.equal(sum.body.data.subtotal, 0.3, 'a product priced "0.1" plus one priced 0.2 is 0.3');
  t.equal(sum.body.data.total, 0.3);
  t.equal(sum.text.includes('0.30000000000000004'), false, 'no drift anywhere in the answer');

  const third = await items([{ name: 'Dime', quantity: 3, unitPrice: 0.1 }]);
  t.equal(third.body.data.productItems[2].subtotal, 0.3, '3 × 0.1 is 0.3');
  t.equal(third.body.data.total, 0.6);

  const bulk = await items([{ name: 'Bolts', quantity: '1000000', unitPrice: '19.99' }]);
  t.equal(bulk.status, 200);
  t.equal(bulk.body.data.productItems[3].subtotal, 19_990_000);
  t.equal(bulk.body.data.total, 19_990_000.6);
  const silo = await openTab(s, { tabLabel: 'silo' });
  const huge = await s.pub.post(`/storefront/order/${silo.sk}/items`, [{ name: 'Grain', quantity: 999_999_999, unitPrice: '9999.99' }]);
  t.equal(huge.status, 200);
  t.equal(huge.body.data.productItems[0].subtotal, 9_999_989_990_000.01, 'a billion units, to the cent');
  const more = await s.pub.post(`/storefront/order/${silo.sk}/items`, [{ name: 'Grain', quantity: 1000, unitPrice: '1000000000' }]);
  t.equal(more.status, 400, 'a total beyond 10^13 is refused, not rounded');
  t.match(more.body.message, 'too large');
  const weighed = await items([{ name: 'Cheese (kg)', quantity: '1.5', unitPrice: '0.99' }]);
  t.equal(weighed.body.data.productItems[4].subtotal, 1.49, '1.5 × 0.99 = 1.485 rounds half up to 1.49');
  const version = weighed.body.version;

  const refusals: Array<[unknown, RegExp]> = [
    [[{ name: 'x', quantity: -1, unitPrice: 1 }], /body\/items\/0\/quantity must not be negative/],
    [[{ name: 'x', quantity: 1, unitPrice: '-2' }], /body\/items\/0\/unitPrice must not be negative/],
    [[{ name: 'x', quantity: 'two', unitPrice: 1 }], /body\/items\/0\/quantity must be a number or a numeric string/],
    [[{ name: 'x', quantity: 1, unitPrice: true }], /unitPrice must be a number or a numeric string, not boolean/],
    [[{ name: 'x', quantity: 1, unitPrice: { amount: 1 } }], /unitPrice must be a number or a numeric string, not object/],
    [[{ name: 'x', quantity: 1, unitPrice: '1e3' }], /plain decimal notation/],
    [[{ name: 'x', quantity: 0, unitPrice: 1 }], /quantity must be greater than 0/],
    [[{ name: 'x', quantity: '0.0001', unitPrice: 1 }], /at most 3 decimals/],
    [[{ name: 'x', quantity: 1_000_000_001, unitPrice: 1 }], /quantity is too large/],
    [[{ name: 'x', quantity: 1000, unitPrice: '99999999999999' }], /too large/],
    [[{ name: 'x', quantity: 1, unitPrice: 1, modifiers: [{ name: 'm', price: 'free' }] }], /modifiers\/0\/price must be a number/],
    [[{ name: 'x', unitPrice: 1 }], /body\/items\/0\/quantity is required/],
    [[{ quantity: 1 }], /needs a productId, or a name and a unitPrice/],
    [[], /body/],
  ];
  for (const [body, message] of refusals) {
    const res = await items(body);
    t.equal(res.status, 400, `${JSON.stringify(body)} → 400`);
    t.equal(res.body.error, 'Bad Request');
    t.match(String(res.body.message), message);
  }
  t.equal((await items([{ productId: '0123456789abcdef01234567', quantity: 1 }])).status, 404, 'an unknown product');
  t.equal((await s.pub.get(`/storefront/order/${tab.sk}`)).body.version, version, 'nothing was written by a refused request');

  const settle = (body: unknown) => s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, body);
  for (const [body, message] of [
    [{ amount: -5 }, /body\/amount must not be negative/],
    [{ amount: 'lots' }, /body\/amount must be a number or a numeric string/],
    [{ amount: null }, /body\/amount must be a number or a numeric string, not null/],
    [{}, /body\/amount is required/],
    [{ amount: 0 }, /greater than 0/],
    [{ amount: 1, tip: '-1' }, /body\/tip must not be negative/],
    [{ amount: '10000000000000', method: 'card' }, /more than the balance due/],
  ] as Array<[unknown, RegExp]>) {
    const res = await settle(body);
    t.equal(res.status, 400, `${JSON.stringify(body)} → 400`);
    t.match(res.body, { statusCode: 400, error: 'Bad Request', message });
  }
  const paid = await settle({ amount: '0.3' });
  t.match(paid.body.order.data, { amountPaid: 0.3 });
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: '-0.1' })).status, 400);
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: 'x' })).status, 400);
});

t.test('numeric edge cases - a zero-decimal currency and the tax rate of the product', async (t) => {
  const s = await shop(shared, { currency: 'JPY', taxRate: '8' });
  const ramen = await seed(s.app, s.org, 'sf_product', { name: 'Ramen', price: '980', taxRate: '10' });
  const tab = await openTab(s, { tabLabel: 'yen' });
  const res = await s.pub.post(`/storefront/order/${tab.sk}/items`, [
    { productId: ramen.sk, quantity: 2 },
    { name: 'Gyoza', quantity: 1, unitPrice: '450.6' },
  ]);
  t.equal(res.status, 200);
  t.match(res.body.data, { currency: 'JPY', subtotal: 2411, tax: 196 + 36, total: 2411 + 232 });
  t.match(res.body.data.productItems, [{ taxRate: 10, tax: 196 }, { unitPrice: 451, taxRate: 8, tax: 36 }]);
});
