// One query worker thread (see pool.ts). It opens the node's LMDB environment itself (lmdb-js
// shares one environment between the threads of a process; a cluster node's tenants each in their
// own, looked up again for every job: core/cluster/tenant-envs.ts), then runs one job at a time: a
// job module, named by URL in each message and imported once, gets the store and the job's input
// and returns plain data. Every job reads a fresh snapshot, so a read sent after a write's reply sees it.
import { parentPort, workerData } from 'node:worker_threads';
import { AppError, appError, toWire } from '../errors.js';
import { createLogger, type Logger } from '../log.js';
import { TenantEnvs } from '../cluster/tenant-envs.js';
import { LmdbStore } from '../store/lmdb-store.js';
import { setQueryLimits } from './limits.js';
import type { JobContext, JobMessage, JobReply, QueryJob, WorkerInit } from './protocol.js';
import { assertResultSize } from './result-size.js';

const init = workerData as WorkerInit;
setQueryLimits(init.limits);
const logger: Logger = createLogger(init.logLevel ?? 'info');
const own = new LmdbStore({ path: init.store.path, mapSizeGiB: init.store.mapSizeGiB, limits: init.store.limits, logger });
const store = init.store.tenantEnvs ? await TenantEnvs.open({ dataDir: init.store.path, platform: own, env: { limits: init.store.limits, logger }, follow: true }) : own;
/** Undecodable records this worker's store has met (the main thread adds them to the node's count). */
const unreadable = () => store.unreadableRecords();
const ctx: JobContext = { store };
const jobs = new Map<string, Promise<QueryJob>>();
const port = parentPort!;

/**
 * lmdb-js keeps a read transaction until a timer of its own resets it, and the next job may
 * arrive before that timer runs: reset it, so the job reads what is committed now.
 */
function freshReads(s: LmdbStore | TenantEnvs): void {
  s.resetReadTxn();
}

function load(url: string): Promise<QueryJob> {
  let job = jobs.get(url);
  if (!job) {
    job = import(url).then((m: { run?: QueryJob }) => {
      if (typeof m.run !== 'function') throw new Error(`query job ${url} exports no run()`);
      return m.run;
    });
    jobs.set(url, job);
  }
  return job;
}

async function handle(m: JobMessage): Promise<JobReply> {
  try {
    const run = await load(m.job);
    freshReads(store);
    const value = await run(ctx, m.input);
    assertResultSize(value, init.maxResultBytes);
    return { id: m.id, ok: true, value };
  } catch (err) {
    if (err instanceof AppError) return { id: m.id, ok: false, error: toWire(err) };
    // A stack overflow is the query's depth, not the node's fault.
    if (err instanceof RangeError) {
      return { id: m.id, ok: false, error: toWire(appError('ERR_QUERY_BUDGET', `the query could not be run: ${err.message}; simplify it`)) };
    }
    return { id: m.id, ok: false, error: toWire(err), detail: err instanceof Error ? (err.stack ?? err.message) : String(err) };
  }
}

port.on('message', (m: JobMessage | { close: true }) => {
  if ('close' in m) {
    void store.close().finally(() => port.close());
    return;
  }
  void handle(m).then((reply) => {
    reply.unreadable = unreadable();
    try {
      port.postMessage(reply);
    } catch (err) {
      // A value that cannot be cloned (a function, a symbol): answer the error instead.
      port.postMessage({ id: m.id, ok: false, error: toWire(err), detail: String(err) } satisfies JobReply);
    }
  });
});
// Ready once the job modules the pool named are loaded: the first query of each kind would
// otherwise wait for its module graph to load (hundreds of ms under tsx).
void Promise.all(
  (init.preload ?? []).map((url) =>
    load(url).catch((err: unknown) => {
      // Left to fail the jobs that name it, each with the error.
      jobs.delete(url);
      logger.error({ err, job: url }, 'a query job module could not be loaded');
    }),
  ),
).then(() => port.postMessage({ ready: true }));
