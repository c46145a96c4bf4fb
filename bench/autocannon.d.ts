// autocannon ships no types: this declares the part of its programmatic API the harness uses.
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    stddev: number;
    min: number;
    max: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }

  interface Options {
    url: string;
    method?: string;
    body?: string | Buffer;
    headers?: Record<string, string>;
    connections?: number;
    pipelining?: number;
    /** Seconds. */
    duration?: number;
    /** Seconds to wait for one response. */
    timeout?: number;
    /** Requests to send in all, instead of a duration. */
    amount?: number;
    title?: string;
  }

  interface Result {
    requests: Histogram;
    /** Milliseconds. */
    latency: Histogram;
    throughput: Histogram;
    duration: number;
    errors: number;
    timeouts: number;
    non2xx: number;
    mismatches: number;
    /** Answers by status class. */
    '2xx': number;
  }

  interface Instance extends PromiseLike<Result> {
    stop(): void;
  }

  function autocannon(opts: Options): Instance;
  namespace autocannon {
    export type { Histogram, Instance, Options, Result };
  }
  export = autocannon;
}
