// Shared set-up for the reservation, check-in and workflow tests: a real app on port 0 with a
// ManualClock, an org, a location, service points and reservation definitions written straight
// into the store (the record-store routes belong to another area), and clients whose tokens are
// minted fresh on every call (a ManualClock moved by hours would expire a fixed token).
import { ManualClock } from '../../core/clock.js';
import { newRecord, type StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { readOutbox, type OutboxProvider } from '../../core/outbox.js';
import type { RunningApp } from '../../edge/app.js';
import type { ModuleRef } from '../../edge/modules.js';
import { createOrg, startTestApp, tempDir, tokenFor } from '../helpers/app.js';
import { request, type Reply } from '../helpers/http.js';

export interface Teardown {
  teardown(fn: () => unknown): void;
}

export const T0 = Date.UTC(2026, 2, 20, 8, 0, 0); // Friday 2026-03-20 08:00Z

export async function seed(app: RunningApp, tenant: string, datatype: string, data: Record<string, unknown>): Promise<StoredRecord> {
  const rec = newRecord(tenant, datatype, data, { now: app.deps.clock.now() });
  await app.deps.store.commit(new WriteBatch().putRecord(rec, 0));
  return rec;
}

export type Caller = ReturnType<typeof caller>;

/** An HTTP client whose bearer token is minted at each call (by the app's clock). */
export function caller(app: RunningApp, org: string, who: { kind?: 'staff' | 'customer'; sub?: string; email?: string; customerId?: string; roles?: string[] } = {}) {
  const headers = (): Record<string, string> => ({
    orgid: org,
    authorization: `Bearer ${tokenFor(app, {
      org,
      kind: who.kind ?? 'staff',
      sub: who.sub ?? who.customerId ?? 'staff-user-1',
      email: who.email,
      customerId: who.customerId,
      roles: who.roles,
    })}`,
  });
  const call = (method: string, path: string, body?: unknown, extra: Record<string, string> = {}): Promise<Reply> =>
    request(app.url, path, { method, body, headers: { ...headers(), ...extra } });
  return {
    get: (path: string, extra?: Record<string, string>) => call('GET', path, undefined, extra),
    post: (path: string, body: unknown = {}, extra?: Record<string, string>) => call('POST', path, body, extra),
    put: (path: string, body: unknown = {}, extra?: Record<string, string>) => call('PUT', path, body, extra),
    del: (path: string, extra?: Record<string, string>) => call('DELETE', path, undefined, extra),
  };
}

/** A public client: orgid only. */
export function anonymous(app: RunningApp, org: string) {
  return {
    get: (path: string) => request(app.url, path, { headers: { orgid: org } }),
    post: (path: string, body: unknown = {}) => request(app.url, path, { method: 'POST', body, headers: { orgid: org } }),
  };
}

export interface Venue {
  app: RunningApp;
  clock: ManualClock;
  dataDir: string;
  org: string;
  location: StoredRecord;
  staff: Caller;
  alice: Caller;
  bob: Caller;
}

export interface VenueOptions {
  clock?: ManualClock;
  dataDir?: string;
  org?: string;
  timezone?: string;
  slug?: string;
  /** Reuse this app (a fresh org per call, the clock set back to T0) instead of starting one. */
  shared?: SharedApp;
  /** An outbox provider for a new app (the default records messages in the store). */
  outbox?: OutboxProvider;
  /** The modules of a new app (every module when absent). */
  modules?: readonly ModuleRef[];
}

export interface SharedApp {
  app: RunningApp;
  clock: ManualClock;
  dataDir: string;
  orgs: number;
}

/**
 * One app for a whole test file (start-up costs seconds): each `venue(t, { shared })` then gets
 * its own org, so subtests stay independent. Not for tests that restart the app or count every
 * job the scheduler runs.
 */
export async function sharedApp(t: Teardown, opts: { modules?: readonly ModuleRef[] } = {}): Promise<SharedApp> {
  const clock = new ManualClock(T0);
  const dataDir = tempDir(t);
  const app = await startTestApp(t, { modules: opts.modules, dataDir, clock });
  return { app, clock, dataDir, orgs: 0 };
}

/** An app with one org, one location (`downtown`, Europe/Berlin) and three callers. */
export async function venue(t: Teardown, opts: VenueOptions = {}): Promise<Venue> {
  if (opts.shared) opts.shared.clock.set(opts.clock?.now() ?? T0);
  const clock = opts.shared?.clock ?? opts.clock ?? new ManualClock(T0);
  const dataDir = opts.shared?.dataDir ?? opts.dataDir ?? tempDir(t);
  const app = opts.shared?.app ?? (await startTestApp(t, { modules: opts.modules, dataDir, clock, outbox: opts.outbox }));
  const org = opts.org ?? (opts.shared ? `acme${++opts.shared.orgs}` : 'acme');
  if (!app.deps.store.getOrg(org)) await createOrg(app, org);
  const slug = opts.slug ?? 'downtown';
  const location =
    app.deps.store.scan(org, 'location', { 'data.name': slug })[0] ??
    (await seed(app, org, 'location', { name: slug, timezone: opts.timezone ?? 'Europe/Berlin' }));
  return {
    app,
    clock,
    dataDir,
    org,
    location,
    staff: caller(app, org, { kind: 'staff', sub: 'staff-user-1' }),
    alice: caller(app, org, { kind: 'customer', customerId: 'c0000000000000000000a11c', email: 'alice@example.com' }),
    bob: caller(app, org, { kind: 'customer', customerId: 'c0000000000000000000b0b0', email: 'bob@example.com' }),
  };
}

/** A restaurant-style definition: Berlin, 60-minute slots 10:00–22:00 every day, two services. */
export function diningDefinition(extra: Record<string, unknown> = {}): Record<string, unknown> {
  const hours = [{ open: '10:00', close: '22:00' }];
  return {
    name: 'Dining',
    timezone: 'Europe/Berlin',
    businessLocationId: 'downtown',
    slotMinutes: 60,
    openingHours: { mon: hours, tue: hours, wed: hours, thu: hours, fri: hours, sat: hours, sun: hours },
    services: [
      { id: 'svc-table', name: 'Table', durationMinutes: 60, capacity: 4 },
      { id: 'svc-bar', name: 'Bar', durationMinutes: 30, capacity: 2 },
    ],
    requiredFields: ['phone'],
    confirmation: { enabled: true },
    reminder: { enabled: true, minutesBefore: 120 },
    ...extra,
  };
}

export function outbox(app: RunningApp, org: string, to?: string) {
  return readOutbox(app.deps.store, org, to);
}
