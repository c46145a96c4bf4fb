// Delivers the webhook deliveries queued in writes' batches (hub.ts) after they commit, and resumes
// after a restart: the queue is in the store, so what a crash left queued is sent by the next start.
//
// Lanes: each endpoint's due deliveries are one range of keys (model.ts, LANE_NS), read a page at a
// time (at most LANE_HOLD keys held per lane), and started under three bounds: per endpoint
// (`endpointConcurrency`), per organisation (`orgConcurrency`) and per node (`concurrency`). An
// endpoint that hangs holds its own lane's slots (each attempt ends at `timeoutMs`) and at most its
// organisation's share; other endpoints' deliveries start beside it. However long a lane's backlog,
// what the node holds of it and what a look at it reads stay bounded. Nothing here runs on a
// writer's path: a door scan only adds three keys to its own batch.
//
// Once per delivery and node: a key is in at most one attempt at a time, a second key of the same
// delivery (a retry asked while an attempt is in flight) waits until the first one's outcome has
// committed, its state and its key change in one commit, and in cluster mode a node only
// dispatches the tenants it owns (`tenants`). A crash between an attempt and its commit sends it
// again on restart, under the same `webhook-id` (the event id), which receivers use to drop the
// duplicate (at least once). Failed attempts are retried with exponential back-off (`retryBaseMs`
// doubling up to `retryMaxMs`) until the event is `maxAgeMs` old; an endpoint failing without a
// success for `disableAfterMs` is handed to `onFailing` (the actor disables it, tells the Admins).
//
// Outcomes of a tenant are committed together every COMMIT_MS (one transaction for many
// deliveries), and an attempt's slot is freed as soon as its answer came, not when its commit
// lands. Deliveries and events older than `retentionMs` are deleted in bounded steps (sweep), and
// so are a deleted endpoint's deliveries and lane.
import type { Clock } from '../clock.js';
import type { Config } from '../config.js';
import { systemClock } from '../clock.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { DueTenants } from '../due-tenants.js';
import { loopLoad, type LoopLoad } from '../loop-load.js';
import { WriteBatch, type Store } from '../store/store.js';
import {
  deliveryNs,
  ENDPOINT_NS,
  EVENT_NS,
  GONE_NS,
  HEALTH_NS,
  idsBefore,
  LANE_NS,
  laneEnd,
  laneKey,
  laneStart,
  LEGACY_QUEUE_NS,
  parseLaneKey,
  parseLegacyQueueKey,
  type Delivery,
  type Endpoint,
  type EndpointHealth,
  type StoredEvent,
} from './model.js';
import { Connections, send, type Attempt, type SendSettings } from './sender.js';
import { signatureHeader } from './signing.js';
import { redactUrl } from './url-safety.js';

/** The dispatcher's part of the configuration (`config.webhooks`, documented there), and how to send. */
export type WebhookDispatchSettings = SendSettings &
  Pick<Config['webhooks'], 'pollMs' | 'concurrency' | 'orgConcurrency' | 'endpointConcurrency' | 'retryBaseMs' | 'retryMaxMs' | 'maxAgeMs' | 'disableAfterMs' | 'retentionMs' | 'busyPercent' | 'busyRate'>;

export interface WebhookDispatcherOptions {
  store: Store;
  settings: WebhookDispatchSettings;
  /** The tenants this node dispatches for: all on a single node, the owned ones in cluster mode. */
  tenants: () => Iterable<string>;
  /** An endpoint failed for `disableAfterMs`: disable it and tell the organisation. */
  onFailing: (tenant: string, endpointId: string, failingSince: number) => Promise<void>;
  clock?: Clock;
  logger?: Logger;
  /** The event loop's recent utilization (core/loop-load.ts). */
  loopUse?: LoopLoad;
  /**
   * Requests the node has answered since start: deliveries yield only while requests come (a busy
   * loop of deliveries alone, a backlog going out after a rush, is not a reason to slow down).
   */
  answered?: () => number;
}

interface Lane {
  tenant: string;
  endpointId: string;
  /** Due keys read and waiting for a slot, oldest first. */
  held: string[];
  /** Keys held, in an attempt, or whose outcome has not committed: a read of the lane skips them. */
  known: Set<string>;
  /** Events of the lane in an attempt or not committed yet. */
  busy: Set<string>;
  running: number;
  /** The last read stopped at its limit: more due keys may be stored. */
  more: boolean;
  /** Keys the lane was told of (nudge) that no read has found yet, and until when to look for them. */
  expected: number;
  freshUntil: number;
  /** When its earliest key not due yet comes due (Infinity: none seen). */
  nextDue: number;
}

