import t from 'tap';
import { provenCustomerToken, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeEvent, makeTicket } from './setup.js';

const w = await eventsWorld(t);
const { staff, app, org } = w;
const provenCustomer = (tenant: string, email: string, customerId: string) => provenCustomerToken(app, tenant, email, customerId);
const customerClient = async (email: string, customerId: string) =>
  client(app.url, { orgid: org, authorization: `Bearer ${await provenCustomer(org, email, customerId)}` });

t.test('GET /client/events/tickets/mine - a customer sees only their own tickets', async (t) => {
  const ev = await makeEvent(staff);
  const ev2 = await makeEvent(staff, { name: 'Second show' });
  const mine1 = await makeTicket(staff, ev, { holderEmail: 'Me@Example.com' });
  const mine2 = await makeTicket(staff, ev2, { holderEmail: 'someone-else@example.com', customerId: 'cust-me' });
  const theirs = await makeTicket(staff, ev, { holderEmail: 'them@example.com', customerId: 'cust-them' });

  const me = await customerClient('me@example.com', 'cust-me');
  const r = await me.get('/client/events/tickets/mine');
  t.equal(r.status, 200);
  t.same(r.body.data.map((x: any) => x.sk).sort(), [mine1.sk, mine2.sk].sort(), 'by email or by customer id');
  t.equal(r.body.total, 2);
  t.notOk(r.body.data.some((x: any) => x.sk === theirs.sk));
  t.same(r.body.data.map((x: any) => x.data.event).sort(), [ev.id, ev2.id].sort(), 'each names its event');
  t.same((await me.get(`/client/events/tickets/mine?eventId=${ev2.slug}`)).body.data.map((x: any) => x.sk), [mine2.sk]);
  t.same((await me.get('/client/events/tickets/mine?pageSize=1')).body.hasNext, true);

  const them = await customerClient('them@example.com', 'cust-them');
  t.same((await them.get('/client/events/tickets/mine')).body.data.map((x: any) => x.sk), [theirs.sk]);
  const nobody = await customerClient('nobody@example.com', 'cust-none');
  t.same((await nobody.get('/client/events/tickets/mine')).body, { data: [], total: 0, hasNext: false, page: 1, pageSize: 20 });

  // The transferred ticket leaves the old holder's list.
  await staff.post(`/events/tickets/${mine1.sk}/transfer`, { holderEmail: 'them@example.com' });
  t.same((await me.get('/client/events/tickets/mine')).body.data.map((x: any) => x.sk), [mine2.sk]);
});

t.test('GET /client/events/tickets/mine - auth: customer token, relayed customer, not an app alone', async (t) => {
  const ev = await makeEvent(staff);
  const tk = await makeTicket(staff, ev, { holderEmail: 'relay@example.com' });
  t.equal((await w.anon.get('/client/events/tickets/mine')).status, 401);
  const appToken = tokenFor(app, { org, kind: 'app', sub: 'attendee-app', roles: [] });
  t.equal((await client(app.url, { orgid: org, authorization: `Bearer ${appToken}` }).get('/client/events/tickets/mine')).status, 403, 'an app token alone does not act for a customer');
  const relayed = client(app.url, {
    orgid: org,
    authorization: `Bearer ${appToken}`,
    'x-client-authorization': `Bearer ${await provenCustomer(org, 'relay@example.com', 'cust-r')}`,
  });
  t.same((await relayed.get('/client/events/tickets/mine')).body.data.map((x: any) => x.sk), [tk.sk], 'app + customer token');
  t.equal((await w.anon.get('/client/events/tickets/mine', { orgid: 'no-such-org' })).status, 400);
  const foreign = client(app.url, { orgid: 'globex', authorization: `Bearer ${await provenCustomer('globex', 'relay@example.com', 'c')}` });
  t.equal((await foreign.get('/client/events/tickets/mine')).body.total, 0, 'the same email in another tenant sees nothing here');
  t.equal((await foreign.get('/client/events/tickets/mine', { orgid: org })).status, 403, 'nor with this orgid');
});

t.test('GET /client/events/tickets/:id/qr - my ticket only', async (t) => {
  const ev = await makeEvent(staff);
  const mine = await makeTicket(staff, ev, { holderEmail: 'qr@example.com' });
  const theirs = await makeTicket(staff, ev, { holderEmail: 'other@example.com' });
  const me = await customerClient('qr@example.com', 'cust-qr');
  const r = await me.get(`/client/events/tickets/${mine.sk}/qr`);
  t.equal(r.status, 200);
  t.match(r.body.data.code, new RegExp(`^${mine.sk}:\\d+:`));
  const scan = await staff.post('/events/checkin', { code: r.body.data.code, eventId: ev.id });
  t.same([scan.body.success, scan.body.ticket.sk], [true, mine.sk], 'the code from the app opens the door');
  t.equal((await me.get(`/client/events/tickets/${theirs.sk}/qr`)).status, 404, 'another’s ticket is not found');
  t.equal((await me.get(`/client/events/tickets/${'a'.repeat(24)}/qr`)).status, 404);
  t.equal((await w.anon.get(`/client/events/tickets/${mine.sk}/qr`)).status, 401);
});
