// Soak: a steady mixed load on one real node for SOAK_SECONDS (600), with the server's resident
// set size sampled every SOAK_SAMPLE_SECONDS (10). Not a throughput measurement: the question is
// whether memory levels off. The load, all on 127.0.0.1:
//
//   REST at SOAK_RPS (300/s, at most 32 in flight): door scans (check-in, and check-out of a ticket
//   that is inside, re-entry on, SOAK_TICKETS tickets), record creates, updates, deletes (the pool
//   of live records is kept near 1,000), record reads and page reads, event stats;
//   chat over socket.io-client on /community-chat: SOAK_CHAT_SOCKETS (40) sockets in groups of 10,
//   each sending one group message a second, plus churn: a short-lived socket every 2 s that
//   joins, sends and leaves.
//
// Writes bench/results/soak.json (samples, counts) and bench/results/soak.svg (the RSS and heap
// curves), and prints the growth of RSS from minute 2 to the end (issue 11 aims under 10%).
// Every write is kept: LMDB's file grows with the data, and its touched pages count in RSS.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { io, type Socket } from 'socket.io-client';
import { TokenService } from '../../core/auth/tokens.js';
import { startServer, writeResult, type RunningServer } from '../harness.js';
import { envInt, type Scenario } from '../scenario.js';

const NAME = 'soak';
const DESCRIPTION = 'mixed load (scans, records, chat over socket.io) for SOAK_SECONDS; server RSS sampled every 10 s';
const JWT_SECRET = 'bench-soak-secret-0123456789-0123456789-01';
const ORG = 'soak';
const GROUP_SIZE = 10;
const POOL_TARGET = 1000;
const MAX_INFLIGHT = 32;

const script = (rel: string) => fileURLToPath(new URL(rel, import.meta.url));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const MiB = (b: number) => b / 2 ** 20;

export interface SoakSample {
  /** Seconds since the load started. */
  t: number;
  rssBytes: number;
  /** V8 heap in use, from the server's /metrics (null when it could not be read). */
  heapUsedBytes: number | null;
  requests: number;
  errors: number;
  chatSent: number;
  chatReceived: number;
}

interface Counters {
  requests: number;
  non2xx: number;
  failures: number;
  byOp: Record<string, number>;
  chatSent: number;
  chatAcked: number;
  chatReceived: number;
  chatErrors: number;
  churned: number;
}

class Load {
  readonly c: Counters = { requests: 0, non2xx: 0, failures: 0, byOp: {}, chatSent: 0, chatAcked: 0, chatReceived: 0, chatErrors: 0, churned: 0 };
  private readonly staff: Record<string, string>;
  private readonly tokens = new TokenService(JWT_SECRET, { accessTtlSeconds: 24 * 3600, refreshTtlSeconds: 3600, cacheSize: 0 });
  private tickets: Array<{ id: string; number: string; inside: boolean; busy: boolean }> = [];
  private eventId = '';
  /** Live records: id → version. */
  private readonly pool = new Map<string, number>();
  private readonly poolIds: string[] = [];
  private inflight = 0;
  private stopped = false;
  private readonly sockets: Socket[] = [];
  private readonly timers: NodeJS.Timeout[] = [];
  private lastError = '';

  constructor(private readonly url: string) {
    this.staff = {
      orgid: ORG,
      'content-type': 'application/json',
      authorization: `Bearer ${this.tokens.signAccess({ sub: 'soak-staff', org: ORG, roles: ['User'], kind: 'staff', email: 'staff@soak.example.com' })}`,
    };
  }