interface TenantWork {
  lanes: Map<string, Lane>;
  running: number;
}

export interface AttemptCounts {
  delivered: number;
  retried: number;
  failed: number;
}

/** How long after a batch queued events its lanes are read (it has committed by then, mostly). */
const NUDGE_MS = 5;
/** How long a lane told of new keys is looked at before their batch counts as refused. */
const FRESH_MS = 2000;
/** Outcomes of a tenant wait this long for others, to share one commit. */
const COMMIT_MS = 10;
/** ...unless this many writes are waiting. */
const COMMIT_MAX_OPS = 1000;
/** Lanes looked for per tenant and poll. */
const MAX_LANES_PER_POLL = 64;
/** Writes of one sweep of a tenant (old deliveries and events, a deleted endpoint's). */
const SWEEP_OPS = 1000;
/** A tenant is swept at most this often (and at least every tenth of the retention), at most `SWEEP_TENANTS` of them per poll. */
const SWEEP_EVERY_MS = 60_000;
const SWEEP_TENANTS = 8;
/** Requests answered this recently mean the node is serving (deliveries may yield to them). */
const SERVING_MS = 100;
/** Keys of the first build's queue moved into lanes per tenant and poll. */
const LEGACY_STEP = 500;
/** Tenants not looked at since start (or a takeover) whose lanes one poll reads. */
const DISCOVER_PER_POLL = 1000;

export class WebhookDispatcher {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly s: WebhookDispatchSettings;
  /** Keys one lane holds at most; it is read again once below half. */
  private readonly laneHold: number;
  private readonly sweepEveryMs: number;
  private readonly loopUse: LoopLoad;
  /** Whether requests were answered in the last SERVING_MS (without a count: always). */
  private serving(): boolean {
    if (!this.opts.answered) return true;
    const n = this.opts.answered();
    const now = performance.now();
    if (n !== this.answeredSeen) {
      this.answeredSeen = n;
      this.answeredAt = now;
    }
    return now - this.answeredAt < SERVING_MS;
  }
  private answeredSeen = 0;
  private answeredAt = -Infinity;

