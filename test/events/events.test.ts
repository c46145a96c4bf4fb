import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { WriteBatch } from '../../core/store/store.js';
import { eventsWorld, makeEvent, makeTicket } from './setup.js';

// One server for the file: every test works on events of its own.
const w = await eventsWorld(t);
const { staff } = w;

t.test('POST /events - creates a draft with its zones and ticket types', async (t) => {
  const r = await staff.post('/events', {
    name: 'Jazz Night: Live!',
    timezone: 'Europe/Berlin',
    startDate: '2026-08-01T18:00:00Z',
    endDate: '2026-08-01T23:00:00Z',
    zones: [{ name: 'Main Hall', capacity: 300 }, { id: 'bar', name: 'Bar' }],
    ticketTypes: [{ title: 'Standard', colour: '#00AA00', price: '15.50', quantity: 200, perks: [{ name: 'Free Drink' }] }],
  });
  t.equal(r.status, 201);
  t.equal(r.body.datatype, 'event');
  t.equal(r.body.state, 'new');
  t.match(r.body.data, { name: 'Jazz Night: Live!', slug: 'jazz-night-live', status: 'draft', timezone: 'Europe/Berlin', allowReentry: true, codeWindowSeconds: 30, codeSkewSeconds: 60, currency: 'USD' });
  t.same(r.body.data.zones, [
    { id: 'main-hall', name: 'Main Hall', capacity: 300 },
    { id: 'bar', name: 'Bar', capacity: null },
  ]);
  t.equal(r.body.ticketTypes.length, 1);
  t.match(r.body.ticketTypes[0].data, { event: r.body.sk, title: 'Standard', colour: '#00AA00', price: 15.5, moneyUnit: 'major', quantity: 200, perks: [{ id: 'free-drink', name: 'Free Drink' }] });

  const again = await staff.post('/events', { name: 'Jazz Night: Live!' });
  t.equal(again.body.data.slug, 'jazz-night-live-2', 'a derived slug is made unique');
  const clash = await staff.post('/events', { name: 'Other', slug: 'jazz-night-live' });
  t.equal(clash.status, 409, 'a chosen slug in use is a conflict');
  const reserved = await staff.post('/events', { name: 'Tickets' });
  t.equal(reserved.body.data.slug, 'tickets-event', 'a name that is a path word gets a suffix');
});

t.test('POST /events - validation names the field', async (t) => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{}, /body\/name is required/],
    [{ name: '' }, /body\/name/],
    [{ name: 'X', timezone: 'Mars/Olympus' }, /body\/timezone "Mars\/Olympus" is not an IANA time zone/],
    [{ name: 'X', startDate: '2026-08-02T00:00:00Z', endDate: '2026-08-01T00:00:00Z' }, /body\/endDate must not be before body\/startDate/],
    [{ name: 'X', zones: [{ id: 'a', name: 'A' }, { id: 'a', name: 'B' }] }, /body\/zones\/1\/id "a" is used by two zones/],
    [{ name: 'X', zones: [{ id: 'unknown', name: 'U' }] }, /body\/zones\/0\/id "unknown" is reserved/],
    [{ name: 'X', slug: 'Bad Slug' }, /body\/slug/],
    [{ name: 'X', slug: 'checkin' }, /body\/slug "checkin" is reserved/],
    [{ name: 'X', codeWindowSeconds: 1 }, /body\/codeWindowSeconds/],
    [{ name: 'X', ticketTypes: [{ price: 10 }] }, /body\/ticketTypes\/0\/title is required/],
    [{ name: 'X', ticketTypes: [{ title: 'A', price: -1 }] }, /body\/ticketTypes\/0\/price/],
    [{ name: 'X', colour: 'red' }, /body\/colour is not allowed/],
  ];
  for (const [body, message] of cases) {
    const r = await staff.post('/events', body);
    t.equal(r.status, 400, JSON.stringify(body));
    t.match([r.body.message].flat().join('; '), message);
  }
});

