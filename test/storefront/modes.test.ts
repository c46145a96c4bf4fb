// The storefront's two modes for organisations made by sign-up (real HTTP sign-ups): closed by
// default, the spec's open mode with `openStorefront: true`; in both, no personal data to
// strangers, receipts only to the order's own contact, and a customer id only from a credential.
import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import type { RunningApp } from '../../edge/app.js';
import { startTestApp, tokenFor } from '../helpers/app.js';
import { signupCustomer, signupOrg } from '../helpers/auth.js';
import { request, type Reply } from '../helpers/http.js';

const app = await startTestApp(t, { modules: ['storefront', 'records', 'auth', 'reference'] });
let n = 0;

interface Org {
  org: string;
  staff: string;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
  as(token: string | undefined): (method: string, path: string, body?: unknown, extra?: Record<string, string>) => Promise<Reply>;
}

async function org(a: RunningApp, openStorefront?: boolean): Promise<Org> {
  const s = await signupOrg(a, { email: `owner${++n}@modes.example`, orgName: `Modes ${n}`, ...(openStorefront !== undefined ? { openStorefront } : {}) });
  const call = (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request(a.url, path, { method, body, headers: { orgid: s.orgId, ...headers } });
  const as = (token: string | undefined) => (method: string, path: string, body?: unknown, extra: Record<string, string> = {}) =>
    call(method, path, body, { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra });
  const made = await as(s.token)('POST', '/repository/create', { datatype: 'location', isNew: true, data: { name: 'main', title: 'Main bar' } });
  if (made.status !== 201) throw new Error(`location: ${made.status} ${made.text}`);
  return { org: s.orgId, staff: s.token, call, as };
}

const appToken = (o: Org) => tokenFor(app, { org: o.org, kind: 'app', sub: 'app-kiosk', roles: ['System'] });

t.test('closed storefront - a new organisation refuses the anonymous refund, settle, closed-tabs read and send-receipt (401)', async (t) => {
  const o = await org(app);
  const staff = o.as(o.staff);
  const anon = o.as(undefined);
  t.same((await staff('GET', '/storefront/settings')).body, { posRequiresStaffToken: true }, 'a new organisation starts closed');
  t.same((await staff('GET', '/crm/reservations/settings')).body, { servicePointsRequireStaffToken: true }, 'and its service points staff-only');

  const tab = (await staff('POST', '/storefront/pos/tab', { businessLocationId: 'main', tabLabel: 'Window', customer: { name: 'Grace', email: 'grace@guest.example' } })).body;
  await staff('POST', `/storefront/order/${tab.sk}/items`, [{ name: 'Flat white', quantity: 2, unitPrice: '3.40' }]);
  const paid = await staff('POST', `/storefront/pos/tab/${tab.sk}/settle`, { amount: '6.80', method: 'cash' });
  t.equal(paid.body.order.data.status, 'closed');
  const open = (await staff('POST', '/storefront/pos/tab', { businessLocationId: 'main', tabLabel: 'Bar' })).body;

  const refused: Array<[string, string, unknown?]> = [
    ['POST', `/storefront/pos/tab/${tab.sk}/refund`, {}],
    ['POST', `/storefront/pos/tab/${open.sk}/settle`, { amount: '120.00', method: 'cash' }],
    ['GET', '/storefront/pos/tabs/closed?businessLocationId=main'],
    ['POST', `/storefront/pos/tab/${tab.sk}/send-receipt`, { email: 'me@stranger.example' }],
    ['POST', `/storefront/pos/tab/${tab.sk}/send-receipt`, {}],
    ['GET', `/storefront/order/${tab.sk}`],
    ['GET', `/storefront/pos/tab/${tab.sk}/receipt-payload`],
    ['POST', '/storefront/local/terminal/connection-token', {}],
    ['POST', '/storefront/pos/tab', { businessLocationId: 'main' }],
  ];
  for (const [method, path, body] of refused) t.equal((await anon(method, path, body)).status, 401, `anonymous ${method} ${path}`);
  t.equal(readOutbox(app.deps.store, o.org).filter((m) => m.channel === 'email').length, 0, 'no receipt was queued');
  t.equal((await staff('GET', `/storefront/order/${tab.sk}`)).body.data.amountRefunded, 0, 'nothing was refunded');

  // An application token is let in, and sees no guest contact.
  const kiosk = o.as(appToken(o));
  const closed = await kiosk('GET', '/storefront/pos/tabs/closed?businessLocationId=main');
  t.equal(closed.status, 200);
  t.equal(closed.body.total, 1);
  t.same(closed.body.data[0].data.customer, { name: 'Grace' }, 'the application sees the name, not the email');
  t.match((await staff('GET', '/storefront/pos/tabs/closed?businessLocationId=main')).body.data[0].data.customer, { email: 'grace@guest.example' }, 'staff see it');
  // The catalogue and a guest's payment stay open.
  t.equal((await anon('GET', '/storefront/products')).status, 200);
  t.equal((await anon('GET', '/storefront/pos-categories')).status, 200);
  t.equal((await anon('GET', '/storefront/payment-gateways')).status, 200);
  t.equal((await anon('POST', '/storefront/local/intent', { orderId: open.sk, amount: 1 })).status, 201);
  // The reference says, per route, what each mode allows.
  const doc = (method: string, path: string) => anon('GET', `/documentation/endpoint?method=${method}&path=${encodeURIComponent(path)}&format=json`);
  for (const path of ['/storefront/pos/tab/:id/refund', '/storefront/pos/tabs/closed', '/storefront/pos/tab/:id/send-receipt']) {
    const text = JSON.stringify((await doc(path.includes('closed') ? 'GET' : 'POST', path)).body);
    t.match(text, /Closed storefront .*staff or an application token.*Open storefront/, `${path}: both modes`);
  }
  t.match(JSON.stringify((await doc('POST', '/storefront/pos/tab/:id/send-receipt')).body), /contact already on the order/);
  t.match(JSON.stringify((await doc('GET', '/storefront/products')).body), /Open in both storefront modes/);
  t.match(JSON.stringify((await doc('POST', '/profile/user/signup')).body), /openStorefront/);
});

t.test('open storefront - openStorefront runs the spec\'s anonymous tab, items, fire, settle and receipt flow, with no personal data in the anonymous answers', async (t) => {
  const o = await org(app, true);
  const staff = o.as(o.staff);
  const anon = o.as(undefined);
  t.same((await staff('GET', '/storefront/settings')).body, { posRequiresStaffToken: false }, 'open, as the spec has it');
  t.same((await staff('GET', '/crm/reservations/settings')).body, { servicePointsRequireStaffToken: false });
  const secret = /grace@guest\.example|555 ?0100|Elm St|c[0-9a-f]{23}/;
  const answers: Reply[] = [];
  const keep = (r: Reply) => (answers.push(r), r);

  const opened = keep(await anon('POST', '/storefront/pos/tab', {
    businessLocationId: 'main',
    tabLabel: 'Window',
    customer: { name: 'Grace', email: 'grace@guest.example', phone: '+1 555 0100' },
  }));
  t.equal(opened.status, 201);
  t.same(opened.body.data.customer, { name: 'Grace' }, 'her name, not her contact');
  const id = opened.body.sk;
  t.equal(keep(await anon('POST', `/storefront/order/${id}/items`, [{ name: 'Flat white', quantity: 2, unitPrice: '3.40' }])).status, 200);
  const fired = keep(await anon('POST', `/storefront/order/${id}/fire`));
  t.equal(fired.body.fired, 1);
  keep(await anon('GET', '/storefront/pos/tabs?businessLocationId=main'));
  keep(await anon('GET', `/storefront/pos/tab/${id}/check-payload`));
  const settled = keep(await anon('POST', `/storefront/pos/tab/${id}/settle`, { amount: '10.00', method: 'cash' }));
  t.match(settled.body.order.data, { status: 'closed', changeDue: 3.2 });
  keep(await anon('GET', `/storefront/order/${id}`));
  keep(await anon('GET', '/storefront/pos/tabs/closed?businessLocationId=main'));
  const receipt = keep(await anon('GET', `/storefront/pos/tab/${id}/receipt-payload`));
  t.match(receipt.body, { type: 'receipt', total: 6.8, order: { customerName: 'Grace' } });
  const sent = keep(await anon('POST', `/storefront/pos/tab/${id}/send-receipt`, {}));
  t.equal(sent.status, 202, 'sent to the contact on the order');
  t.same(sent.body.queued.map((q: { channel: string; to: string }) => [q.channel, q.to]), [['email', 'g***@guest.example'], ['sms', '*****0100']], 'named masked');
  for (const r of answers) {
    t.ok(r.status < 300, `${r.status}`);
    t.notMatch(r.text, secret, 'no email, phone, address or customer id in an anonymous answer');
  }
  const outbox = readOutbox(app.deps.store, o.org);
  t.same(outbox.filter((m) => m.kind === 'receipt').map((m) => m.to).sort(), ['+15550100', 'grace@guest.example'], 'the receipt went to her');
  t.match((await staff('GET', `/storefront/order/${id}`)).body.data.customer, { email: 'grace@guest.example', phone: '+1 555 0100' }, 'staff read her contact');
});

t.test('send-receipt without a token - only to the contact already on the order, never to another address', async (t) => {
  const o = await org(app, true);
  const anon = o.as(undefined);
  const tab = (await anon('POST', '/storefront/pos/tab', { businessLocationId: 'main', customer: { email: 'grace@guest.example' } })).body;
  const before = readOutbox(app.deps.store, o.org).length;
  for (const body of [{ email: 'victim@elsewhere.example' }, { phone: '+15559999999' }, { email: 'grace@guest.example', phone: '+15559999999' }]) {
    const r = await anon('POST', `/storefront/pos/tab/${tab.sk}/send-receipt`, body);
    t.equal(r.status, 403, `refused: ${JSON.stringify(body)}`);
    t.match(r.body.message, /contact already on the order/);
  }
  t.equal((await o.as(appToken(o))('POST', `/storefront/pos/tab/${tab.sk}/send-receipt`, { email: 'victim@elsewhere.example' })).status, 403, 'an application token alone neither');
  t.equal(readOutbox(app.deps.store, o.org).length, before, 'nothing queued');
  const same = await anon('POST', `/storefront/pos/tab/${tab.sk}/send-receipt`, { email: 'Grace@Guest.example' });
  t.same([same.status, same.body.queued.length, same.body.queued[0].to], [202, 1, 'g***@guest.example'], 'repeating the contact is fine');
  const bare = (await anon('POST', '/storefront/pos/tab', { businessLocationId: 'main' })).body;
  t.equal((await anon('POST', `/storefront/pos/tab/${bare.sk}/send-receipt`, { email: 'victim@elsewhere.example' })).status, 403, 'an order without contact: no address either');
  t.equal((await anon('POST', `/storefront/pos/tab/${bare.sk}/send-receipt`, {})).status, 400);
  const byStaff = await o.as(o.staff)('POST', `/storefront/pos/tab/${bare.sk}/send-receipt`, { email: 'walkin@guest.example' });
  t.same([byStaff.status, byStaff.body.queued[0].to], [202, 'walkin@guest.example'], 'staff may send anywhere, and see where');
});

t.test('customer identity - a customer id sent by an application token or no token does not make the order the customer\'s', async (t) => {
  const o = await org(app, true);
  const grace = await signupCustomer(app, o.org, { email: 'grace@guest.example', name: 'Grace' });
  const ada = await signupCustomer(app, o.org, { email: 'ada@guest.example', name: 'Ada' });
  const claim = { businessLocationId: 'main', customer: { customerId: grace.customerId } };
  const kiosk = appToken(o);
  const byAnon = (await o.as(undefined)('POST', '/storefront/pos/tab', { ...claim, tabLabel: 'anon' })).body;
  const byApp = (await o.as(kiosk)('POST', '/storefront/pos/tab', { ...claim, tabLabel: 'app' })).body;
  const byAda = (await o.as(ada.token)('POST', '/storefront/pos/tab', { ...claim, tabLabel: 'ada' })).body;
  const relayed = (await o.as(kiosk)('POST', '/storefront/pos/tab', { ...claim, tabLabel: 'relayed' }, { 'x-client-authorization': `Bearer ${grace.token}` })).body;
  const byStaff = (await o.as(o.staff)('POST', '/storefront/pos/tab', { ...claim, tabLabel: 'staff' })).body;
  const owner = (sk: string) => app.deps.store.getRecord(o.org, 'sf_order', sk)!.data;
  t.equal(owner(byAnon.sk).customerId, undefined, "anonymous: nobody's");
  t.equal(owner(byApp.sk).customerId, undefined, "an application token alone: nobody's");
  t.same(owner(byApp.sk).customer, undefined, 'and the typed id is not kept');
  t.equal(owner(byAda.sk).customerId, ada.customerId, "another customer's token: hers, whatever the body says");
  t.equal(owner(relayed.sk).customerId, grace.customerId, 'her own token, relayed by the application');
  t.equal(owner(byStaff.sk).customerId, grace.customerId, 'staff act for a customer');

  const mine = await o.as(grace.token)('GET', '/client-data/orders');
  t.same(mine.body.map((r: { sk: string }) => r.sk).sort(), [relayed.sk, byStaff.sk].sort(), "her orders are the two she or staff made");
  t.equal((await o.as(grace.token)('GET', `/storefront/order/get/me/${byApp.data.orderNumber}`)).status, 404);
  t.equal((await o.as(grace.token)('GET', `/storefront/order/get/me/${relayed.data.orderNumber}`)).status, 200);
  // Her own order, read with her token in open mode, keeps her id; a stranger's read does not show it.
  t.equal((await o.as(grace.token)('GET', `/storefront/order/${relayed.sk}`)).body.data.customerId, grace.customerId);
  t.equal((await o.as(ada.token)('GET', `/storefront/order/${relayed.sk}`)).body.data.customerId, undefined);
});
