// Composition: one node of the service. Opens the store, the bus and the actor runtime, registers
// every module's actors, indexes and routes, and serves them on the uWS edge. Tests start it on
// port 0 with a temp data directory; edge/main.ts starts it from the environment.
import { join } from 'node:path';
import { ActorRuntime } from '../core/actor/runtime.js';
import type { NodeServices } from '../core/actor/services.js';
import type { ChatFeature } from './sockets/chat-feature.js';
import { createAiProvider, faqsIn, type FaqSource } from '../core/ai.js';
import { orgLookup } from '../core/auth/org-lookup.js';
import { DEFAULT_DOOR_SETTINGS, DoorBacklog, type MaterializeStep } from '../actors/scanner/index.js';
import { SCANNER } from '../actors/scanner/index.js';
import { EventMedia } from './event-media.js';
import { StoreRevocations } from '../core/auth/revocations.js';
import { TokenService } from '../core/auth/tokens.js';
import type { Bus } from '../core/bus/bus.js';
import { createBus } from '../core/bus/index.js';
import { systemClock, type Clock } from '../core/clock.js';
import { loadConfig, resolveJwtSecret, type Config } from '../core/config.js';
import { createLogger, type Logger } from '../core/log.js';
import { LocalOutbox, type OutboxProvider } from '../core/outbox.js';
import { OutboxDispatcher } from '../core/outbox-dispatcher.js';
import { largeFreeList } from '../core/store/compact.js';
import { LmdbStore } from '../core/store/lmdb-store.js';
import type { Store } from '../core/store/store.js';
import { Scheduler } from '../core/scheduler.js';
import { storageQuota } from './storage-quota.js';
import { journalHolds } from '../core/store/write-journal.js';
import { createQueryPool, type QueryPool } from '../core/query/pool.js';
import { QUERY_JOBS } from './query-jobs.js';
import { configurePoolWork } from '../core/pool-work.js';
import type { ClusterNode } from '../core/cluster/node.js';
import { OwnerReads } from '../core/cluster/owner-reads-actor.js';
import { ClusterForwarder } from './cluster-forward.js';
import type { AppDeps, CredentialResolver } from './deps.js';
import type { ModuleNode } from './module.js';
import { HttpEdge } from './http-server.js';
import { HttpMetrics } from './metrics.js';
import { PeriodicJobs } from './periodic.js';
import type { StorefrontServices } from '../actors/storefront/index.js';
import { loadModules, type ModuleRef } from './modules.js';
import { buildOpenApi } from './openapi.js';
import type { RouteDef } from './route.js';
import { systemRoutes } from './routes/system.js';
import { WebhookHub } from '../core/webhooks/hub.js';
import { WebhookDispatcher } from '../core/webhooks/dispatcher.js';
import { WEBHOOKS, WEBHOOKS_KEY, type EndpointChange } from '../actors/webhooks/index.js';

export interface StartOptions {
  /** Config overrides applied over config/default.json (the environment still wins). */
  config?: Record<string, unknown>;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
  clock?: Clock;
  /**
   * The modules this node runs, by name (edge/modules.ts) or as objects (a test's own); each
   * brings the modules it requires. Every module of edge/modules.ts when absent.
   */
  modules?: readonly ModuleRef[];
  bus?: Bus;
  /** Replaces the configured outbox provider (tests). */
  outbox?: OutboxProvider;
}

export interface RunningApp {
  readonly deps: AppDeps;
  readonly config: Config;
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly edge: HttpEdge;
  /** Cluster mode only: this node's membership, leases and commit log. */
  readonly cluster?: ClusterNode;
  /** Sends queued outbox messages after their writes commit (tests drive it with runOnce/drain). */
  readonly outboxDispatcher: OutboxDispatcher;
  close(): Promise<void>;
}

