// Every producer outside the door (issue 34): the write that causes an event queues it once, in
// the write's own batch, and a refused write queues nothing. The node's webhook port is swapped,
// on the running node, for a recorder that keeps each call in memory and also writes it into the
// batch it was given: what is in the store afterwards is exactly what committed with the writes.
import t, { type Test } from 'tap';
import type { WebhookPort } from '../../core/webhooks/port.js';
import type { RunningApp } from '../../edge/app.js';
import { client } from '../helpers/http.js';
import { createOrg, tokenFor } from '../helpers/app.js';
import { signupCustomer } from '../helpers/auth.js';
import { ack, chatSocket, customer as chatCustomer } from '../chat/helpers.js';
import { makeEvent } from '../events/setup.js';
import { diningDefinition, seed, sharedApp, venue } from '../reservations/world.js';
import { openTab, shop } from '../storefront/world.js';

const NS = 'test-webhook-events';

interface Seen {
  type: string;
  data: any;
}

/** The recorder: `types` are what the organisation subscribes to (`*`: everything). */
function listen(app: RunningApp, types: readonly string[] = ['*']) {
  const calls: Array<Seen & { tenant: string }> = [];
  let n = 0;
  const port: WebhookPort = {
    wants: (_tenant, type) => types.includes('*') || types.includes(type),
    queue: (batch, tenant, type, data) => {
      calls.push({ tenant, type, data });
      batch.putKv(tenant, NS, String(++n).padStart(8, '0'), { type, data });
    },
  };
  (app.deps.services as { webhooks: WebhookPort }).webhooks = port;
  return {
    /** Queue calls made for `tenant`. */
    calls: (tenant: string): Seen[] => calls.filter((c) => c.tenant === tenant).map(({ type, data }) => ({ type, data })),
    /** Events that committed for `tenant`, in the order they were queued. */
    committed: (tenant: string): Seen[] =>
      app.deps.store
        .listKv<Seen>(tenant, NS)
        .sort((a, b) => a.key.localeCompare(b.key))
        .map((e) => e.value),
  };
}

const shared = await sharedApp(t, { modules: ['checkin', 'storefront', 'events', 'records', 'crm', 'chat', 'auth'] });
const app = shared.app;
const rec = listen(app);
const types = (org: string) => rec.committed(org).map((e) => e.type);
/** Every event of `org` committed once per queue call: nothing queued outside a committed batch. */
function sameAsCalls(t: Test, org: string): void {
  t.same(rec.calls(org), rec.committed(org), 'every queue call committed with its write, and nothing else did');
}

t.test('producers - tickets: issued once per ticket, transferred, refunded; refusals queue nothing', async (t) => {
  const org = 'tickets1';
  await createOrg(app, org);
  const staff = client(app.url, { orgid: org, authorization: `Bearer ${tokenFor(app, { org, sub: 'staff-1' })}` });
  const ev = await makeEvent(staff);
  const purchase = {
    eventId: ev.id,
    items: [{ ticketTypeId: ev.types.General, quantity: 2 }],
    buyer: { email: 'bea@example.com', name: 'Bea Buyer' },
  };
  t.equal((await staff.post('/events/tickets/purchase', purchase)).status, 409, 'a draft event sells nothing');
  t.same(rec.calls(org), [], 'nothing queued for the refused sale');
  await staff.post(`/events/${ev.id}/publish`);
  const bought = await staff.post('/events/tickets/purchase', purchase);
  t.equal(bought.status, 201, bought.text);
  const [one, two] = bought.body.tickets;
  t.same(types(org), ['ticket.issued', 'ticket.issued'], 'one event per ticket');
  t.same(rec.committed(org).map((e) => e.data), [one, two], 'data is each ticket as the API answered it');

  const moved = await staff.post(`/events/tickets/${one.sk}/transfer`, { holderEmail: 'cy@example.com', holderName: 'Cy' });
  t.equal(moved.status, 200);
  const refunded = await staff.post(`/events/tickets/${two.sk}/refund`, {});
  t.equal(refunded.status, 200);
  t.same(types(org).slice(2), ['ticket.transferred', 'ticket.refunded']);
  t.same(rec.committed(org)[2].data, moved.body);
  t.same(rec.committed(org)[3].data, refunded.body);

  // Refused: a refunded ticket again, a transfer of it, a type with no tickets left.
  t.equal((await staff.post(`/events/tickets/${two.sk}/refund`, {})).status, 409);
  t.equal((await staff.post(`/events/tickets/${two.sk}/transfer`, { holderEmail: 'dee@example.com' })).status, 409);
  const backstage = await staff.post('/events/tickets/purchase', {
    eventId: ev.id,
    items: [{ ticketTypeId: ev.types.General, quantity: 1, holderEmail: 'x@example.com' }, { ticketTypeId: 'ffffffffffffffffffffffff', quantity: 1 }],
    buyer: { email: 'bea@example.com' },
  });
  t.equal(backstage.status, 400, 'an unknown ticket type refuses the whole purchase');
  t.equal(rec.committed(org).length, 4, 'no event for a refused write');
  sameAsCalls(t, org);
});