t.test('GET /events and GET /events/:id - list, filter, by id or slug', async (t) => {
  const a = await makeEvent(staff, { name: 'Listing Alpha', startDate: '2026-09-02T10:00:00Z' });
  const b = await makeEvent(staff, { name: 'Listing Beta', startDate: '2026-09-01T10:00:00Z' });
  await staff.post(`/events/${b.id}/publish`);
  let r = await staff.get('/events?q=listing&pageSize=1');
  t.equal(r.status, 200);
  t.same([r.body.total, r.body.hasNext, r.body.page, r.body.pageSize], [2, true, 1, 1]);
  t.equal(r.body.data[0].sk, b.id, 'sorted by start date');
  r = await staff.get('/events?q=listing&status=published');
  t.same(r.body.data.map((e: any) => e.sk), [b.id]);
  r = await staff.get('/events?pageSize=500');
  t.equal(r.status, 400, 'page size is capped');
  t.same((await w.other.get('/events')).body, { data: [], total: 0, hasNext: false, page: 1, pageSize: 20 }, 'another tenant: empty list');

  for (const ref of [a.id, a.slug]) {
    const one = await staff.get(`/events/${ref}`);
    t.same([one.status, one.body.sk], [200, a.id], `by ${ref}`);
  }
  t.equal((await staff.get('/events/no-such-event')).status, 404);
  t.equal((await staff.get(`/events/${'f'.repeat(24)}`)).status, 404);
});

t.test('PUT /events/:id - changes fields, zones and ticket types; the door follows', async (t) => {
  const ev = await makeEvent(staff, { name: 'Changeable' });
  const tk = await makeTicket(staff, ev);
  await staff.post('/events/checkin', { code: tk.data.number, zone: 'main' });

  const r = await staff.put(`/events/${ev.slug}`, {
    name: 'Changed',
    zones: [{ id: 'main', name: 'Main hall', capacity: 1 }],
    ticketTypes: [{ id: ev.types.General, quantity: 5 }, { title: 'Late bird', price: 30 }],
    version: ev.event.version,
  });
  t.equal(r.status, 200);
  t.equal(r.body.data.name, 'Changed');
  t.equal(r.body.version, ev.event.version + 1);
  t.same(r.body.ticketTypes.map((x: any) => [x.data.title, x.data.quantity, x.data.price]), [
    ['General', 5, 25],
    ['Backstage', null, 99],
    ['Late bird', null, 30],
  ], 'every type of the event, the ones not sent too');
  const types = (await staff.get(`/events/${ev.id}/ticket-types`)).body;
  t.equal(types.total, 3, 'types not listed are kept');
  const noTypes = await staff.put(`/events/${ev.id}`, { venue: 'Pier 9' });
  t.same(noTypes.body.ticketTypes.map((x: any) => x.sk), r.body.ticketTypes.map((x: any) => x.sk), 'a PUT without ticketTypes answers them all');
  const got = await staff.get(`/events/${ev.slug}`);
  t.same([got.status, got.body.data.venue, got.body.ticketTypes.map((x: any) => [x.sk, x.data.title])], [200, 'Pier 9', r.body.ticketTypes.map((x: any) => [x.sk, x.data.title])], 'GET /events/:id answers them too');
  const tk2 = await makeTicket(staff, ev);
  const full = await staff.post('/events/checkin', { code: tk2.data.number, zone: 'main' });
  t.equal(full.body.reason, 'zone_full', 'the scanner uses the new capacity at once');
  t.equal((await staff.post('/events/checkin', { code: tk2.data.number, zone: 'vip' })).status, 400, 'the removed zone is gone');

  t.equal((await staff.put(`/events/${ev.id}`, { name: 'Stale', version: 1 })).status, 409, 'a stale version');
  t.equal((await staff.put(`/events/${ev.id}`, { slug: 'new-slug' })).status, 409, 'the slug of a sold event stays');
  t.equal((await staff.put(`/events/${ev.id}`, { ticketTypes: [{ id: 'a'.repeat(24) }] })).status, 400, 'an unknown type id without a title');
  t.equal((await staff.put(`/events/${ev.id}`, { timezone: 'Nowhere/City' })).status, 400);
  t.equal((await staff.put('/events/no-such-event', { name: 'X' })).status, 404);

  const fresh = await makeEvent(staff, { name: 'Renamable' });
  const moved = await staff.put(`/events/${fresh.id}`, { slug: 'renamed-event' });
  t.equal(moved.body.data.slug, 'renamed-event');
  t.equal((await staff.get('/events/renamed-event')).body.sk, fresh.id);
  t.equal((await staff.get(`/events/${fresh.slug}`)).status, 404, 'the old slug is free');
});

