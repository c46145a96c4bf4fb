// The query pool: a few worker threads that run every client-supplied filter, sort, projection and
// aggregation off the event loop, each under a budget (MongoDB's maxTimeMS, PostgreSQL's
// statement_timeout). A job over its time limit, or whose worker runs out of heap, ends that
// worker (a replacement starts) and answers 400 ERR_QUERY_BUDGET naming the limit; the event loop
// and every other query go on.
//
// Fairness: jobs wait per tenant, and a free worker takes the next job of the tenant that has used
// the least worker time lately (decayed, the time of its running jobs included), not the job that
// came first: a tenant sending slow queries falls behind every tenant sending quick ones. A tenant
// whose query ran into the budget is slow for a while (`slowTenantMs`): its jobs go behind every
// other tenant's. Tenants not known to be quick (slow ones, and ones none of whose queries has
// answered yet) together hold at most all workers but one and never take the last idle started
// worker, so a quick tenant's query finds a worker at once however many slow ones wait, and a new
// tenant's waits for at most one running job (itself at most the time limit). One tenant holds at
// most `tenantWorkers` workers at once. Queues are bounded per tenant and in all; a
// full queue answers 503 with Retry-After, shedding the newest job of the tenant that has used the
// most before refusing one of a tenant that has used less.
//
// Workers start with the pool, with their job modules loaded (`warm` says when all have), and a
// `spares` few more than may run at once: a worker ended by the budget is replaced by one already
// started, so the next job does not wait for a thread to start (0.5 to 1 s).
//
// What a job does is not known here: the caller names a job module by URL (see protocol.ts).
import { Worker } from 'node:worker_threads';
import type { Config } from '../config.js';
import { AppError, fromWire } from '../errors.js';
import type { Logger } from '../log.js';
import { setQueryLimits, type QueryLimits } from './limits.js';
import type { JobMessage, JobReply, WorkerInit } from './protocol.js';

/** What routes see of the pool. */
export interface QueryRunner {
  run<T>(tenant: string, job: string | URL, input: unknown): Promise<T>;
}

export interface QueryPoolOptions {
  /** Worker threads (QUERY_WORKERS). */
  workers: number;
  /** Per-job time limit in ms (QUERY_TIMEOUT_MS). */
  timeoutMs: number;
  /** Old-generation heap of each worker in MiB (QUERY_WORKER_HEAP_MB). */
  heapMb: number;
  /** Workers one tenant may hold at once (QUERY_TENANT_WORKERS); default half the pool, at least 1. */
  tenantWorkers?: number;
  /** Workers kept started beyond `workers`, idle, to take over at once from one ended (QUERY_SPARE_WORKERS); default 1. */
  spares?: number;
  /** How long a tenant whose query ran into the budget goes behind the others, in ms (QUERY_SLOW_TENANT_MS); default 60 s. */
  slowTenantMs?: number;
  /** Job modules each worker loads before it says it is ready (their URLs). */
  preload?: ReadonlyArray<string | URL>;
  /** Jobs waiting, all tenants (QUERY_QUEUE_MAX). */
  queueMax: number;
  /** Jobs waiting of one tenant (QUERY_TENANT_QUEUE_MAX). */
  tenantQueueMax: number;
  /** What every worker is started with. */
  init: WorkerInit;
  logger?: Logger;
  /** Told of undecodable records the workers' stores met (the node counts them for /metrics). */
  onUnreadable?(n: number): void;
}

