// The actor runtime. An actor is addressed by (tenant, kind, key); it is activated on its first
// message with state loaded from the store, handles one message at a time, and is passivated when
// idle. A handler changes memory state and queues writes in `ctx.batch`; the runtime commits each
// message's batch (lmdb-js folds every commit of one event turn into a single LMDB transaction) and
// releases the reply only after that commit and every earlier one of the same actor have landed:
// the output gate, so no caller ever sees state that a crash could take back.
//
// A handler that throws may have half-changed the state, so the runtime drops that state and
// activates again from the store once the actor's earlier writes have committed: the state is then
// exactly what was committed before the failed message.
//
// A refusal is the one exception, and there is one way to refuse: throw an AppError from the
// table (core/errors.ts). What the throw means for the state:
// - an AppError thrown with no write queued, by a kind that declares `refusalKeepsState` (its
//   handlers check before they change memory), answers the error and keeps the state: replaying
//   a scan log is the wrong price for a typo. A kind that does not declare it is treated as a bug.
// - an AppError marked by `refuseAfterWrites(err)` says the handler recorded changes that must
//   stand (money already moved at a gateway) in memory and in its batch: the batch commits and
//   the caller gets the error once it has landed, like any reply.
// - anything else (another error, or an unmarked AppError with writes queued) drops the state.
import type { Bus } from '../bus/bus.js';
import { systemClock, type Clock } from '../clock.js';
import { AppError } from '../errors.js';
import type { Logger } from '../log.js';
import type { NodeServices } from './services.js';
import { silentLogger } from '../log.js';
import { WriteBatch, type Store } from '../store/store.js';

export interface ActivationContext {
  readonly tenant: string;
  readonly key: string;
  readonly store: Store;
  readonly clock: Clock;
  /** The node's ports (core/actor/services.ts): the outbox, the scheduler, ... */
  readonly services: NodeServices;
}

export interface ActorContext extends ActivationContext {
  /** Writes of the current message; committed before its reply is released. */
  readonly batch: WriteBatch;
  /** Publishes on the bus after this message's writes commit (never for a failed message). */
  publish(subject: string, event: unknown): void;
  /** Asks another actor of the same tenant. Never ask in a cycle: both mailboxes would wait. */
  ask<R = unknown>(kind: string, key: string, msg: unknown): Promise<R>;
}

export interface ActorKind<S = unknown, M = unknown, R = unknown> {
  readonly kind: string;
  activate(ctx: ActivationContext): S | Promise<S>;
  receive(state: S, msg: M, ctx: ActorContext): R | Promise<R>;
  /** Called when the actor is passivated, with its last state. */
  passivate?(state: S, ctx: ActivationContext): void;
  /** Overrides the runtime's idle time before passivation. */
  readonly idleMs?: number;
  /**
   * Each message waits until the writes of the earlier ones have committed, so a handler that
   * reads the store sees everything this actor wrote. Without it the next message runs while those
   * writes are still in flight (pipelined; the actor must then keep its own pending writes, as
   * the scanner's RecordOverlay does). For actors whose rate does not need the pipelining.
   */
  readonly readsOwnWrites?: boolean;
  /**
   * A refusal (an AppError thrown with no write queued) leaves this state as it was: the kind's
   * handlers make every check before they change memory. The function form is asked after the
   * refusal, for a kind that knows per message (or per state) whether memory was changed. Without
   * it every throw drops the state (see the top of this file).
   */
  readonly refusalKeepsState?: boolean | ((state: S, msg: M) => boolean);
}

/**
 * `throw refuseAfterWrites(appError(...))`: a refusal raised after the handler recorded, in memory
 * and in `ctx.batch`, changes that must stand (money already moved at a gateway). The runtime
 * commits the batch, keeps the state and answers the error once the writes have landed (their
 * events are published: they happened). The mark is cleared before the error is answered, so a
 * caller that rethrows it does not carry it into its own actor.
 */
export function refuseAfterWrites(err: AppError): AppError {
  err.keepWrites = true;
  return err;
}

interface Envelope {
  msg: unknown;
  resolve(value: unknown): void;
  reject(err: unknown): void;
}

/**
 * Cluster mode: where an ask goes when this node does not own the tenant. Returns undefined when
 * the ask is served here, else the answer of the owner's runtime (core/cluster/node.ts).
 */
export type RemoteAsk = (tenant: string, kind: string, key: string, msg: unknown) => Promise<unknown> | undefined;

export interface RuntimeOptions {
  store: Store;
  /** The node's ports, handed to every actor in its context (a bare runtime: someServices({...})). */
  services: NodeServices;
  bus?: Bus;
  clock?: Clock;
  logger?: Logger;
  idleMs?: number;
  /** Set in cluster mode only; a single node never pays for the check beyond one comparison. */
  remote?: RemoteAsk;
}

