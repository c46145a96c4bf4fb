// Sends the messages the transactional outbox queued (core/outbox.ts) after their write committed,
// and resumes after a restart: the queue is in the store, so whatever a crash left queued is sent
// by the next start.
//
// Finding work reads the tenant's queue namespace (queued messages only, in due-time order), never
// the outbox records. One listing is worked through in bounded steps of `batchSize` messages: each
// step delivers them (at most `concurrency` at once) and commits their new states in one batch,
// so a step costs the same whether ten or a million messages wait. A pass steps every tenant with
// work once (due-tenants.ts: those that queued a message since, those whose next message comes due,
// and a bounded share of those not looked at since start), several tenants side by side; a pass
// that finds more work runs the next at once; an idle pass sleeps `pollMs`.
//
// Once per message: the queue key and the record state change in the same commit; a message is in
// one step of one pass at a time on a node; and in cluster mode a node only dispatches the tenants
// it owns. A crash between a delivery and its commit sends the message again on restart, under the
// same message id (the record id), which a transport uses to drop the duplicate (SMTP Message-ID).
// A failed delivery is retried with exponential back-off (its queue key moves to the retry time)
// up to `maxAttempts`, then the message is `failed` and leaves the queue.
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import type { Logger } from './log.js';
import { silentLogger } from './log.js';
import {
  OUTBOX_DATATYPE,
  OUTBOX_QUEUE_NS,
  OutboxDeliveryError,
  parseQueueKey,
  queueKey,
  type Delivery,
  type OutboxMessage,
  type OutboxProvider,
} from './outbox.js';
import { DueTenants } from './due-tenants.js';
import { nextVersion, type StoredRecord } from './store/record.js';
import { WriteBatch, type Store } from './store/store.js';

/** Tenants whose messages are delivered at once in a pass (each with up to `concurrency` deliveries). */
const TENANT_LANES = 8;
/** Steps of `batchSize` keys one listing of a tenant's queue reads at most. */
const LISTED_STEPS = 4;
/** Tenants not looked at since start (or a takeover) whose queue one pass reads. */
const DISCOVER_PER_PASS = 1000;

export interface OutboxDispatchSettings {
  /** Sleep between passes that found nothing due. */
  pollMs: number;
  /** Messages per step (one commit). */
  batchSize: number;
  /** Deliveries in flight at once within a step. */
  concurrency: number;
  /** Deliveries tried before a message is `failed`. */
  maxAttempts: number;
  /** First retry delay; doubles per attempt up to retryMaxMs. */
  retryBaseMs: number;
  retryMaxMs: number;
}

export interface OutboxDispatcherOptions extends OutboxDispatchSettings {
  store: Store;
  provider: OutboxProvider;
  /** The tenants this node dispatches for: all on a single node, the owned ones in cluster mode. */
  tenants: () => Iterable<string>;
  clock?: Clock;
  logger?: Logger;
}

export interface DispatchCounts {
  sent: number;
  retried: number;
  failed: number;
}

type Outcome =
  | { key: string; rec: StoredRecord; ok: true; delivery: Delivery }
  | { key: string; rec: StoredRecord; ok: false; err: unknown };

export class OutboxDispatcher {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly log: Logger;
  /** Due queue keys per tenant from the last listing, not handled yet. */
  private readonly pending = new Map<string, string[]>();
  /** Tenants whose last listing filled its page (more may be due behind it). */
  private readonly paged = new Set<string>();
  private readonly due = new DueTenants(DISCOVER_PER_PASS);
  private readonly unwatch: () => void;
  private timer: NodeJS.Timeout | undefined;
  private chain: Promise<unknown> = Promise.resolve();
  private started = false;
  private stopped = false;
  readonly totals: DispatchCounts = { sent: 0, retried: 0, failed: 0 };

