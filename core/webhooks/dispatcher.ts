// Delivers the webhook deliveries queued in writes' batches (hub.ts) after they commit, and resumes
// after a restart: the queue is in the store, so what a crash left queued is sent by the next start.
//
// Lanes: due deliveries are held per organisation and endpoint, and started under three bounds,
// per endpoint (`endpointConcurrency`), per organisation (`orgConcurrency`) and per node
// (`concurrency`). An endpoint that hangs holds its own lane's slots (each attempt ends at
// `timeoutMs`) and at most its organisation's share; other endpoints' deliveries start beside it.
// Nothing here runs on a writer's path: a door scan only adds two keys to its own batch.
//
// Once per delivery and node: a queue key is in at most one lane or attempt at a time, its state
// and its queue key change in one commit, and in cluster mode a node only dispatches the tenants
// it owns (`tenants`). A crash between an attempt and its commit sends it again on restart, under
// the same `webhook-id` (the event id), which receivers use to drop the duplicate (at least once).
// Attempts that fail are retried with exponential back-off (`retryBaseMs` doubling up to
// `retryMaxMs`) until the event is `maxAgeMs` old; an endpoint that has failed without a success
// for `disableAfterMs` is handed to `onFailing` (the actor disables it and tells the Admins).
import type { Clock } from '../clock.js';
import { systemClock } from '../clock.js';
import type { Logger } from '../log.js';
import { silentLogger } from '../log.js';
import { WriteBatch, type Store } from '../store/store.js';
import {
  deliveryNs,
  ENDPOINT_NS,
  HEALTH_NS,
  parseDeliveryId,
  parseQueueKey,
  QUEUE_NS,
  queueKey,
  type Delivery,
  type Endpoint,
  type EndpointHealth,
} from './model.js';
import { Connections, send, type Attempt, type SendSettings } from './sender.js';
import { signatureHeader } from './signing.js';
import { redactUrl } from './url-safety.js';

export interface WebhookDispatchSettings extends SendSettings {
  /** Idle look for due deliveries (retries come due this way; new events are looked for at once). */
  pollMs: number;
  concurrency: number;
  orgConcurrency: number;
  endpointConcurrency: number;
  retryBaseMs: number;
  retryMaxMs: number;
  /** An event older than this is not tried again (`failed`). */
  maxAgeMs: number;
  /** An endpoint failing without a success for this long is disabled. */
  disableAfterMs: number;
}

export interface WebhookDispatcherOptions {
  store: Store;
  settings: WebhookDispatchSettings;
  /** The tenants this node dispatches for: all on a single node, the owned ones in cluster mode. */
  tenants: () => Iterable<string>;
  /** An endpoint failed for `disableAfterMs`: disable it and tell the organisation. */
  onFailing: (tenant: string, endpointId: string, failingSince: number) => Promise<void>;
  clock?: Clock;
  logger?: Logger;
}

interface Lane {
  endpointId: string;
  keys: string[];
  running: number;
}

interface TenantWork {
  lanes: Map<string, Lane>;
  /** Queue keys in a lane or an attempt. */
  known: Set<string>;
  running: number;
}

export interface AttemptCounts {
  delivered: number;
  retried: number;
  failed: number;
}

/** How long after a batch queued events its keys are looked for (it has committed by then). */
const NUDGE_MS = 5;
/** How long a queued key is looked for before its batch counts as refused. */
const FRESH_MS = 2000;

export class WebhookDispatcher {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly s: WebhookDispatchSettings;
  private readonly work = new Map<string, TenantWork>();
  /** Keys queued by batches of this node, waiting for their commit. */
  private fresh: Array<{ tenant: string; key: string; at: number }> = [];
  private readonly disabling = new Set<string>();
  private running = 0;
  private pollTimer: NodeJS.Timeout | undefined;
  private nudgeTimer: NodeJS.Timeout | undefined;
  private startScheduled = false;
  private started = false;
  private stopped = false;
  private readonly pendingCommits = new Map<string, { batch: WriteBatch; parts: WriteBatch[]; done: Promise<void> }>();
  private readonly attempts = new Set<Promise<void>>();
  private readonly conns = new Connections();
  /** Attempts since start per organisation (/metrics): delivered, failed and retried, failed for good. */
  readonly counts = new Map<string, AttemptCounts>();

  constructor(private readonly opts: WebhookDispatcherOptions) {
    this.store = opts.store;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger ?? silentLogger;
    this.s = opts.settings;
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.poll();
  }

