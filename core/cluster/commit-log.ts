// The cluster's commit log (DESIGN: Cluster mode). Every committed batch is appended to one
// JetStream stream before its answer is released. Each node materialises in its own LMDB the
// platform-wide data and the tenants it holds, no others, so no acknowledged write depends on the
// node that made it and storage and apply work shard with the nodes.
//
// Subjects (names.ts): a tenant's own batches go to `<log>.t.<tenant>`; a batch of one tenant that
// also writes platform-wide data (organisations, `_` tenants) to `<log>.x.<tenant>`; platform-wide
// batches to `<log>.x._g`. A batch that writes several organisations is refused (classify): no
// node but the owner may write a tenant, and a tenant's snapshot and replay read its own subjects.
//
// Writers. Only a tenant's owner appends its `t`/`x` batches, through the tenant's lane: batches
// that arrive in one event loop turn, or while an append is in flight, are appended together as
// one message (group commit),
// and each append expects the subject's last sequence to be the one the owner knows (JetStream's
// expected-last-subject-sequence), so a node that lost its lease without knowing it cannot append
// behind the new owner's back: its append fails and it drops the tenant. Once acknowledged, the
// lane applies the batches to LMDB in stream order with their stream position (the mark) in the
// same transaction, and then releases them. `g` batches are appended by any node and applied by
// every node's applier in stream order; the appending node releases the batch when its own applier
// has applied it, with the outcome the applier saw (a failed condition is a 409 everywhere).
//
// Readers. Each node's applier consumes the `x` subjects only (`<log>.x.>`), in order: `g` batches
// and the platform part of `x` batches everywhere; the tenant part of an `x` batch only on the
// tenant's holder, when another node appended it (a lease being lost). A tenant's `t` batches are
// never sent to a node that does not hold it, the owner's own appends included: its lane applies
// them. Anything of a tenant read elsewhere is read on its owner (an ask, or the forwarded
// request). The marks make every apply idempotent, so a restart resumes from the last saved
// position and re-reads a little without harm.
//
// Takeover. A node that takes a tenant over brings it up to the stream's head (catchUp): when the
// tenant's snapshot (snapshots.ts) is ahead of its own mark for that tenant (or it never held it),
// it loads the snapshot first; then it replays the tenant's two subjects from its mark up to the
// end, learns the tenant subject's last sequence, and only then serves.
//
// A bounded stream. The owner snapshots each tenant it holds every `snapshotEveryCommits` commits
// or `snapshotEveryMs` (one snapshot at a time per node), then purges the tenant's `t` subject
// below what the snapshot covers: a node behind it loads the snapshot, never those messages. A
// snapshot's manifest is published only once this node's applier has read every `x` message up to
// its mark and the lane still holds the tenant (snapshotSettled): an `x` batch another node
// appended, that landed behind this lane's own writes, drops the tenant and its copy instead
// (foreignPart), so no snapshot claims a position whose history it lacks. The platform data the
// applier materialises is snapshotted the same way, by whichever node is first due
// (platform-snapshots.ts), and the `x` subjects are purged below the snapshot before it, never past
// a position a node's applier keeps in the positions bucket (applier-positions.ts): a node whose
// saved position is behind the platform snapshot (restarted late, or away longer than its key
// lives) loads it before its applier reads on.
import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type ConsumerMessages,
  type JetStreamClient,
  type JetStreamManager,
} from '@nats-io/jetstream';
import type { NatsConnection } from '@nats-io/transport-node';
import { setTimeout as sleep } from 'node:timers/promises';
import { AppError, appError } from '../errors.js';
import type { Logger } from '../log.js';
import { opTenant, WriteBatch, type WriteOp } from '../store/store.js';
import type { TenantEnvs } from './tenant-envs.js';
import { decode, encodeCompact } from './codec.js';
import { isSystemTenant, type ClusterNames } from './names.js';
import { ApplierPositions } from './applier-positions.js';
import { PlatformSnapshots } from './platform-snapshots.js';
import { isNoMessage, purgeBelow, TenantSnapshots, type SnapshotManifest } from './snapshots.js';
import { StreamAppends } from './stream-appends.js';
import { isWrongLastSequence } from './wrong-last-sequence.js';

/** Marks: a tenant's own key is the tenant; these two cannot be organisation ids. */
const GLOBAL_MARK = '_g';
const POSITION_MARK = '_position';
/** Most batches in one appended message. */
const MAX_GROUP = 512;
/** A lane holding this many batches appends without lingering (commitLingerMs). */
const LINGER_FULL = 64;
/** An append begun less than this long ago means a burst: the next one may linger. */
const LINGER_BURST_MS = 20;
/** Room for the message envelope within the server's max_payload. */
const ENVELOPE_BYTES = 1024;
/** Snapshot defaults (config/default.json: cluster.snapshotEveryCommits, snapshotEveryMs). */
const SNAPSHOT_EVERY_COMMITS = 10_000;
const SNAPSHOT_EVERY_MS = 300_000;
/**
 * Keys a snapshot may copy per commit it follows: a tenant's next snapshot waits for at least its
 * last snapshot's keys / this many commits, whatever the settings say. A snapshot copies the whole
 * tenant, so at a fixed count a large tenant would spend more on snapshots than on its writes (a
 * 100,000-ticket event of 1.4M keys snapshotted every 10,000 scans copies 140 keys per scan, about
 * a quarter of a core at 2,000 scans/s, when snapshots were frames of keys read on the main
 * thread); at 10 keys a commit a snapshot (now a copy of the tenant environment's file, made in
 * LMDB's thread and published at about 125 bytes a key) costs each commit about 1.3 KB sent, and
 * the tail a takeover replays after it holds at most a tenth as many commits as the snapshot has
 * keys.
 */
const SNAPSHOT_KEYS_PER_COMMIT = 10;
/** How long an applied outcome of this node's own `g` batch is kept for its waiter. */
const OUTCOME_TTL_MS = 60_000;
/** Keys deleted per transaction when a tenant's copy is cleared (a few ms of the loop each). */
const CLEAR_STEP = 2_000;
/** How long a released tenant's copy is kept (config/default.json: cluster.droppedKeepMs). */
const DROPPED_KEEP_MS = 900_000;
/** How often each node rewrites its applier's position, and how long one lives unwritten (config/default.json: cluster.positionKeepMs). */
const POSITION_EVERY_MS = 1000;
const POSITION_KEEP_MS = 300_000;
/** Longest a finished snapshot waits for the applier to pass its mark before it is given up. */
const SETTLE_MS = 10_000;