t.test('DELETE /events/:id - refused with live tickets, then removes the event and its parts', async (t) => {
  const ev = await makeEvent(staff, { name: 'Doomed' });
  const tk = await makeTicket(staff, ev);
  await staff.post(`/events/${ev.id}/sessions`, { title: 'Talk', startTime: '2026-10-01T10:00:00Z', endTime: '2026-10-01T11:00:00Z' });
  let r = await staff.del(`/events/${ev.id}`);
  t.equal(r.status, 409);
  t.match(r.body.message, /1 live tickets/);
  await staff.del(`/events/tickets/${tk.sk}`);
  r = await staff.del(`/events/${ev.slug}`);
  t.equal(r.status, 204);
  t.equal((await staff.get(`/events/${ev.id}`)).status, 404);
  t.equal(w.app.deps.store.scan(w.org, 'ticket_type', { 'data.event': ev.id }).length, 0, 'ticket types deleted');
  t.equal(w.app.deps.store.scan(w.org, 'event_session', { 'data.event': ev.id }).length, 0, 'sessions deleted');
  t.equal((await staff.post('/events/checkin', { code: tk.data.number, eventId: ev.id })).status, 404, 'no door for a deleted event');
  t.equal((await staff.del(`/events/${ev.id}`)).status, 404);
});

t.test('POST /events/:id/publish - status and state published, once', async (t) => {
  const ev = await makeEvent(staff, { name: 'Publishable' });
  const r = await staff.post(`/events/${ev.id}/publish`);
  t.equal(r.status, 200);
  t.same([r.body.state, r.body.data.status], ['published', 'published']);
  t.ok(r.body.data.publishedAt);
  const again = await staff.post(`/events/${ev.slug}/publish`);
  t.equal(again.body.version, r.body.version, 'publishing twice changes nothing');
  t.equal((await staff.post('/events/no-such-event/publish')).status, 404);
});

t.test('GET /events/:id/ticket-types - title, colour, id and counts', async (t) => {
  const ev = await makeEvent(staff, { name: 'Counted' });
  await makeTicket(staff, ev);
  const gone = await makeTicket(staff, ev);
  await makeTicket(staff, ev, { ticketTypeId: ev.types.Backstage });
  await staff.del(`/events/tickets/${gone.sk}`);
  const r = await staff.get(`/events/${ev.slug}/ticket-types`);
  t.equal(r.status, 200);
  t.same(
    r.body.data.map((x: any) => ({ id: x.id, title: x.title, colour: x.colour, sold: x.sold, available: x.available })),
    [
      { id: ev.types.General, title: 'General', colour: '#1E90FF', sold: 1, available: 999 },
      { id: ev.types.Backstage, title: 'Backstage', colour: '#FF4500', sold: 1, available: null },
    ],
  );
  t.same(r.body.data[0].perks, [{ id: 'drink', name: 'Welcome drink', description: null }]);
  t.equal(r.body.data[1].requiresActivation, true);
  t.equal((await staff.get('/events/no-such-event/ticket-types')).status, 404);
});

