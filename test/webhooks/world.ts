// A test node running the events and webhooks modules, with organisations acme and globex, an
// Admin and a User of each, and a venue with tickets to scan.
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { makeEvent, makeTicket } from '../events/setup.js';
import { testWebhookConfig } from './receiver.js';
import type { StartOptions } from '../../edge/app.js';

type Teardown = Parameters<typeof startTestApp>[0];

export async function webhooksWorld(t: Teardown, over: Record<string, unknown> = {}, opts: StartOptions & { dataDir?: string } = {}) {
  const app = await startTestApp(t, { modules: ['events', 'webhooks'], config: testWebhookConfig(over), ...opts });
  await createOrg(app, 'acme');
  await createOrg(app, 'globex');
  const as = (org: string, roles: string[]) => client(app.url, { orgid: org, authorization: `Bearer ${tokenFor(app, { org, sub: `${org}-${roles[0]}`, roles })}` });
  return {
    app,
    admin: as('acme', ['Admin', 'User']),
    user: as('acme', ['User']),
    otherAdmin: as('globex', ['Admin', 'User']),
  };
}

export type Client = ReturnType<typeof client>;

/** An endpoint of the caller's organisation at `url` subscribed to `events`; answers the created endpoint (with its secret). */
export async function endpoint(c: Client, url: string, events: string[] = ['ticket.checked_in']): Promise<any> {
  const r = await c.post('/webhooks/endpoints', { url, events });
  if (r.status !== 201) throw new Error(`endpoint create failed: ${r.status} ${r.text}`);
  return r.body;
}

/** An event with `n` tickets; answers the event and the tickets. */
export async function venue(c: Client, n = 1) {
  const ev = await makeEvent(c);
  const tickets = [];
  for (let i = 0; i < n; i++) tickets.push(await makeTicket(c, ev));
  return { ev, tickets };
}