const YIELD_EVERY = 256;

function isThenable(v: unknown): v is PromiseLike<unknown> {
  return v !== null && typeof v === 'object' && typeof (v as { then?: unknown }).then === 'function';
}

class ActorCell {
  state: unknown;
  activated = false;
  running = false;
  readonly mailbox: Envelope[] = [];
  /** Resolves (never rejects) when every commit queued so far has settled; replies wait on it. */
  lastCommit: Promise<unknown> = Promise.resolve();
  pendingCommits = 0;
  /** Commits queued and not yet settled, by path: [transactions, journaled] (WriteBatch.viaJournal). */
  readonly pendingByPath: [number, number] = [0, 0];
  /** Commits waiting for earlier ones before they are issued (see settle). */
  held = 0;
  idleTimer: NodeJS.Timeout | undefined;
  /** When the actor last went idle (performance.now()): the idle timer measures from it. */
  lastActive = 0;
  processed = 0;

  constructor(
    readonly runtime: ActorRuntime,
    readonly def: ActorKind,
    readonly tenant: string,
    readonly key: string,
    readonly id: string,
  ) {}
}

export class ActorRuntime {
  private readonly kinds = new Map<string, ActorKind>();
  private readonly cells = new Map<string, ActorCell>();
  private readonly store: Store;
  /** The node's ports; public so the node's other parts (cluster take-over) reach the same ones. */
  readonly services: NodeServices;
  private readonly bus?: Bus;
  private readonly clock: Clock;
  private readonly log: Logger;
  private readonly idleMs: number;
  private readonly remote?: RemoteAsk;
  private closing = false;
  /** Activations, passivations and handler failures, for /metrics and tests. */
  readonly counters = { activations: 0, passivations: 0, failures: 0, messages: 0 };

  constructor(opts: RuntimeOptions) {
    this.store = opts.store;
    this.services = opts.services;
    this.bus = opts.bus;
    this.clock = opts.clock ?? systemClock;
    this.log = opts.logger ?? silentLogger;
    this.idleMs = opts.idleMs ?? 300_000;
    this.remote = opts.remote;
  }

  register(def: ActorKind<any, any, any>): void {
    if (this.kinds.has(def.kind)) throw new Error(`actor kind ${def.kind} is already registered`);
    this.kinds.set(def.kind, def as ActorKind);
  }

  /** Sends `msg` to the actor and resolves with its reply, released after the reply's writes commit. */
  ask<R = unknown>(tenant: string, kind: string, key: string, msg: unknown): Promise<R> {
    if (this.closing) return Promise.reject(new AppError('ERR_UNAVAILABLE', ['the server is shutting down']));
    if (this.remote !== undefined) {
      const answer = this.remote(tenant, kind, key, msg);
      if (answer !== undefined) return answer as Promise<R>;
    }
    return this.askLocal(tenant, kind, key, msg);
  }

  /** An ask served by this node's actor whoever owns the tenant (cluster mode: the owner's side). */
  askLocal<R = unknown>(tenant: string, kind: string, key: string, msg: unknown): Promise<R> {
    if (this.closing) return Promise.reject(new AppError('ERR_UNAVAILABLE', ['the server is shutting down']));
    const id = `${tenant}\u0000${kind}\u0000${key}`;
    let cell = this.cells.get(id);
    if (!cell) {
      const def = this.kinds.get(kind);
      if (!def) return Promise.reject(new Error(`unknown actor kind ${kind}`));
      cell = new ActorCell(this, def, tenant, key, id);
      this.cells.set(id, cell);
    }
    const c = cell;
    return new Promise<R>((resolve, reject) => {
      c.mailbox.push({ msg, resolve: resolve as (v: unknown) => void, reject });
      // A pending idle timer is left as it is: when it fires it sees the actor was used since.
      if (!c.running) void this.run(c);
    });
  }

  /** Live actors and the total of messages waiting in their mailboxes. */
  stats(): { live: number; mailboxDepth: number; byKind: Record<string, number> } {
    let mailboxDepth = 0;
    const byKind: Record<string, number> = {};
    for (const c of this.cells.values()) {
      mailboxDepth += c.mailbox.length;
      byKind[c.def.kind] = (byKind[c.def.kind] ?? 0) + 1;
    }
    return { live: this.cells.size, mailboxDepth, byKind };
  }

  isLive(tenant: string, kind: string, key: string): boolean {
    return this.cells.has(`${tenant}\u0000${kind}\u0000${key}`);
  }

  /** Passivates every idle actor now (tests and shutdown). */
  passivateIdle(): number {
    let n = 0;
    for (const c of [...this.cells.values()]) if (this.tryPassivate(c)) n++;
    return n;
  }