  constructor(private readonly opts: OutboxDispatcherOptions) {
    this.store = opts.store;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger ?? silentLogger;
    this.unwatch = this.store.watchKv(OUTBOX_QUEUE_NS, (tenant) => this.due.mark(tenant));
  }

  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    this.schedule(0);
  }

  /** Stops the loop and waits for the step in progress; what is queued stays for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.unwatch();
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    await this.chain.catch(() => undefined);
  }

  /** One pass over every tenant (one step each). Tests call it; the loop calls it too. */
  runOnce(): Promise<DispatchCounts & { more: boolean }> {
    const p = this.chain.then(() => this.pass());
    this.chain = p.catch(() => undefined);
    return p;
  }

  /** Passes until nothing is due (tests). */
  async drain(): Promise<DispatchCounts> {
    const sum: DispatchCounts = { sent: 0, retried: 0, failed: 0 };
    for (;;) {
      const r = await this.runOnce();
      sum.sent += r.sent;
      sum.retried += r.retried;
      sum.failed += r.failed;
      if (!r.more) return sum;
    }
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.runOnce().then(
        (r) => this.schedule(r.more ? 0 : this.opts.pollMs),
        (err) => {
          this.log.error({ err }, 'outbox dispatch pass failed');
          this.schedule(this.opts.pollMs);
        },
      );
    }, delay);
    this.timer.unref();
  }

  private async pass(): Promise<DispatchCounts & { more: boolean }> {
    const out = { sent: 0, retried: 0, failed: 0, more: false };
    if (this.stopped) return out;
    const served = new Set(this.opts.tenants());
    const tenants = this.due.next(served, this.clock.now());
    if (this.due.discovering) out.more = true;
    // A tenant this node no longer serves is left to its new owner.
    for (const t of this.pending.keys()) if (!served.has(t)) this.pending.delete(t);
    for (const t of this.paged) if (!served.has(t)) this.paged.delete(t);
    // Tenants are stepped side by side, TENANT_LANES at a time: a tenant whose provider hangs (up
    // to its transport's timeouts) holds one lane while the others' mail goes out.
    let next = 0;
    const lane = async () => {
      while (next < tenants.length && !this.stopped) {
        const tenant = tenants[next++];
        const keys = this.take(tenant);
        if (keys.length === 0) continue;
        try {
          const r = await this.step(tenant, keys);
          out.sent += r.sent;
          out.retried += r.retried;
          out.failed += r.failed;
        } catch (err) {
          // The keys stay queued in the store; the next listing finds them again.
          this.pending.delete(tenant);
          this.due.later(tenant, this.clock.now() + this.opts.pollMs);
          this.log.error({ err, tenant }, 'outbox dispatch step failed');
          continue;
        }
        // Looked at again next pass: what is left, or when the next message comes due.
        this.due.later(tenant, 0);
        if ((this.pending.get(tenant)?.length ?? 0) > 0 || this.paged.has(tenant)) out.more = true;
      }
    };
    await Promise.all(Array.from({ length: Math.min(TENANT_LANES, tenants.length) }, lane));
    this.totals.sent += out.sent;
    this.totals.retried += out.retried;
    this.totals.failed += out.failed;
    return out;
  }

  /** The next due keys of `tenant`: from the last listing, or a new listing once it is used up. */
  private take(tenant: string): string[] {
    let keys = this.pending.get(tenant);
    if (!keys || keys.length === 0) {
      const now = this.clock.now();
      // A page of the due keys, not the whole queue: a backlog of any size costs a bounded read and
      // bounded memory per listing (the previous steps' keys are committed away by now).
      const limit = this.opts.batchSize * LISTED_STEPS;
      // In due order: the due keys come first; the first one not due says when to look again.
      const page = this.store.rangeKv(tenant, OUTBOX_QUEUE_NS, { limit });
      keys = [];
      let nextDue: number | undefined;
      for (const { key } of page) {
        const at = parseQueueKey(key).dueAt;
        if (at > now) {
          nextDue = at;
          break;
        }
        keys.push(key);
      }
      // A full page: more may be due behind it, so the loop goes on at once rather than at its next poll.
      if (keys.length >= limit) this.paged.add(tenant);
      else this.paged.delete(tenant);
      if (nextDue !== undefined) this.due.later(tenant, nextDue);
      if (keys.length === 0) {
        this.pending.delete(tenant);
        return [];
      }
      this.pending.set(tenant, keys);
    }
    return keys.splice(0, this.opts.batchSize);
  }

  private async step(tenant: string, keys: string[]): Promise<DispatchCounts> {
    const counts: DispatchCounts = { sent: 0, retried: 0, failed: 0 };
    const stale = new WriteBatch();
    const work: Array<{ key: string; rec: StoredRecord }> = [];
    for (const key of keys) {
      if (this.store.getKv(tenant, OUTBOX_QUEUE_NS, key) === undefined) continue;
      const rec = this.store.getRecord(tenant, OUTBOX_DATATYPE, parseQueueKey(key).id);
      if (!rec || rec.state !== 'queued') stale.deleteKv(tenant, OUTBOX_QUEUE_NS, key);
      else work.push({ key, rec });
    }
    const outcomes = await this.deliverAll(tenant, work);
    const now = this.clock.now();
    const writes = outcomes.map((o) => this.result(tenant, o, now, counts));
    const batch = new WriteBatch();
    batch.ops.push(...stale.ops);
    for (const w of writes) batch.ops.push(...w.ops);
    if (batch.size === 0) return counts;
    try {
      await this.store.commit(batch);
    } catch (err) {
      // One refused write (a record changed under us) must not hold the others back.
      this.log.warn({ err, tenant }, 'outbox dispatch commit refused; committing messages one by one');
      for (const w of [stale, ...writes]) {
        if (w.size > 0) await this.store.commit(w).catch((e) => this.log.warn({ err: e, tenant }, 'outbox message state not saved; it will be sent again'));
      }
    }
    return counts;
  }

  private async deliverAll(tenant: string, work: Array<{ key: string; rec: StoredRecord }>): Promise<Outcome[]> {
    const out: Outcome[] = new Array(work.length);
    let next = 0;
    const lane = async () => {
      while (next < work.length) {
        const i = next++;
        const { key, rec } = work[i];
        try {
          const delivery = await this.opts.provider.deliver(tenant, messageOf(rec), rec.sk);
          out[i] = { key, rec, ok: true, delivery };
        } catch (err) {
          out[i] = { key, rec, ok: false, err };
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, Math.min(this.opts.concurrency, work.length)) }, lane));
    return out;
  }

  /** The writes that record one outcome: the new state, and the queue key removed or moved. */
  private result(tenant: string, o: Outcome, now: number, counts: DispatchCounts): WriteBatch {
    const b = new WriteBatch().deleteKv(tenant, OUTBOX_QUEUE_NS, o.key);
    const d = o.rec.data as Record<string, unknown>;
    const attempts = (typeof d.attempts === 'number' ? d.attempts : 0) + 1;
    const at = new Date(now).toISOString();
    if (o.ok) {
      const kept = o.delivery.redact ? envelope(d) : { ...d };
      delete kept.lastError;
      delete kept.dueAt;
      const data = { ...kept, provider: o.delivery.provider, attempts, sentAt: at, ...(o.delivery.messageId ? { messageId: o.delivery.messageId } : {}) };
      b.putRecord(nextVersion(o.rec, { data, state: 'sent' }, now), o.rec.version);
      counts.sent++;
      return b;
    }
    const error = o.err instanceof Error ? o.err.message : String(o.err);
    const permanent = o.err instanceof OutboxDeliveryError && o.err.permanent;
    if (permanent || attempts >= this.opts.maxAttempts) {
      const { dueAt: _gone, ...rest } = d;
      b.putRecord(nextVersion(o.rec, { data: { ...rest, attempts, lastError: error, failedAt: at }, state: 'failed' }, now), o.rec.version);
      this.log.warn({ tenant, messageId: o.rec.sk, attempts, err: error }, 'outbox message failed for good');
      counts.failed++;
      return b;
    }
    const dueAt = now + Math.min(this.opts.retryMaxMs, this.opts.retryBaseMs * 2 ** (attempts - 1));
    b.putRecord(nextVersion(o.rec, { data: { ...d, attempts, lastError: error, dueAt } }, now), o.rec.version);
    b.putKv(tenant, OUTBOX_QUEUE_NS, queueKey(dueAt, o.rec.sk), o.rec.sk);
    this.log.info({ tenant, messageId: o.rec.sk, attempts, retryAt: new Date(dueAt).toISOString(), err: error }, 'outbox delivery failed; will retry');
    counts.retried++;
    return b;
  }
}

function messageOf(rec: StoredRecord): OutboxMessage {
  return rec.data as unknown as OutboxMessage;
}

/** What a real transport's record keeps once sent: never the body, the code or the payload. */
function envelope(d: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ['channel', 'to', 'subject', 'kind', 'attempts']) if (d[k] !== undefined) out[k] = d[k];
  return out;
}
