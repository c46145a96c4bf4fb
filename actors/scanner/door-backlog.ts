// The read barrier of the door. A scan commits its log entry alone; the ticket records learn the
// door fields behind (door-fields.ts). Which events of a tenant are behind is known here, per node:
// a read of tickets (a query in a worker, a record by id, the events routes) first asks those
// events' scanners to materialize, and runs once that is committed, so it sees every scan
// acknowledged before it (read your writes). When nothing is behind the barrier is a map lookup.
//
// Whether an event is behind is also kept in the store (kv `door-behind`, event id → 1, written
// when it falls behind and removed when it catches up), so after a restart the first read of a
// tenant finds what the crash left behind, and the start of the node resumes it.
//
// One backlog per node, a port (core/actor/services.ts): edge/app.ts creates it and closes it
// when the node closes; the scanner reaches it as ctx.services.doorBacklog, readers as
// deps.services.doorBacklog.
import { loopLoad, type LoopLoad } from '../../core/loop-load.js';
import type { Store } from '../../core/store/store.js';

declare module '../../core/actor/services.js' {
  interface NodeServices {
    /**
     * The node's door backlog: the scanner notes here when an event falls behind, and every
     * reader of tickets settles it first (`doorBacklog.settle(tenant)`).
     */
    readonly doorBacklog: DoorBacklog;
  }
}

export const DOOR_BEHIND_NS = 'door-behind';
export const DOOR_MATERIALIZED_NS = 'door-materialized';

export interface DoorSettings {
  /** Interval of the background materializer while an event is behind; 0 pauses it (reads still settle). */
  materializeMs: number;
  /**
   * Tickets written per step, in the background and for a reader alike. A step is one synchronous
   * stretch of the scanner and one of its commit, so this bounds how long materializing can hold
   * the event loop (every tenant's requests wait behind it): a reader far behind takes many
   * steps, with other work between them, rather than one long one.
   */
  materializeBatch: number;
  /**
   * A background step waits while the event loop was busier than this (percent of the time since
   * the last look), so a rush at the doors is not slowed by writing records nobody is reading: at
   * the scan bench's load the steps cost ~7% of a scan's CPU and added their ~1.5 ms stretches to
   * its tail. 100 never waits. Readers never wait for a quiet loop (default 25).
   */
  materializeBusyPercent?: number;
  /** The longest a background step waits for a quieter loop before it runs anyway (default 1,000 ms). */
  materializeMaxWaitMs?: number;
}

/** Steps readers far behind keep unanswered at once for one event, across readers (settleEvent). */
const READER_STEPS = 4;

export const DEFAULT_DOOR_SETTINGS: DoorSettings = { materializeMs: 25, materializeBatch: 50, materializeBusyPercent: 25, materializeMaxWaitMs: 1_000 };

/**
 * What one materialize step answers once its writes have committed: how many tickets are still
 * behind, and the sequence of the last scan the step had seen (with `left` 0, every scan up to it
 * is in the records).
 */
export interface MaterializeStep {
  left: number;
  seq: number;
}

/** Asks an event's scanner to materialize up to `max` tickets, answered once committed. */
export type Materialize = (tenant: string, eventId: string, max: number) => Promise<MaterializeStep>;

export class DoorBacklog {
  /**
   * Events behind, by tenant: event id → sequence of the latest scan that made it fall behind.
   * An event leaves only when a step that saw that scan has committed with nothing left: the
   * scanner empties its memory of pending tickets before its commit lands, so a reader between the
   * two must still wait, and a scan that falls behind meanwhile must not be forgotten.
   */
  private readonly behind = new Map<string, Map<string, number>>();
  /** Tenants whose `door-behind` kv has been read on this node. */
  private readonly loaded = new Set<string>();
  /** Background steps scheduled, by tenant and event. */
  private readonly timers = new Map<string, NodeJS.Timeout>();
  /** Steps readers asked and not yet answered, by tenant and event (settleEvent). */
  private readonly unanswered = new Map<string, number>();
  /** Since when (performance.now()) a background step has waited for a quieter loop, by tenant and event. */
  private readonly waiting = new Map<string, number>();
  private closed = false;

  /** `loopUse`: the event loop's recent utilization (core/loop-load.ts; tests pass their own). */
  constructor(
    private readonly store: Store,
    private readonly materialize: Materialize,
    readonly settings: DoorSettings,
    private readonly loopUse: LoopLoad = loopLoad(),
  ) {}

  /** Whether a background step should wait for a quieter loop now (readers never do). */
  private yields(key: string): boolean {
    const busyAbove = (this.settings.materializeBusyPercent ?? DEFAULT_DOOR_SETTINGS.materializeBusyPercent!) / 100;
    const maxWait = this.settings.materializeMaxWaitMs ?? DEFAULT_DOOR_SETTINGS.materializeMaxWaitMs!;
    const now = performance.now();
    if (busyAbove < 1 && this.loopUse() > busyAbove) {
      const since = this.waiting.get(key);
      if (since === undefined) this.waiting.set(key, now);
      if (since === undefined || now - since < maxWait) return true;
    }
    this.waiting.delete(key);
    return false;
  }

