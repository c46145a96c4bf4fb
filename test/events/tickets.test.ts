import { randomUUID } from 'node:crypto';
import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { eventsWorld, makeEvent, makeTicket } from './setup.js';

const w = await eventsWorld(t);
const { staff } = w;
const store = w.app.deps.store;
const message = (r: { body: any }) => [r.body.message].flat().join('; ');

t.test('POST /events/:id/tickets - creates a ticket; ticketTypeId is required', async (t) => {
  const ev = await makeEvent(staff);
  const r = await staff.post(`/events/${ev.slug}/tickets`, { ticketTypeId: ev.types.General, holderEmail: 'Ada@Example.com', holderName: 'Ada Lovelace', customerId: 'cust-9' });
  t.equal(r.status, 201);
  t.match(r.body, {
    datatype: 'ticket',
    state: 'valid',
    version: 1,
    data: { event: ev.id, ticketTypeId: ev.types.General, ticketTypeTitle: 'General', holderEmail: 'ada@example.com', holderName: 'Ada Lovelace', status: 'valid', price: 25, moneyUnit: 'major', customerId: 'cust-9' },
  });
  t.match(r.body.sk, /^[0-9a-f]{24}$/);
  t.match(r.body.data.number, /^[A-HJ-NP-Z2-9]{10}$/, 'a generated 10-character number');
  t.notOk('codeSecret' in r.body && 'codeSecret' in r.body.data);

  let bad = await staff.post(`/events/${ev.id}/tickets`, { holderEmail: 'a@example.com' });
  t.same([bad.status, message(bad)], [400, 'body/ticketTypeId is required']);
  const other = await makeEvent(staff, { name: 'Other' });
  bad = await staff.post(`/events/${ev.id}/tickets`, { ticketTypeId: other.types.General });
  t.equal(bad.status, 400);
  t.match(message(bad), /is not a ticket type of event/);
  bad = await staff.post(`/events/${ev.id}/tickets`, { ticketTypeId: ev.types.General, number: 'a b' });
  t.same([bad.status, /body\/number/.test(message(bad))], [400, true]);
  t.equal((await staff.post('/events/no-such-event/tickets', { ticketTypeId: ev.types.General })).status, 404);

  // Two events issuing one number at the same moment: exactly one gets it.
  const race = await Promise.all([ev, other].map((e) => staff.post(`/events/${e.id}/tickets`, { ticketTypeId: e.types.General, number: 'RACE-0001' })));
  t.same(race.map((x) => x.status).sort(), [201, 409], 'a number is unique per tenant even under a race');

  const limited = await makeEvent(staff, { name: 'Tiny', ticketTypes: [{ title: 'Seat', quantity: 1 }] });
  t.equal((await staff.post(`/events/${limited.id}/tickets`, { ticketTypeId: limited.types.Seat })).status, 201);
  const over = await staff.post(`/events/${limited.id}/tickets`, { ticketTypeId: limited.types.Seat });
  t.equal(over.status, 409);
  t.match(message(over), /has 0 left, 1 requested/);
});

t.test('GET /events/:id/tickets and GET /events/tickets/:id - list and read', async (t) => {
  const ev = await makeEvent(staff);
  const a = await makeTicket(staff, ev, { holderEmail: 'a@example.com' });
  const b = await makeTicket(staff, ev, { holderEmail: 'b@example.com', ticketTypeId: ev.types.Backstage });
  // A ticket naming its event by slug (written straight into the store) is the event's too.
  const bySlug = newRecord(w.org, 'ticket', { event: ev.slug, number: 'SLUGREF1', ticketTypeId: ev.types.General, status: 'valid' });
  await store.commit(new WriteBatch().putRecord(bySlug, 0));
  await staff.post('/events/checkin', { code: a.data.number });

  let r = await staff.get(`/events/${ev.id}/tickets`);
  t.same([r.status, r.body.total], [200, 3]);
  t.same(r.body.data.map((x: any) => x.sk), [a.sk, b.sk, bySlug.sk], 'oldest first');
  r = await staff.get(`/events/${ev.slug}/tickets?status=checked_in`);
  t.same(r.body.data.map((x: any) => x.sk), [a.sk]);
  r = await staff.get(`/events/${ev.id}/tickets?ticketTypeId=${ev.types.Backstage}`);
  t.same(r.body.data.map((x: any) => x.sk), [b.sk]);
  r = await staff.get(`/events/${ev.id}/tickets?holderEmail=B@example.com&pageSize=1`);
  t.same([r.body.data.map((x: any) => x.sk), r.body.hasNext], [[b.sk], false]);
  t.equal((await staff.get(`/events/${ev.id}/tickets?status=lost`)).status, 400);

  r = await staff.get(`/events/tickets/${a.sk}`);
  t.same([r.status, r.body.data.status], [200, 'checked_in']);
  t.equal((await staff.get(`/events/tickets/${bySlug.sk}`)).body.sk, bySlug.sk, 'found through its slug');
  t.equal((await staff.get(`/events/tickets/${'d'.repeat(24)}`)).status, 404);
  t.equal((await staff.get('/events/tickets/not-an-id')).status, 400);
});