/** One appended message: who appended it, through which lane, and its batches (op lists). */
interface LogMessage {
  o: string;
  /** The appending lane's epoch (tenant batches only): that lane applies them itself. */
  e?: string;
  b: WriteOp[][];
}

let epochs = 0;

/**
 * Where a batch goes: `t` (one tenant), `x` (one tenant plus platform data), `g` (platform). A batch
 * that writes two organisations throws: every node would apply it (only a `g` batch reaches every
 * node), the organisations' owners would not fold it into their lanes, and a node restoring either
 * organisation from its snapshot would lose its part. No route writes one (a probe of the whole
 * suite found them only in tests that seed a store directly).
 */
export function classify(batch: WriteBatch): { kind: 't' | 'x' | 'g'; tenant: string } {
  let tenant: string | undefined;
  let platform = false;
  for (const o of batch.ops) {
    const t = opTenant(o);
    if (t === undefined || isSystemTenant(t)) platform = true;
    else if (tenant === undefined) tenant = t;
    else if (t !== tenant) throw new Error(`cluster mode: a batch writes one organisation at most; this one writes ${tenant} and ${t}`);
  }
  if (tenant === undefined) return { kind: 'g', tenant: '' };
  return { kind: platform ? 'x' : 't', tenant };
}

function batchOf(ops: WriteOp[]): WriteBatch {
  const b = new WriteBatch();
  for (const o of ops) b.ops.push(o);
  return b;
}

/** The tenant's ops and the platform ops of an `x` batch. */
function split(ops: WriteOp[], tenant: string): [WriteBatch, WriteBatch] {
  const own = new WriteBatch();
  const platform = new WriteBatch();
  for (const o of ops) (opTenant(o) === tenant ? own : platform).ops.push(o);
  return [own, platform];
}

interface Deferred<T> {
  promise: Promise<T>;
  resolve(v: T): void;
  reject(e: unknown): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (v: T) => void;
  let reject!: (e: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(noop);
  return { promise, resolve, reject };
}

function noop(): void {}

interface Pending {
  batch: WriteBatch;
  mixed: boolean;
  resolve(): void;
  reject(err: unknown): void;
}

/** What this node does for one tenant it holds. */
class Lane {
  state: 'syncing' | 'owned' = 'syncing';
  /** Marks this lane's own `x` appends, whose tenant part the applier leaves to it. */
  readonly epoch = `${process.pid.toString(36)}.${Date.now().toString(36)}.${(++epochs).toString(36)}`;
  /** Last sequence of the tenant subject this node knows: what the next append expects. */
  lastT = 0;
  readonly queue: Pending[] = [];
  pumping = false;
  /** Resolves when every local apply issued so far has landed. */
  tail: Promise<unknown> = Promise.resolve();
  /** Commits since the tenant's last snapshot, and when that was (or the takeover). */
  commits = 0;
  snapAt = Date.now();
  /** When the tenant's last commit came (Date.now()): a tenant quiet for the snapshot interval gets its tail covered. */
  lastCommitAt = 0;
  /** The tenant's snapshot does not hold what this node holds (none, or older than its mark). */
  snapStale = false;
  /** Keys in the tenant's last snapshot (0: not known yet): the next one waits for commits in proportion. */
  snapKeys = 0;
  /** When the lane's last group append began (performance.now()): a burst is under way. */
  lastAppend = -Infinity;
  /** The stream sequence catchUp brought the tenant to (-1 while it runs). */
  since = -1;
  /** Highest `x` batch of another writer the applier saw while catchUp ran. */
  foreign = 0;
  constructor(readonly tenant: string) {}
}

export interface CommitLogOptions {
  nc: NatsConnection;
  names: ClusterNames;
  local: TenantEnvs;
  nodeId: string;
  /** Stream replicas (1 on one server, 3 in production). */
  replicas: number;
  logger: Logger;
  /** Milliseconds to wait for an append's acknowledgement. */
  publishTimeoutMs: number;
  /** Told when a lane failed to append: the tenant must be dropped and taken over again. */
  onLaneFailed(tenant: string, err: unknown): void;
  /** A tenant's snapshot is written after this many commits (0: not by count; default 10,000). */
  snapshotEveryCommits?: number;
  /** ... or this many milliseconds after the last one when anything changed (0: not by time; default 5 minutes). */
  snapshotEveryMs?: number;
  /** In a burst of a tenant's writes, how long an append waits for more to fold in (0: never). */
  commitLingerMs?: number;
  /** How long a tenant this node let go is kept on its disk before it is cleared (0: kept; default 15 minutes). */
  droppedKeepMs?: number;
  /** How long an applier's position holds the platform purge back after its node last wrote it (default 5 minutes). */
  positionKeepMs?: number;
}

export class CommitLog {
  private readonly js: JetStreamClient;
  private readonly jsm: JetStreamManager;
  /** Every append to the commit stream (lanes, checked batches, platform batches). */
  private readonly appends: StreamAppends;
  private readonly names: ClusterNames;
  private readonly local: TenantEnvs;
  private readonly log: Logger;
  private readonly lanes = new Map<string, Lane>();
  private readonly outcomes = new Map<number, { d: Deferred<void>; timer?: NodeJS.Timeout }>();
  private readonly waiters: Array<{ seq: number; resolve(): void }> = [];
  private readonly maxPayload: number;
  /** Last stream sequence the applier has processed (applied or left to a lane). */
  private position = 0;
  private savedPosition = 0;
  /** Local applies of the applier, in order: the position advances when they land. */
  private applied: Promise<unknown> = Promise.resolve();
  private messages: ConsumerMessages | undefined;
  /** Replacements of the applier's consumer, one after another (replaceConsumer). */
  private replacing: Promise<void> = Promise.resolve();
  private saver: NodeJS.Timeout | undefined;
  private positionTimer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly snapshots: TenantSnapshots;
  private snapshotTimer: NodeJS.Timeout | undefined;
  /** The snapshot under way (at most one per node). */
  private snapshotting: Promise<unknown> | undefined;
  /** Tenants whose copy here is known wrong (diverged): cleared before they are held again. */
  private readonly suspect = new Set<string>();
  private readonly platform: PlatformSnapshots;
  /** Copies of tenants this node let go, cleared when their time is up unless held again. */
  private readonly dropped = new Map<string, NodeJS.Timeout>();
  /** The clear under way (one at a time). */
  private clearing: Promise<void> = Promise.resolve();
  /** Every node's applier position: no purge passes one (applier-positions.ts). */
  private readonly positions: ApplierPositions;
  /** A write of this node's position is under way. */
  private telling: Promise<boolean> | undefined;
  /** This node's position had to be written afresh: a purge may have passed it (recheckPosition). */
  private overtaken = false;
  /** Platform batches the applier read since the last platform snapshot (any node's), and when that was. */
  private platformCommits = 0;
  private platformSnapAt = Date.now();
  /**
   * Highest sequence this node's platform appends (`g`, `x`) were acknowledged with: a node whose
   * request wrote through this one waits until its own applier is there (read-your-writes).
   */
  platformAcked = 0;

