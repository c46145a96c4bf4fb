// Tenant isolation swept over every route of the live route table (generated from the table, not
// a hand list). Two organisations with real sign-ups; B is seeded through B's own routes with
// records that carry a marker string. Then:
//   (1) A's credentials with `orgid: B` on every route: refused (401/403) on every route that takes
//       a token; on public routes A's token adds nothing to what an anonymous caller gets.
//   (2) A's credentials with `orgid: A` and B's ids in every path parameter and every id-like body
//       and query field: no answer carries a B marker or a record of B.
// Throughout, B's part of the store (records, indexes, logs, key-values, its organisation) must not
// change, except by the anonymous public writes of (1b), which anyone may make.
import { createHash, randomBytes } from 'node:crypto';
import t from 'tap';
import type { LmdbStore } from '../../core/store/lmdb-store.js';
import type { RouteDef } from '../../edge/route.js';
import { startTestApp } from '../helpers/app.js';
import { bearer, signupCustomer, signupOrg, signupStaff } from '../helpers/auth.js';
import { request, type Reply } from '../helpers/http.js';
import { ack, chatSocket } from '../chat/helpers.js';

type Json = Record<string, any>;

/** All lower case, so a copy the server lower-cases (slugs, emails) still matches. */
const MARK = `zqxmark${randomBytes(4).toString('hex')}`;
const HIGH = '\uffff';
const CONCURRENCY = 4;

interface RangeDb {
  getRange(opts: { start?: unknown; end?: unknown }): Iterable<{ key: unknown; value: unknown }>;
  get(key: unknown): unknown;
}

/**
 * A hash of everything stored under one tenant. The store's own digest() covers every tenant, and
 * A's routes write into A during the sweep; keys start with the tenant (see lmdb-store.ts), so
 * B's part is one key range per database.
 */
function tenantDigest(store: LmdbStore, tenant: string): string {
  const dbs = store as unknown as Record<string, RangeDb>;
  const h = createHash('sha256');
  for (const name of ['records', 'index', 'logs', 'kv']) {
    const db = dbs[name];
    if (!db || typeof db.getRange !== 'function') throw new Error(`the store has no ${name} database to read`);
    for (const { key, value } of db.getRange({ start: [tenant], end: [tenant, HIGH] })) {
      h.update(name).update(JSON.stringify(key)).update(JSON.stringify(value) ?? '');
    }
  }
  h.update(JSON.stringify(dbs.orgs.get(tenant)) ?? '');
  return h.digest('hex');
}

/** Every record of a tenant: [datatype, sk, data]. */
function tenantRecords(store: LmdbStore, tenant: string): Array<{ datatype: string; sk: string; data: Json }> {
  const db = (store as unknown as Record<string, RangeDb>).records;
  return [...db.getRange({ start: [tenant], end: [tenant, HIGH] })].map(({ key, value }) => {
    const [, datatype, sk] = key as string[];
    return { datatype, sk, data: (value as Json).data ?? {} };
  });
}

const schemaOf = (s: unknown): Json | undefined => (s ? (JSON.parse(JSON.stringify(s)) as Json) : undefined);
const idLike = (name: string) => /(^id$|^ids$|Ids?$|_id$|uid$|Uid$)/.test(name);
const emailLike = (name: string, s?: Json) => /email/i.test(name) || s?.format === 'email';

/** One value B owns, put into every id slot of one request. */
interface Fill {
  id: string;
  datatype: string;
  email: string;
}

/** A plausible string for a schema (pattern, format, length), preferring `want` when it fits. */
function str(s: Json, want?: string): string {
  const fits = (v: string) =>
    (!s.pattern || new RegExp(s.pattern).test(v)) && v.length >= (s.minLength ?? 0) && v.length <= (s.maxLength ?? Infinity);
  if (want !== undefined && fits(want)) return want;
  if (s.enum) return String(s.enum[0]);
  if (s.const !== undefined) return String(s.const);
  if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString();
  if (s.format === 'date') return new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
  if (s.format === 'email') return 'someone@example.com';
  for (const c of ['x', 'abcdefgh', '0123456789abcdef01234567', '123456', '1234', '+15550100', 'web', 'x.md', 'a1:b2']) if (fits(c)) return c;
  return 'x'.repeat(Math.max(1, s.minLength ?? 1));
}

