// The transactional outbox (issue 17, item 8): ticket emails are queued in the comp's own write and
// sent by the dispatcher afterwards. A kill -9 in the middle of a 5,000-ticket comp, and again in the
// middle of sending its emails, leaves every ticket with exactly one email once the retry (same
// idempotencyKey) and the restarted dispatcher are done. A comp answers while the provider is stuck;
// failed deliveries back off and stop after maxAttempts; queued messages go out after a restart,
// by SMTP under their record id as Message-ID.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { TokenService } from '../../core/auth/tokens.js';
import { ManualClock } from '../../core/clock.js';
import { OutboxDeliveryError, queueMessage, readOutbox, type OutboxEntry, type OutboxMessage, type OutboxProvider } from '../../core/outbox.js';
import { OutboxDispatcher } from '../../core/outbox-dispatcher.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp, tempDir, TEST_JWT_SECRET } from '../helpers/app.js';
import { countingKvReads } from '../helpers/kv-read-count.js';
import { client } from '../helpers/http.js';
import { transpiled } from '../helpers/transpiled.js';
import { kill9, startServerProcess } from '../helpers/server-process.js';
import { smtpServer } from '../helpers/smtp-server.js';
import { eventsWorld } from './setup.js';

const ORG = 'acme';

// ---- a server as `npm start` runs it, killed with SIGKILL ---------------------------------------

/** Small steps, polled often: the second kill lands while the emails are going out. */
const startServer = (t: Parameters<typeof startServerProcess>[0], dataDir: string) =>
  startServerProcess(t, transpiled('edge/main.ts'), dataDir, { JWT_SECRET: TEST_JWT_SECRET, RATE_LIMITS: 'false', OUTBOX_BATCH_SIZE: '100', OUTBOX_POLL_MS: '20' });

/** What the store holds for the event: its tickets, and the ticket emails per ticket id. */
function census(store: { scan: LmdbStore['scan'] }, eventId: string) {
  const tickets = store.scan(ORG, 'ticket', { 'data.event': eventId });
  const mails = readOutbox(store as LmdbStore, ORG).filter((m) => m.kind === 'event-ticket');
  const perTicket = new Map<string, number>();
  for (const m of mails) perTicket.set(String(m.payload?.ticketId), (perTicket.get(String(m.payload?.ticketId)) ?? 0) + 1);
  return { tickets, mails, perTicket };
}

t.test('outbox - kill -9 during a 5,000-ticket comp and during its emails; retry with the same key: one email per ticket, all sent', async (t) => {
  const dataDir = tempDir(t, 'bp-outbox-crash-');
  const seed = new LmdbStore({ path: dataDir });
  await seed.commit(new WriteBatch().putOrg({ orgId: ORG, displayName: 'Acme', createdate: new Date().toISOString() }));
  await seed.close();

  let server = await startServer(t, dataDir);
  const tokens = new TokenService(TEST_JWT_SECRET, { accessTtlSeconds: 600, refreshTtlSeconds: 600, cacheSize: 0 });
  const headers = { orgid: ORG, authorization: `Bearer ${tokens.signAccess({ sub: 'staff-1', org: ORG, roles: ['User'], kind: 'staff', email: 'staff@example.com' })}` };
  const ev = (await client(server.url, headers).post('/events', { name: 'Comp Fest', ticketTypes: [{ title: 'GA', quantity: 6000 }] })).body;
  const items = Array.from({ length: 50 }, (_, i) => ({ ticketTypeId: ev.ticketTypes[0].sk, quantity: 100, holderEmail: `guest${i}@example.com` }));
  const body = { items, idempotencyKey: randomUUID() };

  // 1. Killed while the comp is being issued.
  let answered = false;
  const first = client(server.url, headers)
    .post('/events/tickets/comp', body)
    .then(
      () => (answered = true),
      () => undefined,
    );
  await new Promise((r) => setTimeout(r, 120));
  await kill9(server);
  await first;
  const between = new LmdbStore({ path: dataDir });
  const c1 = census(between, ev.sk);
  await between.close();
  t.ok(c1.tickets.length === 0 || c1.tickets.length === 5000, `all or nothing: ${c1.tickets.length} tickets after the kill (${answered ? 'after' : 'before'} the answer)`);
  t.equal(c1.mails.length, c1.tickets.length, 'and an email queued for each of them');

  // 2. Restarted: the retry completes the comp (or answers it), then the server dies while sending.
  server = await startServer(t, dataDir);
  const retry = await client(server.url, headers).post('/events/tickets/comp', body);
  t.equal(retry.status, 201, 'the retry answers');
  t.equal(retry.body.tickets.length, 5000);
  await new Promise((r) => setTimeout(r, 250));
  await kill9(server);

  // 3. Restarted again: nothing doubled; the dispatcher sends what is left; a third retry adds nothing.
  const app = await startTestApp(t, { modules: ['events'], dataDir });
  const c2 = census(app.deps.store as LmdbStore, ev.sk);
  t.equal(c2.tickets.length, 5000, 'the tickets of one comp');
  t.equal(c2.mails.length, 5000, 'one email per ticket');
  t.ok(
    retry.body.tickets.every((x: any) => c2.perTicket.get(x.sk) === 1),
    'every ticket of the answer has exactly one email',
  );
  const sentBefore = c2.mails.filter((m) => m.state === 'sent').length;
  t.comment(`at the second kill ${sentBefore} of 5000 emails were marked sent`);
  const again = await client(app.url, headers).post('/events/tickets/comp', body);
  t.same([again.status, again.body.tickets.map((x: any) => x.sk)], [201, retry.body.tickets.map((x: any) => x.sk)], 'a retry answers the same tickets');
  await app.outboxDispatcher.drain();
  const c3 = census(app.deps.store as LmdbStore, ev.sk);
  t.equal(c3.mails.length, 5000, 'still one email per ticket');
  t.same([...new Set(c3.mails.map((m) => m.state))], ['sent'], 'all marked sent');
  const perHolder = new Map<string, number>();
  for (const m of c3.mails) perHolder.set(m.to, (perHolder.get(m.to) ?? 0) + 1);
  t.ok(items.every((i) => perHolder.get(i.holderEmail) === i.quantity), 'each holder has one email per ticket they hold');
});