  /**
   * Stops looking for work and drops the attempts in flight (their connections closed, nothing
   * recorded): they stay queued and are sent again by the next start, under the same webhook-id.
   * A node stopping does not wait for a slow endpoint.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.pollTimer);
    clearTimeout(this.nudgeTimer);
    this.conns.close();
    await Promise.allSettled([...this.attempts]);
    await Promise.allSettled([...this.pendingCommits.values()].map((c) => c.done));
  }

  /**
   * A batch of `tenant` queued these keys: they are taken into their lanes once committed, without
   * listing the queue (a door scan's event costs a key read, not a listing of every queued one).
   * A batch refused, or not committed within FRESH_MS, is forgotten: the poll finds what committed.
   */
  nudge(tenant: string, keys: readonly string[]): void {
    if (this.stopped) return;
    const at = this.clock.now();
    for (const key of keys) this.fresh.push({ tenant, key, at });
    this.armNudge();
  }

  private armNudge(): void {
    if (this.nudgeTimer || this.stopped) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = undefined;
      const now = this.clock.now();
      const waiting = this.fresh;
      this.fresh = [];
      const owned = new Set(this.opts.tenants());
      for (const f of waiting) {
        if (!owned.has(f.tenant)) continue;
        const w = this.work.get(f.tenant);
        if (w?.known.has(f.key)) continue;
        if (this.store.getKv(f.tenant, QUEUE_NS, f.key) !== undefined) this.hold(f.tenant, f.key);
        else if (now - f.at < FRESH_MS) this.fresh.push(f);
      }
      this.startDue();
      if (this.fresh.length > 0) this.armNudge();
    }, NUDGE_MS);
    this.nudgeTimer.unref();
  }

  /** Deliveries started and not yet committed (tests). */
  get inFlight(): number {
    return this.running;
  }

  private poll(): void {
    if (this.stopped) return;
    try {
      const owned = new Set(this.opts.tenants());
      // A tenant this node no longer serves is left to its new owner (attempts in flight finish).
      for (const [t, w] of this.work) if (!owned.has(t)) for (const l of w.lanes.values()) l.keys.length = 0;
      for (const t of owned) this.list(t);
      this.startDue();
    } catch (err) {
      this.log.error({ err }, 'webhook dispatch look-up failed');
    }
    this.pollTimer = setTimeout(() => this.poll(), this.s.pollMs);
    this.pollTimer.unref();
  }

  private tenantWork(tenant: string): TenantWork {
    let w = this.work.get(tenant);
    if (!w) {
      w = { lanes: new Map(), known: new Set(), running: 0 };
      this.work.set(tenant, w);
    }
    return w;
  }

  /** Adds the due queue keys of `tenant` not in a lane or an attempt already to their lanes. */
  private list(tenant: string): void {
    const now = this.clock.now();
    for (const { key } of this.store.listKv(tenant, QUEUE_NS)) {
      if (parseQueueKey(key).dueAt > now) break;
      this.hold(tenant, key);
    }
  }

  /** Puts `key` in its lane unless it is in one or in an attempt already. */
  private hold(tenant: string, key: string): void {
    const w = this.tenantWork(tenant);
    if (w.known.has(key)) return;
    const ids = parseDeliveryId(parseQueueKey(key).id);
    if (!ids) {
      void this.commit(tenant, new WriteBatch().deleteKv(tenant, QUEUE_NS, key));
      return;
    }
    let lane = w.lanes.get(ids.endpointId);
    if (!lane) {
      lane = { endpointId: ids.endpointId, keys: [], running: 0 };
      w.lanes.set(ids.endpointId, lane);
    }
    lane.keys.push(key);
    w.known.add(key);
  }

  /** Starts every held delivery its lane, organisation and the node have room for. */
  private startDue(): void {
    for (const [tenant, w] of this.work) {
      for (const [endpointId, lane] of w.lanes) {
        while (lane.keys.length > 0 && lane.running < this.s.endpointConcurrency && w.running < this.s.orgConcurrency && this.running < this.s.concurrency) {
          this.launch(tenant, w, lane, lane.keys.shift()!);
        }
        if (lane.keys.length === 0 && lane.running === 0) w.lanes.delete(endpointId);
      }
      if (w.lanes.size === 0 && w.running === 0) this.work.delete(tenant);
      if (this.running >= this.s.concurrency) return;
    }
  }

  private scheduleStart(): void {
    if (this.startScheduled || this.stopped) return;
    this.startScheduled = true;
    setImmediate(() => {
      this.startScheduled = false;
      if (!this.stopped) this.startDue();
    });
  }

  private launch(tenant: string, w: TenantWork, lane: Lane, key: string): void {
    lane.running++;
    w.running++;
    this.running++;
    const p = this.attempt(tenant, key)
      .catch((err: unknown) => this.log.error({ err, tenant }, 'webhook delivery step failed; it stays queued'))
      .finally(() => {
        lane.running--;
        w.running--;
        this.running--;
        w.known.delete(key);
        this.attempts.delete(p);
        this.scheduleStart();
      });
    this.attempts.add(p);
  }

  private async attempt(tenant: string, key: string): Promise<void> {
    const { id } = parseQueueKey(key);
    const { eventId, endpointId } = parseDeliveryId(id)!;
    if (this.store.getKv(tenant, QUEUE_NS, key) === undefined) return;
    const ns = deliveryNs(endpointId);
    const d = this.store.getKv<Delivery>(tenant, ns, eventId);
    const b = new WriteBatch().deleteKv(tenant, QUEUE_NS, key);
    if (!d || d.state !== 'pending') return this.commit(tenant, b);
    const ep = this.store.getKv<Endpoint>(tenant, ENDPOINT_NS, endpointId);
    if (!ep || !ep.enabled) {
      b.putKv(tenant, ns, eventId, { ...d, state: 'failed', dueAt: null, lastError: ep ? 'the endpoint is disabled' : 'the endpoint was deleted' } satisfies Delivery);
      return this.commit(tenant, b);
    }
    const ts = Math.floor(this.clock.now() / 1000);
    const headers = {
      'webhook-id': eventId,
      'webhook-timestamp': String(ts),
      'webhook-signature': signatureHeader(ep.secrets, eventId, ts, d.body, this.clock.now()),
    };
    const a = await send(ep.url, headers, d.body, this.s, this.conns, this.s.endpointConcurrency);
    if (this.stopped) return;
    const now = this.clock.now();
    this.outcome(b, tenant, ep, d, a, now);
    await this.commit(tenant, b);
  }

  private outcome(b: WriteBatch, tenant: string, ep: Endpoint, d: Delivery, a: Attempt, now: number): void {
    const ns = deliveryNs(ep.id);
    const attempts = d.attempts + 1;
    const base: Delivery = { ...d, attempts, lastStatus: a.status, lastDurationMs: a.durationMs, lastAttemptAt: now };
    const health = this.store.getKv<EndpointHealth>(tenant, HEALTH_NS, ep.id);
    if (a.ok) {
      delete base.lastError;
      b.putKv(tenant, ns, d.eventId, { ...base, state: 'delivered', dueAt: null, deliveredAt: now } satisfies Delivery);
      if (health) b.deleteKv(tenant, HEALTH_NS, ep.id);
      this.disabling.delete(tenant + '\0' + ep.id);
      this.count(tenant, 'delivered');
      return;
    }
    base.lastError = a.error ?? 'failed';
    const delay = Math.min(this.s.retryMaxMs, this.s.retryBaseMs * 2 ** Math.min(attempts - 1, 40));
    const dueAt = now + delay;
    if (dueAt - d.createdAt > this.s.maxAgeMs) {
      b.putKv(tenant, ns, d.eventId, { ...base, state: 'failed', dueAt: null } satisfies Delivery);
      this.log.warn({ tenant, endpointId: ep.id, eventId: d.eventId, attempts, url: redactUrl(ep.url), err: base.lastError }, 'webhook delivery failed for good');
      this.count(tenant, 'failed');
    } else {
      b.putKv(tenant, ns, d.eventId, { ...base, dueAt } satisfies Delivery);
      b.putKv(tenant, QUEUE_NS, queueKey(dueAt, d.eventId + ep.id), 1);
      this.log.info({ tenant, endpointId: ep.id, eventId: d.eventId, attempts, url: redactUrl(ep.url), retryAt: new Date(dueAt).toISOString(), err: base.lastError }, 'webhook delivery failed; will retry');
      this.count(tenant, 'retried');
    }
    if (!health) b.putKv(tenant, HEALTH_NS, ep.id, { failingSince: now } satisfies EndpointHealth);
    else if (now - health.failingSince >= this.s.disableAfterMs) this.failing(tenant, ep.id, health.failingSince);
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

  /**
   * Commits `b` with the tenant's other outcomes of this turn of the event loop, in one batch:
   * deliveries finishing together cost one commit. A refused batch is committed part by part.
   */
  private commit(tenant: string, b: WriteBatch): Promise<void> {
    const open = this.pendingCommits.get(tenant);
    if (open) {
      open.batch.ops.push(...b.ops);
      open.parts.push(b);
      return open.done;
    }
    const batch = new WriteBatch();
    batch.ops.push(...b.ops);
    const pc = { batch, parts: [b], done: Promise.resolve() };
    pc.done = new Promise<void>((resolve) => setImmediate(resolve)).then(async () => {
      this.pendingCommits.delete(tenant);
      try {
        await this.store.commit(pc.batch);
      } catch (err) {
        this.log.warn({ err, tenant }, 'webhook delivery states not committed together; committing them one by one');
        for (const p of pc.parts) await this.store.commit(p).catch((e: unknown) => this.log.warn({ err: e, tenant }, 'a webhook delivery state was not saved; it will be sent again'));
      }
    });
    this.pendingCommits.set(tenant, pc);
    return pc.done;
  }
}
