// One node of a cluster (DESIGN: Cluster mode): started by the app when NATS_URL is set. It owns
// the NATS pieces: membership heartbeats, tenant leases (leases.ts), the commit log (commit-log.ts)
// and the request subjects other nodes use to reach this one:
//
//   <prefix>.node.<id>.http     a forwarded HTTP request (served by the edge's pipeline, no HTTP)
//   <prefix>.node.<id>.ask      an actor ask for a tenant this node owns
//   <prefix>.node.<id>.commit   a tenant's write batch, appended by its owner
//
// Ownership. A tenant is served by exactly one node, the holder of its lease. A node that needs a
// tenant nobody holds sends the work to the live node rendezvous hashing picks (so every node picks
// the same one and tenants spread), and a node asked to serve a tenant nobody holds claims it. A
// claim is followed by the takeover replay before anything of the tenant is served. Leases are
// renewed every third of their TTL; a renewal that finds someone else's lease, or a failed append,
// drops the tenant here at once (its actors are evicted).
//
// Retries. A request whose owner has no responder (it died, or is not up yet), or that the
// receiver refuses because it does not hold the tenant, is retried against the new owner until
// `retryMs` is spent, then fails 503 with Retry-After: never a hang. A request the owner received
// but did not answer in time is not retried (it may have run): 503 too.
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { ActorRuntime, RemoteAsk } from '../actor/runtime.js';
import type { ClusterSettings } from '../config.js';
import { AppError, appError, fromWire, toWire, type WireError } from '../errors.js';
import type { Logger } from '../log.js';
import type { TenantEnvs } from './tenant-envs.js';
import { WriteBatch, type WriteOp } from '../store/store.js';
import { decode, encode } from './codec.js';
import { CommitLog } from './commit-log.js';
import { TenantLeases } from './leases.js';
import { Membership } from './membership.js';
import { ClusterNames } from './names.js';
import { NodeRequests, type What } from './node-requests.js';
import { rendezvous, type Placement } from './placement.js';
import { ReplicatedStore } from './replicated-store.js';

/** The `cluster` block of the configuration (its meaning is documented there), plus the node. */
export interface ClusterOptions extends ClusterSettings {
  natsUrl: string;
  nodeId: string;
  local: TenantEnvs;
  logger: Logger;
}

/**
 * A forwarded HTTP request, as the first node's edge read it: the route it matched there (the
 * owner serves the same route table), its raw parameters, and the caller's address.
 */
export interface ForwardedRequest {
  /** `<METHOD> <path pattern>` of the matched route. */
  route: string;
  method: string;
  url: string;
  query: string;
  params: Record<string, string>;
  headers: Record<string, string>;
  ip: string;
  body?: Uint8Array;
}

/** The owner's answer, relayed as it is. */
export interface ForwardedResponse {
  status: number;
  headers: Array<[string, string]>;
  body: Uint8Array;
}

interface NodeRequest {
  t: string;
  /** ask: kind, key, message */
  k?: string;
  y?: string;
  m?: unknown;
  /** commit: ops and whether the batch also writes platform data */
  b?: WriteOp[];
  x?: boolean;
  /** http */
  r?: ForwardedRequest;
}

interface NodeReply {
  ok?: unknown;
  /** The owner's last acknowledged stream sequence when it answered (read-your-writes). */
  s?: number;
  err?: WireError;
  /** The receiver does not hold the tenant: who does, if it knows ('' when it does not). */
  moved?: string;
}

type SendResult =
  | { kind: 'ok'; value: unknown; seq: number }
  | { kind: 'err'; err: AppError }
  | { kind: 'moved'; to: string }
  | { kind: 'gone' }
  | { kind: 'lost' }
  | { kind: 'timeout' };

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const noop = () => {};

function unavailable(message: string, retryAfter = '1'): AppError {
  return new AppError('ERR_UNAVAILABLE', [message], { headers: { 'retry-after': retryAfter } });
}

interface Held {
  revision: number;
  renewing: boolean;
}

export class ClusterNode implements Placement {
  readonly nodeId: string;
  readonly store: ReplicatedStore;
  private readonly names: ClusterNames;
  private readonly held = new Map<string, Held>();
  private readonly claims = new Map<string, Promise<string>>();
  private readonly ownerCache = new Map<string, string>();
  private readonly requests: NodeRequests;
  private readonly renewer: NodeJS.Timeout;
  private runtime: ActorRuntime | undefined;
  private httpHandler: ((req: ForwardedRequest) => Promise<ForwardedResponse>) | undefined;
  private closed = false;
  private closing: Promise<void> | undefined;
  /** Takeovers and drops, for /metrics and tests. */
  readonly counters = { takeovers: 0, drops: 0, forwarded: 0, retries: 0 };

