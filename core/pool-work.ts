// Work this process hands to libuv's thread pool besides the store's, taking turns. The pool has
// UV_THREADPOOL_SIZE threads (4 by default) and LMDB's commits run on them too, so a few long jobs
// there hold every organisation's writes. Measured with 200 single-append commits on a real store:
//   - four scrypt password checks at once (~50 ms each; a sign-in needs no credentials, and an
//     unknown account is hashed all the same) took a commit's median from 0.3 to 13 ms, eight to
//     61 ms;
//   - four media files stored at once (25 MB written and synced) took it to 10 ms, p99 39 ms.
// At most `concurrency` such jobs run at once and `queueMax` wait; past that a request answers 503
// with Retry-After. Kept below the pool's size, this work always leaves threads to the store. One
// at a time by default: with two, four concurrent file stores still held the commit median at 3 ms
// (the disk flushes the files ahead of LMDB's), with one 0.5 ms; and eight password checks left a
// commit's p99 at ~8 ms with two at a time, 4 ms with one (two cores).
import { AppError } from './errors.js';

export interface PoolWorkBudget {
  concurrency: number;
  queueMax: number;
}

export const DEFAULT_POOL_WORK: PoolWorkBudget = { concurrency: 1, queueMax: 200 };

let budget: PoolWorkBudget = DEFAULT_POOL_WORK;
let running = 0;
const waiting: Array<() => void> = [];

/** Sets the process's budget (POOL_WORK_CONCURRENCY, POOL_WORK_QUEUE_MAX). */
export function configurePoolWork(b: PoolWorkBudget): void {
  budget = { concurrency: Math.max(1, b.concurrency), queueMax: Math.max(0, b.queueMax) };
}

/** Jobs running and waiting now (tests). */
export function poolWork(): { running: number; waiting: number } {
  return { running, waiting: waiting.length };
}

/**
 * Runs `work` (which puts one long job on the thread pool: a hash, a file write or sync) in its
 * turn. `what` names it in the 503 when no turn is free and the queue is full.
 */
export async function inPoolTurn<T>(what: string, work: () => Promise<T>): Promise<T> {
  if (running < budget.concurrency) running++;
  else if (waiting.length >= budget.queueMax) {
    throw new AppError('ERR_UNAVAILABLE', [`${what} must wait for the server's thread pool, and ${waiting.length} jobs already wait (POOL_WORK_QUEUE_MAX); retry shortly`], {
      headers: { 'retry-after': '1' },
    });
  } else {
    // A finishing job hands its turn over: `running` stays as it is.
    await new Promise<void>((r) => waiting.push(r));
  }
  try {
    return await work();
  } finally {
    const next = waiting.shift();
    if (next) next();
    else running--;
  }
}