t.test('GET /events/tickets/:id/qr - a fresh signed code; the secret is never sent', async (t) => {
  const ev = await makeEvent(staff);
  const tk = await makeTicket(staff, ev);
  const r = await staff.get(`/events/tickets/${tk.sk}/qr`);
  t.equal(r.status, 200);
  const [id, ts, sig] = r.body.data.code.split(':');
  t.same([id, sig.length], [tk.sk, 94], 'kid (8) + Ed25519 signature (86)');
  t.ok(Math.abs(Number(ts) - Date.now()) < 60_000, 'the timestamp is now, in epoch ms');
  t.ok(Date.parse(r.body.data.codeExpiresAt) - Number(ts) === 30_000, 'expires with the window');
  const secret = store.getKv<string>(w.org, 'ticket-secret', tk.sk)!;
  t.ok(secret);
  for (const text of [r.text, (await staff.get(`/events/tickets/${tk.sk}`)).text, (await staff.get(`/events/${ev.id}/tickets`)).text]) {
    t.notOk(text.includes(secret), 'the secret appears in no answer');
    t.notOk(text.includes('codeSecret'));
  }
  t.equal(store.getRecord(w.org, 'ticket', tk.sk)!.data.code, undefined, 'the signed code is not stored');
  await staff.post(`/events/tickets/${tk.sk}/refund`, {});
  t.equal((await staff.get(`/events/tickets/${tk.sk}/qr`)).status, 409, 'no code for a refunded ticket');
  t.equal((await staff.get(`/events/tickets/${'e'.repeat(24)}/qr`)).status, 404);
});