  /**
   * Cluster mode: forgets the in-memory state of every actor of `tenant` (the node lost or is
   * taking over the tenant, so the store may hold writes these states never saw). Idle actors are
   * passivated; busy ones activate again from the store before their next message.
   */
  evictTenant(tenant: string): number {
    let n = 0;
    for (const c of [...this.cells.values()]) {
      if (c.tenant !== tenant) continue;
      n++;
      if (this.tryPassivate(c)) continue;
      if (c.activated) {
        try {
          c.def.passivate?.(c.state, this.activation(c));
        } catch (err) {
          this.log.warn({ err, actor: c.def.kind }, 'actor passivate hook threw');
        }
      }
      c.activated = false;
      c.state = undefined;
    }
    return n;
  }

  /** Refuses new messages, lets every mailbox drain and every commit land. */
  async close(): Promise<void> {
    this.closing = true;
    for (;;) {
      const busy = [...this.cells.values()].filter((c) => c.running || c.mailbox.length || c.pendingCommits);
      if (busy.length === 0) break;
      await Promise.allSettled(busy.map((c) => c.lastCommit));
      await new Promise((r) => setImmediate(r));
    }
    for (const c of [...this.cells.values()]) this.tryPassivate(c);
  }

  private activation(cell: ActorCell): ActivationContext {
    return { tenant: cell.tenant, key: cell.key, store: this.store, clock: this.clock, services: this.services };
  }

  private async run(cell: ActorCell): Promise<void> {
    cell.running = true;
    try {
      let sinceYield = 0;
      while (cell.mailbox.length > 0) {
        if (!cell.activated) {
          // Load only after this actor's in-flight writes have landed, so the state includes them.
          await cell.lastCommit.then(noop, noop);
          cell.lastCommit = Promise.resolve();
          try {
            const s = cell.def.activate(this.activation(cell));
            cell.state = isThenable(s) ? await s : s;
            cell.activated = true;
            this.counters.activations++;
          } catch (err) {
            // Nothing can be served without state: fail what is waiting, try again on the next ask.
            this.log.error({ err, actor: cell.def.kind, tenant: cell.tenant, key: cell.key }, 'actor activation failed');
            for (const env of cell.mailbox.splice(0)) env.reject(err);
            break;
          }
        }
        // An actor that reads its own writes from the store waits for them to land.
        if (cell.def.readsOwnWrites && cell.pendingCommits > 0) {
          await cell.lastCommit.then(noop, noop);
          // A failed commit (or an eviction) may have dropped the state meanwhile: activate first.
          if (!cell.activated) continue;
        }
        const env = cell.mailbox.shift()!;
        // Most messages are handled synchronously: no promise, no await between them.
        const pending = this.deliver(cell, env);
        if (pending !== undefined) await pending;
        if (++sinceYield >= YIELD_EVERY) {
          sinceYield = 0;
          await new Promise((r) => setImmediate(r));
        }
      }
    } finally {
      cell.running = false;
    }
    if (cell.mailbox.length > 0) return void this.run(cell);
    this.scheduleIdle(cell);
  }

  /** Undefined when the message was handled synchronously (its reply waits for its commit). */
  private deliver(cell: ActorCell, env: Envelope): Promise<void> | undefined {
    const batch = new WriteBatch();
    let events: Array<[string, unknown]> | undefined;
    const ctx: ActorContext = {
      tenant: cell.tenant,
      key: cell.key,
      store: this.store,
      clock: this.clock,
      services: this.services,
      batch,
      publish: (subject, event) => {
        (events ??= []).push([subject, event]);
      },
      ask: (kind, key, msg) => this.ask(cell.tenant, kind, key, msg),
    };
    this.counters.messages++;
    cell.processed++;
    let result: unknown;
    try {
      result = cell.def.receive(cell.state, env.msg, ctx);
    } catch (err) {
      return this.threw(cell, env, batch, err, events);
    }
    if (isThenable(result)) {
      return Promise.resolve(result).then(
        (value) => this.settle(cell, env, batch, value, events, false),
        (err: unknown) => this.threw(cell, env, batch, err, events),
      );
    }
    this.settle(cell, env, batch, result, events, false);
    return undefined;
  }

  /** A handler threw: a refusal keeps the state (see the top of this file), anything else drops it. */
  private threw(cell: ActorCell, env: Envelope, batch: WriteBatch, err: unknown, events: Array<[string, unknown]> | undefined): Promise<void> | undefined {
    if (err instanceof AppError) {
      if (err.keepWrites) {
        delete err.keepWrites;
        this.counters.failures++;
        this.settle(cell, env, batch, err, events, true);
        return undefined;
      }
      const keeps = cell.def.refusalKeepsState;
      if (batch.size === 0 && keeps !== undefined && (typeof keeps === 'boolean' ? keeps : keeps(cell.state, env.msg))) {
        this.counters.failures++;
        // Nothing happened, so nothing is published; the answer still waits behind earlier writes.
        this.settle(cell, env, batch, err, undefined, true);
        return undefined;
      }
    }
    return this.failed(cell, env, err);
  }