// ---- a provider the test controls, then a real SMTP server ---------------------------------------

/** Queues like every provider; delivery hangs on a gate for acme, and always fails for globex. */
class GateProvider implements OutboxProvider {
  readonly name = 'gate';
  readonly calls: Array<{ tenant: string; id: string }> = [];
  delivered = 0;
  private release!: (ok: boolean) => void;
  private gate = new Promise<boolean>((r) => (this.release = r));
  constructor(private readonly clock: ManualClock) {}

  async send(tenant: string, msg: OutboxMessage, batch?: WriteBatch): Promise<OutboxEntry> {
    if (!batch) throw new Error('the gate provider only queues');
    return queueMessage(batch, tenant, msg, this.clock.now());
  }

  async deliver(tenant: string, msg: OutboxMessage, id: string) {
    this.calls.push({ tenant, id });
    if (tenant === 'globex') {
      if (msg.to.startsWith('bounce')) throw new OutboxDeliveryError('550 no such mailbox', true);
      throw new Error('421 try again later');
    }
    if (!(await this.gate)) throw new Error('connection reset');
    this.delivered++;
    return { provider: this.name };
  }

  open(ok: boolean): void {
    this.release(ok);
  }
}

t.test('outbox - a comp answers while the provider is stuck; retries back off and are bounded; queued mail goes out by SMTP after a restart', async (t) => {
  const dataDir = tempDir(t, 'bp-outbox-gate-');
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const gate = new GateProvider(clock);
  // A long poll: the test drives the dispatcher itself.
  const dispatch = { pollMs: 3_600_000, maxAttempts: 3, retryBaseMs: 1000, retryMaxMs: 60_000 };
  const w = await eventsWorld(t, { dataDir, clock, outbox: gate, config: { outbox: dispatch } });
  const d = w.app.outboxDispatcher;
  const store = w.app.deps.store;

  // globex: transient failures retry with a doubling back-off and stop at maxAttempts; a permanent one stops at once.
  const gx = (await w.other.post('/events', { name: 'Globex Gala', ticketTypes: [{ title: 'GA' }] })).body;
  const gxComp = await w.other.post('/events/tickets/comp', {
    items: [
      { ticketTypeId: gx.ticketTypes[0].sk, quantity: 1, holderEmail: 'guest@globex.example' },
      { ticketTypeId: gx.ticketTypes[0].sk, quantity: 1, holderEmail: 'bounce@globex.example' },
    ],
  });
  t.equal(gxComp.status, 201);
  const gxState = () => Object.fromEntries(readOutbox(store, 'globex').map((m) => [m.to, [m.state, m.attempts]]));
  await d.drain();
  t.same(gxState(), { 'guest@globex.example': ['queued', 1], 'bounce@globex.example': ['failed', 1] }, 'a permanent failure is not retried');
  await d.drain();
  t.same(gxState()['guest@globex.example'], ['queued', 1], 'not retried before its back-off');
  clock.advance(1000);
  await d.drain();
  t.same(gxState()['guest@globex.example'], ['queued', 2], 'retried after 1 s');
  clock.advance(1999);
  await d.drain();
  t.same(gxState()['guest@globex.example'], ['queued', 2], 'the next wait is twice as long');
  clock.advance(1);
  await d.drain();
  t.same(gxState()['guest@globex.example'], ['failed', 3], 'failed after maxAttempts');
  t.match(readOutbox(store, 'globex')[0], { lastError: /421/ });
  const gxCalls = gate.calls.length;
  clock.advance(100_000);
  await d.drain();
  t.equal(gate.calls.length, gxCalls, 'failed messages are left alone');

  // acme: the dispatcher is stuck on the first comp's mail; the second comp answers all the same.
  const ev = (await w.staff.post('/events', { name: 'Acme Party', ticketTypes: [{ title: 'GA' }] })).body;
  const comp = (holder: string) => w.staff.post('/events/tickets/comp', { items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity: 10, holderEmail: holder }] });
  t.equal((await comp('ada@example.com')).status, 201);
  const stuck = d.runOnce();
  while (!gate.calls.some((c) => c.tenant === ORG)) await new Promise((r) => setTimeout(r, 5));
  const second = await comp('bob@example.com');
  t.equal(second.status, 201, 'answered while a delivery hangs');
  t.equal(gate.delivered, 0, 'nothing was delivered before the answer');
  t.same(readOutbox(store, ORG).map((m) => m.state), Array(20).fill('queued'), 'every email is queued with its ticket');
  gate.open(false);
  await stuck;
  await w.app.close();

  // Restarted with the smtp provider: what was queued goes out, each under its record id.
  const smtp = await smtpServer(t);
  const app = await startTestApp(t, {
    modules: ['events'],
    dataDir,
    clock,
    config: { outbox: dispatch, providers: { outbox: 'smtp', smtp: { host: '127.0.0.1', port: smtp.port, secure: false, user: null, pass: null, from: 'tickets@shop.example' } } },
  });
  clock.advance(60_000);
  await app.outboxDispatcher.drain();
  const sent = readOutbox(app.deps.store, ORG);
  t.equal(sent.length, 20, 'no message added by the restart');
  t.same([...new Set(sent.map((m) => `${m.state} ${m.provider}`))], ['sent smtp'], 'all sent by smtp');
  t.same(
    sent.map((m) => m.attempts).sort(),
    [...Array(10).fill(1), ...Array(10).fill(2)],
    'the first comp’s mail on its second attempt, the second comp’s on its first',
  );
  t.equal(smtp.mails.length, 20, 'each delivered once');
  const ids = smtp.mails.map((m) => /^Message-ID: <([^@>]+)@shop\.example>$/im.exec(m.data)?.[1]).sort();
  t.same(ids, sent.map((m) => m.id).sort(), 'the record id is the Message-ID');
  t.ok(
    sent.every((m) => m.body === undefined && m.payload === undefined && m.to && m.subject),
    'a sent smtp record keeps the envelope only',
  );
  t.same(readOutbox(app.deps.store, 'globex').map((m) => m.state), ['failed', 'failed'], 'failed messages stay failed');
});