interface Job {
  id: number;
  tenant: string;
  job: string;
  input: unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/** A tenant's place in the pool: its waiting jobs and what it has used. */
interface Tenant {
  name: string;
  waiting: Job[];
  running: number;
  /** Sum of the start times of its running jobs: their time so far counts as used. */
  runningSince: number;
  /** Worker time used (ms), decayed to `usedAt`. */
  usedMs: number;
  usedAt: number;
  /** Until when its queries go behind the others' (it ran into the budget). */
  slowUntil: number;
  /** A job of it has answered within the budget since it last ran into it. */
  proven: boolean;
}

interface Slot {
  worker?: Worker;
  ready: boolean;
  /** Undecodable records its worker had reported. */
  unreadable: number;
  busy?: Job;
  startedAt: number;
  timer?: NodeJS.Timeout;
}

/** Worker time used counts half after this long: what a tenant used a minute ago barely counts. */
const USAGE_HALF_LIFE_MS = 10_000;
/** Tenant entries kept before idle ones are forgotten. */
const TENANTS_KEPT = 1_000;

/** The worker entry beside this module: worker.ts under tsx (tests), worker.js when built. */
function workerEntry(): { entry: string | URL; eval: boolean } {
  const here = import.meta.url;
  if (!here.endsWith('.ts')) return { entry: new URL('./worker.js', here), eval: false };
  // Node 20 does not apply the parent's --import loaders to a worker's entry: register tsx in
  // the worker first, then load the TypeScript entry.
  const tsx = import.meta.resolve('tsx/esm/api');
  const url = new URL('./worker.ts', here).href;
  const boot = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(url)}); })`;
  return { entry: boot, eval: true };
}

export class QueryPool implements QueryRunner {
  private readonly slots: Slot[];
  private readonly tenants = new Map<string, Tenant>();
  /** Jobs that may run at once (`workers`); the slots beyond are spares. */
  private readonly capacity: number;
  private readonly tenantWorkers: number;
  /** Workers tenants not known to be quick may hold together: all but one, kept for quick queries. */
  private readonly sharedWorkers: number;
  private readonly slowTenantMs: number;
  private readonly init: WorkerInit;
  private queued = 0;
  private busy = 0;
  private nextId = 1;
  private started = false;
  private closed = false;
  private readyOnce = false;
  private warmed = false;
  private readonly warmWaiters: Array<() => void> = [];
  /** Jobs ended by their budget since start (for logs and tests). */
  stopped = 0;
  /** Jobs handed to a worker since start. */
  dispatched = 0;
  /** Workers ended by force at close (they neither closed nor started in time). */
  forcedAtClose = 0;

  constructor(private readonly opts: QueryPoolOptions) {
    const n = Math.max(1, Math.floor(opts.workers));
    const spares = Math.max(0, Math.floor(opts.spares ?? 1));
    this.capacity = n;
    this.slots = Array.from({ length: n + spares }, () => ({ ready: false, unreadable: 0, startedAt: 0 }));
    this.tenantWorkers = Math.max(1, Math.min(n, opts.tenantWorkers ?? Math.floor(n / 2)));
    this.sharedWorkers = Math.max(1, n - 1);
    this.slowTenantMs = Math.max(0, opts.slowTenantMs ?? 60_000);
    this.init = { ...opts.init, preload: (opts.preload ?? []).map(String) };
  }

  /** Runs `job` (a job module's URL) on `input` for `tenant` in a worker; resolves its plain result. */
  run<T>(tenant: string, job: string | URL, input: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new AppError('ERR_UNAVAILABLE', ['the query pool is closed']));
    const now = Date.now();
    const t = this.tenant(tenant, now);
    if (t.waiting.length >= this.opts.tenantQueueMax) {
      return Promise.reject(busyError(`this organisation already has ${t.waiting.length} queries waiting (QUERY_TENANT_QUEUE_MAX)`));
    }
    if (this.queued >= this.opts.queueMax && !this.shedFor(t, now)) {
      return Promise.reject(busyError(`${this.queued} queries are waiting (QUERY_QUEUE_MAX)`));
    }
    if (!this.started) this.start();
    return new Promise<T>((resolve, reject) => {
      t.waiting.push({ id: this.nextId++, tenant, job: String(job), input, resolve: resolve as (v: unknown) => void, reject });
      this.queued++;
      this.dispatch();
    });
  }

  /** Starts every worker (the first query does, if nothing has). */
  start(): void {
    if (this.started || this.closed) return;
    this.started = true;
    for (const slot of this.slots) this.spawn(slot);
  }

  /** Every worker has started once, its job modules loaded: a query need not wait for one. */
  get warm(): boolean {
    return this.warmed;
  }

  /** Resolves once the pool is warm (starting it if nothing has), closed, or none of its workers could start. */
  whenWarm(): Promise<void> {
    this.start();
    if (this.warmed) return Promise.resolve();
    return new Promise((resolve) => this.warmWaiters.push(resolve));
  }

  /** Workers currently alive (tests check that close leaves none). */
  get liveWorkers(): number {
    return this.slots.filter((s) => s.worker).length;
  }

  /** Workers started and idle or working (not starting). */
  get readyWorkers(): number {
    return this.slots.filter((s) => s.worker && s.ready).length;
  }

  /** Worker time a tenant has used lately, in ms (decayed; its running jobs' time so far included). */
  usedMs(tenant: string, now = Date.now()): number {
    const t = this.tenants.get(tenant);
    return t ? charge(t, now) : 0;
  }

  /** Whether a tenant is behind the others for having run into the budget. */
  isSlow(tenant: string, now = Date.now()): boolean {
    const t = this.tenants.get(tenant);
    return t !== undefined && t.slowUntil > now;
  }

  private tenant(name: string, now: number): Tenant {
    let t = this.tenants.get(name);
    if (!t) {
      if (this.tenants.size >= TENANTS_KEPT) this.forgetIdle(now);
      t = { name, waiting: [], running: 0, runningSince: 0, usedMs: 0, usedAt: now, slowUntil: 0, proven: false };
      this.tenants.set(name, t);
    }
    return t;
  }

  /** Drops tenants with nothing waiting or running whose use has decayed away and who are not slow. */
  private forgetIdle(now: number): void {
    for (const [name, t] of this.tenants) {
      if (t.waiting.length === 0 && t.running === 0 && t.slowUntil <= now && charge(t, now) < 1) this.tenants.delete(name);
    }
  }

  /**
   * The queue is full: makes room for `t` by answering 503 to the newest waiting job of the tenant
   * that ranks last, if that is not `t` itself. Says whether it did.
   */
  private shedFor(t: Tenant, now: number): boolean {
    let last: Tenant | undefined;
    for (const o of this.tenants.values()) {
      if (o.waiting.length > 0 && (!last || this.before(last, o, now))) last = o;
    }
    if (!last || last === t || !this.before(t, last, now)) return false;
    const job = last.waiting.pop()!;
    this.queued--;
    job.reject(busyError(`${this.queued + 1} queries are waiting (QUERY_QUEUE_MAX) and this organisation has used more of the workers lately than others`));
    return true;
  }

  /** Whether tenant `a`'s next job goes before `b`'s. */
  private before(a: Tenant, b: Tenant, now: number): boolean {
    const slowA = a.slowUntil > now;
    const slowB = b.slowUntil > now;
    if (slowA !== slowB) return slowB;
    const ca = charge(a, now);
    const cb = charge(b, now);
    if (ca !== cb) return ca < cb;
    // Neither has used anything lately: the one asking for less first, then the earlier.
    if (a.waiting.length !== b.waiting.length) return a.waiting.length < b.waiting.length;
    return (a.waiting[0]?.id ?? Infinity) < (b.waiting[0]?.id ?? Infinity);
  }

  private spawn(slot: Slot): void {
    const { entry, eval: isEval } = workerEntry();
    const heap = Math.max(16, Math.floor(this.opts.heapMb));
    const worker = new Worker(entry, {
      eval: isEval,
      workerData: this.init,
      resourceLimits: { maxOldGenerationSizeMb: heap, maxYoungGenerationSizeMb: Math.min(64, Math.max(4, Math.floor(heap / 8))) },
    });
    worker.unref();
    slot.worker = worker;
    slot.ready = false;
    slot.unreadable = 0;
    worker.on('message', (m: JobReply | { ready: true }) => {
      if (slot.worker !== worker) return;
      if ('ready' in m) {
        slot.ready = true;
        if (!this.readyOnce) {
          this.readyOnce = true;
          // Slots whose first worker failed while this one started get another try.
          for (const s of this.slots) if (!s.worker && !this.closed) this.spawn(s);
        }
        if (!this.warmed && this.slots.every((s) => s.ready)) {
          this.warmed = true;
          for (const resolve of this.warmWaiters.splice(0)) resolve();
        }
        this.dispatch();
        return;
      }
      if (m.unreadable !== undefined && m.unreadable > slot.unreadable) {
        this.opts.onUnreadable?.(m.unreadable - slot.unreadable);
        slot.unreadable = m.unreadable;
      }
      const job = slot.busy;
      if (!job || job.id !== m.id) return;
      this.finish(slot, 'answered');
      if (m.ok) job.resolve(m.value);
      else {
        if (m.detail) this.opts.logger?.error({ err: m.detail, tenant: job.tenant }, 'query job failed');
        job.reject(fromWire(m.error));
      }
      this.dispatch();
    });
    worker.on('error', (err: Error & { code?: string }) => {
      if (slot.worker !== worker) return;
      const job = slot.busy;
      const oom = err.code === 'ERR_WORKER_OUT_OF_MEMORY';
      if (job) {
        this.finish(slot, oom ? 'over-budget' : 'failed');
        if (oom) {
          this.stopped++;
          job.reject(
            new AppError('ERR_QUERY_BUDGET', [
              `the query needed more than the ${this.opts.heapMb} MiB of memory a query may use (QUERY_WORKER_HEAP_MB) and was stopped; ` +
                'narrow the filter, filter on an indexed field, or add $limit',
            ]),
          );
        } else {
          this.opts.logger?.error({ err, tenant: job.tenant }, 'query worker failed');
          job.reject(new AppError('ERR_INTERNAL'));
        }
      } else if (!slot.ready) {
        this.opts.logger?.error({ err }, 'a query worker could not start');
      }
      this.replace(slot, worker);
      this.dispatch();
    });
    worker.on('exit', () => {
      if (slot.worker !== worker) return;
      // Ended without an error event (closed its port): answer its job, start another.
      const job = slot.busy;
      if (job) {
        this.finish(slot);
        job.reject(new AppError('ERR_INTERNAL'));
      }
      this.replace(slot, worker);
      this.dispatch();
    });
  }

  /** The slot's job is over: its timer, its tenant's share and the worker time it used. */
  private finish(slot: Slot, outcome: 'answered' | 'over-budget' | 'failed' = 'failed'): void {
    const job = slot.busy;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.busy = undefined;
    if (!job) return;
    const now = Date.now();
    this.busy--;
    const t = this.tenant(job.tenant, now);
    decay(t, now);
    t.usedMs += now - slot.startedAt;
    t.running--;
    t.runningSince -= slot.startedAt;
    if (outcome === 'answered') t.proven = true;
    else if (outcome === 'over-budget') {
      t.slowUntil = now + this.slowTenantMs;
      t.proven = false;
    }
  }

  private replace(slot: Slot, worker: Worker): void {
    if (slot.worker === worker) slot.worker = undefined;
    slot.ready = false;
    void worker.terminate();
    if (this.closed) return;
    // Until one worker has started, a failure is the set-up's (a missing file, a bad path) and
    // would repeat at once: leave the slot empty, and when none is left answer the waiting jobs;
    // the next query tries again.
    if (!this.readyOnce) {
      if (this.slots.every((s) => !s.worker)) {
        this.started = false;
        for (const resolve of this.warmWaiters.splice(0)) resolve();
        for (const t of this.tenants.values()) {
          for (const job of t.waiting.splice(0)) {
            job.reject(new AppError('ERR_UNAVAILABLE', ['the query workers could not start; retry shortly'], { headers: { 'retry-after': '1' } }));
          }
        }
        this.queued = 0;
      }
      return;
    }
    // Started after the caller has handed the freed capacity on (a worker's start costs the
    // event loop a few ms before it runs on its own thread).
    setImmediate(() => {
      if (!this.closed && !slot.worker) this.spawn(slot);
    });
  }

  private dispatch(): void {
    while (this.queued > 0 && this.busy < this.capacity) {
      const slot = this.slots.find((s) => s.worker && s.ready && !s.busy);
      if (!slot) return;
      const now = Date.now();
      // Tenants not known to be quick (slow ones, and ones none of whose queries has answered
      // yet) share all workers but one, and never take the last idle started worker: a quick
      // tenant's query finds one, even while workers ended by the budget are starting again.
      let unprovenRunning = 0;
      for (const t of this.tenants.values()) if (!quick(t, now)) unprovenRunning += t.running;
      const idle = this.slots.filter((s) => s.worker && s.ready && !s.busy).length;
      const laneOpen = this.capacity === 1 || (unprovenRunning < this.sharedWorkers && idle >= 2);
      let next: Tenant | undefined;
      for (const t of this.tenants.values()) {
        if (t.waiting.length === 0 || t.running >= this.tenantWorkers) continue;
        if (!laneOpen && !quick(t, now)) continue;
        if (!next || this.before(t, next, now)) next = t;
      }
      if (!next) return;
      const job = next.waiting.shift()!;
      this.queued--;
      this.busy++;
      next.running++;
      next.runningSince += now;
      slot.busy = job;
      slot.startedAt = now;
      this.dispatched++;
      const worker = slot.worker!;
      slot.timer = setTimeout(() => this.expire(slot, worker, job), this.opts.timeoutMs);
      try {
        worker.postMessage({ id: job.id, job: job.job, input: job.input } satisfies JobMessage);
      } catch (err) {
        this.finish(slot);
        job.reject(err);
      }
    }
  }

  private expire(slot: Slot, worker: Worker, job: Job): void {
    if (slot.worker !== worker || slot.busy !== job) return;
    this.finish(slot, 'over-budget');
    this.stopped++;
    job.reject(
      new AppError('ERR_QUERY_BUDGET', [
        `the query ran longer than the time limit of ${this.opts.timeoutMs} ms (QUERY_TIMEOUT_MS) and was stopped; ` +
          'narrow the filter, filter on an indexed field, or add $limit',
      ]),
    );
    this.replace(slot, worker);
    this.dispatch();
  }

  /** Rejects waiting jobs and ends every worker (each closes its store first, briefly). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.tenants.values()) {
      for (const job of t.waiting.splice(0)) job.reject(new AppError('ERR_UNAVAILABLE', ['the server is shutting down']));
    }
    this.queued = 0;
    for (const resolve of this.warmWaiters.splice(0)) resolve();
    await Promise.all(
      this.slots.map(async (slot) => {
        const worker = slot.worker;
        if (!worker) return;
        const job = slot.busy;
        this.finish(slot);
        job?.reject(new AppError('ERR_UNAVAILABLE', ['the server is shutting down']));
        const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
        if (slot.ready) worker.postMessage({ close: true });
        else {
          // Still opening the store: terminating it now can stop lmdb-js's native open half-way,
          // and its error then has no JavaScript to go to, which aborts the whole process (seen
          // once in CI: "FATAL ERROR: Error::ThrowAsJavaScriptException napi_throw"). Let it
          // finish starting, then close it like the others.
          worker.on('message', (m: { ready?: boolean }) => {
            if (m.ready) worker.postMessage({ close: true });
          });
        }
        // A worker that neither closes nor starts in time is ended all the same.
        const timer = setTimeout(() => {
          this.forcedAtClose++;
          void worker.terminate();
        }, slot.ready ? 1000 : 10_000);
        await exited;
        clearTimeout(timer);
        slot.worker = undefined;
      }),
    );
  }
}

function busyError(why: string): AppError {
  return new AppError('ERR_UNAVAILABLE', [`the query workers are busy: ${why}; retry shortly`], { headers: { 'retry-after': '1' } });
}

/** Decays a tenant's used time to `now`. */
function decay(t: Tenant, now: number): void {
  if (now > t.usedAt) {
    t.usedMs *= Math.pow(0.5, (now - t.usedAt) / USAGE_HALF_LIFE_MS);
    t.usedAt = now;
  }
}

/** Known to answer within the budget: a query of it has, and none has run into it since. */
function quick(t: Tenant, now: number): boolean {
  return t.proven && t.slowUntil <= now;
}

/** A tenant's worker time lately: what it used, decayed, and what its running jobs have so far. */
function charge(t: Tenant, now: number): number {
  const used = now > t.usedAt ? t.usedMs * Math.pow(0.5, (now - t.usedAt) / USAGE_HALF_LIFE_MS) : t.usedMs;
  return used + (t.running * now - t.runningSince);
}

/**
 * The node's pool as configured (`query` in config/default.json), over the store at `config.dataDir`;
 * its workers load the `preload` job modules before they say they are ready.
 */
export function createQueryPool(
  config: Config,
  logger?: Logger,
  onUnreadable?: (n: number) => void,
  preload: ReadonlyArray<string | URL> = [],
): QueryPool {
  const q = config.query;
  const limits: QueryLimits = {
    maxRange: q.maxRange,
    maxArray: q.maxArray,
    maxString: q.maxString,
    maxRegexLength: q.maxRegexLength,
    maxStageDocuments: q.maxStageDocuments,
  };
  // The same bounds hold for filters that run on the event loop (our own code's).
  setQueryLimits(limits);
  return new QueryPool({
    workers: q.workers,
    timeoutMs: q.timeoutMs,
    heapMb: q.workerHeapMb,
    tenantWorkers: q.tenantWorkers ?? undefined,
    spares: q.spareWorkers,
    slowTenantMs: q.slowTenantMs,
    preload,
    queueMax: q.queueMax,
    tenantQueueMax: q.tenantQueueMax,
    init: {
      store: { path: config.dataDir, mapSizeGiB: config.store.mapSizeGiB, limits: { defaultPageSize: config.store.defaultPageSize, maxPageSize: config.store.maxPageSize }, tenantEnvs: Boolean(config.natsUrl) },
      limits,
      maxResultBytes: q.maxResultBytes,
      logLevel: config.logLevel,
    },
    logger,
    onUnreadable,
  });
}