  private constructor(private readonly opts: CommitLogOptions, jsm: JetStreamManager, positions: ApplierPositions) {
    this.jsm = jsm;
    this.positions = positions;
    this.js = jetstream(opts.nc);
    this.appends = new StreamAppends(opts.nc, opts.publishTimeoutMs);
    this.names = opts.names;
    this.local = opts.local;
    this.log = opts.logger;
    this.maxPayload = (opts.nc.info?.max_payload ?? 1024 * 1024) - ENVELOPE_BYTES;
    const snapshotOptions = {
      js: this.js,
      jsm,
      names: opts.names,
      local: opts.local,
      nodeId: opts.nodeId,
      logger: opts.logger,
      publishTimeoutMs: opts.publishTimeoutMs,
      maxPayload: this.maxPayload,
    };
    this.snapshots = new TenantSnapshots(snapshotOptions);
    this.platform = new PlatformSnapshots(snapshotOptions, this.snapshots);
  }

  /** Creates the stream if needed and starts applying it; resolves once caught up with its end. */
  static async open(opts: CommitLogOptions): Promise<CommitLog> {
    const jsm = await jetstreamManager(opts.nc);
    const name = opts.names.stream;
    try {
      await jsm.streams.info(name);
    } catch {
      await jsm.streams.add({
        name,
        subjects: [`${opts.names.log}.>`],
        storage: 'file',
        num_replicas: opts.replicas,
        retention: 'limits',
        discard: 'old',
        max_msgs: -1,
        max_bytes: -1,
        max_age: 0,
      });
    }
    await TenantSnapshots.ensureStream(jsm, opts.names, opts.replicas);
    const positions = await ApplierPositions.open(opts.nc, opts.names, opts.nodeId, opts.positionKeepMs ?? POSITION_KEEP_MS, opts.replicas);
    const log = new CommitLog(opts, jsm, positions);
    await log.startApplier();
    log.startSnapshots();
    log.dropUnheld();
    return log;
  }

  // ---- the applier -------------------------------------------------------------------------

  private async startApplier(): Promise<void> {
    let [saved] = this.local.appliedMark(POSITION_MARK);
    // From here on no purge passes this position; one may have passed it before.
    await this.positions.tell(saved);
    saved = await this.loadPlatformPast(saved);
    this.position = this.savedPosition = saved;
    const last = await this.lastSequence(this.names.platformFilter);
    await this.consumeFrom(saved + 1);
    this.startTelling();
    this.saver = setInterval(() => void this.savePosition(), 500);
    this.saver.unref();
    // Serve nothing (organisations included) before what was appended so far is applied here.
    await this.waitApplied(last);
  }

  /** Starts the applier's consumer of the platform subjects at stream sequence `from`. */
  private async consumeFrom(from: number): Promise<void> {
    const filter = this.names.platformFilter;
    const consumer = await this.js.consumers.get(
      this.names.stream,
      from > 1 ? { filter_subjects: filter, deliver_policy: DeliverPolicy.StartSequence, opt_start_seq: from } : { filter_subjects: filter, deliver_policy: DeliverPolicy.All },
    );
    this.messages = await consumer.consume({ max_messages: 1024 });
    void this.applyLoop(this.messages);
  }

  /**
   * When the platform snapshot is past `position` (this node was away, its DATA_DIR is new, or its
   * position's key expired), the messages between may be purged: loads the snapshot and answers
   * its mark, where the applier reads on; otherwise answers `position`.
   */
  private async loadPlatformPast(position: number): Promise<number> {
    const snap = await this.platform.latest();
    if (!snap || snap.manifest.seq <= Math.max(position, this.local.appliedMark(GLOBAL_MARK)[0])) return position;
    await this.platform.restore(snap.manifest);
    await this.local.commitApplied(new WriteBatch(), { key: POSITION_MARK, seq: snap.manifest.seq, n: 1 });
    return snap.manifest.seq;
  }

  private async applyLoop(messages: ConsumerMessages): Promise<void> {
    let n = 0;
    try {
      for await (const m of messages) {
        // Nothing is applied on a position no purge is known to have spared (recheckPosition).
        if (this.overtaken || Date.now() - this.positions.confirmedAt > this.positions.keepMs / 2) await this.recheckPosition();
        // A replaced consumer's loop applies nothing more: its successor reads on from the position.
        if (messages !== this.messages) return;
        this.applyMessage(m.seq, m.subject, m.data);
        // Bounded work in flight while catching up on a long stream.
        if (++n % 256 === 0) await this.applied;
      }
    } catch (err) {
      if (!this.closed) this.log.error({ err }, 'cluster: commit stream applier stopped');
    }
  }

  private applyMessage(seq: number, subject: string, data: Uint8Array): void {
    const where = this.names.parseLogSubject(subject);
    let msg: LogMessage;
    try {
      msg = decode<LogMessage>(data);
    } catch (err) {
      this.log.error({ err, seq, subject }, 'cluster: undecodable commit stream message skipped');
      return this.advance(seq, []);
    }
    if (!where || where.kind === 't') return this.advance(seq, []);
    this.platformCommits++;
    const commits: Promise<unknown>[] = [];
    const mine = msg.o === this.opts.nodeId;
    if (where.kind === 'g') {
      const c = this.local.commitApplied(batchOf(msg.b[0] ?? []), { key: GLOBAL_MARK, seq, n: 1 });
      commits.push(this.settle(seq, c, mine));
    } else {
      const [own, platform] = split(msg.b[0] ?? [], where.tenant);
      commits.push(this.settle(seq, this.local.commitApplied(platform, { key: GLOBAL_MARK, seq, n: 1 }), mine));
      const lane = this.lanes.get(where.tenant);
      if (lane && msg.e !== lane.epoch) commits.push(this.foreignPart(lane, seq, own));
    }
    this.advance(seq, commits);
  }