t.test('outbox - one tenant whose provider hangs does not hold another tenant’s mail', async (t) => {
  const store = new LmdbStore({ path: tempDir(t, 'bp-outbox-lanes-'), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  let release!: () => void;
  const hung = new Promise<void>((r) => (release = r));
  const calls: string[] = [];
  const provider: OutboxProvider = {
    name: 'lanes',
    send: () => Promise.reject(new Error('not used')),
    async deliver(tenant) {
      calls.push(tenant);
      if (tenant === 'slow') await hung;
      return { provider: 'lanes' };
    },
  };
  const batch = new WriteBatch();
  for (const tenant of ['slow', 'fast']) queueMessage(batch, tenant, { channel: 'email', to: `someone@${tenant}.example`, body: 'hello' }, Date.now());
  await store.commit(batch);
  const d = new OutboxDispatcher({ store, provider, tenants: () => ['slow', 'fast'], pollMs: 3_600_000, batchSize: 10, concurrency: 2, maxAttempts: 3, retryBaseMs: 1000, retryMaxMs: 60_000 });
  const pass = d.runOnce();
  const deadline = Date.now() + 5_000;
  while (readOutbox(store, 'fast')[0].state !== 'sent' && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
  t.equal(readOutbox(store, 'fast')[0].state, 'sent', "the other tenant's message went out while the first one's delivery hangs");
  t.equal(readOutbox(store, 'slow')[0].state, 'queued');
  release();
  t.match(await pass, { sent: 2 });
  t.equal(readOutbox(store, 'slow')[0].state, 'sent');
});

t.test('outbox - a backlog of 3,000 is read a page at a time: a pass reads the keys it sends, not the whole queue', async (t) => {
  const dir = tempDir(t);
  const store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const batch = new WriteBatch();
  for (let i = 0; i < 3_000; i++) queueMessage(batch, ORG, { channel: 'email', to: `guest${i}@example.com`, body: 'hello' }, Date.now());
  await store.commit(batch);
  // The real store, counting the queue entries its namespace reads hand back.
  const { store: counted, read: readCount } = countingKvReads(store);
  const sent: string[] = [];
  const provider: OutboxProvider = { name: 'count', send: () => Promise.reject(new Error('not used')), deliver: async (_tenant, m) => (sent.push(m.to), { provider: 'count' }) };
  const d = new OutboxDispatcher({ store: counted, provider, tenants: () => [ORG], pollMs: 3_600_000, batchSize: 10, concurrency: 2, maxAttempts: 3, retryBaseMs: 1000, retryMaxMs: 60_000 });
  const first = await d.runOnce();
  t.equal(first.sent, 10, 'one step of batchSize');
  t.ok(readCount() <= 40, `queue entries read for it: ${readCount()} (a page of 4 steps, not 3,000)`);
  await d.drain();
  t.equal(sent.length, 3_000, 'the whole backlog went out');
  t.equal(new Set(sent).size, 3_000, 'each message once');
  t.ok(readCount() <= 3_000 + 40 * 2, `queue entries read for all of it: ${readCount()}`);
});

t.test('outbox - a pass looks only at organisations with mail queued: 3,000 with none cost no queue read once each was looked at; new mail and a retry come due', async (t) => {
  const store = new LmdbStore({ path: tempDir(t, 'bp-outbox-due-'), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  const tenants = Array.from({ length: 3_000 }, (_, i) => `org-${String(i).padStart(4, '0')}`);
  // The real store, counting the ranged reads of the queue per organisation.
  let reads = 0;
  const counted = new Proxy(store, {
    get(target, prop, receiver) {
      const v = Reflect.get(target, prop, receiver);
      if (prop !== 'rangeKv') return typeof v === 'function' ? v.bind(target) : v;
      return (...args: Parameters<LmdbStore['rangeKv']>) => {
        if (args[1] === 'outbox_queue') reads++;
        return store.rangeKv(...args);
      };
    },
  });
  const clock = new ManualClock(Date.now());
  const sent: string[] = [];
  let failOnce = true;
  const provider: OutboxProvider = {
    name: 'due',
    send: () => Promise.reject(new Error('not used')),
    async deliver(tenant, m) {
      if (m.to.startsWith('retry') && failOnce) {
        failOnce = false;
        throw new Error('the provider is down');
      }
      sent.push(`${tenant} ${m.to}`);
      return { provider: 'due' };
    },
  };
  const d = new OutboxDispatcher({ store: counted, provider, clock, tenants: () => tenants, pollMs: 3_600_000, batchSize: 10, concurrency: 2, maxAttempts: 3, retryBaseMs: 1000, retryMaxMs: 60_000 });
  t.teardown(() => d.stop());
  let passes = 0;
  while ((await d.runOnce()).more) passes++;
  t.ok(passes <= 4, `every organisation looked at once, a bounded number a pass (${passes + 1} passes)`);
  t.ok(reads >= 3_000 && reads <= 3_010, `each organisation's queue read about once: ${reads}`);

  reads = 0;
  for (let i = 0; i < 3; i++) await d.runOnce();
  t.equal(reads, 0, 'passes with nothing queued read no queue');

  const batch = new WriteBatch();
  queueMessage(batch, 'org-1234', { channel: 'email', to: 'new@example.com', body: 'hello' }, clock.now());
  queueMessage(batch, 'org-2345', { channel: 'email', to: 'retry@example.com', body: 'hello' }, clock.now());
  await store.commit(batch);
  const r = await d.runOnce();
  t.same(sent, ['org-1234 new@example.com'], 'the new mail went out at the next pass');
  t.equal(r.retried, 1, 'the other failed and waits its back-off');
  t.ok(reads <= 6, `only the two organisations were read: ${reads}`);
  await d.runOnce();
  reads = 0;
  await d.runOnce();
  t.equal(reads, 0, 'a retry not due yet costs no read');
  clock.advance(1_500);
  await d.runOnce();
  t.same(sent, ['org-1234 new@example.com', 'org-2345 retry@example.com'], 'the retry went out once due');
});