  private constructor(
    private readonly opts: ClusterOptions,
    private readonly nc: NatsConnection,
    private readonly membership: Membership,
    private readonly leases: TenantLeases,
    private readonly log: CommitLog,
  ) {
    this.nodeId = opts.nodeId;
    this.names = new ClusterNames(opts.prefix);
    this.requests = new NodeRequests({ nc, names: this.names, logger: opts.logger, timeoutMs: opts.forwardTimeoutMs, lingerMs: opts.forwardLingerMs, isLive: (n) => membership.isLive(n) });
    this.store = new ReplicatedStore(opts.local, log, (tenant, batch, mixed) => this.remoteCommit(tenant, batch, mixed));
    this.renewer = setInterval(() => this.renew(), Math.max(100, Math.floor(opts.leaseTtlMs / 3)));
    this.renewer.unref();
    this.respond('ask', (r) => this.runtime!.askLocal(r.t, r.k!, r.y!, r.m));
    this.respond('commit', (r) => {
      const b = new WriteBatch();
      for (const o of r.b ?? []) b.ops.push(o);
      return this.log.commitOwned(r.t, b, r.x === true);
    });
    this.respond('http', (r) => {
      if (!this.httpHandler) throw unavailable('this node is not serving HTTP yet');
      return this.httpHandler(r.r!);
    });
  }

  /** Connects, opens the lease bucket and the commit stream, and catches up with the stream. */
  static async start(opts: ClusterOptions): Promise<ClusterNode> {
    ClusterNames.assertNodeId(opts.nodeId);
    const names = new ClusterNames(opts.prefix);
    const servers = opts.natsUrl.split(',').map((s) => s.trim()).filter(Boolean);
    let nc: NatsConnection;
    try {
      // No async traces: each request (every append is one) would build an Error for its stack.
      nc = await connect({ servers, name: `cluster-${opts.nodeId}`, maxReconnectAttempts: -1, reconnectTimeWait: 500, noAsyncTraces: true });
    } catch (err) {
      throw new Error(`cannot connect to NATS at ${opts.natsUrl}: ${(err as Error).message}`, { cause: err });
    }
    let node: ClusterNode | undefined;
    try {
      const leases = await TenantLeases.open(nc, names, opts.nodeId, opts.leaseTtlMs, opts.replicas);
      const log = await CommitLog.open({
        nc,
        names,
        local: opts.local,
        nodeId: opts.nodeId,
        replicas: opts.replicas,
        logger: opts.logger,
        publishTimeoutMs: Math.max(2000, Math.min(opts.forwardTimeoutMs, 10_000)),
        onLaneFailed: (tenant) => node?.drop(tenant, true),
        snapshotEveryCommits: opts.snapshotEveryCommits,
        snapshotEveryMs: opts.snapshotEveryMs,
        commitLingerMs: opts.commitLingerMs,
        droppedKeepMs: opts.droppedKeepMs,
        positionKeepMs: opts.positionKeepMs,
      });
      const membership = new Membership(nc, names.heartbeat, opts.nodeId, opts.heartbeatMs);
      node = new ClusterNode(opts, nc, membership, leases, log);
      await nc.flush();
      void node.watch();
      opts.logger.info({ nodeId: opts.nodeId, stream: names.stream, leaseTtlMs: opts.leaseTtlMs, replicas: opts.replicas }, 'cluster: joined');
      return node;
    } catch (err) {
      await nc.close().catch(noop);
      throw err;
    }
  }

  private async watch(): Promise<void> {
    for await (const s of this.nc.status()) {
      if (s.type === 'disconnect') this.opts.logger.warn({ server: s.server }, 'cluster: NATS disconnected');
      else if (s.type === 'reconnect') {
        this.opts.logger.info({ server: s.server }, 'cluster: NATS reconnected');
        this.log.reconnected();
      }
    }
  }

  /** Serves forwarded asks with this runtime, and evicts its actors of tenants that move. */
  attachRuntime(runtime: ActorRuntime): void {
    this.runtime = runtime;
  }

  /** Answers HTTP requests other nodes forward here (the edge serves them through its pipeline). */
  serveHttp(handler: (req: ForwardedRequest) => Promise<ForwardedResponse>): void {
    this.httpHandler = handler;
  }

  // ---- placement --------------------------------------------------------------------------

  owns(tenant: string): boolean {
    return this.held.has(tenant) && this.log.isOwned(tenant);
  }

  ownerOf(tenant: string): Promise<string> {
    return this.acquire(tenant, false);
  }

