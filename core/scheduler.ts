// Durable timers: reservation reminders, workflow escalations and snoozes. A job is a kv entry of
// its tenant (namespace `scheduler`), written in the SAME WriteBatch as the change that wants it,
// so a booking and its reminder exist together or not at all. Each node arms one timer (unref'd)
// for its earliest job: at start-up for every stored job, and whenever a job is scheduled. When a
// job is due its handler runs it, and the handler removes the job (`completeJob`) in the same batch
// as the job's effect, so a crash either leaves both undone (the job fires again after restart) or
// both done (it never fires again).
//
// Exactly once: a job is never handed to two handler calls at once on one node; before a run the
// scheduler checks that the job is still stored (a committed completion or cancellation removed
// it); and handlers are written to be idempotent against the business record anyway (a reminder is
// stamped on its booking, an escalation on its task), so a job fired again after a crash between
// effect and cleanup does nothing twice. Memory is never trusted over the store: completing or
// cancelling a job only writes to the batch, because that batch may still fail.
//
// One scheduler per node, a port (core/actor/services.ts): edge/app.ts creates it, modules register
// their job kinds on `deps.services.scheduler`, the node starts it after every module started and
// stops it once when it closes (so no module's stop can stop another's jobs). An actor schedules
// through its context (`scheduleJob(ctx, ...)` arms `ctx.services.scheduler`).
//
// Time comes from a Clock, so tests move a ManualClock past a due time and call `runDue()`.
import type { Clock } from './clock.js';
import { systemClock } from './clock.js';
import { newId } from './ids.js';
import type { Logger } from './log.js';
import { silentLogger } from './log.js';
import type { Store, WriteBatch } from './store/store.js';

export const SCHEDULER_NS = 'scheduler';

/** setTimeout's ceiling (about 24.8 days); a later job is re-armed when this fires. */
const MAX_DELAY_MS = 2_147_483_647;
const RETRY_BASE_MS = 5_000;
const RETRY_MAX_MS = 10 * 60_000;
/**
 * How long a job armed but not found in the store may still be committing before it is taken for
 * a batch that failed: longer than the slowest commit (cluster mode appends to JetStream first,
 * with a publish time-out of up to 10 s and retries).
 */
const UNCOMMITTED_GRACE_MS = 30_000;
/** How soon a job found armed but not yet committed is looked at again (real time). */
const RECHECK_MS = 100;

export interface ScheduledJob<P = Record<string, unknown>> {
  id: string;
  tenant: string;
  /** Which handler runs it, e.g. `reservation.reminder`. */
  kind: string;
  /** Epoch milliseconds. */
  dueAt: number;
  payload: P;
  createdAt: number;
}

export type JobHandler = (job: ScheduledJob) => Promise<void>;

/** Where the scheduling code lives: an actor's batch and tenant. */
export interface JobWriter {
  readonly store: Store;
  readonly tenant: string;
  readonly batch: WriteBatch;
  readonly clock?: Clock;
}

/** A writer that also arms what it schedules: an actor's context, whose ports hold the node's scheduler. */
export interface JobScheduler extends JobWriter {
  readonly services: { readonly scheduler: Scheduler };
}

/**
 * Adds a job to `w.batch` and arms it on the node's scheduler (`w.services.scheduler`). Returns the job; keep its
 * id on the record that owns it, so a later change can cancel it and a stale firing is recognised.
 */
export function scheduleJob<P extends Record<string, unknown>>(
  w: JobScheduler,
  kind: string,
  dueAt: number,
  payload: P,
  id: string = newId((w.clock ?? systemClock).now()),
): ScheduledJob<P> {
  const job: ScheduledJob<P> = { id, tenant: w.tenant, kind, dueAt, payload, createdAt: (w.clock ?? systemClock).now() };
  w.batch.putKv(w.tenant, SCHEDULER_NS, id, job);
  w.services.scheduler.arm(job as ScheduledJob);
  return job;
}

/**
 * Removes a job in `w.batch` (cancelled, or done: call it in the batch that carries its effect).
 * The armed copy is dropped when it comes due and the store no longer has it; until the batch
 * commits the job stays armed, so a batch that fails loses nothing.
 */