  /** Starts earned while the loop is busy (startable), and when they were last counted (0: not busy). */
  private tokens = 0;
  private tokensAt = 0;
  private yieldTimer: NodeJS.Timeout | undefined;
  private readonly work = new Map<string, TenantWork>();
  /** Lanes told of new keys, read NUDGE_MS later. */
  private readonly nudged = new Set<Lane>();
  private readonly disabling = new Set<string>();
  /** Tenants whose first-build queue is empty (LEGACY_QUEUE_NS), and when each was last swept. */
  private readonly legacyDone = new Set<string>();
  private readonly swept = new Map<string, number>();
  /** Tenants a poll looks at for lanes: those with work, those told of new keys, those not looked at yet. */
  private readonly due = new DueTenants(DISCOVER_PER_POLL);
  private unwatch: (() => void) | undefined;
  private running = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private nudgeTimer: NodeJS.Timeout | undefined;
  private wakeTimer: NodeJS.Timeout | undefined;
  private wakeAt = Infinity;
  private startScheduled = false;
  private started = false;
  private stopped = false;
  private readonly pendingCommits = new Map<string, { batch: WriteBatch; parts: WriteBatch[]; timer: NodeJS.Timeout | undefined; go: () => void; done: Promise<void> }>();
  private readonly attempts = new Set<Promise<void>>();
  private readonly conns = new Connections();
  /** Attempts since start per organisation (/metrics): delivered, failed and retried, failed for good. */
  readonly counts = new Map<string, AttemptCounts>();

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.store = opts.store;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger ?? silentLogger;
    this.s = opts.settings;
    this.laneHold = Math.max(16, this.s.endpointConcurrency * 4);
    this.loopUse = opts.loopUse ?? loopLoad();
    this.sweepEveryMs = Math.max(this.s.pollMs, Math.min(SWEEP_EVERY_MS, Math.floor(this.s.retentionMs / 10)));
  }

  /** An endpoint of `tenant` was deleted: what it left is removed from the next poll on. */
  sweepSoon(tenant: string): void {
    this.swept.delete(tenant);
  }

  /** Due keys held in memory, waiting for a slot (/metrics; bounded by lanes × LANE_HOLD). */
  get held(): number {
    let n = 0;
    for (const w of this.work.values()) for (const lane of w.lanes.values()) n += lane.held.length;
    return n;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    // Keys put in a lane by anything (a queued event, a retry asked for, an outcome): its tenant is looked at.
    this.unwatch = this.store.watchKv(LANE_NS, (tenant) => this.due.mark(tenant));
    this.poll();
  }

  /**
   * Stops looking for work and drops the attempts in flight (their connections closed, nothing
   * recorded): they stay queued and are sent again by the next start, under the same webhook-id.
   * A node stopping does not wait for a slow endpoint; outcomes already known are committed.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch?.();
    clearTimeout(this.pollTimer);
    clearTimeout(this.nudgeTimer);
    clearTimeout(this.wakeTimer);
    clearTimeout(this.yieldTimer);
    this.conns.close();
    await Promise.allSettled([...this.attempts]);
    // Taken before `go` removes each from the map.
    const open = [...this.pendingCommits.values()];
    for (const c of open) c.go();
    await Promise.allSettled(open.map((c) => c.done));
  }

  /**
   * A batch of `tenant` added keys to these endpoints' lanes: each is read once committed, without
   * waiting for the poll (a door scan's event costs a share of one ranged read, not a listing).
   * A batch refused, or not committed within FRESH_MS, is forgotten: the poll finds what committed.
   */
  nudge(tenant: string, endpointIds: readonly string[]): void {
    if (this.stopped) return;
    const until = this.clock.now() + FRESH_MS;
    this.due.mark(tenant);
    for (const id of endpointIds) {
      const lane = this.lane(tenant, id);
      lane.expected++;
      lane.freshUntil = until;
      this.nudged.add(lane);
    }
    this.armNudge();
  }

  private armNudge(): void {
    if (this.nudgeTimer || this.stopped) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      const now = this.clock.now();
      for (const lane of [...this.nudged]) {
        this.refill(lane, now);
        if (lane.expected <= 0 || now >= lane.freshUntil) {
          lane.expected = 0;
          this.nudged.delete(lane);
        }
      }
      this.startDue();
      if (this.nudged.size > 0) this.armNudge();
    }, NUDGE_MS);
    this.nudgeTimer.unref();
  }

  /** Deliveries started and not yet answered (tests). */
  get inFlight(): number {
    return this.running;
  }

  private poll(): void {
    if (this.stopped) return;
    try {
      const now = this.clock.now();
      const owned = new Set(this.opts.tenants());
      // A tenant this node no longer serves is left to its new owner (attempts in flight finish).
      for (const [t, w] of this.work) if (!owned.has(t)) for (const lane of w.lanes.values()) this.release(lane);
      // Only tenants that may have lanes: a poll costs what is queued, not the organisations.
      for (const t of this.work.keys()) this.due.mark(t);
      for (const t of this.due.next(owned, now)) {
        try {
          if (!this.legacyDone.has(t)) this.moveLegacy(t);
          if (this.lookForLanes(t, now)) this.due.later(t, 0);
        } catch (err) {
          this.due.later(t, now + this.s.pollMs);
          this.log.error({ err, tenant: t }, 'webhook dispatch look-up failed');
        }
      }
      let sweeps = 0;
      for (const t of owned) {
        if (sweeps < SWEEP_TENANTS && now - (this.swept.get(t) ?? 0) >= this.sweepEveryMs) {
          sweeps++;
          this.sweep(t, now);
        }
      }
      for (const t of this.swept.keys()) if (!owned.has(t)) this.swept.delete(t);
      this.startDue();
    } catch (err) {
      this.log.error({ err }, 'webhook dispatch look-up failed');
    }
    this.pollTimer = setTimeout(() => this.poll(), this.s.pollMs);
    this.pollTimer.unref();
  }

  private lane(tenant: string, endpointId: string): Lane {
    let w = this.work.get(tenant);
    if (!w) {
      w = { lanes: new Map(), running: 0 };
      this.work.set(tenant, w);
    }
    let lane = w.lanes.get(endpointId);
    if (!lane) {
      lane = { tenant, endpointId, held: [], known: new Set(), busy: new Set(), running: 0, more: true, expected: 0, freshUntil: 0, nextDue: Infinity };
      w.lanes.set(endpointId, lane);
    }
    return lane;
  }

  /** Forgets the keys `lane` holds (not the ones in an attempt): a read finds them again. */
  private release(lane: Lane): void {
    for (const k of lane.held) lane.known.delete(k);
    lane.held.length = 0;
    lane.more = false;
    lane.expected = 0;
    lane.nextDue = Infinity;
  }

  /** Finds the lanes of `tenant` holding keys (one seek per lane) and reads each. */
  /** Reads the tenant's lanes (up to MAX_LANES_PER_POLL); answers whether it has any. */
  private lookForLanes(tenant: string, now: number): boolean {
    let after: string | undefined;
    for (let i = 0; i < MAX_LANES_PER_POLL; i++) {
      const [first] = this.store.rangeKv(tenant, LANE_NS, { after, limit: 1 });
      if (!first) return i > 0;
      const k = parseLaneKey(first.key);
      if (!k) {
        void this.commit(tenant, new WriteBatch().deleteKv(tenant, LANE_NS, first.key));
        after = first.key;
        continue;
      }
      this.refill(this.lane(tenant, k.endpointId), now);
      after = laneEnd(k.endpointId);
    }
    return true;
  }

  /**
   * Reads the due keys of `lane` it has room for, from the start of its range: the keys it knows
   * come first (they are the oldest due), so a read costs what the lane holds plus what it takes.
   * The first key not due yet ends the read and sets when the lane wakes.
   */
  private refill(lane: Lane, now: number): void {
    const room = this.laneHold - lane.held.length - lane.running;
    if (room <= 0) {
      lane.more = true;
      lane.expected = 0;
      return;
    }
    const limit = lane.known.size + room;
    const page = this.store.rangeKv(lane.tenant, LANE_NS, { after: laneStart(lane.endpointId), until: laneEnd(lane.endpointId), limit });
    let found = 0;
    let future = false;
    for (const { key } of page) {
      if (lane.known.has(key)) continue;
      const k = parseLaneKey(key);
      if (!k) {
        void this.commit(lane.tenant, new WriteBatch().deleteKv(lane.tenant, LANE_NS, key));
        continue;
      }
      if (k.dueAt > now) {
        future = true;
        lane.nextDue = k.dueAt;
        this.armWake(k.dueAt);
        break;
      }
      lane.held.push(key);
      lane.known.add(key);
      found++;
    }
    lane.more = !future && page.length >= limit;
    lane.expected = Math.max(0, lane.expected - found);
    if (!future) lane.nextDue = Infinity;
  }

  /** Reads the lanes whose next key comes due at `at` then (a retry's back-off). */
  private armWake(at: number): void {
    if (this.stopped || at >= this.wakeAt) return;
    clearTimeout(this.wakeTimer);
    this.wakeAt = at;
    this.wakeTimer = setTimeout(() => {
      this.wakeAt = Infinity;
      this.wakeTimer = undefined;
      const now = this.clock.now();
      for (const w of this.work.values()) {
        for (const lane of w.lanes.values()) {
          if (lane.nextDue <= now) this.refill(lane, now);
          else if (lane.nextDue < Infinity) this.armWake(lane.nextDue);
        }
      }
      this.startDue();
    }, Math.max(0, at - this.clock.now()));
    this.wakeTimer.unref();
  }

  /**
   * Attempts the node may start now: as many as its bounds allow, or while requests keep the event
   * loop busy, what `busyRate` has earned since (a bucket holding a tenth of a second's worth),
   * started `burst` at a time: attempts started together share the event loop's turns and the
   * system calls that wake it (one at a time, each cost the node about three times the CPU).
   */
  private startable(): number {
    if (this.s.busyPercent >= 100 || !this.serving() || this.loopUse() * 100 <= this.s.busyPercent) {
      this.tokensAt = 0;
      return Infinity;
    }
    const now = performance.now();
    const rate = Math.max(1, this.s.busyRate);
    if (this.tokensAt === 0) this.tokens = this.burst;
    else this.tokens = Math.min(Math.max(this.burst, rate / 10), this.tokens + ((now - this.tokensAt) * rate) / 1000);
    this.tokensAt = now;
    return this.tokens >= this.burst ? Math.floor(this.tokens) : 0;
  }

  /** Attempts started together while yielding: an endpoint's concurrency, within a tenth of a second's rate. */
  private get burst(): number {
    return Math.max(1, Math.min(this.s.endpointConcurrency, Math.floor(Math.max(1, this.s.busyRate) / 10)));
  }

  /** Starts every held delivery its lane, organisation and the node have room for. */
  private startDue(): void {
    if (this.stopped) return;
    const now = this.clock.now();
    const limit = this.s.concurrency;
    let budget = this.startable();
    for (const [tenant, w] of this.work) {
      for (const [endpointId, lane] of w.lanes) {
        if (lane.more && lane.held.length * 2 < this.laneHold) this.refill(lane, now);
        let skipped = 0;
        while (budget >= 1 && lane.held.length > skipped && lane.running < this.s.endpointConcurrency && w.running < this.s.orgConcurrency && this.running < limit) {
          const key = lane.held.shift()!;
          // A second key of a delivery in an attempt waits for that attempt's outcome.
          if (lane.busy.has(key.slice(-24))) {
            lane.held.push(key);
            skipped++;
            continue;
          }
          this.launch(w, lane, key);
          if (budget !== Infinity) {
            budget--;
            this.tokens--;
          }
        }
        if (lane.held.length === 0 && lane.running === 0 && lane.known.size === 0 && lane.expected === 0 && !lane.more && lane.nextDue === Infinity) w.lanes.delete(endpointId);
      }
      if (w.lanes.size === 0 && w.running === 0) this.work.delete(tenant);
      if (this.running >= limit || budget < 1) {
        // The tenant that filled the node goes last next time: organisations take turns.
        if (this.work.delete(tenant)) this.work.set(tenant, w);
        break;
      }
    }
    // Yielding to a busy loop with work held: look again once the rate has earned another start.
    if (budget < 1 && this.held > 0 && !this.yieldTimer && !this.stopped) {
      this.yieldTimer = setTimeout(() => {
        this.yieldTimer = undefined;
        this.startDue();
      }, Math.ceil((1000 * this.burst) / Math.max(1, this.s.busyRate)));
      this.yieldTimer.unref();
    }
  }

  private scheduleStart(): void {
    if (this.startScheduled || this.stopped) return;
    this.startScheduled = true;
    setImmediate(() => {
      this.startScheduled = false;
      this.startDue();
    });
  }

  private launch(w: TenantWork, lane: Lane, key: string): void {
    const eventId = key.slice(-24);
    lane.busy.add(eventId);
    lane.running++;
    w.running++;
    this.running++;
    let freed = false;
    const free = () => {
      if (freed) return;
      freed = true;
      lane.running--;
      w.running--;
      this.running--;
      this.scheduleStart();
    };
    const p = this.attempt(lane, key, eventId, free)
      .catch((err: unknown) => this.log.error({ err, tenant: lane.tenant }, 'webhook delivery step failed; it stays queued'))
      .finally(() => {
        free();
        lane.known.delete(key);
        lane.busy.delete(eventId);
        this.attempts.delete(p);
        this.scheduleStart();
      });
    this.attempts.add(p);
  }

  /** One attempt of the delivery `key` names: `free` gives its slot back once it was answered. */
  private async attempt(lane: Lane, key: string, eventId: string, free: () => void): Promise<void> {
    const { tenant, endpointId } = lane;
    const ns = deliveryNs(endpointId);
    const d = this.store.getKv<Delivery>(tenant, ns, eventId);
    const b = new WriteBatch().deleteKv(tenant, LANE_NS, key);
    const ep = d?.state === 'pending' ? this.store.getKv<Endpoint>(tenant, ENDPOINT_NS, endpointId) : undefined;
    // Delivered, failed, swept, or its endpoint deleted (whose deliveries the sweep removes): the key goes.
    if (!d || !ep) {
      free();
      return this.commit(tenant, b);
    }
    const body = d.body ?? this.store.getKv<StoredEvent>(tenant, EVENT_NS, eventId)?.body;
    if (!ep.enabled || body === undefined) {
      free();
      b.putKv(tenant, ns, eventId, { ...d, state: 'failed', dueAt: null, lastError: ep.enabled ? 'the event is past its retention' : 'the endpoint is disabled' } satisfies Delivery);
      return this.commit(tenant, b);
    }
    const ts = Math.floor(this.clock.now() / 1000);
    const headers = {
      'webhook-id': eventId,
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader(ep.secrets, eventId, ts, body, this.clock.now()),
    };
    const a = await send(ep.url, headers, body, this.s, this.conns, this.s.endpointConcurrency);
    free();
    if (this.stopped) return;
    // Deleted while the attempt was out: nothing is written back under it (the sweep removes the rest).
    if (this.store.getKv(tenant, ENDPOINT_NS, endpointId) === undefined) return this.commit(tenant, b);
    const now = this.clock.now();
    const retryAt = this.outcome(b, tenant, ep, d, a, now);
    await this.commit(tenant, b);
    if (retryAt !== undefined && !this.stopped) {
      lane.nextDue = Math.min(lane.nextDue, retryAt);
      this.armWake(retryAt);
    }
  }

  /** Writes the attempt's outcome into `b`; answers when it is tried again, if it is. */
  private outcome(b: WriteBatch, tenant: string, ep: Endpoint, d: Delivery, a: Attempt, now: number): number | undefined {
    const ns = deliveryNs(ep.id);
    const attempts = d.attempts + 1;
    // Built field by field in one order: every stored delivery has one shape (one encoder record),
    // and nothing is deleted from an object (which would slow every later use of it).
    const base = (state: Delivery['state'], dueAt: number | null, lastError: string | undefined): Delivery => {
      const x: Delivery = { eventId: d.eventId, endpointId: d.endpointId, type: d.type, createdAt: d.createdAt, state, attempts, lastStatus: a.status, dueAt, lastDurationMs: a.durationMs, lastAttemptAt: now };
      if (lastError !== undefined) x.lastError = lastError;
      if (state === 'delivered') x.deliveredAt = now;
      if (d.body !== undefined) x.body = d.body;
      return x;
    };
    const health = this.store.getKv<EndpointHealth>(tenant, HEALTH_NS, ep.id);
    if (a.ok) {
      b.putKv(tenant, ns, d.eventId, base('delivered', null, undefined));
      if (health) b.deleteKv(tenant, HEALTH_NS, ep.id);
      this.disabling.delete(tenant + '\0' + ep.id);
      this.count(tenant, 'delivered');
      return undefined;
    }
    const err = a.error ?? 'failed';
    const delay = Math.min(this.s.retryMaxMs, this.s.retryBaseMs * 2 ** Math.min(attempts - 1, 40));
    const dueAt = now + delay;
    let retryAt: number | undefined;
    if (dueAt - d.createdAt > this.s.maxAgeMs) {
      b.putKv(tenant, ns, d.eventId, base('failed', null, err));
      this.log.warn({ tenant, endpointId: ep.id, eventId: d.eventId, attempts, url: redactUrl(ep.url), err }, 'webhook delivery failed for good');
      this.count(tenant, 'failed');
    } else {
      b.putKv(tenant, ns, d.eventId, base('pending', dueAt, err));
      b.putKv(tenant, LANE_NS, laneKey(ep.id, dueAt, d.eventId), 1);
      this.log.info({ tenant, endpointId: ep.id, eventId: d.eventId, attempts, url: redactUrl(ep.url), retryAt: new Date(dueAt).toISOString(), err }, 'webhook delivery failed; will retry');
      this.count(tenant, 'retried');
      retryAt = dueAt;
    }
    if (!health) b.putKv(tenant, HEALTH_NS, ep.id, { failingSince: now } satisfies EndpointHealth);
    else if (now - health.failingSince >= this.s.disableAfterMs) this.failing(tenant, ep.id, health.failingSince);
    return retryAt;
  }

  private count(tenant: string, outcome: keyof AttemptCounts): void {
    let c = this.counts.get(tenant);
    if (!c) {
      c = { delivered: 0, retried: 0, failed: 0 };
      this.counts.set(tenant, c);
    }
    c[outcome]++;
  }

  private failing(tenant: string, endpointId: string, since: number): void {
    const k = tenant + '\0' + endpointId;
    if (this.disabling.has(k)) return;
    this.disabling.add(k);
    this.opts.onFailing(tenant, endpointId, since).catch((err: unknown) => {
      this.disabling.delete(k);
      this.log.warn({ err, tenant, endpointId }, 'a failing webhook endpoint could not be disabled; tried again at its next failure');
    });
  }

  /** Moves a step of the first build's queue (`<dueAt>:<delivery id>`) into the lanes. */
  private moveLegacy(tenant: string): void {
    const old = this.store.rangeKv(tenant, LEGACY_QUEUE_NS, { limit: LEGACY_STEP });
    if (old.length < LEGACY_STEP) this.legacyDone.add(tenant);
    if (old.length === 0) return;
    const b = new WriteBatch();
    for (const { key } of old) {
      b.deleteKv(tenant, LEGACY_QUEUE_NS, key);
      const k = parseLegacyQueueKey(key);
      if (k) b.putKv(tenant, LANE_NS, laneKey(k.endpointId, k.dueAt, k.eventId), 1);
    }
    void this.commit(tenant, b);
  }

  /**
   * Deletes, in at most SWEEP_OPS writes, a tenant's deliveries and events older than the
   * retention, and what deleted endpoints left (their deliveries, then their lane, then the mark).
   * A sweep that used its whole budget comes back at the next poll.
   */
  private sweep(tenant: string, now: number): void {
    this.swept.set(tenant, now);
    const b = new WriteBatch();
    let budget = SWEEP_OPS;
    const drop = (ns: string, entries: Array<{ key: string }>) => {
      for (const { key } of entries) b.deleteKv(tenant, ns, key);
      budget -= entries.length;
    };
    const cutoff = idsBefore(now - Math.max(this.s.retentionMs, this.s.maxAgeMs));
    drop(EVENT_NS, this.store.rangeKv(tenant, EVENT_NS, { until: cutoff, limit: budget }));
    for (const { key: id } of this.store.listKv(tenant, ENDPOINT_NS)) {
      if (budget <= 0) break;
      drop(deliveryNs(id), this.store.rangeKv(tenant, deliveryNs(id), { until: cutoff, limit: budget }));
    }
    let again = false;
    for (const { key: id, value: deletedAt } of this.store.rangeKv<number>(tenant, GONE_NS, { limit: 8 })) {
      if (budget <= 0) break;
      drop(deliveryNs(id), this.store.rangeKv(tenant, deliveryNs(id), { limit: budget }));
      if (budget > 0) drop(LANE_NS, this.store.rangeKv(tenant, LANE_NS, { after: laneStart(id), until: laneEnd(id), limit: budget }));
      // The mark stays until no attempt begun before the delete can still be answered and write back.
      if (budget > 0 && now - deletedAt > 2 * this.s.timeoutMs + COMMIT_MS) b.deleteKv(tenant, GONE_NS, id);
      else again = true;
    }
    if (budget <= 0 || again) this.swept.delete(tenant);
    if (b.size > 0) void this.commit(tenant, b);
  }

  /**
   * Commits `b` with the tenant's other writes of the next COMMIT_MS, in one batch: deliveries
   * answered together cost one commit. A refused batch is committed part by part.
   */
  private commit(tenant: string, b: WriteBatch): Promise<void> {
    const open = this.pendingCommits.get(tenant);
    if (open) {
      open.batch.ops.push(...b.ops);
      open.parts.push(b);
      if (open.batch.size >= COMMIT_MAX_OPS) open.go();
      return open.done;
    }
    const batch = new WriteBatch();
    batch.ops.push(...b.ops);
    let go!: () => void;
    const due = new Promise<void>((resolve) => (go = resolve));
    const pc = { batch, parts: [b], timer: undefined as NodeJS.Timeout | undefined, go, done: Promise.resolve() };
    pc.go = () => {
      clearTimeout(pc.timer);
      if (this.pendingCommits.get(tenant) === pc) this.pendingCommits.delete(tenant);
      go();
    };
    pc.timer = setTimeout(pc.go, this.stopped ? 0 : COMMIT_MS);
    pc.done = due.then(async () => {
      try {
        await this.store.commit(pc.batch);
      } catch (err) {
        this.log.warn({ err, tenant }, 'webhook delivery states not committed together; committing them one by one');
        for (const p of pc.parts) await this.store.commit(p).catch((e: unknown) => this.log.warn({ err: e, tenant }, 'a webhook delivery state was not saved; it will be sent again'));
      }
    });
    this.pendingCommits.set(tenant, pc);
    if (batch.size >= COMMIT_MAX_OPS) pc.go();
    return pc.done;
  }
}