/** A value for `s` with B's ids in every id-like slot: required fields, and every id or email field. */
function gen(s: Json | undefined, name: string, f: Fill, depth = 0): unknown {
  if (!s || depth > 4) return undefined;
  if (s.anyOf) return gen(s.anyOf.find((x: Json) => x.type !== 'null') ?? s.anyOf[0], name, f, depth);
  if (s.const !== undefined) return s.const;
  switch (s.type) {
    case 'object': {
      const out: Json = {};
      const required: string[] = s.required ?? [];
      for (const [k, p] of Object.entries<Json>(s.properties ?? {})) {
        if (!required.includes(k) && !idLike(k) && !emailLike(k, p) && k !== 'datatype') continue;
        const v = gen(p, k, f, depth + 1);
        if (v !== undefined) out[k] = v;
      }
      return out;
    }
    case 'array': {
      const n = idLike(name) || emailLike(name) ? 1 : s.minItems ?? 0;
      return Array.from({ length: n }, () => gen(s.items, name.replace(/s$/, ''), f, depth + 1));
    }
    case 'string':
      if (name === 'datatype') return str(s, f.datatype);
      if (emailLike(name, s)) return str(s, f.email);
      if (idLike(name)) return str(s, f.id);
      return str(s);
    case 'integer':
    case 'number':
      return s.minimum ?? (s.maximum !== undefined && s.maximum < 1 ? s.maximum : 1);
    case 'boolean':
      return false;
    default:
      return name === 'quantity' ? 1 : undefined;
  }
}

/** Does the route have any slot that takes an id (so it is worth sending once per id of B)? */
function hasSlots(r: RouteDef): boolean {
  if (r.path.includes(':')) return true;
  for (const s of [schemaOf(r.query), schemaOf(r.body)]) {
    for (const [k, p] of Object.entries<Json>(s?.properties ?? {})) if (idLike(k) || emailLike(k, p) || k === 'datatype') return true;
  }
  return false;
}

function build(r: RouteDef, f: Fill): { path: string; body?: unknown } {
  const params = schemaOf(r.params)?.properties ?? {};
  let path = r.path.replace(/:([A-Za-z0-9_]+)/g, (_, name: string) => {
    const s: Json = params[name] ?? { type: 'string' };
    if (name === 'datatype') return encodeURIComponent(str(s, f.datatype));
    if (emailLike(name)) return encodeURIComponent(str(s, f.email));
    return encodeURIComponent(str(s, f.id));
  });
  const q = gen(schemaOf(r.query), '', f) as Json | undefined;
  if (q && Object.keys(q).length) path += '?' + new URLSearchParams(Object.entries(q).map(([k, v]): [string, string] => [k, String(v)])).toString();
  const hasBody = r.method !== 'GET' && r.method !== 'DELETE';
  return { path, body: hasBody ? gen(schemaOf(r.body), '', f) ?? {} : undefined };
}

/** Runs `fn` over `items` with a few requests in flight at once. */
async function pool<T>(items: T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < items.length) await fn(items[next++]);
    }),
  );
}

