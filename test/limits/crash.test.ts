// Crash safety (issue 11): the real server, started as `npm start` starts it (edge/main.js with
// the environment as configuration), is killed with SIGKILL at a random moment under write load
// (check-ins, partial settles, record creates, community chat messages), ten times, and restarted
// on the same DATA_DIR. After each restart every acknowledged write is there, nothing is half
// written (totals agree with their parts, logs and records agree), and retries with the same
// idempotency key (or chat clientId) answer the first result without a second effect.
//
// The server runs transpiled (helpers/transpiled.ts) with plain node: through the tap TypeScript
// loader each start takes ~12 s on this machine, which would put eleven starts far over budget.
import { randomUUID } from 'node:crypto';
import { io } from 'socket.io-client';
import t from 'tap';
import { tempDir } from '../helpers/app.js';
import { startServerProcess, type ServerProcess } from '../helpers/server-process.js';
import { transpiled } from '../helpers/transpiled.js';
import { request, type Reply } from '../helpers/http.js';

const ROUNDS = 10;
const SEED = Number(process.env.CRASH_SEED ?? 0x11c0ffee);
const JWT_SECRET = 'crash-test-secret-0123456789-0123456789-0123';
const PASSWORD = 'correct-horse-battery';
const TICKETS_PER_ROUND = 80;
const NOTE = 'crash_note';

/** mulberry32: a small seeded generator, so a failing run can be repeated with CRASH_SEED. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let x = a;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

async function startServer(t: Parameters<typeof startServerProcess>[0], entry: string, dataDir: string): Promise<ServerProcess> {
  return startServerProcess(t, entry, dataDir, { JWT_SECRET, RATE_LIMITS: 'false' });
}

// ---- what was sent, and what was acknowledged ----------------------------------------------

interface Entry {
  round: number;
  body: Record<string, any>;
  /** The answer that acknowledged it: record sk, transaction id, message id, or 'in'. */
  ack?: string;
  /** Chat messages: the seq that was answered. */
  seq?: number;
  /** Settles: the tab. */
  tab?: string;
  /** Check-ins: the ticket. */
  ticket?: string;
  /** Sent, and no answer came (the server died with it in flight). */
  unanswered?: boolean;
}

type Kind = 'checkin' | 'settle' | 'create' | 'chat';
const KINDS: Kind[] = ['checkin', 'settle', 'create', 'chat'];

const ledger: Record<Kind, Map<string, Entry>> = { checkin: new Map(), settle: new Map(), create: new Map(), chat: new Map() };

interface World {
  url: string;
  org: string;
  staff: Record<string, string>;
  customer: Record<string, string>;
  pub: Record<string, string>;
  adminId: string;
  threadId: string;
  eventId: string;
  /** Ticket sk → number (the static code), in issue order. */
  tickets: Array<{ sk: string; number: string }>;
  /** Two fresh tabs per round. */
  tabs: string[][];
}

const ok = (r: Reply) => r.status >= 200 && r.status < 300;

function must(r: Reply, what: string): Reply {
  if (!ok(r)) throw new Error(`${what}: ${r.status} ${r.text.slice(0, 500)}`);
  return r;
}

function post(w: World, path: string, body: unknown, headers: Record<string, string>): Promise<Reply> {
  return request(w.url, path, { method: 'POST', body, headers, timeoutMs: 15_000 });
}

function get(w: World, path: string, headers: Record<string, string>): Promise<Reply> {
  return request(w.url, path, { headers, timeoutMs: 15_000 });
}

const cents = (n: unknown) => Math.round(Number(n) * 100);