t.test('ticket money - major units as numbers or numeric strings; types stored in cents before still read right', async (t) => {
  const ev = await makeEvent(staff, { name: 'Priced', currency: 'EUR', ticketTypes: [{ title: 'A', price: '12.345' }, { title: 'B', price: 0.1 }, { title: 'Free' }] });
  let types = (await staff.get(`/events/${ev.id}/ticket-types`)).body.data;
  t.same(types.map((x: any) => [x.title, x.price, x.currency]), [['A', 12.35, 'EUR'], ['B', 0.1, 'EUR'], ['Free', 0, 'EUR']], 'rounded half up to the minor unit');
  for (const [price, re] of [['25,00', /price must be a number or a numeric string/], ['abc', /price must be a number/], [true, /price must be a number or a numeric string, not boolean/], [1_000_001, /price is too large \(at most 1000000\)/]] as const) {
    const r = await staff.put(`/events/${ev.id}`, { ticketTypes: [{ title: 'Bad', price }] });
    t.same([r.status, re.test([r.body.message].flat().join())], [400, true], String(price));
  }
  const yen = await makeEvent(staff, { name: 'Yen', currency: 'JPY', ticketTypes: [{ title: 'Y', price: '1500' }] });
  t.equal((await staff.get(`/events/${yen.id}/ticket-types`)).body.data[0].price, 1500, 'a currency without decimals');

  // A type and a ticket as the service stored them before: integer cents, no unit marker.
  const old = await makeEvent(staff, { name: 'Legacy', ticketTypes: [{ title: 'Old', price: 1 }] });
  const store = w.app.deps.store;
  const cents = async (datatype: string, id: string, data: Record<string, unknown>) => {
    const cur = store.getRecord(w.org, datatype, id)!;
    const { moneyUnit: _, ...rest } = cur.data as Record<string, unknown>;
    await store.commit(new WriteBatch().putRecord({ ...cur, version: cur.version + 1, data: { ...rest, ...data } }, cur.version));
  };
  await cents('ticket_type', old.types.Old, { price: 2500 });
  types = (await staff.get(`/events/${old.id}/ticket-types`)).body.data;
  t.equal(types[0].price, 25, 'a type in cents is answered in major units');
  const got = (await staff.get(`/events/${old.id}`)).body.ticketTypes[0].data;
  t.same([got.price, got.moneyUnit], [25, 'major'], 'in the event too');
  await staff.post(`/events/${old.id}/publish`);
  const bought = await staff.post('/events/tickets/purchase', { items: [{ ticketTypeId: old.types.Old, quantity: 2 }], buyer: { email: 'old@example.com' } });
  t.equal(bought.status, 201);
  t.same([bought.body.payment.amount, bought.body.order.data.amount, bought.body.tickets[0].data.price], [50, 50, 25], 'charged 2 × 25.00, not 2 × 2500');
  await cents('ticket', bought.body.tickets[0].sk, { price: 2500 });
  const refunded = await staff.post(`/events/tickets/${bought.body.tickets[0].sk}/refund`, {});
  t.same([refunded.status, refunded.body.data.refund.amount], [200, 25], 'a ticket sold in cents gives back 25.00');
  const renamed = await staff.put(`/events/${old.id}`, { ticketTypes: [{ id: old.types.Old, title: 'Older' }] });
  t.same([renamed.body.ticketTypes[0].data.price, store.getRecord(w.org, 'ticket_type', old.types.Old)!.data], [25, renamed.body.ticketTypes[0].data], 'rewritten in major units when changed');
});

t.test('sessions and schedule', async (t) => {
  const ev = await makeEvent(staff, { name: 'Conference', timezone: 'America/New_York' });
  const add = (body: Record<string, unknown>) => staff.post(`/events/${ev.id}/sessions`, body);
  const late = await add({ title: 'Late talk', startTime: '2026-10-02T02:00:00Z', endTime: '2026-10-02T03:00:00Z', track: 'B' });
  const early = await add({ title: 'Keynote', startTime: '2026-10-01T14:00:00Z', endTime: '2026-10-01T15:00:00Z', track: 'A', speakerIds: ['a'.repeat(24)] });
  t.equal(early.status, 201);
  t.same([early.body.datatype, early.body.state, early.body.data.event], ['event_session', 'scheduled', ev.id]);
  t.equal((await add({ title: 'Backwards', startTime: '2026-10-01T15:00:00Z', endTime: '2026-10-01T14:00:00Z' })).status, 400);
  const noTitle = await add({ startTime: '2026-10-01T15:00:00Z', endTime: '2026-10-01T16:00:00Z' });
  t.same([noTitle.status, /body\/title is required/.test(noTitle.body.message)], [400, true]);

  let list = await staff.get(`/events/${ev.slug}/sessions`);
  t.same(list.body.data.map((s: any) => s.data.title), ['Keynote', 'Late talk'], 'in start order');
  list = await staff.get(`/events/${ev.id}/sessions?track=B`);
  t.same(list.body.data.map((s: any) => s.sk), [late.body.sk]);

  const sched = await staff.get(`/events/${ev.id}/schedule`);
  t.same(
    sched.body.days.map((d: any) => [d.date, d.sessions.map((s: any) => s.data.title)]),
    [['2026-10-01', ['Keynote', 'Late talk']]],
    '02:00 UTC on the 2nd is the evening of the 1st in New York',
  );
  t.equal(sched.body.timezone, 'America/New_York');

  const put = await staff.put(`/events/sessions/${early.body.sk}`, { title: 'Opening keynote', version: early.body.version });
  t.same([put.status, put.body.data.title, put.body.data.track], [200, 'Opening keynote', 'A'], 'fields not sent are kept');
  t.equal((await staff.put(`/events/sessions/${early.body.sk}`, { title: 'Stale', version: 1 })).status, 409);
  t.equal((await staff.put(`/events/sessions/${early.body.sk}`, { endTime: '2026-10-01T13:00:00Z' })).status, 400, 'end before start');
  t.equal((await staff.put(`/events/sessions/${'b'.repeat(24)}`, { title: 'X' })).status, 404);
  t.equal((await staff.put(`/events/sessions/${early.body.sk}`, { nope: 1 })).status, 400);
  t.equal((await staff.del(`/events/sessions/${late.body.sk}`)).status, 204);
  t.equal((await staff.del(`/events/sessions/${late.body.sk}`)).status, 404);
  t.equal((await staff.get(`/events/${ev.id}/sessions`)).body.total, 1);
});

