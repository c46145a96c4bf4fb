// The read barrier of the door. A scan commits its log entry alone; the ticket records learn the
// door fields behind (door-fields.ts). Which events of a tenant are behind is known here, per node:
// a read of tickets (a query in a worker, a record by id, the events routes) first asks those
// events' scanners to materialize, and runs once that is committed, so it sees every scan
// acknowledged before it (read your writes). When nothing is behind the barrier is a map lookup.
//
// Whether an event is behind is also kept in the store (kv `door-behind`, event id → 1, written
// when it falls behind and removed when it catches up), so after a restart the first read of a
// tenant finds what the crash left behind, and the start of the node resumes it.
import type { Store } from '../../core/store/store.js';

export const DOOR_BEHIND_NS = 'door-behind';
export const DOOR_MATERIALIZED_NS = 'door-materialized';

export interface DoorSettings {
  /** Interval of the background materializer while an event is behind; 0 pauses it (reads still settle). */
  materializeMs: number;
  /** Tickets written per background step. */
  materializeBatch: number;
}

export const DEFAULT_DOOR_SETTINGS: DoorSettings = { materializeMs: 250, materializeBatch: 500 };

/** Asks an event's scanner to materialize up to `max` tickets; answers how many are still behind. */
export type Materialize = (tenant: string, eventId: string, max: number) => Promise<number>;

/** Tickets written per step of a read barrier (bigger than a background step: a reader waits). */
const SETTLE_BATCH = 10_000;

export class DoorBacklog {
  private readonly behind = new Map<string, Set<string>>();
  /** Tenants whose `door-behind` kv has been read on this node. */
  private readonly loaded = new Set<string>();
  /** Background steps scheduled, by tenant and event. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private closed = false;

  constructor(
    private readonly store: Store,
    private readonly materialize: Materialize,
    readonly settings: DoorSettings,
  ) {}

  /** The scanner of `eventId` holds door fields its records do not: reads settle, the background writes them. */
  fellBehind(tenant: string, eventId: string): void {
    let s = this.behind.get(tenant);
    if (!s) this.behind.set(tenant, (s = new Set()));
    s.add(eventId);
    this.schedule(tenant, eventId);
  }

  caughtUp(tenant: string, eventId: string): void {
    const s = this.behind.get(tenant);
    if (!s) return;
    s.delete(eventId);
    if (s.size === 0) this.behind.delete(tenant);
  }

  /** One background step after `materializeMs`, then the next while the event is behind. */
  private schedule(tenant: string, eventId: string): void {
    const { materializeMs, materializeBatch } = this.settings;
    const key = tenant + '\u0000' + eventId;
    if (this.closed || materializeMs <= 0 || this.timers.has(key)) return;
    const timer = setTimeout(() => {
      this.materialize(tenant, eventId, materializeBatch).then(
        (left) => {
          this.timers.delete(key);
          if (left > 0) this.schedule(tenant, eventId);
        },
        () => {
          // A failed step (a conflicting write, shutdown): the scanner rebuilds its state from the
          // log on its next message, but the step may already have said it caught up. Count the
          // event as behind again, so reads keep settling it and the background tries again.
          this.timers.delete(key);
          if (!this.closed) this.fellBehind(tenant, eventId);
        },
      );
    }, materializeMs);
    timer.unref();
    this.timers.set(key, timer);
  }

  /** Events of `tenant` the store says are behind, read once per tenant and node. */
  private load(tenant: string): void {
    if (this.loaded.has(tenant)) return;
    this.loaded.add(tenant);
    for (const { key } of this.store.listKv(tenant, DOOR_BEHIND_NS)) {
      let s = this.behind.get(tenant);
      if (!s) this.behind.set(tenant, (s = new Set()));
      s.add(key);
    }
  }

  /**
   * Resolves once every scan of `tenant` acknowledged so far is in its ticket records; undefined
   * (nothing to wait for) when no event of the tenant is behind.
   */
  settle(tenant: string): Promise<void> | undefined {
    this.load(tenant);
    const s = this.behind.get(tenant);
    if (!s) return undefined;
    // The reader reads right after the materializing commits resolved: drop this thread's read
    // snapshot first, or it may still be the one from before them.
    return Promise.all([...s].map((eventId) => this.settleEvent(tenant, eventId))).then(() => this.store.resetReadTxn());
  }

  private async settleEvent(tenant: string, eventId: string): Promise<void> {
    // Each step is one message to the scanner, after every scan it received before (its mailbox is
    // ordered), answered once committed. A step that failed (a write of the same ticket through
    // the record store conflicted) left the scanner to rebuild from the log: it is tried again.
    for (let failures = 0; ; ) {
      try {
        if ((await this.materialize(tenant, eventId, SETTLE_BATCH)) === 0) return;
      } catch (err) {
        // As in the background: a failed step may have said it caught up before its commit failed.
        if (!this.closed) this.fellBehind(tenant, eventId);
        if (++failures >= 3) throw err;
      }
    }
  }

  /** At start: the events a crash left behind are written before the node serves. */
  async resume(tenants: Iterable<string>): Promise<void> {
    for (const t of tenants) await this.settle(t);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
  }
}

// One backlog per node, found from what each reader holds: the store (records by id, actors) or
// the query runner (queries in workers).
const byHandle = new WeakMap<object, DoorBacklog>();

export function attachDoorBacklog(handles: object[], backlog: DoorBacklog): void {
  for (const h of handles) byHandle.set(h, backlog);
}

export function doorBacklogOf(handle: object): DoorBacklog | undefined {
  return byHandle.get(handle);
}

/** The read barrier for `tenant` as seen from `handle` (a store or a query runner). */
export function settleDoor(handle: object, tenant: string): Promise<void> | undefined {
  return byHandle.get(handle)?.settle(tenant);
}