t.test('tenant isolation - A never reads or writes B, over every route', async (t) => {
  const app = await startTestApp(t, {
    config: { rateLimits: { enabled: false }, chat: { presenceGraceMs: 20 }, providers: { ai: { wordDelayMs: 0 } } },
  });
  const store = app.deps.store as LmdbStore;
  const hex = randomBytes(3).toString('hex');

  // --- Organisation A: the caller. Admin (User, Admin, ConfigAdmin), a customer, an API key.
  const a = await signupOrg(app, { email: `owner@a${hex}.example`, orgName: 'Alpha' });
  const aCustomer = await signupCustomer(app, a.orgId, { email: `cust@a${hex}.example` });
  const aKey = (await request(app.url, '/profile/api-keys', { method: 'POST', headers: bearer(a), body: { name: 'sweep' } })).body.key as string;
  t.match(aKey, /^bpk_/, 'A has an API key');

  // --- Organisation B: the victim, seeded through its own routes. Its display name carries no
  // marker: the public directory lookup answers an email's organisations by design (spec).
  const bEmails = { owner: `owner@b${hex}.example`, staff: `staff@b${hex}.example`, cust: `cust@b${hex}.example` };
  const b = await signupOrg(app, { email: bEmails.owner, orgName: 'Beta', name: `${MARK} owner` });
  await signupStaff(app, b.orgId, b.token, { email: bEmails.staff, name: `${MARK} staff`, employeeId: 'EB-1', roles: ['User'] });
  const bCustomer = await signupCustomer(app, b.orgId, { email: bEmails.cust, name: `${MARK} customer` });
  const seedFailures: string[] = [];
  const seed = async (method: string, path: string, body?: unknown, who: { orgId: string; token: string } = b): Promise<Json> => {
    const r = await request(app.url, path, { method, headers: bearer(who), body });
    if (r.status >= 300) seedFailures.push(`${method} ${path} → ${r.status} ${r.text.slice(0, 200)}`);
    return r.body ?? {};
  };
  const slug = `bloc${hex}`;
  const create = (datatype: string, data: Json) => seed('POST', '/repository/create', { datatype, data, isNew: true, version: 0 });
  await create('location', { name: slug, displayName: `${MARK} location`, taxRate: 10 });
  await create('service_point', { name: `${MARK} table`, status: 'available', businessLocationId: slug });
  const product = await create('sf_product', { name: `${MARK} product`, price: '5.00' });
  await create('zq_thing', { title: `${MARK} record`, note: `${MARK} note` });
  await seed('PUT', '/storefront/settings', { posRequiresStaffToken: true });
  const tab = await seed('POST', '/storefront/pos/tab', { businessLocationId: slug, tabLabel: `${MARK} tab` });
  await seed('POST', `/storefront/order/${tab.sk}/items`, { items: [{ productId: product.sk, quantity: 1 }] });
  const ev = await seed('POST', '/events', {
    name: `${MARK} fest`,
    ticketTypes: [{ title: `${MARK} general`, price: 1000, quantity: 100, perks: [{ id: 'drink', name: `${MARK} drink` }] }],
  });
  const ticketTypeId = ev.ticketTypes?.[0]?.sk;
  await seed('POST', `/events/${ev.sk}/tickets`, { ticketTypeId, holderEmail: bEmails.cust, holderName: `${MARK} holder` });
  const start = new Date(Date.now() + 86_400_000);
  await seed('POST', `/events/${ev.sk}/sessions`, { title: `${MARK} session`, startTime: start.toISOString(), endTime: new Date(start.getTime() + 3_600_000).toISOString() });
  await seed('POST', `/events/${ev.sk}/participants`, { name: `${MARK} participant`, email: bEmails.staff });
  await seed('POST', '/crm/leads/detail', { name: `${MARK} lead`, email: bEmails.cust, notes: `${MARK} lead notes` });
  const ticket = await seed('POST', '/crm/tickets/detail', { subject: `${MARK} subject`, requester: { email: bEmails.cust, name: `${MARK} requester` }, description: `${MARK} description` });
  await seed('POST', `/crm/tickets/comments/${ticket.ticket?.sk}`, { body: `${MARK} comment` });
  await seed('POST', '/crm/customer-activity/record', { email: bEmails.cust, type: 'action', name: `${MARK} activity` });
  await seed('POST', '/crm/inbox/update?send=true', { channel: 'email', contact: bEmails.cust, message: { body: `${MARK} inbox`, subject: `${MARK} inbox subject` } });
  await seed('POST', '/crm/reservations/service-point/create', { name: `${MARK} point`, businessLocationId: slug });
  await seed('POST', '/checkin/walk-in', { businessLocationId: slug, name: `${MARK} walkin`, email: bEmails.cust });
  await seed('POST', '/phone/numbers', { number: '+15550001111', label: `${MARK} number` });
  await seed('POST', '/phone/voice/register-device', { deviceId: `dev-b-${hex}`, platform: 'web', label: `${MARK} device`, capabilities: ['voice'] });
  await seed('POST', '/profile/api-keys', { name: `${MARK} key` });
  const bApp = await seed('POST', '/profile/app/register', { name: `${MARK} app`, domains: ['b.example.com'] });
  await seed('POST', '/profile/passcode/card/register', { employeeId: 'EB-1', cardUid: `CARD-B-${hex}`, label: `${MARK} card` });
  await seed('POST', '/sync/social-activities/ingest', { items: [{ kind: 'comment', platform: 'facebook', externalId: `ext-${hex}`, text: `${MARK} social` }] });
  await seed('POST', '/client/community/messages', { to: b.user.id, text: `${MARK} community` }, bCustomer);
  // A support chat, through the socket as the customer would open it.
  const chat = await chatSocket(t, app, b.orgId, { id: bCustomer.customerId, email: bEmails.cust, token: bCustomer.token });
  await ack(chat.s, 'chatRequest', { message: `${MARK} chat` });
  chat.s.disconnect();
  t.same(seedFailures, [], 'B is seeded through its own routes');

  // B's ids: one record of every datatype B holds (the marked ones first), and ids that are not
  // record keys (employee id, card UID, chat id). Emails rotate through the email slots.
  const records = tenantRecords(store, b.orgId);
  const bSks = new Set(records.map((r) => r.sk));
  const fills: Fill[] = [];
  const seen = new Set<string>();
  const emails = Object.values(bEmails);
  const marked = (r: { data: Json }) => JSON.stringify(r.data).includes(MARK);
  for (const r of [...records.filter(marked), ...records.filter((r) => !marked(r))]) {
    const key = marked(r) ? `${r.datatype}:${r.sk}` : r.datatype;
    if (seen.has(key) || (!marked(r) && seen.has(`type:${r.datatype}`))) continue;
    seen.add(key);
    seen.add(`type:${r.datatype}`);
    fills.push({ id: r.sk, datatype: r.datatype, email: emails[fills.length % emails.length] });
  }
  for (const id of ['EB-1', `CARD-B-${hex}`, chat.auth.chatId, bApp.appId, b.orgId].filter(Boolean)) {
    fills.push({ id, datatype: 'user', email: emails[fills.length % emails.length] });
  }
  t.ok(records.filter(marked).length >= 20, `B holds ${records.length} records, ${records.filter(marked).length} with the marker`);

  // --- The checks every answer goes through.
  const leaks: string[] = [];
  const statuses = new Map<string, number>();
  const serverErrors: string[] = [];
  let sent = 0;
  const recordsOfB = (v: unknown, out: string[] = []): string[] => {
    if (Array.isArray(v)) for (const x of v) recordsOfB(x, out);
    else if (v && typeof v === 'object') {
      for (const k of ['sk', 'id', '_id']) {
        const id = (v as Json)[k];
        if (typeof id === 'string' && bSks.has(id) && Object.keys(v).length > 1) out.push(`${k}=${id}`);
      }
      for (const x of Object.values(v)) recordsOfB(x, out);
    }
    return out;
  };
  const markersIn = (r: Reply) => r.text.toLowerCase().split(MARK).length - 1;
  const send = async (r: RouteDef, path: string, headers: Record<string, string>, body: unknown): Promise<Reply> => {
    sent++;
    const res = await request(app.url, path, { method: r.method, headers, body, timeoutMs: 10_000 });
    const cls = `${Math.floor(res.status / 100)}xx`;
    if (res.status >= 500) serverErrors.push(`${r.method} ${path} → ${res.status} ${res.text.slice(0, 160)}`);
    statuses.set(cls, (statuses.get(cls) ?? 0) + 1);
    return res;
  };
  const aAdmin = bearer(a);
  const aCust = bearer(aCustomer);
  const routes = app.deps.routes;

  // --- (1a) A's credentials, orgid B, on every route that takes a token: 401/403, nothing of B.
  await settle();
  const before1 = tenantDigest(store, b.orgId);
  const toB = (h: Record<string, string>) => ({ ...h, orgid: b.orgId });
  const credsOfA: Array<[string, Record<string, string>]> = [
    ['A admin bearer', toB(aAdmin)],
    ['A customer bearer', toB(aCust)],
    ['A API key', { orgid: b.orgId, 'x-api-key': aKey }],
  ];
  let swept1 = 0;
  await pool(
    routes.filter((r) => r.auth !== 'none' && (r.tenant ?? 'required') !== 'none'),
    async (r) => {
      swept1++;
      const { path, body } = build(r, fills[0]);
      for (const [who, headers] of credsOfA) {
        const res = await send(r, path, headers, body);
        if (res.status !== 401 && res.status !== 403) leaks.push(`(1) ${r.method} ${r.path} with ${who}, orgid B → ${res.status} ${res.text.slice(0, 160)}`);
        if (markersIn(res) || recordsOfB(res.body).length) leaks.push(`(1) ${r.method} ${r.path} with ${who}, orgid B: answer carries B's data`);
      }
    },
  );
  t.equal(tenantDigest(store, b.orgId), before1, "(1a) B's store is unchanged");

  // --- (1b) Public routes with orgid B: A's token adds nothing to what an anonymous caller gets.
  // Anonymous public writes may land in B (a magic code, say): anyone may make those.
  await pool(
    routes.filter((r) => r.auth === 'none' && (r.tenant ?? 'required') !== 'none'),
    async (r) => {
      swept1++;
      const { path, body } = build(r, fills[0]);
      // The first anonymous call may change state (a sign-up answers 201, then 409): compare
      // with the second. A refusal (401/403) of A's token is fine too.
      await send(r, path, { orgid: b.orgId }, body);
      const anon = await send(r, path, { orgid: b.orgId }, body);
      for (const [who, headers] of credsOfA) {
        const res = await send(r, path, headers, body);
        const refused = res.status === 401 || res.status === 403;
        if ((res.status !== anon.status && !refused) || markersIn(res) > markersIn(anon) || recordsOfB(res.body).length > recordsOfB(anon.body).length) {
          leaks.push(`(1) ${r.method} ${r.path} with ${who}, orgid B → ${res.status} (${markersIn(res)} markers), anonymous → ${anon.status} (${markersIn(anon)})`);
        }
      }
    },
  );

  // --- (2) orgid A, A's credentials, B's ids in every slot: no B data out, nothing of B changed.
  await settle();
  const before2 = tenantDigest(store, b.orgId);
  const jobs: Array<{ r: RouteDef; f: Fill }> = [];
  // Sign-out ends the sweeping session's access token (test/auth/signout.test.ts): swept along
  // with the rest, every route after it would be answered 401 and prove nothing.
  const sweepable = routes.filter((r) => !(r.method === 'POST' && r.path === '/profile/signout'));
  for (const r of sweepable) for (const f of hasSlots(r) ? fills : fills.slice(0, 1)) jobs.push({ r, f });
  await pool(jobs, async ({ r, f }) => {
    const { path, body } = build(r, f);
    const who: Array<[string, Record<string, string>]> = r.auth === 'customer' ? [['A admin', aAdmin], ['A customer', aCust]] : [['A admin', aAdmin]];
    for (const [name, headers] of who) {
      const res = await send(r, path, r.tenant === 'none' ? { authorization: headers.authorization } : headers, body);
      const found = recordsOfB(res.body);
      if (markersIn(res) || found.length) {
        leaks.push(`(2) ${r.method} ${path} as ${name} (${f.datatype} ${f.id}) → ${res.status}: ${markersIn(res)} markers, B records ${found.join(',')}: ${res.text.slice(0, 200)}`);
      }
    }
  });
  await settle();
  t.equal(tenantDigest(store, b.orgId), before2, "(2) B's store is unchanged");

  t.same(leaks, [], `no answer carries B's data`);

  // Control: the same fills with B's own credentials do reach B's records, so the clean result
  // above is not for want of ids that match anything.
  const hits = new Set<string>();
  // A stream B may open (its door view) stays open by design: it is not a read that answers.
  await pool(
    jobs.filter(({ r }) => r.method === 'GET' && r.auth !== 'none' && !r.stream),
    async ({ r, f }) => {
      const { path } = build(r, f);
      const res = await request(app.url, path, { headers: bearer(b), timeoutMs: 10_000 });
      if (markersIn(res) || recordsOfB(res.body).length) hits.add(`${r.method} ${r.path}`);
    },
  );
  t.ok(hits.size >= 30, `the fills find B's data through ${hits.size} GET routes when B itself asks`);
  t.comment(`server errors: ${serverErrors.length ? serverErrors.join('; ') : 'none'}`);
  t.equal((await request(app.url, '/profile', { headers: aAdmin })).status, 200, "A's admin session still works at the end (the sweep ran signed in)");
  t.ok((statuses.get('2xx') ?? 0) > 200, 'a good share of the requests reached a handler and succeeded');
  t.comment(`routes ${routes.length}; (1) ${swept1} routes; (2) ${jobs.length} route × id cases over ${fills.length} ids of B; ${sent} requests; statuses ${JSON.stringify(Object.fromEntries(statuses))}`);

  /** Waits until B's stored data stops changing (socket and presence hooks finish after a reply). */
  async function settle(): Promise<void> {
    // Messages queued by the sweep's writes are sent (and marked so) in the background.
    await app.outboxDispatcher.drain();
    let prev = tenantDigest(store, b.orgId);
    for (let i = 0; i < 20; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const now = tenantDigest(store, b.orgId);
      if (now === prev) return;
      prev = now;
    }
  }
});