t.test('POST /events/tickets/purchase - pays, issues, records the order; idempotent', async (t) => {
  const ev = await makeEvent(staff, { ticketTypes: [{ title: 'GA', price: '25.10', quantity: 5 }, { title: 'VIP', price: 100 }] });
  const body = { items: [{ ticketTypeId: ev.types.GA, quantity: 2 }, { ticketTypeId: ev.types.VIP, quantity: 1, holderEmail: 'guest@example.com', holderName: 'Guest' }], buyer: { email: 'Buyer@Example.com', name: 'Bea Buyer' } };
  let r = await staff.post('/events/tickets/purchase', body);
  t.same([r.status, /unpublished event/.test(message(r))], [409, true], 'a draft event sells nothing');
  await staff.post(`/events/${ev.id}/publish`);

  const key = randomUUID();
  r = await staff.post('/events/tickets/purchase', { ...body, idempotencyKey: key, customerId: 'cust-42' });
  t.equal(r.status, 201);
  t.equal(r.body.tickets.length, 3);
  t.same(r.body.tickets.map((x: any) => [x.data.holderEmail, x.data.holderName, x.data.price, x.data.source]), [
    ['buyer@example.com', 'Bea Buyer', 25.1, 'purchase'],
    ['buyer@example.com', 'Bea Buyer', 25.1, 'purchase'],
    ['guest@example.com', 'Guest', 100, 'purchase'],
  ]);
  t.match(r.body.payment, { provider: 'local', status: 'succeeded', amount: 150.2, currency: 'USD' }, 'major units, summed exactly');
  t.match(r.body.order, { datatype: 'event_order', state: 'paid', data: { amount: 150.2, moneyUnit: 'major', event: ev.id, customerId: 'cust-42' } });
  t.ok(r.body.tickets.every((x: any) => x.data.orderId === r.body.order.sk && x.data.customerId === 'cust-42'));
  t.equal(readOutbox(store, w.org, 'buyer@example.com').length, 2, 'each holder is emailed their ticket');

  const replay = await staff.post('/events/tickets/purchase', { ...body, idempotencyKey: key, customerId: 'cust-42' });
  t.same([replay.status, replay.body], [201, r.body], 'a retry answers the first result');
  t.equal(store.count(w.org, 'ticket', { 'data.orderId': r.body.order.sk }), 3, 'and issues nothing more');
  const mismatch = await staff.post('/events/tickets/purchase', { ...body, idempotencyKey: key });
  t.equal(mismatch.status, 409, 'the same key for another request');
  t.equal((await staff.post('/events/tickets/purchase', { ...body, idempotencyKey: 'not-a-uuid' })).status, 400);

  const concurrent = randomUUID();
  const both = await Promise.all([1, 2].map(() => staff.post('/events/tickets/purchase', { ...body, items: [{ ticketTypeId: ev.types.VIP, quantity: 1 }], idempotencyKey: concurrent })));
  t.same(both.map((x) => x.status), [201, 201]);
  t.equal(both[0].body.order.sk, both[1].body.order.sk, 'concurrent retries share one order');

  const declined = await staff.post('/events/tickets/purchase', { ...body, payment: { token: 'tok_decline' } });
  t.same([declined.status, declined.body.error], [402, 'Payment Required']);
  const soldOut = await staff.post('/events/tickets/purchase', { ...body, items: [{ ticketTypeId: ev.types.GA, quantity: 4 }] });
  t.equal(soldOut.status, 409, '2 of 5 GA sold: 4 more is too many');
  t.match(message(soldOut), /has 3 left, 4 requested/);
  const types = (await staff.get(`/events/${ev.id}/ticket-types`)).body.data;
  t.same(types.map((x: any) => x.sold), [2, 2], 'neither the decline nor the sold-out request issued anything');

  const other = await makeEvent(staff, { name: 'Mixed' });
  const mixed = await staff.post('/events/tickets/purchase', { ...body, items: [{ ticketTypeId: ev.types.GA, quantity: 1 }, { ticketTypeId: other.types.General, quantity: 1 }] });
  t.same([mixed.status, /body\/items\/1\/ticketTypeId belongs to another event/.test(message(mixed))], [400, true]);
  t.equal((await staff.post('/events/tickets/purchase', { ...body, items: [{ ticketTypeId: 'a'.repeat(24), quantity: 1 }] })).status, 400);
  t.equal((await staff.post('/events/tickets/purchase', { ...body, eventId: other.id })).status, 400, 'eventId must be the types’ event');
  t.equal((await staff.post('/events/tickets/purchase', { items: body.items })).status, 400, 'buyer is required');
});

t.test('POST /events/tickets/comp - items of one event, price 0, holders emailed', async (t) => {
  const ev = await makeEvent(staff);
  const r = await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.types.General, quantity: 2, holderEmail: 'press@example.com', holderName: 'Press' }], note: 'press list' });
  t.equal(r.status, 201);
  t.same(r.body.tickets.map((x: any) => [x.data.price, x.data.source, x.data.holderEmail, x.data.note]), [
    [0, 'comp', 'press@example.com', 'press list'],
    [0, 'comp', 'press@example.com', 'press list'],
  ]);
  t.equal(readOutbox(store, w.org, 'press@example.com').length, 2);
  const bad = await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.types.General, quantity: 1 }] });
  t.same([bad.status, /body\/items\/0\/holderEmail is required/.test(message(bad))], [400, true]);
  t.equal((await staff.post('/events/tickets/comp', { items: [] })).status, 400);
  t.equal((await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.types.General, quantity: 0, holderEmail: 'a@example.com' }] })).status, 400);
});