export async function startApp(opts: StartOptions = {}): Promise<RunningApp> {
  const config = loadConfig(opts.config, opts.env ?? process.env);
  const logger = opts.logger ?? createLogger(config.logLevel);
  const clock = opts.clock ?? systemClock;
  const secret = resolveJwtSecret(config, (m) => logger.warn(m));
  // Before the store opens: a module that does not exist stops the start with nothing to close.
  const mods = await loadModules(opts.modules);
  // What every LMDB environment of this node opens with: the node's own and, in cluster mode, each
  // tenant's (core/cluster/tenant-envs.ts, which shares this one's record cache).
  const envOptions = {
    limits: config.store,
    durability: config.store.durability,
    maxRecordBytes: config.documents.maxRecordBytes,
    documentLimits: config.documents,
    logger,
    quota: storageQuota(config),
    minFreeDiskBytes: config.quotas.minFreeDiskBytes,
    indexBuildStep: config.store.indexBuildStep,
  };
  const lmdb = new LmdbStore({
    ...envOptions,
    path: config.dataDir,
    mapSizeGiB: config.store.mapSizeGiB,
    recordCache: { maxBytes: config.store.recordCacheMb * 2 ** 20, tenantMaxBytes: config.store.recordCacheTenantMb * 2 ** 20 },
  });
  // Chat messages are acknowledged from the store's write journal (CHAT_DURABILITY), replayed here
  // after a crash before anything reads (with CHAT_DURABILITY=store too: an earlier run may have
  // journaled). In cluster mode every write goes through the commit stream instead (its own
  // durability), so a node there has no journal.
  const journalDir = join(config.dataDir, 'journal');
  if (!config.natsUrl) {
    if (config.chat.durability !== 'store') await lmdb.openJournal({ dir: journalDir, sync: config.chat.durability, intervalMs: config.chat.journalMs });
    else await lmdb.replayJournal(journalDir);
  } else if (journalHolds(journalDir)) {
    logger.warn(
      { dir: journalDir },
      'this data directory holds chat writes journaled by a single-node run that a cluster node does not replay: start it once without NATS_URL (it replays them), then in the cluster',
    );
  }
  // Data stored before usage was counted is counted once, here, before any request can write.
  const started = Date.now();
  const counted = lmdb.backfillUsage();
  if (counted) logger.info({ ...counted, ms: Date.now() - started }, 'counted the storage each organisation used before usage was counted');
  // Bulk writes leave LMDB a free list that every commit saves again (core/store/compact.ts).
  const pages = lmdb.pages();
  if (largeFreeList(pages.free, pages.total)) {
    logger.warn(
      { freePages: pages.free, pages: pages.total, dataDir: config.dataDir },
      'the store has a large free list, which slows every commit: stop the server and run npm run compact',
    );
  }
  // Client queries run in worker threads, each under a budget. They start now, with every job
  // module loaded, and /readyz says ready only once they have: the first query after a start does
  // not wait for a thread to start (QUERY_WARM_AT_START false: they start with the first query).
  // Undecodable records the workers meet count with the node's (LmdbStore.noteUnreadable).
  const queries = createQueryPool(config, logger, (n) => lmdb.noteUnreadable(n), QUERY_JOBS);
  if (config.query.warmAtStart) queries.start();
  const bus = opts.bus ?? (await createBus({ natsUrl: config.natsUrl ?? undefined, logger }));
  // Cluster mode (NATS_URL): writes go through the commit stream, a tenant's actors and requests
  // live on its owner. Without NATS none of it is loaded.
  const cluster = config.natsUrl ? await (await import('./cluster.js')).startCluster(config, lmdb, envOptions, logger) : undefined;
  const store = cluster?.store ?? lmdb;
  const forwarder = cluster ? new ClusterForwarder(cluster) : undefined;
  // Hashing and media files share libuv's thread pool with LMDB's commits: they take turns.
  configurePoolWork(config.poolWork);
  const tokens = new TokenService(secret, {
    accessTtlSeconds: config.auth.accessTokenTtlSeconds,
    refreshTtlSeconds: config.auth.refreshTokenTtlSeconds,
    cacheSize: config.auth.tokenCacheSize,
    clock,
    // Deleting, disabling or revoking writes a record every node's store receives (core/auth/revocations.ts).
    revocations: new StoreRevocations(store),
    skewSeconds: config.auth.tokenSkewSeconds,
  });
  const routes: RouteDef[] = [];
  const credentials: CredentialResolver[] = [];
  const local = () => new LocalOutbox(store, clock, logger);
  // The SMTP client library is loaded only by a node configured to send through it.
  const smtp = async () => new (await import('../core/outbox-smtp.js')).SmtpOutbox(store, config.providers.smtp, new LocalOutbox(store, clock), clock, logger);
  const outbox = opts.outbox ?? (config.providers.outbox === 'smtp' ? await smtp() : local());
  // The payment gateways (the Stripe SDK among them) are loaded, built and a bad payments config
  // refused, before the node listens, by a node that runs the storefront, the port's only user.
  const storefront = mods.some((m) => m.name === 'storefront') ? await storefrontServices(config, store, clock, logger) : undefined;
  // The node's ports (core/actor/services.ts), built once here: every actor reaches them as
  // ctx.services, every module as deps.services. An area that declares a port makes this fail to
  // compile until the port is provided.
  // The socket channels (socket.io among them), whose fan-out and AI provider are the chat area's
  // ports, are loaded and built by a node that runs the chat module, their only user.
  // An AI answer reads the tenant's FAQs on its owner, once the runtime is there (ownerReads below).
  let faqs: FaqSource = (tenant) => faqsIn(store, tenant);
  const sockets = mods.some((m) => m.name === 'chat')
    ? new (await import('./sockets/chat-feature.js')).ChatFeature({ config, bus, clock, logger, ai: createAiProvider(config.providers.ai, (tenant) => faqs(tenant), logger), orgs: orgLookup(store) })
    : undefined;
  const chat = (port: string): ChatFeature => {
    if (!sockets) throw new Error(`the port ${port} belongs to the chat module, which this node does not run`);
    return sockets;
  };
  // Which endpoints want an event, from memory on every node (core/webhooks/hub.ts).
  const webhooks = new WebhookHub(store, bus);
  const services: NodeServices = {
    outbox,
    // In cluster mode a node runs the jobs of the tenants it serves only.
    scheduler: new Scheduler({ store, clock, logger, serves: cluster ? (tenant) => cluster.owns(tenant) : undefined }),
    webhooks,
    get sockets() {
      return chat('sockets');
    },
    get chatFanout() {
      return chat('chatFanout').fanout;
    },
    get ai() {
      return chat('ai').ai;
    },
    // Asks the node's runtime, which exists by the time anything falls behind.
    doorBacklog: new DoorBacklog(
      store,
      (tenant, eventId, max) => runtime.ask<MaterializeStep>(tenant, SCANNER, eventId, { type: 'materialize', max }),
      config.door ?? DEFAULT_DOOR_SETTINGS,
    ),
    eventMedia: new EventMedia(config, store, logger),
    // Read by the storefront's actors and routes only: a node without that module has no gateways.
    get storefront(): StorefrontServices {
      if (!storefront) throw new Error('the port storefront belongs to the storefront module, which this node does not run');
      return storefront;
    },
  };
  const runtime = new ActorRuntime({ store, services, bus, clock, logger, idleMs: config.actors.idleMs, remote: cluster?.remoteAsk });
  cluster?.attachRuntime(runtime);
  // Reads of a tenant's data run where the tenant is served (core/cluster/owner-reads-actor.ts).
  const ownerReads = new OwnerReads(runtime);
  runtime.register(ownerReads.actor);
  const faqsOnOwner = ownerReads.define('ai.faqs', (tenant, _: null) => faqsIn(store, tenant));
  faqs = (tenant) => faqsOnOwner(tenant, null);
  let openapi: Record<string, unknown> | undefined;
  const deps: AppDeps = {
    config,
    store,
    queries,
    runtime,
    ownerReads,
    bus,
    tokens,
    clock,
    logger,
    outbox,
    services,
    periodic: new PeriodicJobs(logger),
    credentials,
    routes,
    openapi: () =>
      (openapi ??= buildOpenApi(routes, {
        title: 'Business Platform API',
        version: '0.1.0',
        description: 'Multi-tenant business platform API: generated from the live route table.',
      })),
  };

  for (const m of mods) for (const a of m.actors ?? []) runtime.register(a);
  for (const m of mods) for (const [datatype, path] of m.indexes ?? []) await store.declareIndex(datatype, path);
  for (const m of mods) for (const shape of m.listings ?? []) await store.declareListing(shape);

  let ready = false;
  const metrics = new HttpMetrics(runtime, store);
  routes.push(
    ...systemRoutes({
      // Workers started with the first query (QUERY_WARM_AT_START=false) are not waited for.
      ready: () => ready && (queries.warm || !config.query.warmAtStart),
      metrics: async () => ({ contentType: metrics.contentType, body: await metrics.render() }),
      openapi: deps.openapi,
    }),
  );
  // Each module's part of this node (Module.perNode): what it keeps per node lives in its closure.
  const parts: Array<ModuleNode | undefined> = [];
  for (const m of mods) {
    const part = m.perNode?.(deps);
    parts.push(part);
    if (m.routes) routes.push(...m.routes(deps));
    if (part?.routes) routes.push(...part.routes);
  }

  const edge = new HttpEdge({ deps, routes, metrics, logger, forwarder });
  for (const [i, m] of mods.entries()) {
    m.attach?.(edge, deps);
    parts[i]?.attach?.(edge);
  }
  for (const [i, m] of mods.entries()) {
    await m.start?.(deps);
    await parts[i]?.start?.();
  }
  // After every module registered its job kinds: stored jobs of every kind are armed at once.
  services.scheduler.start();
  // In cluster mode only the tenants this node owns: their writes, and so their messages, are ours.
  const outboxDispatcher = new OutboxDispatcher({
    ...config.outbox,
    store,
    provider: outbox,
    clock,
    logger,
    tenants: () => (cluster ? cluster.ownedTenants() : store.listOrgIds()),
  });
  outboxDispatcher.start();
  // Webhook deliveries, from the same tenants: each event is sent by one node of a cluster.
  const webhookDispatcher = new WebhookDispatcher({
    store,
    clock,
    logger,
    settings: { ...config.webhooks, responseCap: config.webhooks.responseCapBytes },
    tenants: () => (cluster ? cluster.ownedTenants() : store.listOrgIds()),
    answered: () => metrics.answered,
    // This node stops queueing for it at once; the others when the actor's publication reaches them.
    onFailing: async (tenant, id, since) => {
      const c = await runtime.ask<EndpointChange>(tenant, WEBHOOKS, WEBHOOKS_KEY, { type: 'disable', id, since });
      if (c.subscriptions) webhooks.apply(c.subscriptions);
    },
  });
  webhooks.onQueued = (tenant, endpointIds) => webhookDispatcher.nudge(tenant, endpointIds);
  webhooks.onDeleted = (tenant) => webhookDispatcher.sweepSoon(tenant);
  metrics.webhooks(() => webhookDispatcher.counts, () => ({ held: webhookDispatcher.held, inFlight: webhookDispatcher.inFlight }));
  webhookDispatcher.start();
  const port = await edge.listen(config.host, config.port);
  forwarder?.serve((r) => edge.serveForwarded(r));
  // Listening already (liveness answers), ready once the query workers are: a node whose workers
  // cannot start goes on, not ready, and says so.
  if (config.query.warmAtStart && !(await warmWithin(queries, 60_000))) logger.error('the query workers have not started: /readyz answers 503 until they do');
  ready = true;
  logger.info({ port, host: config.host, dataDir: config.dataDir, nodeId: config.nodeId, routes: routes.length }, 'listening');

  let closing: Promise<void> | undefined;
  return {
    deps,
    config,
    port,
    url: `http://127.0.0.1:${port}`,
    edge,
    cluster,
    outboxDispatcher,
    close: () =>
      (closing ??= (async () => {
        ready = false;
        await edge.close(config.http.shutdownGraceMs);
        // Before the modules stop: no job fires into a module that is stopping.
        await services.scheduler.stop();
        for (let i = mods.length - 1; i >= 0; i--) {
          await parts[i]?.stop?.();
          await mods[i].stop?.(deps);
        }
        deps.periodic.stopAll();
        services.doorBacklog.close();
        await outboxDispatcher.stop();
        await webhookDispatcher.stop();
        webhooks.close();
        await runtime.close();
        await cluster?.close();
        await bus.close();
        await queries.close();
        await store.close();
        logger.info('stopped');
        logger.flush?.();
      })()),
  };
}

async function storefrontServices(config: Config, store: Store, clock: Clock, logger: Logger): Promise<StorefrontServices> {
  const [{ createGateways }, { createStorefrontServices }] = await Promise.all([import('../core/payments/index.js'), import('../actors/storefront/index.js')]);
  return createStorefrontServices(createGateways(config, store, clock, logger), config.payments.currency, logger);
}

/** Waits for the query pool to be warm, at most `ms`; says whether it is. */
async function warmWithin(queries: QueryPool, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, ms);
  });
  await Promise.race([queries.whenWarm(), late]);
  clearTimeout(timer);
  return queries.warm;
}
