// Every route of the area, taken from the live route table: who may call it, and that another
// tenant's staff never reaches this tenant's events or tickets.
import t from 'tap';
import { request } from '../helpers/http.js';
import { eventsWorld, makeEvent, makeTicket } from './setup.js';

const TAGS = new Set(['Events', 'Tickets', 'Check-in scanning', 'Attendee']);

// The spec's route list (Endpoints → Events) plus the attendee route: all must be served.
const SPEC = [
  'GET /events',
  'POST /events',
  'GET /events/:id',
  'PUT /events/:id',
  'DELETE /events/:id',
  'POST /events/:id/publish',
  'GET /events/:id/tickets',
  'POST /events/:id/tickets',
  'POST /events/tickets/validate',
  'GET /events/:id/ticket-types',
  'GET /events/tickets/:id/qr',
  'POST /events/checkin',
  'POST /events/checkout',
  'GET /events/:id/checkin-stats',
  'GET /events/:id/occupancy',
  'GET /events/:id/sessions',
  'POST /events/:id/sessions',
  'PUT /events/sessions/:id',
  'DELETE /events/sessions/:id',
  'GET /events/:id/schedule',
  'GET /events/:id/participants',
  'POST /events/:id/participants',
  'PUT /events/participants/:id',
  'DELETE /events/participants/:id',
  'POST /events/participants/:id/confirm',
  'POST /events/tickets/purchase',
  'POST /events/tickets/comp',
  'POST /events/tickets/fulfill',
  'GET /events/tickets/lookup/:eventId',
  'POST /events/tickets/:id/activate',
  'POST /events/tickets/:id/transfer',
  'POST /events/tickets/:id/refund',
  'DELETE /events/tickets/:id',
  'GET /events/tickets/:id/badge',
  'POST /events/tickets/:id/badge/printed',
  'POST /events/tickets/:id/perks/:perkId/claim',
  'GET /events/:id/media',
  'POST /events/:id/media',
  'POST /events/:id/media/share',
  'GET /client/events/tickets/mine',
];

t.test('events routes - every route of the spec is served and documented', async (t) => {
  const w = await eventsWorld(t);
  const served = new Set(w.app.deps.routes.filter((r) => TAGS.has(r.tag)).map((r) => `${r.method} ${r.path}`));
  t.same(SPEC.filter((r) => !served.has(r)), [], 'nothing missing');
  const doc = (await request(w.app.url, '/openapi.json')).body;
  const checkin = doc.paths['/events/checkin'].post;
  for (const reason of ['invalid_code', 'bad_signature', 'expired_code', 'wrong_event', 'already_checked_in', 'refunded', 'cancelled', 'not_active', 'zone_full']) {
    t.match(checkin.description, reason, `the reason ${reason} is documented`);
  }
  t.same([...new Set(w.app.deps.routes.filter((r) => served.has(`${r.method} ${r.path}`)).map((r) => r.tag))].sort(), [...TAGS].sort());
});

t.test('events routes - 401 without a token, 403 for a customer on staff routes, tenants apart', async (t) => {
  const w = await eventsWorld(t);
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const session = (await w.staff.post(`/events/${ev.id}/sessions`, { title: 'S', startTime: '2026-10-01T10:00:00Z', endTime: '2026-10-01T11:00:00Z' })).body;
  const person = (await w.staff.post(`/events/${ev.id}/participants`, { name: 'P' })).body;
  const routes = w.app.deps.routes.filter((r) => TAGS.has(r.tag));
  t.ok(routes.length >= SPEC.length);
  for (const r of routes) {
    const path = r.path
      .replace(':eventId', ev.id)
      .replace(':perkId', 'drink')
      .replace(/^\/events\/sessions\/:id/, `/events/sessions/${session.sk}`)
      .replace(/^\/events\/participants\/:id/, `/events/participants/${person.sk}`)
      .replace(/^\/events\/tickets\/:id/, `/events/tickets/${tk.sk}`)
      .replace(/^\/client\/events\/tickets\/:id/, `/client/events/tickets/${tk.sk}`)
      .replace(':id', ev.id) + (r.path.includes('lookup') ? '?q=x' : '');
    const call = (c: typeof w.staff) => (r.method === 'GET' ? c.get(path) : r.method === 'DELETE' ? c.del(path) : r.method === 'PUT' ? c.put(path, {}) : c.post(path, {}));
    const label = `${r.method} ${r.path}`;
    if (r.auth === 'none') {
      // A page that ships with the server (the live door view): it holds no data, its stream is staff-only.
      const page = await call(w.anon);
      t.equal(page.status, 200, `${label}: a public page`);
      t.match(String(page.headers['content-type']), /^text\/html/, `${label}: HTML`);
      t.notMatch(String(page.body), tk.sk, `${label}: holds no ticket`);
      continue;
    }
    t.equal((await call(w.anon)).status, 401, `${label}: no token`);
    if (r.auth === 'staff') {
      t.equal((await call(w.customer)).status, 403, `${label}: customer token`);
      t.equal((await call(w.noRole)).status, 403, `${label}: staff without the User role`);
      const foreign = await call(w.other);
      // Another tenant's staff, on its own orgid: this tenant's ids are not found there (lists are empty).
      if (r.path.includes(':')) t.ok([400, 404].includes(foreign.status), `${label}: another tenant gets ${foreign.status}`);
      else if (r.method === 'GET') t.equal(foreign.body.total, 0, `${label}: another tenant sees an empty list`);
    }
  }
  // Nothing the other tenant tried reached this one.
  t.equal(w.app.deps.store.getRecord(w.org, 'ticket', tk.sk)!.version, 1);
  t.equal((await w.staff.get(`/events/${ev.id}`)).body.version, ev.event.version);
});
