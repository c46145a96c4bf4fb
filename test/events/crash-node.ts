// The kill -9 tests' node: the service in a child process over a temp data directory
// (crash-server.ts), a staff client on it for organisation acme, and the two-list venue the
// check-in list restarts use.
import { TokenService } from '../../core/auth/tokens.js';
import { tempDir, TEST_JWT_SECRET } from '../helpers/app.js';
import { runFixture } from '../helpers/child.js';
import { client } from '../helpers/http.js';

type Teardown = Parameters<typeof tempDir>[0];
export type Staff = ReturnType<typeof client>;

const fixture = new URL('./crash-server.ts', import.meta.url).pathname;

/** Starts the node; `doorPaused`: ticket records stay behind the scan log (no background materializer). */
export async function crashNode(t: Teardown, opts: { doorPaused?: boolean } = {}) {
  const dataDir = tempDir(t);
  const child = runFixture(fixture, opts.doorPaused ? [dataDir, 'door-paused'] : [dataDir]);
  t.teardown(() => child.kill9());
  await child.waitFor((lines) => lines.some((l) => l.startsWith('ready ')));
  const url = child.lines.find((l) => l.startsWith('ready '))!.slice(6);
  const tokens = new TokenService(TEST_JWT_SECRET, { accessTtlSeconds: 600, refreshTtlSeconds: 600, cacheSize: 0 });
  const headers = { orgid: 'acme', authorization: `Bearer ${tokens.signAccess({ sub: 'door-1', org: 'acme', roles: ['User'], kind: 'staff' })}` };
  return { dataDir, child, headers, staff: client(url, headers) };
}

/**
 * An event with zones hall and lounge, types GA and VIP, a General list (hall, two entries) and a
 * Lounge list (VIP only), and one ticket of each type.
 */
export async function twoListVenue(staff: Staff) {
  const ev = (
    await staff.post('/events', {
      name: 'Restart Fest',
      zones: [{ id: 'hall', name: 'Hall' }, { id: 'lounge', name: 'Lounge' }],
      ticketTypes: [{ title: 'GA' }, { title: 'VIP' }],
    })
  ).body;
  const [ga, vip] = ev.ticketTypes.map((x: any) => x.sk);
  const general = (await staff.post(`/events/${ev.sk}/checkin-lists`, { name: 'General', zones: ['hall'], rules: { maxEntries: 2 } })).body;
  const lounge = (await staff.post(`/events/${ev.sk}/checkin-lists`, { name: 'Lounge', zones: ['lounge'], ticketTypeIds: [vip] })).body;
  const comp = async (type: string) => (await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: type, quantity: 1, holderEmail: 'x@example.com' }] })).body.tickets[0];
  return { ev, general, lounge, tGa: await comp(ga), tVip: await comp(vip) };
}

/** A check-in (or `kind`: checkout) at a list; the answer's body. */
export async function scanAt(c: Staff, code: string, listId: string, kind = 'checkin', extra: Record<string, unknown> = {}) {
  return (await c.post(`/events/${kind}`, { code, listId, ...extra })).body;
}