  /**
   * The tenant part of an `x` batch its lane did not append (another node, losing or taking the
   * lease, appends those unchecked). A node that does not hold the tenant leaves it to the stream:
   * the tenant's replay reads it when it takes the tenant over. While catchUp runs its replay may
   * or may not reach it: takeOver compares. After catchUp it is applied here, in stream order; when
   * the lane already applied a later batch of the tenant, the mark skips it and this copy lacks
   * it: the copy is wrong, so the tenant is dropped, cleared and taken over afresh, and no snapshot
   * of this copy is ever written (snapshotSettled waits for the applier to pass the snapshot's
   * mark, so it sees this first).
   */
  private foreignPart(lane: Lane, seq: number, own: WriteBatch): Promise<unknown> {
    if (lane.since < 0) {
      if (seq > lane.foreign) lane.foreign = seq;
      return Promise.resolve();
    }
    if (seq <= lane.since || this.lanes.get(lane.tenant) !== lane) return Promise.resolve();
    return this.quiet(
      this.local.commitApplied(own, { key: lane.tenant, seq, n: 1 }).then((applied) => {
        if (!applied && this.lanes.get(lane.tenant) === lane) this.diverged(lane, seq);
      }),
    );
  }

  /** Another writer's batch landed behind what this lane applied: this copy of the tenant is wrong. */
  private diverged(lane: Lane, seq: number): void {
    const err = appError('ERR_UNAVAILABLE', `tenant ${lane.tenant} was written by another node at ${seq}, behind this node's writes`);
    if (!this.closed) this.log.warn({ tenant: lane.tenant, seq }, 'cluster: another node wrote a tenant this node holds; dropping it and its copy');
    this.suspect.add(lane.tenant);
    for (const p of lane.queue.splice(0)) p.reject(err);
    this.release(lane.tenant);
    this.opts.onLaneFailed(lane.tenant, err);
  }

  /** A failed condition is an expected outcome here (the owner saw it too); anything else is logged. */
  private quiet(p: Promise<unknown>): Promise<unknown> {
    return p.catch((err) => {
      if (!(err instanceof AppError && err.code === 'ERR_VERSION_CONFLICT') && !this.closed) {
        this.log.error({ err }, 'cluster: applying a commit stream message failed');
      }
    });
  }

  /** Records the outcome of one of this node's own platform batches for its waiting writer. */
  private settle(seq: number, p: Promise<unknown>, mine: boolean): Promise<unknown> {
    if (!mine) return this.quiet(p);
    const o = this.outcome(seq);
    o.timer ??= setTimeout(() => this.outcomes.delete(seq), OUTCOME_TTL_MS).unref();
    return p.then(
      () => o.d.resolve(),
      (err) => o.d.reject(err),
    );
  }

  private outcome(seq: number): { d: Deferred<void>; timer?: NodeJS.Timeout } {
    let o = this.outcomes.get(seq);
    if (!o) this.outcomes.set(seq, (o = { d: deferred<void>() }));
    return o;
  }

  private advance(seq: number, commits: Promise<unknown>[]): void {
    const prev = this.applied;
    this.applied = (commits.length === 0 ? prev : Promise.all([prev, ...commits])).then(() => {
      if (seq > this.position) this.position = seq;
      this.wake();
    });
  }

  private wake(): void {
    for (let i = 0; i < this.waiters.length; ) {
      if (this.waiters[i].seq <= this.position) this.waiters.splice(i, 1)[0].resolve();
      else i++;
    }
  }

  /** Resolves once the applier has processed the stream up to `seq` (or after `timeoutMs`). */
  waitApplied(seq: number, timeoutMs?: number): Promise<void> {
    if (seq <= this.position) return Promise.resolve();
    return new Promise((resolve) => {
      const w = { seq, resolve };
      this.waiters.push(w);
      if (timeoutMs !== undefined) {
        setTimeout(() => {
          const i = this.waiters.indexOf(w);
          if (i >= 0) this.waiters.splice(i, 1);
          resolve();
        }, timeoutMs).unref();
      }
    });
  }

  /**
   * Every node writes how far its applier read once a second (applier-positions.ts): the platform
   * purge stays below the lowest position kept (platformFloor), so an applier that lags, or whose
   * node is cut off from NATS for less than the keep time, is never overtaken by a purge and never
   * skips a message. A node away for longer loses its key, and finds that out before it applies
   * anything more (recheckPosition).
   */
  private startTelling(): void {
    // A lost key is acted on at once, not only when the next platform message arrives: the
    // platform may stay quiet, and the applier would hold a position nothing keeps meanwhile.
    const tell = (): Promise<void> => this.tellPosition().then((kept) => (kept || this.closed ? undefined : this.recheckPosition()));
    const timer = setInterval(() => void tell().catch(noop), POSITION_EVERY_MS);
    timer.unref();
    this.positionTimer = timer;
  }

  /** Writes this node's position (one write at a time); false when its key had been lost. */
  private tellPosition(): Promise<boolean> {
    if (this.closed) return Promise.resolve(true);
    return (this.telling ??= this.positions
      .tell(this.position)
      .then((kept) => {
        if (!kept) this.overtaken = true;
        return kept;
      })
      .finally(() => (this.telling = undefined)));
  }

  /**
   * Before the applier applies more while its position is not known to be kept (its last write is
   * older than half the keep time: this node was cut off or stalled; or the key was lost): writes
   * it, retrying until NATS answers. When the key had been lost, a purge may have passed this
   * position and the consumer skipped what it deleted, so the consumer is replaced: the platform
   * snapshot is loaded when it is past the position, and the applier reads on from its mark.
   */
  private async recheckPosition(): Promise<void> {
    while (!this.closed) {
      try {
        await this.tellPosition();
        break;
      } catch {
        await sleep(250);
      }
    }
    if (this.closed || !this.overtaken) return;
    this.log.warn({ position: this.position }, "cluster: this node's applier position was not kept (away longer than CLUSTER_POSITION_KEEP_MS); checking the platform snapshot");
    await this.replaceConsumer(async () => {
      const to = await this.loadPlatformPast(this.position);
      this.overtaken = false;
      if (to !== this.position) {
        this.position = this.savedPosition = to;
        this.wake();
      }
      return to + 1;
    });
  }