  /** Claims `tenant` for this node unless another node holds it; resolves the owner (ops, tests). */
  takeTenant(tenant: string): Promise<string> {
    return this.acquire(tenant, true);
  }

  /** Tenants this node serves now. */
  ownedTenants(): string[] {
    return [...this.held.keys()].filter((t) => this.owns(t));
  }

  liveNodes(): string[] {
    return this.membership.live();
  }

  /**
   * The owner of `tenant`; this node when it holds it or just claimed it. `force`: claim a tenant
   * nobody holds even when another node would be the rendezvous choice (a request was sent here).
   */
  private acquire(tenant: string, force: boolean): Promise<string> {
    if (this.owns(tenant)) return Promise.resolve(this.nodeId);
    if (this.closed) return Promise.reject(unavailable('this node is stopping'));
    const pending = this.claims.get(tenant);
    if (pending) return pending;
    const cached = this.ownerCache.get(tenant);
    if (cached !== undefined && !force && this.membership.isLive(cached)) return Promise.resolve(cached);
    const p = this.resolveOwner(tenant, force).finally(() => this.claims.delete(tenant));
    this.claims.set(tenant, p);
    return p;
  }

  private async resolveOwner(tenant: string, force: boolean): Promise<string> {
    const h = await this.leases.holder(tenant);
    if (h && h.node !== this.nodeId) {
      this.ownerCache.set(tenant, h.node);
      return h.node;
    }
    if (h) {
      // Our own lease: from before a restart with the same NODE_ID, or one being dropped. Adopt it.
      const r = await this.leases.renew(tenant, h.revision);
      if (!r.ok) throw unavailable(`tenant ${tenant} changed hands; retry`);
      await this.takeOver(tenant, r.revision);
      return this.nodeId;
    }
    if (!force) {
      const pick = rendezvous(tenant, this.membership.live());
      if (pick !== undefined && pick !== this.nodeId) return pick;
    }
    const c = await this.leases.claim(tenant);
    if ('revision' in c) {
      await this.takeOver(tenant, c.revision);
      return this.nodeId;
    }
    if (c.holder && c.holder.node !== this.nodeId) {
      this.ownerCache.set(tenant, c.holder.node);
      return c.holder.node;
    }
    throw unavailable(`tenant ${tenant} changed hands; retry`);
  }

  private async takeOver(tenant: string, revision: number): Promise<void> {
    const held: Held = { revision, renewing: false };
    this.held.set(tenant, held);
    try {
      await this.log.takeOver(tenant);
      this.runtime?.evictTenant(tenant);
      // Timers the previous owner armed (reminders, escalations) are armed here now.
      this.runtime?.services.scheduler.armTenant(tenant);
    } catch (err) {
      if (this.held.get(tenant) === held) {
        this.held.delete(tenant);
        this.log.release(tenant);
        await this.leases.release(tenant, held.revision);
      }
      throw err;
    }
    this.ownerCache.delete(tenant);
    this.counters.takeovers++;
    this.opts.logger.info({ tenant, nodeId: this.nodeId }, 'cluster: took tenant over');
  }

  /** Stops serving `tenant` here (lease lost, or an append failed). */
  drop(tenant: string, release: boolean): void {
    const held = this.held.get(tenant);
    if (!held) return;
    this.held.delete(tenant);
    this.log.release(tenant);
    this.runtime?.evictTenant(tenant);
    this.ownerCache.delete(tenant);
    this.counters.drops++;
    this.opts.logger.warn({ tenant, nodeId: this.nodeId }, 'cluster: dropped tenant');
    if (release) void this.leases.release(tenant, held.revision);
  }

  private renew(): void {
    for (const [tenant, held] of this.held) {
      if (held.renewing) continue;
      held.renewing = true;
      void this.leases.renew(tenant, held.revision).then((r) => {
        held.renewing = false;
        if (this.held.get(tenant) !== held) return;
        if (r.ok) held.revision = r.revision;
        else if (r.lost) this.drop(tenant, false);
        else if (!this.closed) this.opts.logger.warn({ err: r.err, tenant }, 'cluster: lease renewal failed; will retry');
      });
    }
  }

  // ---- requests to owners -----------------------------------------------------------------

  /** The runtime's hook: undefined when this node serves the ask, else the owner's answer. */
  readonly remoteAsk: RemoteAsk = (tenant, kind, key, msg) => {
    if (this.owns(tenant)) return undefined;
    return this.route(tenant, 'ask', { t: tenant, k: kind, y: key, m: msg }, true, () => this.runtime!.askLocal(tenant, kind, key, msg));
  };

