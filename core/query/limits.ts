// Bounds on what one operator of a client query may build. Time and heap are bounded by the query
// pool (core/query/pool.ts); these stop the allocations that neither bound can: V8 ends the whole
// process, worker threads included, when one array grows past its maximum size or one allocation
// cannot fit the heap, so no operator may build an array or string without a cap.
export interface QueryLimits {
  /** Elements one `$range` may produce. */
  maxRange: number;
  /** Elements of any array an operator produces (`$concatArrays`, `$split`, `$map`, ...). */
  maxArray: number;
  /** Characters of any string an operator produces (`$concat`, `$replaceAll`, ...). */
  maxString: number;
  /** Characters of a client regex pattern. */
  maxRegexLength: number;
  /** Documents any one aggregation stage may pass on (`$unwind`, `$sample`, `$bucketAuto`, ...). */
  maxStageDocuments: number;
}

export const DEFAULT_QUERY_LIMITS: Readonly<QueryLimits> = Object.freeze({
  maxRange: 10_000,
  maxArray: 100_000,
  maxString: 1_000_000,
  maxRegexLength: 1_000,
  maxStageDocuments: 1_000_000,
});

let current: Readonly<QueryLimits> = DEFAULT_QUERY_LIMITS;

/** The limits in force in this thread (set once at start-up: by the app, and in each query worker). */
export function queryLimits(): Readonly<QueryLimits> {
  return current;
}

export function setQueryLimits(limits: Partial<QueryLimits>): void {
  current = Object.freeze({ ...DEFAULT_QUERY_LIMITS, ...limits });
}