t.test('POST /events/tickets/fulfill - orders once, walk-ins need walkIn.ticketTypeId', async (t) => {
  const ev = await makeEvent(staff);
  let r = await staff.post('/events/tickets/fulfill', { walkIn: { holderName: 'Walk In' } });
  t.same([r.status, message(r)], [400, 'body/walkIn/ticketTypeId is required'], 'spec: payload rule 5');
  r = await staff.post('/events/tickets/fulfill', {});
  t.same([r.status, /body\/items \(with body\/orderId\) or body\/walkIn is required/.test(message(r))], [400, true]);
  r = await staff.post('/events/tickets/fulfill', { items: [{ ticketTypeId: ev.types.General, quantity: 1, holderEmail: 'o@example.com' }] });
  t.same([r.status, message(r)], [400, 'body/orderId is required with body/items']);

  r = await staff.post('/events/tickets/fulfill', { walkIn: { ticketTypeId: ev.types.General, holderName: 'Door Sale', quantity: 2 }, checkIn: true, zone: 'main' });
  t.equal(r.status, 201);
  t.same(r.body.tickets.map((x: any) => [x.data.source, x.data.status, x.data.zone]), [
    ['walk-in', 'checked_in', 'main'],
    ['walk-in', 'checked_in', 'main'],
  ]);
  t.same(r.body.checkins.map((c: any) => c.success), [true, true]);
  t.equal((await staff.get(`/events/${ev.id}/occupancy`)).body.main.currentOccupancy, 2);
  t.equal((await staff.post('/events/tickets/fulfill', { walkIn: { ticketTypeId: ev.types.General }, checkIn: true, zone: 'roof' })).status, 400);

  const order = { orderId: 'sf-order-1001', items: [{ ticketTypeId: ev.types.General, quantity: 2, holderEmail: 'shop@example.com' }] };
  const first = await staff.post('/events/tickets/fulfill', order);
  t.equal(first.status, 201);
  t.ok(first.body.tickets.every((x: any) => x.data.orderId === 'sf-order-1001' && x.data.source === 'fulfill'));
  const second = await staff.post('/events/tickets/fulfill', order);
  t.same([second.status, second.body.tickets.map((x: any) => x.sk)], [200, first.body.tickets.map((x: any) => x.sk)], 'an order is fulfilled once');

  // A keyed walk-in retried after its zone was removed: the first answer, not a 400.
  const keyed = { walkIn: { ticketTypeId: ev.types.General, holderName: 'Late' }, checkIn: true, zone: 'vip', idempotencyKey: '7c6b5a49-3827-4160-9f8e-7d6c5b4a3928' };
  const once = await staff.post('/events/tickets/fulfill', keyed);
  t.equal(once.status, 201, once.text);
  const changed = await staff.put(`/events/${ev.id}`, { zones: [{ id: 'main', name: 'Main hall', capacity: 100 }] });
  t.equal(changed.status, 200, changed.text);
  const retry = await staff.post('/events/tickets/fulfill', keyed);
  t.same([retry.status, retry.body.tickets?.map((x: any) => x.sk)], [201, once.body.tickets.map((x: any) => x.sk)]);
  t.equal((await staff.post('/events/tickets/fulfill', { ...keyed, idempotencyKey: undefined })).status, 400, 'a new request checks the zone');
});

t.test('GET /events/tickets/lookup/:eventId - by number, email, name or credential', async (t) => {
  const ev = await makeEvent(staff);
  const other = await makeEvent(staff, { name: 'Lookup other' });
  const ada = await makeTicket(staff, ev, { holderEmail: 'ada@example.com', holderName: 'Ada Lovelace' });
  const bob = await makeTicket(staff, ev, { holderEmail: 'bob@example.com', holderName: 'Bob Lovelace' });
  await makeTicket(staff, other, { holderEmail: 'ada@example.com', holderName: 'Ada Lovelace' });
  await staff.post(`/events/tickets/${bob.sk}/activate`, { credentialCode: 'WRIST-77' });
  const q = async (text: string, ref = ev.id) => (await staff.get(`/events/tickets/lookup/${ref}?q=${encodeURIComponent(text)}`)).body;

  t.same((await q(ada.data.number.toLowerCase())).data.map((x: any) => x.sk), [ada.sk], 'number in any case');
  t.same((await q('ADA@example.com')).data.map((x: any) => x.sk), [ada.sk], 'email, only this event');
  t.same((await q('lovelace', ev.slug)).data.map((x: any) => x.sk), [ada.sk, bob.sk], 'a word of the name');
  t.same((await q('ada lovelace')).data.map((x: any) => x.sk), [ada.sk], 'every word must match');
  t.same((await q('WRIST-77')).data.map((x: any) => x.sk), [bob.sk], 'credential code');
  t.same(await q('nobody'), { data: [], total: 0, hasNext: false, page: 1, pageSize: 20 });
  const missing = await staff.get(`/events/tickets/lookup/${ev.id}`);
  t.same([missing.status, /query\/q is required/.test(message(missing))], [400, true]);
  t.equal((await staff.get('/events/tickets/lookup/no-such-event?q=x')).status, 404);
});

