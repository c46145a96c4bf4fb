// Prometheus metrics (prom-client), one registry per app so several servers in one process (tests)
// never mix their figures.
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { ActorRuntime } from '../core/actor/runtime.js';
import type { Store } from '../core/store/store.js';

export class HttpMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;

  constructor(runtime: ActorRuntime, store: Store) {
    collectDefaultMetrics({ register: this.registry });
    this.requests = new Counter({
      name: 'http_requests_total',
      help: 'HTTP requests answered, by route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from the first byte read to the answer written, by route',
      labelNames: ['method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
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
  }

  observe(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.latency.observe({ method, route }, seconds);
  }
}