  /**
   * After NATS reconnected: the applier's consumer starts again from the position. nats.js's own
   * recovery of a pull consumer across a dropped connection was seen to wait up to ~45 s for
   * heartbeats, with the platform data this node serves that far behind.
   */
  reconnected(): void {
    if (!this.closed && this.messages) void this.replaceConsumer(async () => this.position + 1);
  }

  /**
   * Stops the applier's consumer and, once what it handed over is applied, starts another at the
   * sequence `from` answers (which may load a snapshot first). One replacement at a time.
   */
  private replaceConsumer(from: () => Promise<number>): Promise<void> {
    const run = this.replacing.then(async () => {
      if (this.closed) return;
      const old = this.messages;
      this.messages = undefined;
      old?.stop();
      await this.applied;
      // Retried until it starts (NATS may be gone again): without a consumer nothing is applied.
      while (!this.closed) {
        try {
          const at = await from();
          if (!this.closed) await this.consumeFrom(at);
          return;
        } catch (err) {
          if (!this.closed) this.log.warn({ err }, 'cluster: restarting the commit stream applier failed; retrying');
          await sleep(1000);
        }
      }
    });
    this.replacing = run.catch(noop);
    return this.replacing;
  }

  /** The lowest position an applier keeps, plus one: the platform purge goes no further. */
  private async platformFloor(): Promise<number> {
    const low = await this.positions.lowest();
    return Math.min(low ?? this.position, this.position) + 1;
  }

  /**
   * Where a restart resumes reading the platform subjects. A lane's own appends need no care here:
   * one acknowledged and not applied when the node stopped is read by the tenant's next catchUp,
   * from the tenant's own mark.
   */
  private savePosition(): Promise<unknown> {
    const p = this.position;
    if (p <= this.savedPosition || this.closed) return Promise.resolve();
    this.savedPosition = p;
    return this.local.commitApplied(new WriteBatch(), { key: POSITION_MARK, seq: p, n: 1 }).catch(noop);
  }

  // ---- the owner's lanes ------------------------------------------------------------------

  /** This node holds `tenant` and may append its batches. */
  isOwned(tenant: string): boolean {
    return this.lanes.get(tenant)?.state === 'owned';
  }

  /** Tenants this node holds. */
  ownedTenants(): string[] {
    return [...this.lanes.keys()];
  }

  /** Starts holding `tenant`: brings it up to the stream's head (catchUp), then serves it. */
  async takeOver(tenant: string): Promise<void> {
    if (this.lanes.has(tenant)) return;
    const lane = new Lane(tenant);
    this.lanes.set(tenant, lane);
    this.keep(tenant);
    try {
      const [lastT, since] = await this.catchUp(tenant, lane);
      if (this.lanes.get(tenant) !== lane) throw appError('ERR_UNAVAILABLE', `tenant ${tenant} was released during its takeover`);
      // Another node appended past what the replay read: it still writes the tenant.
      if (lane.foreign > since) throw appError('ERR_UNAVAILABLE', `tenant ${tenant} is still written by another node`);
      lane.lastT = lastT;
      lane.since = since;
      lane.state = 'owned';
    } catch (err) {
      if (this.lanes.get(tenant) === lane) this.lanes.delete(tenant);
      // What the attempt brought here is let go as a released tenant's is.
      if (!this.closed && !this.lanes.has(tenant)) this.dropLater(tenant);
      if (!this.closed) this.log.warn({ err, tenant }, 'cluster: taking a tenant over failed');
      throw err;
    }
  }

  /**
   * Brings `tenant` in this node's LMDB up to the stream's head: everything of its two subjects
   * after its mark here (from the start when this node never held it) is applied, in order.
   * Resolves the tenant subject's last sequence, which the first append expects, and the sequence
   * the replay reached. The one place a tenant's state is rebuilt: a snapshot, when there is one,
   * belongs here, before the replay. A copy found wrong (diverged) is cleared first.
   */
  private async catchUp(tenant: string, lane: Lane): Promise<[number, number]> {
    const filter = this.names.tenantFilter(tenant);
    if (this.suspect.has(tenant)) {
      while ((await this.local.clearTenantSome(tenant, CLEAR_STEP)) > 0);
      await this.local.tenantCleared(tenant);
      this.suspect.delete(tenant);
    }
    let end = await this.lastSequence(filter);
    let snap = await this.restoreIfBehind(tenant, undefined);
    await this.replay(tenant, end);
    // Whatever the subjects hold is applied before this node appends behind it. Another node
    // appending meanwhile held a lease it was losing: a few rounds settle it. A newer snapshot
    // written meanwhile (by that node) may have purged what the replay needed: load it and replay.
    for (let round = 0; ; round++) {
      const last = await this.lastSequence(filter);
      const now = await this.snapshots.latest(tenant);
      if (last <= end && now?.seq === snap?.seq) {
        const [mark, n] = this.local.appliedMark(tenant);
        lane.snapStale = !now || now.manifest.seq < mark || (now.manifest.seq === mark && now.manifest.n < n) || !this.local.hasAppliedMark(tenant);
        lane.snapKeys = now?.manifest.entries ?? 0;
        return [await this.lastSequence(this.names.tenantSubject(tenant)), end];
      }
      if (round === 3) throw appError('ERR_UNAVAILABLE', `tenant ${tenant} is still written by another node`);
      snap = await this.restoreIfBehind(tenant, now);
      await this.replay(tenant, (end = last));
    }
  }

  /**
   * Loads the tenant's snapshot when it is ahead of what this node holds (or this node never held
   * the tenant: an empty DATA_DIR, or a tenant new to it); resolves the snapshot it looked at.
   */
  private async restoreIfBehind(
    tenant: string,
    known: { manifest: SnapshotManifest; seq: number } | undefined,
  ): Promise<{ manifest: SnapshotManifest; seq: number } | undefined> {
    const snap = known ?? (await this.snapshots.latest(tenant));
    if (!snap) return undefined;
    const [mark, n] = this.local.appliedMark(tenant);
    const m = snap.manifest;
    if (!this.local.hasAppliedMark(tenant) || m.seq > mark || (m.seq === mark && m.n > n)) await this.snapshots.restore(tenant, m);
    return snap;
  }

  /**
   * Stops holding `tenant`; batches still queued fail with 503 (their writers may retry). What it
   * holds here stays for droppedKeepMs, so a lease that flaps back is caught up from it cheaply
   * (catchUp reads only what it missed); then it is cleared (dropLater).
   */
  release(tenant: string): void {
    const lane = this.lanes.get(tenant);
    if (!lane) return;
    this.lanes.delete(tenant);
    lane.state = 'syncing';
    for (const p of lane.queue.splice(0)) p.reject(moved(tenant));
    if (!this.closed) this.dropLater(tenant);
  }

