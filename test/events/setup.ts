// Shared set-up of the events tests: a real server with a tenant, staff and customer clients, and
// small builders for an event with ticket types and tickets.
import type { RunningApp } from '../../edge/app.js';
import type { StartOptions } from '../../edge/app.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';

type Teardown = Parameters<typeof startTestApp>[0];
export type Client = ReturnType<typeof client>;

export interface EventsWorld {
  app: RunningApp;
  org: string;
  staff: Client;
  /** Staff of another organisation, on its own orgid. */
  other: Client;
  /** No Authorization header. */
  anon: Client;
  /** A customer token (not staff). */
  customer: Client;
  /** A staff token without the User role. */
  noRole: Client;
}

export async function eventsWorld(t: Teardown, opts: StartOptions & { dataDir?: string } = {}): Promise<EventsWorld> {
  const app = await startTestApp(t, { modules: ['events', 'records'], ...opts });
  const org = 'acme';
  await createOrg(app, org);
  await createOrg(app, 'globex');
  const bearer = (tok: string) => `Bearer ${tok}`;
  return {
    app,
    org,
    staff: client(app.url, { orgid: org, authorization: bearer(tokenFor(app, { org, sub: 'staff-1' })) }),
    other: client(app.url, { orgid: 'globex', authorization: bearer(tokenFor(app, { org: 'globex', sub: 'staff-9' })) }),
    anon: client(app.url, { orgid: org }),
    customer: client(app.url, {
      orgid: org,
      authorization: bearer(tokenFor(app, { org, kind: 'customer', sub: 'cust-1', customerId: 'cust-1', email: 'cus@example.com' })),
    }),
    noRole: client(app.url, { orgid: org, authorization: bearer(tokenFor(app, { org, roles: ['Viewer'] })) }),
  };
}

export interface EventSetup {
  id: string;
  slug: string;
  /** Ticket type ids by title. */
  types: Record<string, string>;
  event: any;
}

export async function makeEvent(c: Client, input: Record<string, unknown> = {}): Promise<EventSetup> {
  const body = {
    name: 'Summer Fest',
    zones: [
      { id: 'main', name: 'Main hall', capacity: 100 },
      { id: 'vip', name: 'VIP lounge', capacity: 2 },
    ],
    ticketTypes: [
      { title: 'General', colour: '#1E90FF', price: 25, quantity: 1000, perks: [{ id: 'drink', name: 'Welcome drink' }] },
      { title: 'Backstage', colour: '#FF4500', price: '99.00', requiresActivation: true },
    ],
    ...input,
  };
  const r = await c.post('/events', body);
  if (r.status !== 201) throw new Error(`event create failed: ${r.status} ${r.text}`);
  const types: Record<string, string> = {};
  for (const tt of r.body.ticketTypes) types[tt.data.title] = tt.sk;
  return { id: r.body.sk, slug: r.body.data.slug, types, event: r.body };
}

/** An event with zones hall (500) and lounge (50) and ticket types GA and VIP: the door's venue. */
export function makeVenue(c: Client, input: Record<string, unknown> = {}): Promise<EventSetup> {
  return makeEvent(c, {
    name: 'Venue night',
    zones: [
      { id: 'hall', name: 'Main hall', capacity: 500 },
      { id: 'lounge', name: 'VIP lounge', capacity: 50 },
    ],
    ticketTypes: [{ title: 'GA' }, { title: 'VIP' }],
    ...input,
  });
}

export async function makeTicket(c: Client, ev: EventSetup, body: Record<string, unknown> = {}): Promise<any> {
  const r = await c.post(`/events/${ev.id}/tickets`, { ticketTypeId: ev.types.General, holderEmail: 'ada@example.com', holderName: 'Ada Lovelace', ...body });
  if (r.status !== 201) throw new Error(`ticket create failed: ${r.status} ${r.text}`);
  return r.body;
}