  private remoteCommit(tenant: string, batch: WriteBatch, mixed: boolean): Promise<void> {
    return this.route(tenant, 'commit', { t: tenant, b: batch.ops, x: mixed }, true, () =>
      this.log.commitOwned(tenant, batch, mixed),
    ) as Promise<void>;
  }

  /**
   * Sends an HTTP request to the owner of `tenant` and resolves its answer; undefined when this
   * node turned out to be the owner (it just took the tenant): the caller serves it itself.
   */
  forwardHttp(tenant: string, req: ForwardedRequest): Promise<ForwardedResponse | undefined> {
    this.counters.forwarded++;
    return this.route(tenant, 'http', { t: tenant, r: req }, false, () => undefined) as Promise<ForwardedResponse | undefined>;
  }

  private async route(tenant: string, what: What, req: NodeRequest, readYourWrites: boolean, here: () => unknown): Promise<unknown> {
    const data = encode(req);
    if (data.length > this.requests.maxFrame) throw appError('ERR_PAYLOAD_TOO_LARGE', this.requests.maxFrame);
    const deadline = Date.now() + this.opts.retryMs;
    let delay = 20;
    let hops = 0;
    for (;;) {
      if (this.closed) throw unavailable('this node is stopping');
      let owner: string | undefined;
      try {
        owner = await this.acquire(tenant, false);
      } catch (err) {
        if (!(err instanceof AppError)) this.opts.logger.warn({ err, tenant }, 'cluster: finding the owner failed; will retry');
      }
      if (owner === this.nodeId) return here();
      if (owner !== undefined) {
        const r = await this.send(owner, what, data);
        switch (r.kind) {
          case 'ok':
            if (readYourWrites && r.seq > 0) await this.log.waitApplied(r.seq, 2000);
            return r.value;
          case 'err':
            throw r.err;
          case 'timeout':
            throw unavailable(`the node serving tenant ${tenant} did not answer in time`, '2');
          case 'lost':
            this.ownerCache.delete(tenant);
            throw unavailable(`the node serving tenant ${tenant} stopped while answering`);
          case 'moved':
            if (r.to && r.to !== owner) {
              this.ownerCache.set(tenant, r.to);
              if (++hops <= 3) continue;
            } else this.ownerCache.delete(tenant);
            break;
          case 'gone':
            this.ownerCache.delete(tenant);
            break;
        }
      }
      if (Date.now() + delay > deadline) throw unavailable(`no node can serve tenant ${tenant} right now`, '2');
      this.counters.retries++;
      await sleep(delay);
      delay = Math.min(delay * 2, 250);
    }
  }

  private async send(owner: string, what: What, data: Uint8Array): Promise<SendResult> {
    const o = await this.requests.send(owner, what, data);
    if (o.kind !== 'answer') return o;
    const reply = decode<NodeReply>(o.frame);
    if (reply.moved !== undefined) return { kind: 'moved', to: reply.moved };
    if (reply.err !== undefined) return { kind: 'err', err: fromWire(reply.err) };
    return { kind: 'ok', value: reply.ok, seq: reply.s ?? 0 };
  }

  private respond(what: What, handler: (req: NodeRequest) => unknown): void {
    this.requests.serve(this.nodeId, what, (frame) => this.answer(frame, handler));
  }

  private async answer(frame: Uint8Array, handler: (req: NodeRequest) => unknown): Promise<Uint8Array> {
    let reply: NodeReply;
    try {
      const req = decode<NodeRequest>(frame);
      let owner: string;
      try {
        owner = await this.acquire(req.t, true);
      } catch {
        owner = '';
      }
      if (owner !== this.nodeId) reply = { moved: owner };
      else reply = { ok: await handler(req), s: this.log.platformAcked };
    } catch (err) {
      if (!(err instanceof AppError)) this.opts.logger.error({ err }, 'cluster: serving a forwarded request failed');
      reply = { err: toWire(err) };
    }
    const out = encode(reply);
    if (out.length <= this.requests.maxFrame) return out;
    return encode({ err: toWire(appError('ERR_UNAVAILABLE', 'the answer is too large to relay between nodes')) });
  }

  /** Stops answering, lets the commit log settle, gives the leases up, and disconnects. */
  close(): Promise<void> {
    this.closing ??= this.shutdown();
    return this.closing;
  }

  private async shutdown(): Promise<void> {
    clearInterval(this.renewer);
    await this.requests.close();
    this.closed = true;
    this.membership.close();
    await this.log.close();
    const held = [...this.held.entries()];
    this.held.clear();
    await Promise.allSettled(held.map(([tenant, h]) => this.leases.release(tenant, h.revision)));
    try {
      await this.nc.drain();
    } catch {
      // already closed
    }
  }
}