t.test('POST /events/tickets/:id/activate - stamps activation, binds a credential code once', async (t) => {
  const ev = await makeEvent(staff);
  const [a, b] = [await makeTicket(staff, ev, { ticketTypeId: ev.types.Backstage }), await makeTicket(staff, ev)];
  const r = await staff.post(`/events/tickets/${a.sk}/activate`, { credentialCode: 'CARD-1' });
  t.equal(r.status, 200);
  t.ok(r.body.data.activatedAt);
  t.same(r.body.data.credentialCodes, ['CARD-1']);
  t.equal((await staff.post(`/events/tickets/${a.sk}/activate`, { credentialCode: 'CARD-1' })).status, 200, 'binding again is harmless');
  t.equal((await staff.post(`/events/tickets/${b.sk}/activate`, { credentialCode: 'CARD-1' })).status, 409, 'bound to another ticket');
  t.equal((await staff.post(`/events/tickets/${b.sk}/activate`, { credentialCode: a.data.number })).status, 409, 'a ticket number is not a credential');
  t.equal((await staff.post(`/events/tickets/${b.sk}/activate`, { credentialCode: 'x' })).status, 400, 'too short');
  await staff.del(`/events/tickets/${b.sk}`);
  t.equal((await staff.post(`/events/tickets/${b.sk}/activate`, {})).status, 409, 'a cancelled ticket');
  t.equal((await staff.post(`/events/tickets/${'a'.repeat(24)}/activate`, {})).status, 404);
});

t.test('POST /events/tickets/:id/transfer - new holder, old QR codes stop working', async (t) => {
  const ev = await makeEvent(staff);
  const tk = await makeTicket(staff, ev, { customerId: 'cust-old' });
  const oldCode = (await staff.get(`/events/tickets/${tk.sk}/qr`)).body.data.code;
  const r = await staff.post(`/events/tickets/${tk.sk}/transfer`, { holderEmail: 'New@Example.com', holderName: 'New Holder' });
  t.equal(r.status, 200);
  t.match(r.body.data, { holderEmail: 'new@example.com', holderName: 'New Holder', transfers: [{ from: 'ada@example.com', to: 'new@example.com' }] });
  t.equal(r.body.data.customerId, undefined, 'no longer the old customer’s');
  t.equal((await staff.post('/events/tickets/validate', { code: oldCode })).body.reason, 'bad_signature', 'the old holder’s code is dead');
  const fresh = (await staff.get(`/events/tickets/${tk.sk}/qr`)).body.data.code;
  t.equal((await staff.post('/events/tickets/validate', { code: fresh })).body.valid, true);
  t.equal(readOutbox(store, w.org, 'new@example.com').length, 1, 'the new holder is emailed');
  t.equal((await staff.post(`/events/tickets/${tk.sk}/transfer`, { holderEmail: 'bad' })).status, 400);
  await staff.post('/events/checkin', { code: fresh });
  t.equal((await staff.post(`/events/tickets/${tk.sk}/transfer`, { holderEmail: 'x@example.com' })).status, 409, 'a used ticket stays');
});