async function setUp(url: string): Promise<World> {
  const signup = must(
    // The tabs are used without a token (w.pub), as in the spec's open storefront.
    await request(url, '/profile/user/signup', { method: 'POST', body: { email: 'owner@crash.example.com', password: PASSWORD, orgName: 'Crash Test Org', openStorefront: true } }),
    'signup',
  );
  const org: string = signup.body.orgId;
  const staff = { orgid: org, authorization: `Bearer ${signup.body.token}` };
  const cust = must(
    await request(url, '/profile/customer/signup', { method: 'POST', headers: { orgid: org }, body: { email: 'fan@crash.example.com', password: PASSWORD, name: 'Fan' } }),
    'customer signup',
  );
  const w: World = {
    url,
    org,
    staff,
    customer: { orgid: org, authorization: `Bearer ${cust.body.token}` },
    pub: { orgid: org },
    adminId: signup.body.user.id,
    threadId: '',
    eventId: '',
    tickets: [],
    tabs: [],
  };

  must(await post(w, '/repository/create', { datatype: 'location', data: { name: 'main', displayName: 'Main Street', taxRate: 0 }, isNew: true, version: 0 }, staff), 'location');
  for (let r = 0; r < ROUNDS; r++) {
    const pair: string[] = [];
    for (let i = 0; i < 2; i++) {
      const tab = must(await post(w, '/storefront/pos/tab', { businessLocationId: 'main', tabLabel: `crash-${r}-${i}` }, w.pub), 'open tab').body;
      // A large bill, so partial payments never close the tab.
      must(await post(w, `/storefront/order/${tab.sk}/items`, [{ name: 'Banquet', unitPrice: '100000', quantity: 1 }], w.pub), 'items');
      pair.push(tab.sk);
    }
    w.tabs.push(pair);
  }

  const ev = must(await post(w, '/events', { name: 'Crash Fest', zones: [{ id: 'main', name: 'Main hall' }], ticketTypes: [{ title: 'GA' }] }, staff), 'event').body;
  w.eventId = ev.sk;
  for (let left = TICKETS_PER_ROUND * ROUNDS; left > 0; left -= 400) {
    const comp = must(
      await post(w, '/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: Math.min(400, left), holderEmail: 'crowd@crash.example.com' }] }, staff),
      'comp tickets',
    );
    for (const x of comp.body.tickets) w.tickets.push({ sk: x.sk, number: x.data.number });
  }

  const first = must(await post(w, '/client/community/messages', { to: w.adminId, text: 'hello', clientId: 'setup-0' }, w.customer), 'first chat message');
  w.threadId = first.body.threadId;
  ledger.chat.set('setup-0', { round: 0, body: { to: w.adminId, text: 'hello', clientId: 'setup-0' }, ack: first.body.id, seq: first.body.seq });
  return w;
}

// ---- load -----------------------------------------------------------------------------------

interface Load {
  stop: boolean;
  inflight: number;
  refused: string[];
}

async function worker(w: World, load: Load, kind: Kind, next: () => { key: string; entry: Entry } | undefined): Promise<void> {
  for (;;) {
    if (load.stop) return;
    const op = next();
    if (!op) return;
    const { key, entry } = op;
    ledger[kind].set(key, entry);
    load.inflight++;
    let r: Reply;
    try {
      r = await send(w, kind, entry);
    } catch {
      load.inflight--;
      entry.unanswered = true;
      return; // the connection died with the server
    }
    load.inflight--;
    if (!accept(kind, entry, r)) load.refused.push(`${kind} ${key}: ${r.status} ${r.text.slice(0, 200)}`);
  }
}

function send(w: World, kind: Kind, e: Entry): Promise<Reply> {
  switch (kind) {
    case 'checkin':
      return post(w, '/events/checkin', e.body, w.staff);
    case 'settle':
      return post(w, `/storefront/pos/tab/${e.tab}/settle`, e.body, w.pub);
    case 'create':
      return post(w, '/repository/create', e.body, w.staff);
    case 'chat':
      return post(w, '/client/community/messages', e.body, w.customer);
  }
}

/** Records the acknowledgement of a 2xx answer; false when the answer is not one. */
function accept(kind: Kind, e: Entry, r: Reply): boolean {
  if (!ok(r)) return false;
  switch (kind) {
    case 'checkin':
      if (r.body.success !== true) return false;
      e.ack = 'in';
      return true;
    case 'settle':
      e.ack = r.body.transaction.id;
      return true;
    case 'create':
      e.ack = r.body.sk;
      return true;
    case 'chat':
      e.ack = r.body.id;
      e.seq = r.body.seq;
      return true;
  }
}

function runLoad(w: World, round: number, load: Load): Promise<void[]> {
  const slice = w.tickets.slice(round * TICKETS_PER_ROUND, (round + 1) * TICKETS_PER_ROUND);
  let t = 0;
  let n = 0;
  const nextCheckin = () => {
    const x = slice[t++];
    return x && { key: x.sk, entry: { round, ticket: x.sk, body: { code: x.number, zone: 'main', eventId: w.eventId } } };
  };
  const nextSettle = (tab: string) => () => {
    const key = randomUUID();
    const amount = `${1 + (n % 7)}.${String(n++ % 100).padStart(2, '0')}`;
    return { key, entry: { round, tab, body: { amount, idempotencyKey: key } } };
  };
  const nextCreate = () => {
    const key = randomUUID();
    const data = { round, n: n++, k: key, note: `written in round ${round}`, tags: ['crash', `r${round}`] };
    return { key, entry: { round, body: { datatype: NOTE, data, isNew: true, version: 0, idempotencyKey: key } } };
  };
  const nextChat = () => {
    const key = randomUUID();
    return { key, entry: { round, body: { to: w.adminId, text: `round ${round} message ${n++}`, clientId: key } } };
  };
  const [a, b] = w.tabs[round];
  return Promise.all([
    ...Array.from({ length: 4 }, () => worker(w, load, 'checkin', nextCheckin)),
    worker(w, load, 'settle', nextSettle(a)),
    worker(w, load, 'settle', nextSettle(a)),
    worker(w, load, 'settle', nextSettle(b)),
    worker(w, load, 'settle', nextSettle(b)),
    ...Array.from({ length: 4 }, () => worker(w, load, 'create', nextCreate)),
    ...Array.from({ length: 2 }, () => worker(w, load, 'chat', nextChat)),
  ]);
}

// ---- verification -----------------------------------------------------------------------------

interface Findings {
  lost: Record<Kind, string[]>;
  problems: string[];
}

async function pages(w: World, fetchPage: (page: number) => Promise<Reply>): Promise<any[]> {
  const all: any[] = [];
  for (let page = 1; ; page++) {
    const r = must(await fetchPage(page), 'list page');
    all.push(...r.body.data);
    if (!r.body.hasNext) return all;
  }
}

/** The whole direct-message thread, replayed over /community-chat from seq 0 (1000 per connection). */
async function chatHistory(w: World): Promise<any[]> {
  const all: any[] = [];
  for (;;) {
    const after = all.length ? all[all.length - 1].seq : 0;
    const s = io(w.url + '/community-chat', {
      transports: ['websocket'],
      forceNew: true,
      reconnection: false,
      auth: { token: w.customer.authorization.slice(7), orgId: w.org, lastSeqs: { [w.threadId]: after } },
    });
    const got: any[] = [];
    s.on('message', (m: any) => got.push(m));
    try {
      // The replay is emitted during connection set-up, before any event is handled: once an
      // acknowledged event comes back, every replayed message has arrived.
      await s.timeout(10_000).emitWithAck('getOnlineUsers', {});
    } finally {
      s.disconnect();
    }
    all.push(...got);
    if (got.length < 1000) return all;
  }
}

async function verify(w: World, f: Findings): Promise<void> {
  // Records: each acknowledged create once, with its data; no key twice; nothing unknown.
  const notes = await pages(w, (page) => post(w, `/repository/find/${NOTE}`, { query: {}, options: { page, pageSize: 200 } }, w.staff));
  const byKey = new Map<string, any[]>();
  for (const rec of notes) byKey.set(rec.data.k, [...(byKey.get(rec.data.k) ?? []), rec]);
  for (const [key, recs] of byKey) {
    if (recs.length > 1) f.problems.push(`create ${key}: ${recs.length} records for one idempotency key`);
    const e = ledger.create.get(key);
    if (!e) f.problems.push(`create ${key}: a record nobody sent`);
    else if (e.ack && recs[0].sk !== e.ack) f.problems.push(`create ${key}: record ${recs[0].sk}, acknowledged as ${e.ack}`);
    else if (JSON.stringify(recs[0].data) !== JSON.stringify(e.body.data)) f.problems.push(`create ${key}: data differs: ${JSON.stringify(recs[0].data)}`);
  }
  for (const [key, e] of ledger.create) if (e.ack && !byKey.has(key)) f.lost.create.push(key);

  // Check-ins: every acknowledged ticket is in; the scan log counts each checked-in ticket once.
  const inside = await pages(w, (page) => get(w, `/events/${w.eventId}/tickets?status=checked_in&pageSize=200&page=${page}`, w.staff));
  const insideSet = new Set(inside.map((x) => x.sk));
  for (const [sk, e] of ledger.checkin) if (e.ack && !insideSet.has(sk)) f.lost.checkin.push(sk);
  for (const sk of insideSet) if (!ledger.checkin.has(sk)) f.problems.push(`checkin ${sk}: checked in, never scanned`);
  const stats = must(await get(w, `/events/${w.eventId}/checkin-stats`, w.staff), 'stats').body;
  if (stats.successful !== insideSet.size || stats.uniqueAttendees !== insideSet.size) {
    f.problems.push(`checkin stats: successful ${stats.successful}, unique ${stats.uniqueAttendees}, tickets checked in ${insideSet.size}`);
  }

  // Settles: each acknowledged payment once on its tab; amountPaid is the sum of the payments.
  const settles = [...ledger.settle.values()];
  for (const tab of new Set(settles.map((e) => e.tab!))) {
    const o = must(await get(w, `/storefront/order/${tab}`, w.pub), 'order').body.data;
    const payments: any[] = o.payments ?? [];
    const count = new Map<string, number>();
    for (const p of payments) count.set(p.id, (count.get(p.id) ?? 0) + 1);
    const mine = settles.filter((e) => e.tab === tab);
    const acked = new Set(mine.filter((e) => e.ack).map((e) => e.ack!));
    for (const e of mine) {
      if (!e.ack) continue;
      const c = count.get(e.ack) ?? 0;
      if (c === 0) f.lost.settle.push(`${tab}/${e.ack}`);
      else if (c > 1) f.problems.push(`settle ${e.ack}: ${c} times on tab ${tab}`);
      else if (cents(payments.find((p) => p.id === e.ack).amount) !== cents(e.body.amount)) f.problems.push(`settle ${e.ack}: amount differs`);
    }
    const unknown = payments.filter((p) => !acked.has(p.id)).length;
    const unanswered = mine.filter((e) => !e.ack && e.unanswered).length;
    if (unknown > unanswered) f.problems.push(`tab ${tab}: ${unknown} payments nobody was told of, only ${unanswered} settles unanswered`);
    const sum = payments.reduce((s, p) => s + cents(p.applied), 0);
    if (sum !== cents(o.amountPaid)) f.problems.push(`tab ${tab}: amountPaid ${o.amountPaid}, payments add up to ${sum / 100}`);
    if (cents(o.balanceDue) !== cents(o.total) - cents(o.amountPaid)) f.problems.push(`tab ${tab}: balanceDue ${o.balanceDue} ≠ ${o.total} − ${o.amountPaid}`);
    if (o.status !== 'open') f.problems.push(`tab ${tab}: status ${o.status}`);
  }

  // Chat: the thread is seq 1..n without gaps, each clientId once, every acknowledged one in it.
  const history = await chatHistory(w);
  const seen = new Map<string, any>();
  history.forEach((m, i) => {
    if (m.seq !== i + 1) f.problems.push(`chat: message ${i} has seq ${m.seq}`);
    if (seen.has(m.clientId)) f.problems.push(`chat ${m.clientId}: stored twice`);
    seen.set(m.clientId, m);
    if (!ledger.chat.has(m.clientId)) f.problems.push(`chat ${m.clientId}: a message nobody sent`);
  });
  for (const [key, e] of ledger.chat) {
    if (!e.ack) continue;
    const m = seen.get(key);
    if (!m) f.lost.chat.push(key);
    else if (m.id !== e.ack || m.seq !== e.seq || m.text !== e.body.text) f.problems.push(`chat ${key}: stored as ${m.id}/${m.seq}, acknowledged as ${e.ack}/${e.seq}`);
  }
}

/**
 * Retries, with the same key, every unanswered request of the round and a sample of the
 * acknowledged ones: each is answered with the first result (twice the same for the
 * unanswered), and afterwards counts as acknowledged.
 */
async function retry(w: World, round: number, pick: () => number, f: Findings): Promise<Record<Kind, number>> {
  const retried: Record<Kind, number> = { checkin: 0, settle: 0, create: 0, chat: 0 };
  for (const kind of KINDS) {
    const mine = [...ledger[kind].entries()].filter(([, e]) => e.round === round);
    const acked = mine.filter(([, e]) => e.ack);
    const sample = [...mine.filter(([, e]) => !e.ack)];
    for (let i = 0; i < 3 && acked.length; i++) sample.push(acked.splice(Math.floor(pick() * acked.length), 1)[0]);
    for (const [key, e] of sample) {
      retried[kind]++;
      const first = await send(w, kind, e);
      const again = await send(w, kind, e);
      const what = `${kind} retry ${key} (${e.ack ? 'acknowledged' : 'unanswered'})`;
      if (!ok(first) || !ok(again)) {
        f.problems.push(`${what}: ${first.status} ${first.text.slice(0, 200)} / ${again.status}`);
        continue;
      }
      if (kind === 'checkin') {
        const outcome = first.body.success ? 'in' : first.body.reason;
        if (e.ack && outcome !== 'already_checked_in') f.problems.push(`${what}: ${outcome}`);
        if (!e.ack && outcome !== 'in' && outcome !== 'already_checked_in') f.problems.push(`${what}: ${outcome}`);
        if (again.body.reason !== 'already_checked_in') f.problems.push(`${what}: second retry ${again.body.reason ?? 'let in again'}`);
        e.ack = 'in';
        continue;
      }
      const id = (r: Reply) => (kind === 'settle' ? r.body.transaction.id : kind === 'create' ? r.body.sk : r.body.id);
      if (id(first) !== id(again)) f.problems.push(`${what}: two results, ${id(first)} and ${id(again)}`);
      if (e.ack && id(first) !== e.ack) f.problems.push(`${what}: answered ${id(first)}, first answer was ${e.ack}`);
      if (kind === 'create' && again.headers['idempotent-replayed'] !== 'true') f.problems.push(`${what}: second retry not marked replayed`);
      if (kind === 'chat' && e.seq !== undefined && again.body.seq !== e.seq) f.problems.push(`${what}: seq ${again.body.seq}, first ${e.seq}`);
      e.ack = id(first);
      if (kind === 'chat') e.seq = first.body.seq;
    }
  }
  return retried;
}

// ---- the test ---------------------------------------------------------------------------------

// Ten kill-and-restart rounds of a real server: on a machine busy with the rest of the suite they
// take longer than the suite's 180 s per file.
t.setTimeout(480_000);

t.test('crash safety - SIGKILL under write load, ten times: nothing acknowledged is lost, nothing half written, retries do not repeat', async (t) => {
  const dataDir = tempDir(t, 'bp-crash-data-');
  const started = Date.now();
  const entry = transpiled('edge/main.ts');
  t.comment(`seed ${SEED}; server transpiled in ${Date.now() - started} ms`);
  const random = rng(SEED);

  let server = await startServer(t, entry, dataDir);
  const w = await setUp(server.url);
  const totals: Record<Kind, number> = { checkin: 0, settle: 0, create: 0, chat: 0 };
  let kills = 0;
  let lostTotal = 0;
  let unansweredTotal = 0;

  for (let round = 0; round < ROUNDS; round++) {
    const delay = 50 + Math.floor(random() * 351);
    const load: Load = { stop: false, inflight: 0, refused: [] };
    const running = runLoad(w, round, load);
    await new Promise((r) => setTimeout(r, delay));
    const inflightAtKill = load.inflight;
    server.proc.kill('SIGKILL');
    await server.exited;
    load.stop = true;
    await running;
    kills++;
    t.equal(server.proc.signalCode, 'SIGKILL', `round ${round + 1}: killed with SIGKILL ${delay} ms into the load`);
    t.ok(inflightAtKill > 0, `round ${round + 1}: ${inflightAtKill} requests in flight at the kill`);
    t.same(load.refused, [], `round ${round + 1}: no write was refused under load`);

    const acked: Record<Kind, number> = { checkin: 0, settle: 0, create: 0, chat: 0 };
    let unanswered = 0;
    for (const k of KINDS) {
      for (const e of ledger[k].values()) {
        if (e.round !== round) continue;
        if (e.ack) acked[k]++;
        else if (e.unanswered) unanswered++;
      }
      totals[k] += acked[k];
    }
    unansweredTotal += unanswered;

    server = await startServer(t, entry, dataDir);
    w.url = server.url;
    const f: Findings = { lost: { checkin: [], settle: [], create: [], chat: [] }, problems: [] };
    await verify(w, f);
    const lost = KINDS.reduce((s, k) => s + f.lost[k].length, 0);
    lostTotal += lost;
    t.same(f.lost, { checkin: [], settle: [], create: [], chat: [] }, `round ${round + 1}: every acknowledged write is there after the restart`);
    t.same(f.problems, [], `round ${round + 1}: nothing half written, nothing twice`);

    const after: Findings = { lost: { checkin: [], settle: [], create: [], chat: [] }, problems: [] };
    const retried = await retry(w, round, random, after);
    await verify(w, after);
    t.same(after.problems, [], `round ${round + 1}: retries answer the first result and repeat nothing`);
    t.same(after.lost, { checkin: [], settle: [], create: [], chat: [] }, `round ${round + 1}: retried writes are all there`);

    t.comment(
      `round ${round + 1}: kill at ${delay} ms, ${inflightAtKill} in flight; acknowledged ` +
        KINDS.map((k) => `${k}=${acked[k]}`).join(' ') +
        `; unanswered=${unanswered}; retried ` +
        KINDS.map((k) => `${k}=${retried[k]}`).join(' ') +
        `; lost=${lost}`,
    );
  }

  t.equal(kills, ROUNDS, `${kills} kills`);
  for (const k of KINDS) t.ok(totals[k] > 0, `${k}: ${totals[k]} writes acknowledged under load`);
  t.equal(lostTotal, 0, 'no acknowledged write lost');
  t.comment(`total: kills=${kills}; acknowledged ${KINDS.map((k) => `${k}=${totals[k]}`).join(' ')}; unanswered=${unansweredTotal}; lost=${lostTotal}; ${Date.now() - started} ms`);

  server.proc.kill('SIGTERM');
  await server.exited;
});
