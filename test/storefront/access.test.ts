import t from 'tap';
import { clientFor, openTab, seed, sharedApp, shop } from './world.js';

const shared = await sharedApp(t, { modules: ['storefront', 'auth'] });

t.test('categories - POST is role-gated (Admin or ConfigAdmin); the POS list is sorted and public', async (t) => {
  const s = await shop(shared);
  const body = { name: 'Drinks', sortOrder: 2 };
  t.equal((await s.pub.post('/storefront/categories', body)).status, 401, 'no token');
  const user = await s.staff.post('/storefront/categories', body);
  t.equal(user.status, 403, 'staff without the role');
  t.match(user.body, { statusCode: 403, error: 'Forbidden', message: /Admin, ConfigAdmin/ });
  t.equal((await s.alice.post('/storefront/categories', body)).status, 403, 'a customer');
  const other = clientFor(s.app, 'elsewhere', { roles: ['User', 'Admin'] });
  t.equal((await other.post('/storefront/categories', body, { orgid: s.org })).status, 403, "another organisation's admin");
  const made = await s.admin.post('/storefront/categories', body);
  t.equal(made.status, 201);
  t.match(made.body, { datatype: 'sf_category', data: { name: 'Drinks', sortOrder: 2, showInPos: true, createdBy: 'admin-1' } });
  const cfg = clientFor(s.app, s.org, { sub: 'cfg-1', roles: ['ConfigAdmin'] });
  t.equal((await cfg.post('/storefront/categories', { name: 'Mains', sortOrder: 1 })).status, 201, 'ConfigAdmin may too');
  t.equal((await s.admin.post('/storefront/categories', { name: 'drinks' })).status, 409, 'a name in use (without case)');
  await s.admin.post('/storefront/categories', { name: 'Hidden', showInPos: false });
  await s.admin.post('/storefront/categories', { name: 'Uptown only', businessLocationId: 'uptown' });
  const list = await s.pub.get('/storefront/pos-categories');
  t.same(list.body.data.map((c: { data: { name: string } }) => c.data.name), ['Mains', 'Drinks', 'Uptown only']);
  const here = await s.pub.get('/storefront/pos-categories?businessLocationId=main');
  t.same(here.body.data.map((c: { data: { name: string } }) => c.data.name), ['Mains', 'Drinks']);
  t.equal((await s.admin.post('/storefront/categories', { name: '' })).status, 400);
});

t.test('products - per-location availability and price from bm_location_product', async (t) => {
  const s = await shop(shared);
  await seed(s.app, s.org, 'bm_location_product', { productId: s.products.Margherita, businessLocationId: 'main', available: true, price: '11.00', stock: 4 });
  await seed(s.app, s.org, 'bm_location_product', { productId: s.products.Cola, businessLocationId: 'main', available: false });
  await seed(s.app, s.org, 'bm_location_product', { productId: s.products.Cola, businessLocationId: 'uptown', available: true });
  const all = await s.pub.get('/storefront/products');
  t.equal(all.status, 200);
  t.same(all.body.data.map((p: { data: { name: string } }) => p.data.name), ['Cola', 'Cookie', 'Espresso', 'Margherita']);
  t.notOk('availability' in all.body.data[0], 'no location, no availability');
  const here = await s.pub.get('/storefront/products?businessLocationId=main');
  const by = Object.fromEntries(here.body.data.map((p: { data: { name: string }; availability: unknown }) => [p.data.name, p.availability]));
  t.same(by.Margherita, { businessLocationId: 'main', available: true, configured: true, price: '11.00', stock: 4 });
  t.same(by.Cola, { businessLocationId: 'main', available: false, configured: true });
  t.same(by.Cookie, { businessLocationId: 'main', available: true, configured: false });
  const avail = await s.pub.get('/storefront/products?businessLocationId=main&availableOnly=true');
  t.same(avail.body.data.map((p: { data: { name: string } }) => p.data.name), ['Cookie', 'Espresso', 'Margherita']);
  t.equal((await s.pub.get('/storefront/products?q=marg')).body.total, 1);
  // The location price is the default unit price of a line there.
  const tab = await openTab(s);
  const line = await s.pub.post(`/storefront/order/${tab.sk}/items`, [{ productId: s.products.Margherita, quantity: 1 }]);
  t.equal(line.body.data.productItems[0].unitPrice, 11);
});