  /** A handler failed: reply only after earlier writes land (the caller may retry at once), then rebuild state. */
  private async failed(cell: ActorCell, env: Envelope, err: unknown): Promise<void> {
    this.counters.failures++;
    if (!(err instanceof AppError)) {
      this.log.error({ err, actor: cell.def.kind, tenant: cell.tenant, key: cell.key }, 'actor handler threw');
    }
    await cell.lastCommit.then(noop, noop);
    env.reject(err);
    cell.activated = false;
    cell.state = undefined;
  }

  /**
   * Commits the message's writes and releases its reply behind every earlier commit (the output
   * gate). The reply is `result`, or, for a refusal, the error `result` is.
   */
  private settle(cell: ActorCell, env: Envelope, batch: WriteBatch, result: unknown, events: Array<[string, unknown]> | undefined, refused: boolean): void {
    const previous = cell.lastCommit;
    if (batch.size === 0) {
      // Nothing to write, but the reply may reflect writes still in flight: wait for them.
      if (cell.pendingCommits === 0) this.release(env, result, events, refused);
      else previous.then(() => this.release(env, result, events, refused));
      return;
    }
    // A journaled batch is persisted on another path than a transaction (and the reverse): it
    // waits for the actor's earlier commits, so a crash can never keep a later write of the actor
    // without an earlier one (a chat's second message without the first that opened the chat).
    // While one waits, every later one waits behind it too, so they are still issued in order.
    const path = batch.viaJournal ? 1 : 0;
    const hold = cell.pendingByPath[1 - path] > 0 || cell.held > 0;
    cell.pendingByPath[path]++;
    cell.pendingCommits++;
    let committed: Promise<void>;
    if (hold) {
      cell.held++;
      committed = previous.then(() => {
        cell.held--;
        return this.store.commit(batch);
      });
    } else committed = this.store.commit(batch);
    const settled = () => {
      cell.pendingCommits--;
      cell.pendingByPath[path]--;
    };
    // Ordering only: a reply waits for every earlier commit to settle, but an earlier commit's
    // failure is that message's alone (its writes were rolled back on their own), so it never
    // fails a later message whose writes did land.
    cell.lastCommit = committed.then(
      () => previous,
      () => previous,
    );
    committed.then(
      () => {
        settled();
        previous.then(() => this.release(env, result, events, refused));
      },
      (err) => {
        settled();
        this.counters.failures++;
        if (!(err instanceof AppError)) {
          this.log.error({ err, actor: cell.def.kind, tenant: cell.tenant, key: cell.key }, 'actor commit failed');
        }
        env.reject(err);
        // Memory holds a change the store refused: rebuild from what was committed.
        cell.activated = false;
        cell.state = undefined;
      },
    );
  }

  private release(env: Envelope, result: unknown, events: Array<[string, unknown]> | undefined, refused: boolean): void {
    if (events && this.bus) for (const [subject, event] of events) this.bus.publish(subject, event);
    if (refused) env.reject(result);
    else env.resolve(result);
  }

  /**
   * Passivates the actor once it has been idle for its idle time. One timer per actor, armed when
   * it first goes idle and left alone by later messages (an actor busy at the door would otherwise
   * create and clear a timer per message): when it fires early it is armed again for the rest.
   */
  private scheduleIdle(cell: ActorCell): void {
    cell.lastActive = performance.now();
    if (cell.idleTimer || this.cells.get(cell.id) !== cell) return;
    this.armIdle(cell, cell.def.idleMs ?? this.idleMs);
  }

  private armIdle(cell: ActorCell, ms: number): void {
    cell.idleTimer = setTimeout(() => {
      cell.idleTimer = undefined;
      if (this.cells.get(cell.id) !== cell) return;
      const full = cell.def.idleMs ?? this.idleMs;
      const left = full - (performance.now() - cell.lastActive);
      if (cell.running || cell.mailbox.length > 0) this.armIdle(cell, full);
      else if (left > 1) this.armIdle(cell, left);
      else this.tryPassivate(cell);
    }, ms);
    cell.idleTimer.unref();
  }

  private tryPassivate(cell: ActorCell): boolean {
    if (cell.running || cell.mailbox.length > 0 || cell.pendingCommits > 0) return false;
    if (cell.idleTimer) clearTimeout(cell.idleTimer);
    this.cells.delete(cell.id);
    if (cell.activated) {
      this.counters.passivations++;
      try {
        cell.def.passivate?.(cell.state, this.activation(cell));
      } catch (err) {
        this.log.warn({ err, actor: cell.def.kind }, 'actor passivate hook threw');
      }
    }
    return true;
  }
}

function noop(): void {}