  // ---- copies of tenants let go ------------------------------------------------------------

  private keepMs(): number {
    return this.opts.droppedKeepMs ?? DROPPED_KEEP_MS;
  }

  /** Clears the tenant's copy here once droppedKeepMs passed, unless it is held again by then. */
  private dropLater(tenant: string): void {
    const ms = this.keepMs();
    if (ms <= 0 || this.dropped.has(tenant)) return;
    const timer = setTimeout(() => {
      this.dropped.delete(tenant);
      this.clearing = this.clearing.then(() => this.clearCopy(tenant));
    }, ms);
    timer.unref();
    this.dropped.set(tenant, timer);
  }

  /** The tenant is held again: its copy stays. */
  private keep(tenant: string): void {
    const timer = this.dropped.get(tenant);
    if (timer) clearTimeout(timer);
    this.dropped.delete(tenant);
  }

  /**
   * Tenants with a copy here that this node does not hold after a restart (it held them before it
   * stopped) are let go as release does: cleared after droppedKeepMs unless taken meanwhile.
   */
  private dropUnheld(): void {
    if (this.keepMs() <= 0) return;
    for (const tenant of this.local.appliedKeys()) {
      if (tenant !== GLOBAL_MARK && tenant !== POSITION_MARK && !isSystemTenant(tenant) && !this.lanes.has(tenant)) this.dropLater(tenant);
    }
  }

  /**
   * Deletes the tenant's keys in bounded steps, giving the loop back between them. Its mark goes
   * in the first step; a takeover that begins meanwhile stops the clear and finishes it itself
   * (the tenant is suspect until cleared, catchUp).
   */
  private async clearCopy(tenant: string): Promise<void> {
    if (this.lanes.has(tenant) || this.closed) return;
    this.suspect.add(tenant);
    try {
      for (;;) {
        if (this.lanes.has(tenant) || this.closed) return;
        if ((await this.local.clearTenantSome(tenant, CLEAR_STEP)) === 0) break;
        await new Promise<void>((resolve) => setImmediate(resolve));
      }
      await this.local.tenantCleared(tenant);
      if (!this.lanes.has(tenant)) this.suspect.delete(tenant);
      this.log.info({ tenant }, 'cluster: cleared the copy of a tenant this node let go');
    } catch (err) {
      if (!this.closed) this.log.warn({ err, tenant }, 'cluster: clearing a tenant this node let go failed; it is cleared before it is held again');
    }
  }

  private async lastSequence(subject: string): Promise<number> {
    try {
      const m = await this.jsm.streams.getMessage(this.names.stream, { last_by_subj: subject });
      return m?.seq ?? 0;
    } catch (err) {
      if (isNoMessage(err)) return 0;
      throw err;
    }
  }

  // ---- snapshots and the bounded stream ----------------------------------------------------

  private startSnapshots(): void {
    const [every, ms] = this.snapshotEvery();
    if (every <= 0 && ms <= 0) return;
    const tick = Math.max(50, Math.min(1000, ms > 0 ? Math.floor(ms / 4) : 1000));
    this.snapshotTimer = setInterval(() => {
      if (this.snapshotting || this.closed) return;
      const lane = this.dueLane();
      if (lane) this.snapshotting = this.snapshot(lane).finally(() => (this.snapshotting = undefined));
      else if (this.platformDue()) this.snapshotting = this.snapshotPlatform().finally(() => (this.snapshotting = undefined));
    }, tick);
    this.snapshotTimer.unref();
  }

  private snapshotEvery(): [number, number] {
    return [this.opts.snapshotEveryCommits ?? SNAPSHOT_EVERY_COMMITS, this.opts.snapshotEveryMs ?? SNAPSHOT_EVERY_MS];
  }

  /** The owned tenant whose snapshot is most overdue, if any is. */
  private dueLane(): Lane | undefined {
    const [every, ms] = this.snapshotEvery();
    const now = Date.now();
    let due: Lane | undefined;
    for (const lane of this.lanes.values()) {
      if (lane.state !== 'owned') continue;
      const byCount = every > 0 && lane.commits >= every;
      const byTime = ms > 0 && now - lane.snapAt >= ms && (lane.commits > 0 || lane.snapStale);
      // A stale snapshot (none, or behind this copy) is due as the settings say: nothing to amortise.
      // So is one of a tenant quiet for the interval: its tail is covered once, whatever its size,
      // and no more until it writes again (a copy after each busy spell, not one per commit).
      const quiet = byTime && now - lane.lastCommitAt >= ms;
      const worth = lane.snapStale || quiet || lane.commits * SNAPSHOT_KEYS_PER_COMMIT >= lane.snapKeys;
      if ((byCount || byTime) && worth && (!due || lane.snapAt < due.snapAt)) due = lane;
    }
    return due;
  }

  /** The platform's snapshot is due here: as a tenant's, by count or by time when anything changed. */
  private platformDue(): boolean {
    const [every, ms] = this.snapshotEvery();
    return (every > 0 && this.platformCommits >= every) || (ms > 0 && Date.now() - this.platformSnapAt >= ms && this.platformCommits > 0);
  }

  /**
   * Writes the platform's snapshot, unless another node wrote one since the applier last counted
   * (every node counts the same batches, so the first one due writes and the others stand down).
   */
  private async snapshotPlatform(): Promise<void> {
    const commits = this.platformCommits;
    const since = this.platformSnapAt;
    this.platformSnapAt = Date.now();
    try {
      const now = await this.platform.latest();
      if (now && now.manifest.o !== this.opts.nodeId && Date.parse(now.manifest.at) > since) {
        this.platformCommits -= Math.min(this.platformCommits, commits);
        return;
      }
      const m = await this.platform.write(() => !this.closed, () => this.platformFloor());
      if (m) this.platformCommits -= Math.min(this.platformCommits, commits);
    } catch (err) {
      if (!this.closed) this.log.warn({ err }, 'cluster: writing the platform snapshot failed; the next one retries');
    }
  }

  /** Writes the platform's snapshot now (tests, and an operator's drain). */
  async snapshotPlatformNow(): Promise<void> {
    await this.snapshotting;
    await (this.snapshotting = this.snapshotPlatform().finally(() => (this.snapshotting = undefined)));
  }