t.test('posRequiresStaffToken - off for an organisation made before the default; on, every POS route (reads included) needs a staff or an application token', async (t) => {
  const s = await shop(shared);
  const settings = await s.admin.get('/storefront/settings');
  t.same(settings.body, { posRequiresStaffToken: false }, 'an Org without the field keeps the open storefront');
  t.equal((await s.pub.get('/storefront/settings')).status, 401);
  t.equal((await s.staff.put('/storefront/settings', { posRequiresStaffToken: true })).status, 403, 'only Admin or ConfigAdmin change it');
  t.equal((await s.admin.put('/storefront/settings', { posRequiresStaffToken: 'yes' })).status, 400);
  t.equal((await s.admin.put('/storefront/settings', {})).status, 400);

  // Off: anyone with the orgid writes.
  const anonTab = await openTab(s, { tabLabel: 'anon' });
  t.equal(anonTab.data.status, 'open');

  const on = await s.admin.put('/storefront/settings', { posRequiresStaffToken: true });
  t.same(on.body, { posRequiresStaffToken: true });
  const org = s.app.deps.store.getOrg(s.org)!;
  t.match(org.settings, { posRequiresStaffToken: true }, "kept on the organisation's settings");

  const writes: Array<[string, unknown]> = [
    ['/storefront/pos/tab', { businessLocationId: 'main', tabLabel: 'x' }],
    [`/storefront/order/${anonTab.sk}/items`, [{ name: 'Tea', quantity: 1, unitPrice: 2 }]],
    [`/storefront/order/${anonTab.sk}/fire`, {}],
    [`/storefront/pos/tab/${anonTab.sk}/settle`, { amount: 1 }],
    [`/storefront/pos/tab/${anonTab.sk}/refund`, { amount: 1 }],
    [`/storefront/pos/tab/${anonTab.sk}/split`, { parts: 2 }],
    [`/storefront/pos/tab/${anonTab.sk}/assign-service-point`, { servicePointId: 'Bar' }],
    [`/storefront/pos/tab/${anonTab.sk}/release-service-point`, {}],
    [`/storefront/pos/tab/${anonTab.sk}/print-check`, {}],
    [`/storefront/pos/tab/${anonTab.sk}/print-receipt`, {}],
    [`/storefront/pos/tab/${anonTab.sk}/send-receipt`, { email: 'a@example.com' }],
    [`/storefront/service-point/${s.points.Bar}/status`, { status: 'dirty' }],
    ['/storefront/local/terminal/intent', { amount: 5 }],
    ['/storefront/local/terminal/intent/pi_local_x/present-card', {}],
    ['/storefront/local/terminal/connection-token', {}],
    ['/storefront/local/terminal/location/ensure', { businessLocationId: 'main' }],
  ];
  for (const [path, body] of writes) {
    const anon = await s.pub.post(path, body);
    t.equal(anon.status, 401, `anonymous ${path}`);
    t.match(anon.body.message, 'posRequiresStaffToken');
    t.equal((await s.alice.post(path, body)).status, 403, `customer ${path}`);
  }
  const reads = [
    '/storefront/pos/tabs?businessLocationId=main',
    '/storefront/pos/tabs/closed?businessLocationId=main',
    `/storefront/order/${anonTab.sk}`,
    `/storefront/order/${anonTab.sk}/payments`,
    `/storefront/pos/tab/${anonTab.sk}/receipt-payload`,
    `/storefront/pos/tab/${anonTab.sk}/check-payload`,
  ];
  for (const path of reads) {
    t.equal((await s.pub.get(path)).status, 401, `anonymous ${path}`);
    t.equal((await s.alice.get(path)).status, 403, `customer ${path}`);
    t.equal((await s.staff.get(path)).status, 200, `staff ${path}`);
    t.equal((await s.kiosk.get(path)).status, 200, `application ${path}`);
  }
  t.equal((await s.pub.post('/storefront/pos/tab', { businessLocationId: 'main' }, { authorization: 'Bearer junk' })).status, 401, 'a bad token is no token');
  const staffTab = await s.staff.post('/storefront/pos/tab', { businessLocationId: 'main', tabLabel: 'staff' });
  t.equal(staffTab.status, 201, 'staff may');
  t.equal(staffTab.body.data.openedBy, 'staff-1');
  t.equal((await s.staff.post(`/storefront/order/${staffTab.body.sk}/items`, [{ name: 'Tea', quantity: 1, unitPrice: 2 }])).status, 200);
  t.equal((await s.kiosk.post(`/storefront/pos/tab/${staffTab.body.sk}/settle`, { amount: '2.2' })).status, 200, 'an application may');
  // The catalogue, the gateways and a guest's card intent stay open.
  t.equal((await s.pub.get('/storefront/products')).status, 200);
  t.equal((await s.pub.get('/storefront/pos-categories')).status, 200);
  t.equal((await s.pub.get('/storefront/payment-gateways')).status, 200);
  t.equal((await s.pub.post('/storefront/local/intent', { amount: 5 })).status, 201, 'a card intent moves no money: open');
  // The customer's own order stays theirs to read.
  const hers = await s.staff.post('/storefront/pos/tab', { businessLocationId: 'main', tabLabel: 'hers', customer: { customerId: 'c00000000000000000000a11' } });
  t.equal((await s.alice.get(`/storefront/order/get/me/${hers.body.data.orderNumber}`)).status, 200, 'get/me works for her customer token');

  await s.admin.put('/storefront/settings', { posRequiresStaffToken: false });
  t.equal((await s.pub.post('/storefront/pos/tab', { businessLocationId: 'main', tabLabel: 'again' })).status, 201, 'off again: public');
});

