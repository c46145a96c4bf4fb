// A hand-built door feed and key for the kit's tests: an Ed25519 key signing codes as the server
// does (issue 32's contract), and a `fetch` that answers the public door routes from memory, so a
// test controls every ticket, list and rule, and whether the network is there.
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import type { Fetch } from '../../clients/door-kit/index.js';
import type { DoorKeys, FeedEvent, FeedList, FeedPage, FeedRevoked, FeedTicket } from '../../clients/door-kit/types.js';

export function codeTag(secret: string): string {
  return createHash('sha256').update(secret).digest('base64url').slice(0, 8);
}

export interface EventKey {
  kid: string;
  publicKey: string;
  dynamic(ticketId: string, timestamp: number, tag: string): string;
  static(ticketId: string, tag: string): string;
}

export function eventKey(kid: string): EventKey {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'jwk' }).x as string;
  const sig = (msg: string) => kid + sign(null, Buffer.from(msg, 'utf8'), privateKey).toString('base64url');
  return {
    kid,
    publicKey: raw,
    dynamic: (id, ts, tag) => `${id}:${ts}:${sig(`${id}:${ts}:${tag}`)}`,
    static: (id, tag) => `${id}:S:${sig(`${id}:S:${tag}`)}`,
  };
}

export function feedEvent(id: string, over: Partial<FeedEvent> = {}): FeedEvent {
  return { id, timezone: 'UTC', allowReentry: false, codeWindowSeconds: 30, codeSkewSeconds: 60, zones: [{ id: 'hall', name: 'Hall', capacity: 500 }], ...over };
}

let n = 0;
export function feedTicket(over: Partial<FeedTicket> = {}): FeedTicket {
  n++;
  return {
    id: n.toString(16).padStart(24, 'a'),
    number: `TCK-${String(n).padStart(6, '0')}`,
    codeTag: codeTag(`secret-${n}`),
    ticketTypeId: 'type-ga',
    holderName: 'Ada',
    status: 'valid',
    requiresActivation: false,
    activated: false,
    checkedIn: false,
    lists: {},
    ...over,
  };
}

export function feedList(id: string, over: Partial<Omit<FeedList, 'rules'>> & { rules?: Partial<FeedList['rules']> } = {}): FeedList {
  const { rules, ...rest } = over;
  return {
    id,
    name: id,
    ticketTypeIds: null,
    zones: null,
    allowReentry: null,
    allowMultipleEntries: false,
    ...rest,
    rules: { validFrom: null, validUntil: null, maxEntries: null, maxEntriesPerDay: null, weekdays: null, ...rules },
  };
}

/** What the fake server holds for one event; a test changes it between syncs. */
export interface FakeEvent {
  event: FeedEvent;
  keys: DoorKeys;
  tickets: FeedTicket[];
  lists: FeedList[];
  revoked: FeedRevoked[];
  /** Cursor → the tickets/revocations/lists a delta after it carries (set by the test). */
  deltas: Map<string, { tickets: FeedTicket[]; revoked: FeedRevoked[]; lists: FeedList[] }>;
}

export interface FakeServer {
  fetch: Fetch;
  online: boolean;
  /** Every request, `METHOD path`. */
  calls: string[];
  /** Bodies of the batch uploads. */
  uploads: any[];
  /** Answers a batch upload's items (default: each admitted as decided, no conflict). */
  answer: (items: any[]) => any[];
}

export function fakeServer(events: Record<string, FakeEvent>, pageSize = 2, deviceList: string | null = null): FakeServer {
  const s: FakeServer = {
    online: true,
    calls: [],
    uploads: [],
    answer: (items) => items.map((i) => ({ success: i.decision === 'admitted', offline: true })),
    fetch: async (url, init) => {
      if (!s.online) throw new TypeError('fetch failed');
      const u = new URL(url);
      s.calls.push(`${init.method} ${u.pathname}${u.search}`);
      const reply = (status: number, body: unknown) => ({ status, text: async () => JSON.stringify(body) });
      if (u.pathname === '/events/devices/initialize') {
        return reply(200, { deviceId: 'dev-1', token: 'tok-1', device: { sk: 'dev-1', name: 'Gate', eventIds: Object.keys(events), listId: deviceList, checkpoint: 'north' } });
      }
      if (init.headers.authorization !== 'Device tok-1') return reply(401, { statusCode: 401, error: 'Unauthorized', message: 'no device' });
      if (u.pathname === '/events/checkin/batch') {
        const body = JSON.parse(init.body!);
        s.uploads.push(body);
        return reply(200, { results: s.answer(body.scans) });
      }
      const m = /^\/events\/([^/]+)\/(door-keys|door-feed)$/.exec(u.pathname);
      const ev = m && events[m[1]];
      if (!m || !ev) return reply(404, { statusCode: 404, error: 'Not Found', message: u.pathname });
      if (m[2] === 'door-keys') return reply(200, ev.keys);
      const since = u.searchParams.get('since');
      // Full sync: cursors `p<offset>` then `c<n>` at the end; a delta from `c<n>` is what the test set.
      if (since === null || since.startsWith('p')) {
        const from = since === null ? 0 : Number(since.slice(1));
        const tickets = ev.tickets.slice(from, from + pageSize);
        const done = from + pageSize >= ev.tickets.length;
        const page: FeedPage = { event: ev.event, tickets, lists: from === 0 ? ev.lists : [], revoked: done ? ev.revoked : [], cursor: done ? 'c0' : `p${from + pageSize}`, complete: done };
        return reply(200, page);
      }
      const d = ev.deltas.get(since) ?? { tickets: [], revoked: [], lists: [] };
      const next = `c${Number(since.slice(1)) + 1}`;
      if (!ev.deltas.has(next)) ev.deltas.set(next, { tickets: [], revoked: [], lists: [] });
      return reply(200, { event: ev.event, ...d, cursor: d.tickets.length + d.revoked.length + d.lists.length ? next : since, complete: true } satisfies FeedPage);
    },
  };
  return s;
}

export function fakeEvent(id: string, key: EventKey, over: Partial<FakeEvent> = {}): FakeEvent {
  return {
    event: feedEvent(id),
    keys: { eventId: id, activeKid: key.kid, keys: [{ kid: key.kid, alg: 'Ed25519', publicKey: key.publicKey, createdAt: '2026-01-01T00:00:00.000Z', retiredAt: null }] },
    tickets: [],
    lists: [],
    revoked: [],
    deltas: new Map(),
    ...over,
  };
}
