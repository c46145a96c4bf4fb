// What the query pool and its workers say to each other, and what a job module provides.
import type { WireError } from '../errors.js';
import type { PageLimits } from '../store/query.js';
import type { Store } from '../store/store.js';
import type { QueryLimits } from './limits.js';

/** Given to every worker at start (workerData). */
export interface WorkerInit {
  /** `tenantEnvs`: a cluster node's layout, each tenant in an environment of its own (core/cluster/tenant-envs.ts). */
  store: { path: string; mapSizeGiB: number; limits: PageLimits; tenantEnvs?: boolean };
  limits: QueryLimits;
  /** Largest answer a job may return, as JSON bytes (estimated). */
  maxResultBytes: number;
  /** Level of the worker's own log (the store reports undecodable records there). */
  logLevel?: string;
  /** Job modules (URLs) the worker loads before it says it is ready, so no query waits for them. */
  preload?: string[];
}

export interface JobContext {
  /** The node's store, opened in this worker: reads only. */
  readonly store: Store;
}

/**
 * A job module exports `run`: it runs in a worker thread, reads the store, and returns plain data
 * (structured-cloneable). Errors it throws as AppError reach the caller as they are.
 */
export type QueryJob<I = unknown, O = unknown> = (ctx: JobContext, input: I) => O | Promise<O>;

export interface JobMessage {
  id: number;
  /** URL of the job module. */
  job: string;
  input: unknown;
}

/** Every reply also carries how many undecodable records this worker's store has met so far. */
export type JobReply = ({ id: number; ok: true; value: unknown } | { id: number; ok: false; error: WireError; detail?: string }) & {
  unreadable?: number;
};