// spec: Endpoints → Storefront: POS tabs and orders, and the payment rows (`payproc` → :processor).
const SPEC = [
  'GET /storefront/products',
  'GET /storefront/pos-categories',
  'POST /storefront/categories',
  'POST /storefront/pos/tab',
  'GET /storefront/pos/tabs',
  'GET /storefront/pos/tabs/closed',
  'GET /storefront/order/:id',
  'GET /storefront/order/:id/payments',
  'GET /storefront/order/get/me/:orderNumber',
  'POST /storefront/order/:id/items',
  'POST /storefront/order/:id/fire',
  'POST /storefront/pos/tab/:id/settle',
  'POST /storefront/pos/tab/:id/refund',
  'POST /storefront/pos/tab/:id/split',
  'POST /storefront/pos/tab/:id/assign-service-point',
  'POST /storefront/pos/tab/:id/release-service-point',
  'GET /storefront/pos/tab/:id/receipt-payload',
  'GET /storefront/pos/tab/:id/check-payload',
  'POST /storefront/pos/tab/:id/print-check',
  'POST /storefront/pos/tab/:id/print-receipt',
  'POST /storefront/pos/tab/:id/send-receipt',
  'POST /storefront/service-point/:id/status',
  'GET /storefront/payment-gateways',
  'POST /storefront/:processor/intent',
  'POST /storefront/:processor/terminal/connection-token',
  'POST /storefront/:processor/terminal/intent',
  'POST /storefront/:processor/terminal/location/ensure',
];

t.test('storefront routes - every route of the spec is served, public except categories, and documented', async (t) => {
  const s = await shop(shared);
  const table = new Map(s.app.deps.routes.map((r) => [`${r.method} ${r.path}`, r]));
  for (const key of SPEC) {
    const def = table.get(key);
    t.ok(def, `${key} is served`);
    t.equal(def?.auth, key === 'POST /storefront/categories' ? 'customer' : key.includes('/get/me/') ? 'customer' : 'none', `${key} access`);
  }
  const doc = s.app.deps.openapi() as { paths: Record<string, Record<string, unknown>> };
  for (const key of SPEC) {
    const [method, path] = key.split(' ');
    t.ok(doc.paths[path.replace(/:([A-Za-z]+)/g, '{$1}')]?.[method.toLowerCase()], `${key} is in the OpenAPI document`);
  }
  // Static segments win over the processor parameter, and a POST without a body is fine.
  const tab = await openTab(s);
  const { request } = await import('../helpers/http.js');
  const bare = await request(s.app.url, `/storefront/order/${tab.sk}/fire`, { method: 'POST', headers: { orgid: s.org } });
  t.equal(bare.status, 200);
  t.same([bare.body.fired, bare.body.task], [0, null]);
  t.equal((await s.pub.post('/storefront/pos/intent', { amount: 1 })).status, 404, '"pos" is no processor');
  t.equal((await s.pub.get('/storefront/pos/tabs')).status, 400, 'businessLocationId is required');
  t.equal((await s.pub.get('/storefront/products', { orgid: 'no-such-org' })).status, 400, 'an unknown orgid');
});

t.test('organisation settings - the storefront and the security settings, changed at the same moment, both land', async (t) => {
  const s = await shop(shared);
  // Two actors write two fields of the one organisation object; each used to rewrite the whole
  // object it had read, so the second to commit put back the first one's old value.
  for (const on of [true, false, true, false]) {
    const [a, b] = await Promise.all([
      s.admin.put('/storefront/settings', { posRequiresStaffToken: on }),
      s.admin.put('/profile/org/security-settings', { enableTwoFactorForCustomers: on }),
    ]);
    t.equal(a.status, 200);
    t.equal(b.status, 200);
    t.same((await s.admin.get('/storefront/settings')).body, { posRequiresStaffToken: on }, `storefront setting ${on}`);
    t.match((await s.admin.get('/profile/org/security-settings')).body, { enableTwoFactorForCustomers: on }, `security setting ${on}`);
    const org = s.app.deps.store.getOrg(s.org)!;
    t.match(org, { settings: { posRequiresStaffToken: on }, securitySettings: { enableTwoFactorForCustomers: on } }, 'both on the organisation');
  }
});