  /**
   * Writes the tenant's snapshot, then purges its `t` subject below what it covers. The purge
   * keeps the subject's last message, whose sequence the next append expects (an empty subject
   * would answer "wrong last sequence").
   */
  private async snapshot(lane: Lane): Promise<void> {
    const live = (): boolean => !this.closed && this.lanes.get(lane.tenant) === lane && lane.state === 'owned';
    const commits = lane.commits;
    try {
      const m = await this.snapshots.write(lane.tenant, live, (mark) => this.snapshotSettled(lane, mark[0], live));
      lane.snapAt = Date.now();
      if (!m) return;
      lane.commits -= Math.min(lane.commits, commits);
      lane.snapStale = false;
      lane.snapKeys = m.entries;
      const below = Math.min(m.seq, lane.lastT);
      if (live()) await purgeBelow(this.jsm, this.names.stream, this.names.tenantSubject(lane.tenant), below);
    } catch (err) {
      lane.snapAt = Date.now();
      if (!this.closed) this.log.warn({ err, tenant: lane.tenant }, 'cluster: writing a tenant snapshot failed; the next one retries');
    }
  }

  /**
   * Whether a snapshot of the lane's tenant up to `seq` holds everything of the tenant the stream
   * has up to there, asked before its manifest is published. The lane's own appends are in it
   * (each expected the last one). An `x` batch another node appended is in it only if the applier
   * applied it before the lane passed it: so the applier must have read every `x` message up to
   * `seq` (those after the stream's last `x` message now cannot be below `seq`), and the lane must
   * still be held, which foreignPart ends when one landed behind.
   */
  private async snapshotSettled(lane: Lane, seq: number, live: () => boolean): Promise<boolean> {
    const lastX = await this.lastSequence(this.names.platformFilter);
    const need = Math.min(seq, lastX);
    await this.waitApplied(need, SETTLE_MS);
    await this.applied;
    return this.position >= need && live() && this.lanes.get(lane.tenant) === lane;
  }

  /** Writes a snapshot of every tenant this node holds now (tests, and an operator's drain). */
  async snapshotAll(): Promise<void> {
    await this.snapshotting;
    for (const lane of [...this.lanes.values()]) {
      if (lane.state !== 'owned') continue;
      await (this.snapshotting = this.snapshot(lane).finally(() => (this.snapshotting = undefined)));
    }
  }

  /** Applies the tenant's messages from this node's mark up to `end` (inclusive), in order. */
  private async replay(tenant: string, end: number): Promise<void> {
    const [mark] = this.local.appliedMark(tenant);
    const start = Math.max(1, mark);
    if (start > end) return;
    const info = await this.jsm.consumers.add(this.names.stream, {
      filter_subject: this.names.tenantFilter(tenant),
      deliver_policy: DeliverPolicy.StartSequence,
      opt_start_seq: start,
      ack_policy: AckPolicy.None,
      inactive_threshold: 60_000 * 1e6,
      mem_storage: true,
    });
    try {
      let left = info.num_pending;
      let last: Promise<unknown> = Promise.resolve();
      const consumer = await this.js.consumers.get(this.names.stream, info.name);
      while (left > 0) {
        let got = 0;
        const batch = await consumer.fetch({ max_messages: Math.min(left, 1024), expires: 5000 });
        for await (const m of batch) {
          got++;
          left--;
          if (m.seq > end) {
            left = 0;
            break;
          }
          const where = this.names.parseLogSubject(m.subject);
          const msg = decode<LogMessage>(m.data);
          if (where?.kind === 't') {
            for (let i = 0; i < msg.b.length; i++) {
              last = this.quiet(this.local.commitApplied(batchOf(msg.b[i]), { key: tenant, seq: m.seq, n: i + 1 }));
            }
          } else if (where?.kind === 'x') {
            last = this.quiet(this.local.commitApplied(split(msg.b[0] ?? [], tenant)[0], { key: tenant, seq: m.seq, n: 1 }));
          }
          if (left === 0) break;
        }
        if (got === 0) throw appError('ERR_UNAVAILABLE', `the commit stream did not deliver tenant ${tenant}'s writes`);
        // One fetch of applies in flight at a time: a long tail does not pile up in memory.
        await last;
      }
      await last;
    } finally {
      await this.jsm.consumers.delete(this.names.stream, info.name).catch(noop);
    }
  }

  /** Appends a batch of a tenant this node holds; resolves once it is applied here. */
  commitOwned(tenant: string, batch: WriteBatch, mixed: boolean): Promise<void> {
    const lane = this.lanes.get(tenant);
    if (!lane || lane.state !== 'owned') return Promise.reject(moved(tenant));
    lane.commits++;
    lane.lastCommitAt = Date.now();
    return new Promise<void>((resolve, reject) => {
      lane.queue.push({ batch, mixed, resolve, reject });
      // The first append of a burst waits for the end of this event loop turn, so the batches of
      // every request the turn read go out as one message (one append, one acknowledgement), and
      // the appends of every tenant that turn touched leave in one socket write.
      if (!lane.pumping) {
        lane.pumping = true;
        this.due.push(lane);
        if (this.due.length === 1) setImmediate(this.pumpDue);
      }
    });
  }

  /** The linger under way, shared by every lane that lingers meanwhile. */
  private lingering: Promise<void> | undefined;

  /**
   * Resolves within `ms`. Lanes that linger at the same time wake in the same timer callback, so
   * their appends are published in one turn and leave in one socket write (one timer per lane
   * would flush each lane's append on its own).
   */
  private lingerTick(ms: number): Promise<void> {
    return (this.lingering ??= sleep(ms).then(() => {
      this.lingering = undefined;
    }));
  }

  /** Lanes whose first append waits for the end of the turn (commitOwned). */
  private readonly due: Lane[] = [];
  private readonly pumpDue = (): void => {
    for (const lane of this.due.splice(0)) void this.pump(lane);
  };

  private async pump(lane: Lane): Promise<void> {
    lane.pumping = true;
    try {
      let lingered = false;
      while (lane.queue.length > 0 && this.lanes.get(lane.tenant) === lane) {
        if (this.checked(lane.queue[0])) {
          await this.appendChecked(lane, lane.queue.shift()!);
          continue;
        }
        // In a burst, wait a moment for more of it: one message and one acknowledgement for
        // several turns' batches. A lone write (no append under way a moment ago) goes at once.
        // After the wait the loop looks again (the lane may have been released meanwhile).
        const linger = this.opts.commitLingerMs ?? 0;
        if (!lingered && linger > 0 && lane.queue.length < LINGER_FULL && performance.now() - lane.lastAppend < LINGER_BURST_MS) {
          lingered = true;
          await this.lingerTick(linger);
          continue;
        }
        lingered = false;
        lane.lastAppend = performance.now();
        await this.appendGroup(lane);
      }
    } finally {
      lane.pumping = false;
    }
  }

