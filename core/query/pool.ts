// The query pool: a few worker threads that run every client-supplied filter, sort, projection and
// aggregation off the event loop, each under a budget (MongoDB's maxTimeMS, PostgreSQL's
// statement_timeout). A job over its time limit, or whose worker runs out of heap, ends that
// worker (a replacement starts) and answers 400 ERR_QUERY_BUDGET naming the limit; the event loop
// and every other query go on.
//
// Fairness: one tenant holds at most `tenantWorkers` workers at once (default half the pool), so a
// tenant sending slow queries occupies its share and queues behind itself while other tenants'
// queries run on the rest. Queues are bounded per tenant and in all; a full queue answers 503 with
// Retry-After. The time limit counts from when a worker starts the job, not from enqueueing.
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

interface Slot {
  worker?: Worker;
  ready: boolean;
  /** Undecodable records its worker had reported. */
  unreadable: number;
  busy?: Job;
  timer?: NodeJS.Timeout;
}

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
  private readonly queue: Job[] = [];
  private readonly running = new Map<string, number>();
  private readonly waiting = new Map<string, number>();
  private readonly tenantWorkers: number;
  private nextId = 1;
  private started = false;
  private closed = false;
  /** Jobs ended by their budget since start (for logs and tests). */
  stopped = 0;
  /** Jobs handed to a worker since start. */
  dispatched = 0;
  /** Workers ended by force at close (they neither closed nor started in time). */
  forcedAtClose = 0;

  constructor(private readonly opts: QueryPoolOptions) {
    const n = Math.max(1, Math.floor(opts.workers));
    this.slots = Array.from({ length: n }, () => ({ ready: false, unreadable: 0 }));
    this.tenantWorkers = Math.max(1, Math.min(n, opts.tenantWorkers ?? Math.floor(n / 2)));
  }

  /** Runs `job` (a job module's URL) on `input` for `tenant` in a worker; resolves its plain result. */
  run<T>(tenant: string, job: string | URL, input: unknown): Promise<T> {
    if (this.closed) return Promise.reject(new AppError('ERR_UNAVAILABLE', ['the query pool is closed']));
    const tenantWaiting = this.waiting.get(tenant) ?? 0;
    if (this.queue.length >= this.opts.queueMax || tenantWaiting >= this.opts.tenantQueueMax) {
      const which = tenantWaiting >= this.opts.tenantQueueMax
        ? `this organisation already has ${tenantWaiting} queries waiting (QUERY_TENANT_QUEUE_MAX)`
        : `${this.queue.length} queries are waiting (QUERY_QUEUE_MAX)`;
      return Promise.reject(
        new AppError('ERR_UNAVAILABLE', [`the query workers are busy: ${which}; retry shortly`], { headers: { 'retry-after': '1' } }),
      );
    }
    if (!this.started) this.start();
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ id: this.nextId++, tenant, job: String(job), input, resolve: resolve as (v: unknown) => void, reject });
      this.waiting.set(tenant, tenantWaiting + 1);
      this.dispatch();
    });
  }

  /** Workers currently alive (tests check that close leaves none). */
  get liveWorkers(): number {
    return this.slots.filter((s) => s.worker).length;
  }

  /** Workers started and idle or working (not starting). */
  get readyWorkers(): number {
    return this.slots.filter((s) => s.worker && s.ready).length;
  }

  private start(): void {
    this.started = true;
    for (const slot of this.slots) this.spawn(slot);
  }

  private spawn(slot: Slot): void {
    const { entry, eval: isEval } = workerEntry();
    const heap = Math.max(16, Math.floor(this.opts.heapMb));
    const worker = new Worker(entry, {
      eval: isEval,
      workerData: this.opts.init,
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
        this.dispatch();
        return;
      }
      if (m.unreadable !== undefined && m.unreadable > slot.unreadable) {
        this.opts.onUnreadable?.(m.unreadable - slot.unreadable);
        slot.unreadable = m.unreadable;
      }
      const job = slot.busy;
      if (!job || job.id !== m.id) return;
      this.finish(slot);
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
        this.finish(slot);
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
    });
  }

  /** The slot's job is over: its timer, its tenant's share. */
  private finish(slot: Slot): void {
    const job = slot.busy;
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = undefined;
    slot.busy = undefined;
    if (job) {
      const n = (this.running.get(job.tenant) ?? 1) - 1;
      if (n > 0) this.running.set(job.tenant, n);
      else this.running.delete(job.tenant);
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
        for (const job of this.queue.splice(0)) {
          job.reject(new AppError('ERR_UNAVAILABLE', ['the query workers could not start; retry shortly'], { headers: { 'retry-after': '1' } }));
        }
        this.waiting.clear();
      }
      return;
    }
    this.spawn(slot);
  }

  private readyOnce = false;

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.queue.length === 0) return;
      if (!slot.worker || !slot.ready || slot.busy) continue;
      const i = this.queue.findIndex((j) => (this.running.get(j.tenant) ?? 0) < this.tenantWorkers);
      if (i === -1) return;
      const [job] = this.queue.splice(i, 1);
      const w = (this.waiting.get(job.tenant) ?? 1) - 1;
      if (w > 0) this.waiting.set(job.tenant, w);
      else this.waiting.delete(job.tenant);
      this.running.set(job.tenant, (this.running.get(job.tenant) ?? 0) + 1);
      slot.busy = job;
      this.dispatched++;
      const worker = slot.worker;
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
    this.finish(slot);
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
    for (const job of this.queue.splice(0)) job.reject(new AppError('ERR_UNAVAILABLE', ['the server is shutting down']));
    this.waiting.clear();
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

/** The node's pool as configured (`query` in config/default.json), over the store at `config.dataDir`. */
export function createQueryPool(config: Config, logger?: Logger, onUnreadable?: (n: number) => void): QueryPool {
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
    queueMax: q.queueMax,
    tenantQueueMax: q.tenantQueueMax,
    init: {
      store: { path: config.dataDir, mapSizeGiB: config.store.mapSizeGiB, limits: { defaultPageSize: config.store.defaultPageSize, maxPageSize: config.store.maxPageSize } },
      limits,
      maxResultBytes: q.maxResultBytes,
      logLevel: config.logLevel,
    },
    logger,
    onUnreadable,
  });
}