export function completeJob(w: JobWriter, jobId: string): void {
  w.batch.deleteKv(w.tenant, SCHEDULER_NS, jobId);
}

export const cancelJob = completeJob;

export interface SchedulerOptions {
  store: Store;
  clock?: Clock;
  logger?: Logger;
  /**
   * Cluster mode: whether this node serves `tenant` now. A node's store holds only the tenants it
   * serves (the commit log), so the jobs of any other are the owner's: never run here (the owner
   * arms them when it takes the tenant, armTenant). Absent: every tenant is served here.
   */
  serves?: (tenant: string) => boolean;
}

export class Scheduler {
  private readonly store: Store;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly serves: (tenant: string) => boolean;
  private readonly handlers = new Map<string, JobHandler>();
  /** Armed jobs by `tenant\0id`. */
  private readonly jobs = new Map<string, ScheduledJob>();
  /** Jobs being handled now: never handed out twice at once. */
  private readonly running = new Map<string, Promise<void>>();
  private readonly attempts = new Map<string, number>();
  /** A retry time per job after a failed run (not persisted: a restart retries at once). */
  private readonly retryAt = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private recheck: NodeJS.Timeout | undefined;
  /** Armed jobs not in the store yet (their batch is committing): left to the recheck timer. */
  private readonly awaitingCommit = new Set<string>();
  private timerAt = Infinity;
  private started = false;
  private stopped = false;

  constructor(opts: SchedulerOptions) {
    this.store = opts.store;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger ?? silentLogger;
    this.serves = opts.serves ?? (() => true);
  }

  /** Registers the handler of a job kind; jobs of that kind already armed become runnable. */
  register(kind: string, handler: JobHandler): void {
    this.handlers.set(kind, handler);
    if (this.started) this.rearm();
  }

  /** Loads every stored job of every tenant and arms the timer. Idempotent. */
  start(): void {
    if (this.started || this.stopped) return;
    this.started = true;
    let n = 0;
    for (const tenant of this.store.listOrgIds()) {
      if (!this.serves(tenant)) continue;
      for (const { value } of this.store.listKv<ScheduledJob>(tenant, SCHEDULER_NS)) {
        if (value && typeof value.dueAt === 'number') {
          this.jobs.set(keyOf(value.tenant, value.id), value);
          n++;
        }
      }
    }
    this.log.debug({ jobs: n }, 'scheduler started');
    this.rearm();
  }

  /**
   * Arms every stored job of `tenant` not armed yet: cluster mode calls it when this node takes a
   * tenant over, since jobs scheduled on the previous owner were armed only there.
   */
  armTenant(tenant: string): number {
    if (this.stopped) return 0;
    let n = 0;
    for (const { value } of this.store.listKv<ScheduledJob>(tenant, SCHEDULER_NS)) {
      if (!value || typeof value.dueAt !== 'number') continue;
      const k = keyOf(value.tenant, value.id);
      if (this.jobs.has(k)) continue;
      this.jobs.set(k, value);
      n++;
    }
    if (n > 0 && this.started) this.rearm();
    return n;
  }

  /** Arms a job in memory (its kv entry is written by `scheduleJob` in the caller's batch). */
  arm(job: ScheduledJob): void {
    if (this.stopped) return;
    this.jobs.set(keyOf(job.tenant, job.id), job);
    this.retryAt.delete(keyOf(job.tenant, job.id));
    if (this.started && this.effectiveDue(job) < this.timerAt) this.rearm();
  }

  disarm(tenant: string, id: string): void {
    const k = keyOf(tenant, id);
    this.jobs.delete(k);
    this.retryAt.delete(k);
    this.attempts.delete(k);
    this.awaitingCommit.delete(k);
  }

  /** Jobs waiting on this node (optionally of one tenant), earliest first: armed and still stored. */
  pending(tenant?: string): ScheduledJob[] {
    return [...this.jobs.values()]
      .filter((j) => (!tenant || j.tenant === tenant) && this.stored(j))
      .sort((a, b) => a.dueAt - b.dueAt);
  }

  private stored(j: ScheduledJob): boolean {
    return this.store.getKv(j.tenant, SCHEDULER_NS, j.id) !== undefined;
  }