  /**
   * The owner decides the batch's outcome before appending it (appendChecked). Asked when the
   * batch is next to go, after every earlier declaration of the tenant landed (see there).
   */
  private checked(p: Pending): boolean {
    return p.mixed || this.local.needsStreamCheck(p.batch);
  }

  private async appendGroup(lane: Lane): Promise<void> {
    const group: Pending[] = [];
    while (group.length < MAX_GROUP && lane.queue.length > 0 && !this.checked(lane.queue[0])) group.push(lane.queue.shift()!);
    if (group.length === 0) return;
    const message = (): Uint8Array => encodeCompact({ o: this.opts.nodeId, e: lane.epoch, b: group.map((p) => p.batch.ops) } satisfies LogMessage);
    let data = message();
    while (data.length > this.maxPayload && group.length > 1) {
      lane.queue.unshift(...group.splice(group.length >> 1));
      data = message();
    }
    if (data.length > this.maxPayload) {
      group[0].reject(tooLarge(this.maxPayload));
      return;
    }
    let seq: number;
    try {
      seq = await this.appends.append(this.names.tenantSubject(lane.tenant), data, lane.lastT);
    } catch (err) {
      return this.laneFailed(lane, group, err);
    }
    lane.lastT = seq;
    let last: Promise<unknown> = lane.tail;
    for (let i = 0; i < group.length; i++) {
      const p = group[i];
      const c = this.local.commitApplied(p.batch, { key: lane.tenant, seq, n: i + 1 });
      c.then(() => p.resolve(), (err) => p.reject(err));
      last = c.catch(noop);
    }
    lane.tail = last;
  }

  /**
   * A batch whose outcome the owner decides before appending it, alone and behind every earlier
   * local apply: one that also writes platform data (a conflicting one is never appended, as every
   * other node applies its platform part), or one a node could not decide alike (a write into a
   * unique index the tenant declared, an index declared or deleted: TenantEnvs.streamRefusal). The
   * lane applies the tenant's part; every applier applies a platform part.
   */
  private async appendChecked(lane: Lane, p: Pending): Promise<void> {
    await lane.tail;
    const refused = this.local.streamRefusal(p.batch);
    if (refused) return p.reject(refused);
    const data = encodeCompact({ o: this.opts.nodeId, e: lane.epoch, b: [p.batch.ops] } satisfies LogMessage);
    if (data.length > this.maxPayload) return p.reject(tooLarge(this.maxPayload));
    let seq: number;
    try {
      seq = p.mixed
        ? await this.appends.append(this.names.mixedSubject(lane.tenant), data)
        : await this.appends.append(this.names.tenantSubject(lane.tenant), data, lane.lastT);
    } catch (err) {
      return this.laneFailed(lane, [p], err);
    }
    if (!p.mixed) lane.lastT = seq;
    else if (seq > this.platformAcked) this.platformAcked = seq;
    const own = this.local.commitApplied(p.mixed ? split(p.batch.ops, lane.tenant)[0] : p.batch, { key: lane.tenant, seq, n: 1 });
    lane.tail = own.catch(noop);
    const platform = p.mixed ? this.takeOutcome(seq) : undefined;
    Promise.all([own, platform]).then(() => p.resolve(), (err) => p.reject(err));
    // A unique index declared here holds the writes queued behind it to its check.
    if (p.batch.ops.some((o) => o.op === 'declareIndex')) await lane.tail;
  }

  private laneFailed(lane: Lane, group: Pending[], err: unknown): void {
    const stale = isWrongLastSequence(err);
    if (!this.closed) this.log.warn({ err, tenant: lane.tenant, stale }, 'cluster: append to the commit stream failed; dropping the tenant');
    // Not appended, or appended without our knowing (a lost acknowledgement): either way the
    // writer gets a 503 it may retry, and the tenant is taken over afresh (with a replay).
    const e = appError('ERR_UNAVAILABLE', `the write could not be made durable; retry`);
    for (const p of group) p.reject(e);
    this.release(lane.tenant);
    this.opts.onLaneFailed(lane.tenant, err);
  }

  /** Appends a platform-wide batch (any node); resolves once this node's applier applied it. */
  async commitGlobal(batch: WriteBatch): Promise<void> {
    const data = encodeCompact({ o: this.opts.nodeId, b: [batch.ops] } satisfies LogMessage);
    if (data.length > this.maxPayload) throw tooLarge(this.maxPayload);
    let seq: number;
    try {
      seq = await this.appends.append(this.names.globalSubject, data);
    } catch (err) {
      throw new AppError('ERR_UNAVAILABLE', ['the write could not be made durable; retry'], { cause: err });
    }
    if (seq > this.platformAcked) this.platformAcked = seq;
    await this.takeOutcome(seq);
  }

  private takeOutcome(seq: number): Promise<void> {
    const o = this.outcome(seq);
    return o.d.promise.finally(() => {
      if (o.timer) clearTimeout(o.timer);
      this.outcomes.delete(seq);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    // Let lanes finish what was acknowledged, then save where a restart resumes.
    await Promise.allSettled([...this.lanes.values()].map((l) => l.tail));
    await this.applied.catch(noop);
    await this.savePosition();
    this.closed = true;
    if (this.saver) clearInterval(this.saver);
    if (this.positionTimer) clearInterval(this.positionTimer);
    await this.telling?.catch(noop);
    await this.positions.forget();
    await this.replacing;
    if (this.snapshotTimer) clearInterval(this.snapshotTimer);
    for (const timer of this.dropped.values()) clearTimeout(timer);
    this.dropped.clear();
    await this.snapshotting;
    await this.clearing;
    for (const tenant of [...this.lanes.keys()]) this.release(tenant);
    this.appends.close();
    try {
      await this.messages?.close();
    } catch {
      // the connection is already gone
    }
  }
}

function moved(tenant: string): AppError {
  return new AppError('ERR_UNAVAILABLE', [`tenant ${tenant} is moving to another node; retry`], { headers: { 'retry-after': '1' } });
}

function tooLarge(limit: number): AppError {
  return appError('ERR_PAYLOAD_TOO_LARGE', limit);
}