t.test('participants - add, list, change, confirm, delete', async (t) => {
  const ev = await makeEvent(staff, { name: 'Summit' });
  const p = await staff.post(`/events/${ev.id}/participants`, { name: 'Grace Hopper', email: 'grace@example.com', role: 'speaker', company: 'Navy' });
  t.equal(p.status, 201);
  t.match(p.body, { datatype: 'event_participant', state: 'invited', data: { name: 'Grace Hopper', role: 'speaker', status: 'invited', event: ev.id } });
  const q = await staff.post(`/events/${ev.id}/participants`, { name: 'Alan Turing' });
  t.equal(q.body.data.role, 'attendee', 'role defaults to attendee');
  t.equal((await staff.post(`/events/${ev.id}/participants`, { name: 'X', email: 'not-an-email' })).status, 400);

  const c = await staff.post(`/events/participants/${p.body.sk}/confirm`);
  t.same([c.status, c.body.state, c.body.data.status], [200, 'confirmed', 'confirmed']);
  t.ok(c.body.data.confirmedAt);
  t.equal((await staff.post(`/events/participants/${p.body.sk}/confirm`)).body.version, c.body.version, 'confirming again changes nothing');
  t.equal((await staff.post(`/events/participants/${'c'.repeat(24)}/confirm`)).status, 404);

  let list = await staff.get(`/events/${ev.id}/participants?status=confirmed`);
  t.same(list.body.data.map((x: any) => x.sk), [p.body.sk]);
  list = await staff.get(`/events/${ev.id}/participants?role=attendee`);
  t.same(list.body.data.map((x: any) => x.sk), [q.body.sk]);
  t.equal((await staff.get(`/events/${ev.id}/participants?status=maybe`)).status, 400);

  const put = await staff.put(`/events/participants/${q.body.sk}`, { company: 'Bletchley' });
  t.same([put.status, put.body.data.company, put.body.data.name], [200, 'Bletchley', 'Alan Turing']);
  t.equal((await staff.del(`/events/participants/${q.body.sk}`)).status, 204);
  t.equal((await staff.get(`/events/${ev.id}/participants`)).body.total, 1);
});

t.test('media - records, list, share by email', async (t) => {
  const ev = await makeEvent(staff, { name: 'Gallery' });
  const m = await staff.post(`/events/${ev.id}/media`, { title: 'Aftermovie', kind: 'video', url: 'https://cdn.example.com/after.mp4', mimeType: 'video/mp4' });
  t.equal(m.status, 201);
  t.match(m.body, { datatype: 'event_media', data: { title: 'Aftermovie', kind: 'video', event: ev.id } });
  t.equal((await staff.post(`/events/${ev.id}/media`, { title: 'X', kind: 'hologram', url: 'https://x.example' })).status, 400);
  t.equal((await staff.post(`/events/${ev.id}/media`, { title: 'X', kind: 'image', url: 'not a url' })).status, 400);
  const list = await staff.get(`/events/${ev.id}/media?kind=video`);
  t.same(list.body.data.map((x: any) => x.sk), [m.body.sk]);

  const share = await staff.post(`/events/${ev.id}/media/share`, { mediaIds: [m.body.sk], recipients: ['Fan@Example.com', 'fan@example.com', 'press@example.com'], message: 'Enjoy!' });
  t.equal(share.status, 200);
  t.equal(share.body.messages, 2, 'one email per distinct recipient');
  t.equal(share.body.media[0].data.shareCount, 2);
  const mail = readOutbox(w.app.deps.store, w.org, 'fan@example.com');
  t.equal(mail.length, 1);
  t.match(mail[0].body, /Enjoy!\n\n- Aftermovie: https:\/\/cdn\.example\.com\/after\.mp4/);
  const other = await makeEvent(staff, { name: 'Elsewhere gallery' });
  t.equal((await staff.post(`/events/${other.id}/media/share`, { mediaIds: [m.body.sk], recipients: ['a@example.com'] })).status, 404, 'media of another event');
  t.equal((await staff.post(`/events/${ev.id}/media/share`, { mediaIds: [], recipients: ['a@example.com'] })).status, 400);
});