  /**
   * Runs every job due by the clock now (and waits for them, and for jobs already running).
   * Returns how many ran successfully. Tests call it after moving a ManualClock.
   */
  async runDue(): Promise<number> {
    if (this.stopped) return 0;
    const now = this.clock.now();
    const due = [...this.jobs.entries()].filter(
      ([k, j]) => this.handlers.has(j.kind) && this.effectiveDue(j) <= now && !this.running.has(k),
    );
    due.sort((a, b) => a[1].dueAt - b[1].dueAt);
    const results = await Promise.all(due.map(([k, j]) => this.runOne(k, j)));
    await Promise.allSettled([...this.running.values()]);
    this.rearm();
    return results.filter(Boolean).length;
  }

  /** Stops the timer and waits for running jobs. Jobs left stay stored for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.recheck) clearTimeout(this.recheck);
    this.timer = undefined;
    this.recheck = undefined;
    this.timerAt = Infinity;
    await Promise.allSettled([...this.running.values()]);
    this.jobs.clear();
  }

  private effectiveDue(j: ScheduledJob): number {
    return Math.max(j.dueAt, this.retryAt.get(keyOf(j.tenant, j.id)) ?? 0);
  }

  private async runOne(k: string, job: ScheduledJob): Promise<boolean> {
    const handler = this.handlers.get(job.kind);
    if (!handler || this.stopped) return false;
    // A tenant this node no longer serves: its store here is stale, the new owner runs the job.
    if (!this.serves(job.tenant)) {
      this.disarm(job.tenant, job.id);
      return false;
    }
    if (!this.stored(job)) {
      // Completed or cancelled by a committed batch, or one armed a moment ago whose batch is
      // still committing: within UNCOMMITTED_GRACE_MS the check is repeated on a real-time timer
      // (not pushed back on the job's clock, so a run just before the commit never delays it).
      if (this.clock.now() - job.createdAt < UNCOMMITTED_GRACE_MS) {
        this.awaitingCommit.add(k);
        this.recheckSoon();
        return false;
      }
      this.disarm(job.tenant, job.id);
      return false;
    }
    this.awaitingCommit.delete(k);
    let ok = false;
    const p = (async () => {
      try {
        await handler(job);
        ok = true;
        // The handler removed the kv entry in its batch; forget it here unless it was re-armed
        // under the same id meanwhile.
        if (this.jobs.get(k) === job) this.jobs.delete(k);
        this.attempts.delete(k);
        this.retryAt.delete(k);
      } catch (err) {
        const n = (this.attempts.get(k) ?? 0) + 1;
        this.attempts.set(k, n);
        const wait = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.min(n - 1, 10));
        this.retryAt.set(k, this.clock.now() + wait);
        this.log.warn({ err, job: job.id, kind: job.kind, tenant: job.tenant, attempt: n }, 'scheduled job failed; will retry');
      }
    })();
    this.running.set(k, p);
    try {
      await p;
    } finally {
      this.running.delete(k);
    }
    return ok;
  }

  private recheckSoon(): void {
    if (this.recheck || this.stopped) return;
    this.recheck = setTimeout(() => {
      this.recheck = undefined;
      this.awaitingCommit.clear();
      void this.runDue().catch((err) => this.log.error({ err }, 'scheduler run failed'));
    }, RECHECK_MS);
    this.recheck.unref();
  }

  private rearm(): void {
    if (!this.started || this.stopped) return;
    let next = Infinity;
    for (const [k, j] of this.jobs) {
      if (!this.handlers.has(j.kind) || this.running.has(k) || this.awaitingCommit.has(k)) continue;
      const at = this.effectiveDue(j);
      if (at < next) next = at;
    }
    if (next === this.timerAt && this.timer) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    this.timerAt = next;
    if (next === Infinity) return;
    const delay = Math.min(MAX_DELAY_MS, Math.max(0, next - this.clock.now()));
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.timerAt = Infinity;
      void this.runDue().catch((err) => this.log.error({ err }, 'scheduler run failed'));
    }, delay);
    this.timer.unref();
  }
}

function keyOf(tenant: string, id: string): string {
  return `${tenant}\u0000${id}`;
}