  private async call(op: string, method: string, path: string, body?: unknown): Promise<any> {
    this.c.requests++;
    this.c.byOp[op] = (this.c.byOp[op] ?? 0) + 1;
    try {
      const res = await fetch(this.url + path, {
        method,
        headers: this.staff,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      if (res.status >= 300) {
        this.c.non2xx++;
        this.lastError = `${op} ${res.status} ${text.slice(0, 200)}`;
        return undefined;
      }
      return text ? JSON.parse(text) : null;
    } catch (err) {
      this.c.failures++;
      this.lastError = `${op}: ${(err as Error).message}`;
      return undefined;
    }
  }

  async setup(ticketCount: number): Promise<void> {
    const ev = await this.call('setup', 'POST', '/events', {
      name: 'Soak Fest',
      zones: [{ id: 'main', name: 'Main', capacity: 10_000_000 }],
      allowReentry: true,
      ticketTypes: [{ title: 'GA' }],
    });
    if (!ev) throw new Error(`event create failed: ${this.lastError}`);
    this.eventId = ev.sk;
    for (let issued = 0; issued < ticketCount; issued += 500) {
      const quantity = Math.min(500, ticketCount - issued);
      const r = await this.call('setup', 'POST', '/events/tickets/comp', {
        items: [{ ticketTypeId: ev.ticketTypes[0].sk, quantity, holderEmail: 'crowd@soak.example.com' }],
      });
      if (!r) throw new Error(`comp failed: ${this.lastError}`);
      for (const t of r.tickets) this.tickets.push({ id: t.sk, number: t.data.number, inside: false, busy: false });
    }
  }

  private async scan(): Promise<void> {
    const t = this.tickets[Math.floor(Math.random() * this.tickets.length)];
    if (t.busy) return this.readOne();
    t.busy = true;
    try {
      const r = t.inside
        ? await this.call('checkout', 'POST', '/events/checkout', { ticketId: t.id, eventId: this.eventId, zone: 'main' })
        : await this.call('checkin', 'POST', '/events/checkin', { code: t.number, eventId: this.eventId, zone: 'main' });
      if (r?.success) t.inside = !t.inside;
    } finally {
      t.busy = false;
    }
  }

  private async create(): Promise<void> {
    const r = await this.call('create', 'POST', '/repository/create', {
      datatype: 'soak_item',
      data: { title: `item ${this.c.requests}`, price: Math.floor(Math.random() * 10_000), tags: ['a', 'b'], note: 'x'.repeat(200) },
      isNew: true,
      version: 0,
    });
    if (r) {
      this.pool.set(r.sk, r.version);
      this.poolIds.push(r.sk);
    }
  }

  private pick(): string | undefined {
    while (this.poolIds.length > 0) {
      const i = Math.floor(Math.random() * this.poolIds.length);
      const id = this.poolIds[i];
      if (this.pool.has(id)) return id;
      this.poolIds[i] = this.poolIds[this.poolIds.length - 1];
      this.poolIds.pop();
    }
    return undefined;
  }

  private async update(): Promise<void> {
    const id = this.pick();
    if (!id) return this.create();
    const r = await this.call('update', 'POST', `/repository/update/soak_item/${id}`, { data: { price: Math.floor(Math.random() * 10_000) }, version: this.pool.get(id) });
    if (r && this.pool.has(id)) this.pool.set(id, r.version);
  }

  private async remove(): Promise<void> {
    const id = this.pick();
    if (!id) return;
    this.pool.delete(id);
    await this.call('delete', 'DELETE', `/repository/delete/soak_item/${id}`);
  }

  private async readOne(): Promise<void> {
    const id = this.pick();
    if (!id) return void (await this.call('find-page', 'GET', '/repository/find-page-data/soak_item?p=1&ps=20'));
    await this.call('get', 'GET', `/repository/get/soak_item/${id}`);
  }

  /** One REST operation of the mix. */
  private one(): Promise<void> {
    const r = Math.random();
    if (r < 0.35) return this.scan();
    if (r < 0.5) return this.pool.size > POOL_TARGET ? this.remove() : this.create();
    if (r < 0.6) return this.update();
    if (r < 0.75) return this.readOne();
    if (r < 0.85) return this.call('find-page', 'GET', `/repository/find-page-data/soak_item?p=${1 + Math.floor(Math.random() * 5)}&ps=20&s=data.price&st=desc`);
    if (r < 0.9) return this.call('find', 'POST', '/repository/find/soak_item', { query: { 'data.tags': 'a' }, options: { page: 1, pageSize: 10 } });
    if (r < 0.95) return this.call('stats', 'GET', `/events/${this.eventId}/checkin-stats`);
    return this.call('occupancy', 'GET', `/events/${this.eventId}/occupancy`);
  }

  /** Paces REST operations at `rps`, never more than MAX_INFLIGHT at once. */
  async rest(rps: number): Promise<void> {
    const t0 = performance.now();
    let started = 0;
    while (!this.stopped) {
      const due = Math.floor(((performance.now() - t0) / 1000) * rps);
      while (started < due && this.inflight < MAX_INFLIGHT) {
        started++;
        this.inflight++;
        void this.one().finally(() => this.inflight--);
      }
      // Behind by more than a second (server slower than the rate): drop the backlog, keep pacing.
      if (due - started > rps) started = due;
      await sleep(5);
    }
    while (this.inflight > 0) await sleep(10);
  }

  private connect(user: string): Promise<Socket> {
    const token = this.tokens.signAccess({ sub: user, org: ORG, roles: [], kind: 'customer', email: `${user}@soak.example.com` });
    const s = io(this.url + '/community-chat', { transports: ['websocket'], forceNew: true, reconnection: false, auth: { token, orgId: ORG }, timeout: 30_000 });
    return new Promise((resolve, reject) => {
      s.once('connect', () => resolve(s));
      s.once('connect_error', reject);
    });
  }

  private send(s: Socket, groupId: string): void {
    this.c.chatSent++;
    s.timeout(30_000).emit('sendGroupMessage', { groupId, text: `soak ${Date.now()}` }, (err: unknown, r: { error?: unknown }) => {
      if (err || (r && r.error)) this.c.chatErrors++;
      else this.c.chatAcked++;
    });
  }

  async chat(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      const s = await this.connect(`soak-u${i}`);
      const groupId = `soak-room-${Math.floor(i / GROUP_SIZE)}`;
      s.on('groupMessage', () => this.c.chatReceived++);
      await s.timeout(30_000).emitWithAck('joinGroup', { groupId });
      this.sockets.push(s);
      // Spread the senders over the second.
      this.timers.push(setTimeout(() => this.timers.push(setInterval(() => !this.stopped && this.send(s, groupId), 1000)), (1000 * i) / count));
    }
    // Churn: a socket that connects, joins, sends and leaves, every 2 s (50 rotating users).
    let n = 0;
    this.timers.push(
      setInterval(() => {
        if (this.stopped) return;
        const user = `soak-churn-${n++ % 50}`;
        this.connect(user)
          .then(async (s) => {
            const groupId = `soak-room-${n % Math.max(1, Math.ceil(count / GROUP_SIZE))}`;
            await s.timeout(30_000).emitWithAck('joinGroup', { groupId });
            this.send(s, groupId);
            setTimeout(() => s.disconnect(), 1000 + Math.random() * 2000);
            this.c.churned++;
          })
          .catch(() => this.c.chatErrors++);
      }, 2000),
    );
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
    for (const s of this.sockets) s.disconnect();
  }

  get lastErrorText(): string {
    return this.lastError;
  }
}

async function heapUsed(url: string): Promise<number | null> {
  try {
    const res = await fetch(url + '/metrics', { signal: AbortSignal.timeout(5000) });
    const m = /^nodejs_heap_size_used_bytes(?:\{[^}]*\})?\s+([0-9.e+]+)/m.exec(await res.text());
    return m ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** The sample nearest to `t` seconds. */
function at(samples: SoakSample[], t: number): SoakSample {
  return samples.reduce((best, s) => (Math.abs(s.t - t) < Math.abs(best.t - t) ? s : best), samples[0]);
}

/** The RSS and heap curves as a hand-written SVG line chart (minutes on x, MiB on y). */
export function soakSvg(samples: SoakSample[], marks: { from: SoakSample; to: SoakSample; growthPct: number }): string {
  const W = 800;
  const H = 420;
  const L = 70;
  const R = 20;
  const T = 50;
  const B = 60;
  const maxT = Math.max(60, ...samples.map((s) => s.t));
  const maxY = Math.max(1, ...samples.map((s) => MiB(s.rssBytes))) * 1.1;
  const x = (t: number) => L + ((W - L - R) * t) / maxT;
  const y = (mib: number) => H - B - ((H - T - B) * mib) / maxY;
  const f = (n: number) => n.toFixed(1);
  const line = (pts: Array<[number, number]>) => pts.map(([px, py], i) => `${i ? 'L' : 'M'}${f(px)},${f(py)}`).join(' ');
  const rss = line(samples.map((s) => [x(s.t), y(MiB(s.rssBytes))]));
  const heapPts = samples.filter((s) => s.heapUsedBytes !== null).map((s) => [x(s.t), y(MiB(s.heapUsedBytes!))] as [number, number]);
  const parts: string[] = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" font-family="sans-serif" font-size="12">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15">Soak: server memory under mixed load (${f(maxT / 60)} min)</text>`,
    `<text x="${W / 2}" y="40" text-anchor="middle" fill="#555">RSS ${f(MiB(marks.from.rssBytes))} MiB at ${f(marks.from.t / 60)} min → ${f(MiB(marks.to.rssBytes))} MiB at ${f(marks.to.t / 60)} min: ${marks.growthPct >= 0 ? '+' : ''}${marks.growthPct.toFixed(1)}%</text>`,
  );
  const yStep = maxY > 400 ? 100 : maxY > 200 ? 50 : maxY > 80 ? 20 : 10;
  for (let v = 0; v <= maxY; v += yStep) {
    parts.push(`<line x1="${L}" x2="${W - R}" y1="${f(y(v))}" y2="${f(y(v))}" stroke="#eee"/>`);
    parts.push(`<text x="${L - 8}" y="${f(y(v) + 4)}" text-anchor="end">${v}</text>`);
  }
  const xStep = maxT > 1200 ? 300 : maxT > 300 ? 60 : 30;
  for (let t = 0; t <= maxT; t += xStep) {
    parts.push(`<line x1="${f(x(t))}" x2="${f(x(t))}" y1="${T}" y2="${H - B}" stroke="#f3f3f3"/>`);
    parts.push(`<text x="${f(x(t))}" y="${H - B + 18}" text-anchor="middle">${f(t / 60)}</text>`);
  }
  parts.push(`<line x1="${L}" x2="${W - R}" y1="${H - B}" y2="${H - B}" stroke="#333"/>`, `<line x1="${L}" x2="${L}" y1="${T}" y2="${H - B}" stroke="#333"/>`);
  parts.push(`<text x="${W / 2}" y="${H - 18}" text-anchor="middle">minutes</text>`);
  parts.push(`<text x="18" y="${(T + H - B) / 2}" text-anchor="middle" transform="rotate(-90 18 ${(T + H - B) / 2})">MiB</text>`);
  parts.push(`<path d="${rss}" fill="none" stroke="#1f77b4" stroke-width="2"/>`);
  if (heapPts.length > 1) parts.push(`<path d="${line(heapPts)}" fill="none" stroke="#ff7f0e" stroke-width="2" stroke-dasharray="5 3"/>`);
  for (const m of [marks.from, marks.to]) parts.push(`<circle cx="${f(x(m.t))}" cy="${f(y(MiB(m.rssBytes)))}" r="4" fill="#d62728"/>`);
  parts.push(
    `<line x1="${W - 190}" x2="${W - 165}" y1="${T + 10}" y2="${T + 10}" stroke="#1f77b4" stroke-width="2"/><text x="${W - 160}" y="${T + 14}">RSS</text>`,
    `<line x1="${W - 190}" x2="${W - 165}" y1="${T + 28}" y2="${T + 28}" stroke="#ff7f0e" stroke-width="2" stroke-dasharray="5 3"/><text x="${W - 160}" y="${T + 32}">V8 heap used</text>`,
  );
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}

export const soak: Scenario = {
  name: NAME,
  description: DESCRIPTION,
  async run() {
    const o = {
      seconds: envInt('SOAK_SECONDS', 600),
      sampleSeconds: envInt('SOAK_SAMPLE_SECONDS', 10),
      rps: envInt('SOAK_RPS', 300),
      tickets: envInt('SOAK_TICKETS', 2000),
      chatSockets: envInt('SOAK_CHAT_SOCKETS', 40),
    };
    // Its staff tokens live the whole run: the server must accept that lifetime.
    const server: RunningServer = await startServer({ script: script('../servers/soak.js'), env: { JWT_SECRET, AUTH_ACCESS_TOKEN_TTL_SECONDS: String(24 * 3600) } });
    const load = new Load(server.url);
    const samples: SoakSample[] = [];
    try {
      await load.setup(o.tickets);
      await load.chat(o.chatSockets);
      const t0 = performance.now();
      const sample = async () => {
        const s: SoakSample = {
          t: Math.round((performance.now() - t0) / 100) / 10,
          rssBytes: server.rssBytes(),
          heapUsedBytes: await heapUsed(server.url),
          requests: load.c.requests,
          errors: load.c.non2xx + load.c.failures + load.c.chatErrors,
          chatSent: load.c.chatSent,
          chatReceived: load.c.chatReceived,
        };
        samples.push(s);
        console.log(
          `  ${(s.t / 60).toFixed(1).padStart(5)} min  rss ${MiB(s.rssBytes).toFixed(1).padStart(7)} MiB  heap ${s.heapUsedBytes === null ? '-' : MiB(s.heapUsedBytes).toFixed(1).padStart(6)} MiB  ` +
            `requests ${s.requests}  chat sent ${s.chatSent} received ${s.chatReceived}  errors ${s.errors}`,
        );
      };
      await sample();
      const rest = load.rest(o.rps);
      const sampler = setInterval(() => void sample(), o.sampleSeconds * 1000);
      await sleep(o.seconds * 1000);
      clearInterval(sampler);
      await sample();
      load.stop();
      await rest;
    } finally {
      load.stop();
      await server.stop();
    }
    const end = samples[samples.length - 1];
    // Minute 2 to the end (minute 10 by default); a shorter run measures from its first fifth.
    const from = at(samples, Math.min(120, end.t * 0.2));
    const growthPct = ((end.rssBytes - from.rssBytes) / from.rssBytes) * 100;
    const heapGrowthPct = from.heapUsedBytes && end.heapUsedBytes ? ((end.heapUsedBytes - from.heapUsedBytes) / from.heapUsedBytes) * 100 : null;
    const c = load.c;
    console.log(
      `\nRSS ${MiB(from.rssBytes).toFixed(1)} MiB at ${(from.t / 60).toFixed(1)} min → ${MiB(end.rssBytes).toFixed(1)} MiB at ${(end.t / 60).toFixed(1)} min: ` +
        `growth ${growthPct.toFixed(1)}% (aim under 10%)` +
        (heapGrowthPct === null ? '' : `; V8 heap ${MiB(from.heapUsedBytes!).toFixed(1)} → ${MiB(end.heapUsedBytes!).toFixed(1)} MiB (${heapGrowthPct.toFixed(1)}%)`),
    );
    console.log(
      `load: ${c.requests} REST requests (${c.non2xx} non-2xx, ${c.failures} failed), chat ${c.chatSent} sent / ${c.chatAcked} acked / ` +
        `${c.chatReceived} received, ${c.churned} churned sockets, ${c.chatErrors} chat errors` + (load.lastErrorText ? `; last error: ${load.lastErrorText}` : ''),
    );
    const result = {
      description: DESCRIPTION,
      options: o,
      expected: { maxGrowthPct: 10 },
      rss: { fromT: from.t, fromBytes: from.rssBytes, toT: end.t, toBytes: end.rssBytes, growthPct },
      heap: { fromBytes: from.heapUsedBytes, toBytes: end.heapUsedBytes, growthPct: heapGrowthPct },
      load: c,
      samples,
    };
    const file = writeResult(NAME, result);
    const svg = join(dirname(file), `${NAME}.svg`);
    writeFileSync(svg, soakSvg(samples, { from, to: end, growthPct }));
    console.log(`wrote ${file} and ${svg}`);
    return result;
  },
};