  /**
   * The scanner of `eventId` holds door fields its records do not, since its scan `seq` (0 when
   * unknown): reads settle, the background writes them.
   */
  fellBehind(tenant: string, eventId: string, seq: number): void {
    let s = this.behind.get(tenant);
    if (!s) this.behind.set(tenant, (s = new Map()));
    s.set(eventId, Math.max(seq, s.get(eventId) ?? 0));
    this.schedule(tenant, eventId);
  }

  private isBehind(tenant: string, eventId: string): boolean {
    return this.behind.get(tenant)?.has(eventId) === true;
  }

  /** A committed step: the event leaves the backlog when the step saw every scan that put it there. */
  private stepped(tenant: string, eventId: string, step: MaterializeStep): void {
    if (step.left > 0) return;
    const s = this.behind.get(tenant);
    const since = s?.get(eventId);
    if (!s || since === undefined || since > step.seq) return;
    s.delete(eventId);
    if (s.size === 0) this.behind.delete(tenant);
    this.waiting.delete(tenant + '\u0000' + eventId);
  }

  /** A step failed: it may have emptied the scanner's memory before its commit failed. */
  private failed(tenant: string, eventId: string): void {
    if (!this.closed) this.fellBehind(tenant, eventId, 0);
  }

  /** One background step after `materializeMs`, then the next while the event is behind. */
  private schedule(tenant: string, eventId: string): void {
    const { materializeMs, materializeBatch } = this.settings;
    const key = tenant + '\u0000' + eventId;
    if (this.closed || materializeMs <= 0 || this.timers.has(key)) return;
    const timer = setTimeout(() => {
      if (this.yields(key)) {
        this.timers.delete(key);
        this.schedule(tenant, eventId);
        return;
      }
      this.materialize(tenant, eventId, materializeBatch).then(
        (step) => {
          this.timers.delete(key);
          this.stepped(tenant, eventId, step);
          // Still behind (more tickets, or scans that fell behind while the step committed).
          if (this.isBehind(tenant, eventId)) this.schedule(tenant, eventId);
        },
        () => {
          // A failed step (a conflicting write, shutdown): the scanner rebuilds its state from the
          // log on its next message. The event stays behind, so reads keep settling it and the
          // background tries again.
          this.timers.delete(key);
          this.failed(tenant, eventId);
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
      if (!s) this.behind.set(tenant, (s = new Map()));
      if (!s.has(key)) s.set(key, 0);
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
    return Promise.all([...s.keys()].map((eventId) => this.settleEvent(tenant, eventId))).then(() => this.store.resetReadTxn());
  }

  private async settleEvent(tenant: string, eventId: string): Promise<void> {
    // Each step is one message to the scanner, after every scan it received before (its mailbox is
    // ordered), answered once committed. A step that failed (a write of the same ticket through
    // the record store conflicted) left the scanner to rebuild from the log: it is tried again.
    // A reader far behind keeps more steps unanswered, as many as the tickets left need and up to
    // READER_STEPS for the event across its readers (beyond the one each reader always has: R
    // readers keep at most READER_STEPS + R - 1, where one step each kept R), each asked in a
    // turn of its own: the scanner still writes one step per stretch with the loop free between
    // them, but the reader no longer waits out each step's commit before asking the next (a node
    // taking a tenant over with ~80,000 tickets behind answered its first ticket read after ~20 s
    // of steps of 50, its loop 63% idle between the commits).
    const key = tenant + '\u0000' + eventId;
    const asked: Array<Promise<MaterializeStep>> = [];
    let want = 1;
    for (let failures = 0; ; ) {
      while (asked.length < want && (asked.length === 0 || (this.unanswered.get(key) ?? 0) < READER_STEPS)) {
        if (asked.length > 0) await new Promise((r) => setImmediate(r));
        this.unanswered.set(key, (this.unanswered.get(key) ?? 0) + 1);
        let p: Promise<MaterializeStep>;
        try {
          p = this.materialize(tenant, eventId, this.settings.materializeBatch);
        } catch (err) {
          // Counted as a failed step below, as when the ask itself rejects.
          p = Promise.reject(err);
        }
        const answered = () => {
          const n = (this.unanswered.get(key) ?? 1) - 1;
          if (n > 0) this.unanswered.set(key, n);
          else this.unanswered.delete(key);
        };
        p.then(answered, answered);
        asked.push(p);
      }
      try {
        const step = await asked.shift()!;
        this.stepped(tenant, eventId, step);
        // Every scan the step saw is in the records: scans after it were acknowledged after this
        // read began, so the read need not wait for them (nor for the steps still unanswered).
        if (step.left === 0) return;
        want = Math.min(READER_STEPS, Math.ceil(step.left / Math.max(1, this.settings.materializeBatch)));
      } catch (err) {
        // The steps asked after it ran on a scanner that rebuilds: let them end, then try again.
        await Promise.allSettled(asked.splice(0));
        want = 1;
        this.failed(tenant, eventId);
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
    this.waiting.clear();
  }
}
