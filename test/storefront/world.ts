// Shared set-up for the storefront tests: one real app per test file (port 0, a temp LMDB), a fresh
// organisation per subtest with a location, service points and products written straight into
// the store, and clients: anonymous (orgid only, as the public storefront is used), staff,
// admin and customers.
import type { StoredRecord } from '../../core/store/record.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import type { LocalGateway } from '../../core/payments/local.js';
import type { RunningApp, StartOptions } from '../../edge/app.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { request, type Reply } from '../helpers/http.js';

export interface Teardown {
  teardown(fn: () => unknown): void;
}

export async function seed(app: RunningApp, tenant: string, datatype: string, data: Record<string, unknown>): Promise<StoredRecord> {
  const rec = newRecord(tenant, datatype, data, { now: app.deps.clock.now() });
  await app.deps.store.commit(new WriteBatch().putRecord(rec, 0));
  return rec;
}

export type Client = ReturnType<typeof clientFor>;

export function clientFor(app: RunningApp, org: string, who?: { kind?: 'staff' | 'customer' | 'app'; sub?: string; roles?: string[]; customerId?: string; email?: string }) {
  const headers = (): Record<string, string> => {
    const h: Record<string, string> = { orgid: org };
    if (who) {
      h.authorization = `Bearer ${tokenFor(app, {
        org,
        kind: who.kind ?? 'staff',
        sub: who.sub ?? who.customerId ?? 'staff-1',
        roles: who.roles,
        customerId: who.customerId,
        email: who.email,
      })}`;
    }
    return h;
  };
  const call = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Reply> =>
    request(app.url, path, { method, body, headers: { ...headers(), ...extra } });
  return {
    get: (path: string, extra?: Record<string, string>) => call('GET', path, undefined, extra),
    post: (path: string, body: unknown = {}, extra?: Record<string, string>) => call('POST', path, body, extra),
    put: (path: string, body: unknown = {}, extra?: Record<string, string>) => call('PUT', path, body, extra),
  };
}

export interface Shop {
  app: RunningApp;
  org: string;
  slug: string;
  location: StoredRecord;
  points: Record<string, string>;
  products: Record<string, string>;
  /** orgid only: these organisations are made without the closed-storefront fields, so the spec's open mode applies. */
  pub: Client;
  staff: Client;
  admin: Client;
  alice: Client;
  bob: Client;
  /** An application's token (kind app, role System), as a kiosk or an ordering app holds. */
  kiosk: Client;
  local: LocalGateway;
}

export interface Shared {
  app: RunningApp;
  orgs: number;
}

export async function sharedApp(t: Teardown, opts: StartOptions = {}): Promise<Shared> {
  return { app: await startTestApp(t, opts), orgs: 0 };
}

/** A fresh organisation with location `main` (tax 10 %), tables and a small menu. */
export async function shop(shared: Shared, opts: { taxRate?: number | string; currency?: string } = {}): Promise<Shop> {
  const app = shared.app;
  const org = `shop${++shared.orgs}`;
  await createOrg(app, org, `Shop ${shared.orgs}`);
  const slug = 'main';
  const location = await seed(app, org, 'location', {
    name: slug,
    displayName: 'Main Street',
    address: { line1: '1 Main St', city: 'Springfield', postalCode: '12345', country: 'US' },
    phone: '+1 555 0100',
    taxRate: opts.taxRate ?? 10,
    ...(opts.currency ? { currency: opts.currency } : {}),
    receiptFooter: 'See you soon!',
  });
  const points: Record<string, string> = {};
  for (const name of ['Table 1', 'Table 2', 'Bar']) {
    points[name] = (await seed(app, org, 'service_point', { name, status: 'available', businessLocationId: slug })).sk;
  }
  const products: Record<string, string> = {};
  for (const [name, price, extra] of [
    ['Margherita', '9.50', {}],
    ['Cola', 2.5, { taxRate: 0 }],
    ['Espresso', '0.1', {}],
    ['Cookie', 0.2, {}],
  ] as const) {
    products[name] = (await seed(app, org, 'sf_product', { name, price, ...extra })).sk;
  }
  return {
    app,
    org,
    slug,
    location,
    points,
    products,
    pub: clientFor(app, org),
    staff: clientFor(app, org, { kind: 'staff', sub: 'staff-1', roles: ['User'] }),
    admin: clientFor(app, org, { kind: 'staff', sub: 'admin-1', roles: ['User', 'Admin'] }),
    alice: clientFor(app, org, { kind: 'customer', customerId: 'c00000000000000000000a11', email: 'alice@example.com' }),
    kiosk: clientFor(app, org, { kind: 'app', sub: 'app-kiosk', roles: ['System'] }),
    bob: clientFor(app, org, { kind: 'customer', customerId: 'c00000000000000000000b0b', email: 'bob@example.com' }),
    local: app.deps.services.storefront.gateways.get('local') as LocalGateway,
  };
}

export function point(s: Shop, name: string): StoredRecord {
  return s.app.deps.store.getRecord(s.org, 'service_point', s.points[name])!;
}

/** Opens a tab and answers its record. */
export async function openTab(s: Shop, body: Record<string, unknown> = {}, client: Client = s.pub): Promise<StoredRecord> {
  const res = await client.post('/storefront/pos/tab', { businessLocationId: s.slug, ...body });
  if (res.status !== 201 && res.status !== 200) throw new Error(`open tab: ${res.status} ${res.text}`);
  return res.body;
}