t.test('producers - tabs: opened (also by a split), fired, settled, refunded; refusals queue nothing', async (t) => {
  const s = await shop({ app, orgs: 100 });
  const tab = await openTab(s, { servicePointId: 'Table 1' });
  t.same(types(s.org), ['order.opened']);
  t.same(rec.committed(s.org)[0].data, tab);
  const again = await s.pub.post('/storefront/pos/tab', { businessLocationId: s.slug, servicePointId: 'Table 1' });
  t.equal(again.status, 200, 'the open tab at the point is answered, nothing opened');
  t.equal(rec.committed(s.org).length, 1);

  await s.pub.post(`/storefront/order/${tab.sk}/items`, [{ productId: s.products.Margherita, quantity: 1 }]);
  const fired = await s.pub.post(`/storefront/order/${tab.sk}/fire`);
  t.equal(fired.body.fired, 1);
  const nothing = await s.pub.post(`/storefront/order/${tab.sk}/fire`);
  t.equal(nothing.body.fired, 0, 'nothing left to fire: no write');
  t.same(types(s.org), ['order.opened', 'order.fired'], 'the kitchen task a fire makes is no check-in task');
  t.same(rec.committed(s.org)[1].data, fired.body.order);

  const part = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: '5' });
  t.equal(part.body.order.data.status, 'open');
  t.equal(rec.committed(s.org).length, 2, 'a part payment does not settle the order');
  const settled = await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 20 });
  t.equal(settled.body.order.data.status, 'closed');
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/settle`, { amount: 1 })).status, 409, 'a closed tab refuses a payment');
  const refunded = await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: '2' });
  t.equal(refunded.status, 200);
  t.equal((await s.pub.post(`/storefront/pos/tab/${tab.sk}/refund`, { amount: 500 })).status, 400, 'more than was paid');
  t.same(types(s.org), ['order.opened', 'order.fired', 'order.settled', 'order.refunded']);
  t.same(rec.committed(s.org)[2].data, settled.body.order);
  t.same(rec.committed(s.org)[3].data, refunded.body.order);

  const bar = await openTab(s, { tabLabel: 'Bar guest' });
  await s.pub.post(`/storefront/order/${bar.sk}/items`, [{ productId: s.products.Cola, quantity: 2 }]);
  const split = await s.pub.post(`/storefront/pos/tab/${bar.sk}/split`, { parts: 2 });
  t.equal(split.status, 200);
  t.same(types(s.org).slice(4), ['order.opened', 'order.opened', 'order.opened'], 'the bar tab, then the two tabs its split opened');
  sameAsCalls(t, s.org);
});

t.test('producers - reservations and the check-in queue: created, updated, checked in, task created, assigned, completed', async (t) => {
  const v = await venue(t, { shared });
  const def = await seed(v.app, v.org, 'reservation_definition', diningDefinition());
  await v.staff.post('/crm/reservations/service-point/create', { name: 'Table 1', businessLocationId: 'downtown' });
  const booked = await v.alice.post('/crm/reservations/create', {
    reservationDefinitionId: def.sk,
    service: 'Table',
    startTime: '2026-03-20T09:00:00.000Z',
    partySize: 2,
    customer: { name: 'Alice Example', email: 'alice@example.com' },
    phone: '+4915100000001',
  });
  t.equal(booked.status, 201);
  t.same(rec.committed(v.org), [{ type: 'reservation.created', data: booked.body }]);
  const full = await v.alice.post('/crm/reservations/create', { reservationDefinitionId: def.sk, service: 'Table', startTime: '2026-03-20T09:00:00.000Z', partySize: 9, phone: '1' });
  t.equal(full.status, 400, 'a party over the capacity is refused');
  const changed = await v.alice.post('/crm/reservations/update', { id: booked.body.sk, partySize: 3 });
  t.equal(changed.status, 200);
  t.same(rec.committed(v.org)[1], { type: 'reservation.updated', data: changed.body });

  const task = await v.staff.post(`/checkin/from-reservation/${booked.body.sk}`, {});
  t.equal(task.status, 201);
  t.equal((await v.staff.post(`/checkin/from-reservation/${booked.body.sk}`, {})).status, 409, 'a live task exists');
  t.same(types(v.org).slice(2), ['checkin.task.created', 'reservation.checked_in'], 'the task, then the booking stamped with it');
  t.same(rec.committed(v.org)[2].data, task.body);
  t.equal(rec.committed(v.org)[3].data.data.checkInTaskId, task.body.sk);

  const seated = await v.staff.post(`/checkin/${task.body.sk}/assign`, { servicePointId: 'Table 1' });
  t.equal(seated.status, 200);
  t.equal((await v.staff.post(`/checkin/${task.body.sk}/assign`, { servicePointId: 'Table 1' })).status, 409, 'already being served');
  t.same(rec.committed(v.org)[4], { type: 'checkin.task.assigned', data: seated.body.task });
  const cleared = await v.staff.post(`/checkin/service-point/${seated.body.servicePoint.sk}/clear`, { finalStatus: 'dirty' });
  t.equal(cleared.status, 200);
  t.same(rec.committed(v.org)[5], { type: 'workflow.task.completed', data: cleared.body.completedTasks[0] });

  const walkIn = await v.staff.post('/checkin/walk-in', { businessLocationId: 'downtown', name: 'Walk In' });
  t.equal(walkIn.status, 201);
  t.same(rec.committed(v.org)[6], { type: 'checkin.task.created', data: walkIn.body });
  t.equal(rec.committed(v.org).length, 7);
  sameAsCalls(t, v.org);
});

t.test('producers - CRM: a lead and a support ticket created; an invalid one queues nothing', async (t) => {
  const org = 'crm1';
  await createOrg(app, org);
  const a = client(app.url, { orgid: org, authorization: `Bearer ${tokenFor(app, { org, sub: 'user-a', email: 'agent@crm1.test' })}` });
  const lead = await a.post('/crm/leads/detail', { name: 'Ana Lima', email: 'ana@example.com' });
  t.equal(lead.status, 201);
  t.equal((await a.post('/crm/leads/detail', { email: 'not-an-email' })).status, 400);
  const ticket = await a.post('/crm/tickets/detail', { subject: 'Charged twice', requester: { email: 'buyer@example.com' }, description: 'Twice!' });
  t.equal(ticket.status, 201);
  t.equal((await a.post('/crm/tickets/detail', { subject: 'No requester' })).status, 400);
  t.same(types(org), ['lead.created', 'support_ticket.created']);
  t.same(rec.committed(org)[0].data, lead.body);
  t.same(rec.committed(org)[1].data, ticket.body.ticket ?? ticket.body);
  sameAsCalls(t, org);
});

t.test('producers - chat: the conversation once, customer messages only', async (t) => {
  const org = 'chat1';
  await createOrg(app, org);
  const cust = await chatCustomer(app, org, 'carol');
  const { s: sc, auth } = await chatSocket(t, app, org, cust);
  const req = await ack(sc, 'chatRequest', { subject: 'late order' });
  t.match(req, { status: 'queued' });
  const first = await ack(sc, 'sendMessage', { text: 'Hello, my order is late' });
  t.match(first, { seq: 1 });
  const resent = await ack(sc, 'chat-message', { text: 'Order 1234', clientId: 'c-2' });
  t.match(await ack(sc, 'chat-message', { text: 'Order 1234', clientId: 'c-2' }), { id: resent.id }, 'a resend is not stored twice');
  t.same(types(org), ['chat.conversation.created', 'chat.message.created', 'chat.message.created']);
  t.match(rec.committed(org)[0].data, { datatype: 'chat', sk: auth.chatId, data: { chatId: auth.chatId, status: 'queued' } });
  t.match(rec.committed(org)[1].data, { ...first, text: 'Hello, my order is late', from: { id: cust.id, role: 'customer' } });
  t.same(rec.committed(org)[2].data.id, resent.id);
  sameAsCalls(t, org);
});

t.test('producers - customer: a sign-up queues customer.created; a second one with the address is refused and queues nothing', async (t) => {
  const org = 'signup1';
  await createOrg(app, org);
  const session = await signupCustomer(app, org, { email: 'Dora@Example.com', name: 'Dora' });
  const again = await client(app.url, { orgid: org }).post('/profile/customer/signup', { email: 'dora@example.com', password: 'correct-horse-battery-staple' });
  t.equal(again.status, 409);
  const created = rec.committed(org).filter((e) => e.type === 'customer.created');
  t.equal(created.length, 1);
  t.match(created[0].data, { datatype: 'customer', sk: session.customerId, data: { email: 'dora@example.com', name: 'Dora' } });
  t.notMatch(JSON.stringify(created[0].data), /password/i, 'no credential in the payload');
  sameAsCalls(t, org);
});

t.test('producers - nothing is queued, nor built, when no endpoint wants the event', async (t) => {
  const quiet = listen(app, ['lead.created']);
  const org = 'quiet1';
  await createOrg(app, org);
  const a = client(app.url, { orgid: org, authorization: `Bearer ${tokenFor(app, { org, sub: 'user-a' })}` });
  t.equal((await a.post('/crm/tickets/detail', { subject: 'x', requester: { email: 'q@example.com' } })).status, 201);
  t.same(quiet.calls(org), [], 'support_ticket.created is not subscribed');
  t.equal((await a.post('/crm/leads/detail', { name: 'Q' })).status, 201);
  t.same(quiet.calls(org).map((c) => c.type), ['lead.created']);
  listen(app);
});