t.test('POST /events/tickets/:id/refund and DELETE - status, money back, sold count', async (t) => {
  const ev = await makeEvent(staff, { ticketTypes: [{ title: 'Paid', price: 40, quantity: 10 }] });
  await staff.post(`/events/${ev.id}/publish`);
  const bought = await staff.post('/events/tickets/purchase', { items: [{ ticketTypeId: ev.types.Paid, quantity: 2 }], buyer: { email: 'payer@example.com' } });
  const [p1, p2] = bought.body.tickets;
  let r = await staff.post(`/events/tickets/${p1.sk}/refund`, { reason: 'cannot come' });
  t.equal(r.status, 200);
  t.match(r.body, { state: 'refunded', data: { status: 'refunded', refundReason: 'cannot come', refund: { provider: 'local', amount: 40, paymentId: bought.body.payment.id } } });
  t.equal((await staff.post(`/events/tickets/${p1.sk}/refund`, {})).status, 409, 'refunded once');
  r = await staff.del(`/events/tickets/${p2.sk}?reason=duplicate`);
  t.match(r.body, { state: 'cancelled', data: { status: 'cancelled', cancelReason: 'duplicate' } });
  t.equal((await staff.del(`/events/tickets/${p2.sk}`)).status, 409, 'cancelled once');
  t.equal((await staff.post(`/events/tickets/${p2.sk}/refund`, {})).status, 409, 'a cancelled ticket is not refunded');
  t.equal((await staff.get(`/events/${ev.id}/ticket-types`)).body.data[0].sold, 0, 'both seats are free again');
  const comp = await makeTicket(staff, await makeEvent(staff, { name: 'Free' }));
  r = await staff.post(`/events/tickets/${comp.sk}/refund`, {});
  t.same([r.status, r.body.data.refund], [200, null], 'nothing to pay back for a ticket created without payment');
  t.equal((await staff.del(`/events/tickets/${'a'.repeat(24)}`)).status, 404);
});

t.test('badge and badge/printed', async (t) => {
  const ev = await makeEvent(staff, { venue: 'Hall 7', startDate: '2026-11-11T09:00:00Z' });
  const tk = await makeTicket(staff, ev);
  let r = await staff.get(`/events/tickets/${tk.sk}/badge`);
  t.equal(r.status, 200);
  t.same(r.body, {
    ticketId: tk.sk,
    number: tk.data.number,
    holderName: 'Ada Lovelace',
    holderEmail: 'ada@example.com',
    status: 'valid',
    ticketType: { id: ev.types.General, title: 'General', colour: '#1E90FF' },
    event: { id: ev.id, name: 'Summer Fest', slug: ev.slug, startDate: '2026-11-11T09:00:00Z', venue: 'Hall 7' },
    qr: { format: 'static', value: tk.data.number },
    perks: [{ id: 'drink', name: 'Welcome drink', claimed: false }],
    printCount: 0,
    lastPrintedAt: null,
  });
  r = await staff.post(`/events/tickets/${tk.sk}/badge/printed`, { printer: 'desk-2' });
  t.match(r.body.data.badge, { printCount: 1, printer: 'desk-2' });
  r = await staff.post(`/events/tickets/${tk.sk}/badge/printed`, {});
  t.match(r.body.data.badge, { printCount: 2, printer: 'desk-2' });
  t.equal((await staff.get(`/events/tickets/${tk.sk}/badge`)).body.printCount, 2);
  t.equal((await staff.post(`/events/tickets/${tk.sk}/badge/printed`, { printer: '' })).status, 400);
  t.equal((await staff.get(`/events/tickets/${'a'.repeat(24)}/badge`)).status, 404);
});

t.test('POST /events/tickets/:id/perks/:perkId/claim - once per perk', async (t) => {
  const ev = await makeEvent(staff);
  const tk = await makeTicket(staff, ev);
  let r = await staff.post(`/events/tickets/${tk.sk}/perks/drink/claim`, { note: 'bar 1' });
  t.equal(r.status, 200);
  t.match(r.body.data.perksClaimed, { drink: { name: 'Welcome drink', by: 'staff-1', note: 'bar 1' } });
  r = await staff.post(`/events/tickets/${tk.sk}/perks/drink/claim`, {});
  t.same([r.status, /already claimed/.test(message(r))], [409, true], 'a second claim');
  t.equal((await staff.post(`/events/tickets/${tk.sk}/perks/spa/claim`, {})).status, 404, 'not a perk of this type');
  t.equal((await staff.get(`/events/tickets/${tk.sk}/badge`)).body.perks[0].claimed, true);
  const refunded = await makeTicket(staff, ev);
  await staff.post(`/events/tickets/${refunded.sk}/refund`, {});
  t.equal((await staff.post(`/events/tickets/${refunded.sk}/perks/drink/claim`, {})).status, 409);
});
