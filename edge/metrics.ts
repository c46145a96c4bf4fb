// Prometheus metrics, one registry per app so several servers in one process (tests) never mix
// their figures. Process and actor gauges come from prom-client; the per-request series are kept
// by hand in plain arrays and rendered at scrape time, because prom-client hashes label objects
// on every observation, which measured as a large share of a small request's cost (bench/).
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { ActorRuntime } from '../core/actor/runtime.js';
import type { Store } from '../core/store/store.js';

const BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

interface RouteSeries {
  method: string;
  route: string;
  statuses: Map<number, number>;
  /** Cumulative-at-render counts per bucket (non-cumulative while collecting). */
  buckets: Float64Array;
  sum: number;
  count: number;
}

function label(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

export class HttpMetrics {
  readonly registry = new Registry();
  private readonly series = new Map<string, RouteSeries>();

  constructor(runtime: ActorRuntime, store: Store) {
    collectDefaultMetrics({ register: this.registry });
    new Gauge({
      name: 'actors_live',
      help: 'Actors currently activated on this node',
      registers: [this.registry],
      collect() {
        this.set(runtime.stats().live);
      },
    });
    new Gauge({
      name: 'actor_mailbox_depth',
      help: 'Messages waiting in actor mailboxes',
      registers: [this.registry],
      collect() {
        this.set(runtime.stats().mailboxDepth);
      },
    });
    new Gauge({
      name: 'store_size_bytes',
      help: 'Bytes used by the LMDB data file',
      registers: [this.registry],
      collect() {
        this.set(store.sizeBytes());
      },
    });
    new Gauge({
      name: 'store_free_pages',
      help: 'Pages on the LMDB free list; when it is large, stop the server and run npm run compact',
      registers: [this.registry],
      collect() {
        this.set(store.freePages());
      },
    });
    // Per organisation, from the store's counters (one range read per scrape, no scan of data).
    const orgUsage = (field: 'recordBytes' | 'mediaBytes') =>
      function (this: Gauge) {
        this.reset();
        for (const u of store.usages()) if (store.getOrg(u.tenant)) this.set({ org: u.tenant }, u[field]);
      };
    new Gauge({
      name: 'org_storage_record_bytes',
      help: "Bytes of an organisation's records, log entries and key-value entries as stored (its record-bytes quota counts these)",
      labelNames: ['org'],
      registers: [this.registry],
      collect: orgUsage('recordBytes'),
    });
    new Gauge({
      name: 'org_storage_media_bytes',
      help: "Bytes of an organisation's stored media files (its media-bytes quota counts these)",
      labelNames: ['org'],
      registers: [this.registry],
      collect: orgUsage('mediaBytes'),
    });
    new Gauge({
      name: 'store_unreadable_records',
      help: 'Stored records that reads could not decode and skipped since start (the log names each; DELETE them through /repository)',
      registers: [this.registry],
      collect() {
        this.set(store.unreadableRecords());
      },
    });
  }

  /** Webhook attempts per organisation and outcome since start (core/webhooks/dispatcher.ts). */
  webhooks(counts: () => ReadonlyMap<string, { delivered: number; retried: number; failed: number }>, node: () => { held: number; inFlight: number }): void {
    new Gauge({
      name: 'webhook_deliveries_held',
      help: 'Due webhook deliveries this node has read and holds waiting for a slot (bounded per endpoint lane; the rest wait in the store)',
      registers: [this.registry],
      collect() {
        this.set(node().held);
      },
    });
    new Gauge({
      name: 'webhook_attempts_in_flight',
      help: 'Webhook attempts this node has started and not had an answer to (at most WEBHOOK_CONCURRENCY)',
      registers: [this.registry],
      collect() {
        this.set(node().inFlight);
      },
    });
    new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook delivery attempts by organisation and outcome: delivered (a 2xx in time), retried (failed, tried again later), failed (failed for good)',
      labelNames: ['org', 'outcome'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const [org, c] of counts()) for (const outcome of ['delivered', 'retried', 'failed'] as const) if (c[outcome] > 0) this.inc({ org, outcome }, c[outcome]);
      },
    });
  }

  /** Requests answered since start (background work yields while they come: core/webhooks/dispatcher.ts). */
  answered = 0;

  observe(method: string, route: string, status: number, seconds: number): void {
    this.answered++;
    const key = method + ' ' + route;
    let s = this.series.get(key);
    if (!s) {
      s = { method, route, statuses: new Map(), buckets: new Float64Array(BUCKETS.length), sum: 0, count: 0 };
      this.series.set(key, s);
    }
    s.statuses.set(status, (s.statuses.get(status) ?? 0) + 1);
    let i = 0;
    while (i < BUCKETS.length && seconds > BUCKETS[i]) i++;
    if (i < BUCKETS.length) s.buckets[i]++;
    s.sum += seconds;
    s.count++;
  }

  get contentType(): string {
    return this.registry.contentType;
  }

  /** The full exposition: prom-client's metrics, then the per-route request series. */
  async render(): Promise<string> {
    const out: string[] = [
      '# HELP http_requests_total HTTP requests answered, by route and status',
      '# TYPE http_requests_total counter',
    ];
    for (const s of this.series.values()) {
      for (const [status, n] of s.statuses) {
        out.push(`http_requests_total{method="${label(s.method)}",route="${label(s.route)}",status="${status}"} ${n}`);
      }
    }
    out.push(
      '# HELP http_request_duration_seconds Time from the first byte read to the answer written, by route',
      '# TYPE http_request_duration_seconds histogram',
    );
    for (const s of this.series.values()) {
      const l = `method="${label(s.method)}",route="${label(s.route)}"`;
      let cumulative = 0;
      BUCKETS.forEach((le, i) => {
        cumulative += s.buckets[i];
        out.push(`http_request_duration_seconds_bucket{${l},le="${le}"} ${cumulative}`);
      });
      out.push(`http_request_duration_seconds_bucket{${l},le="+Inf"} ${s.count}`);
      out.push(`http_request_duration_seconds_sum{${l}} ${s.sum}`);
      out.push(`http_request_duration_seconds_count{${l}} ${s.count}`);
    }
    return (await this.registry.metrics()) + out.join('\n') + '\n';
  }
}
