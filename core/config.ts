// Configuration: config/default.json, validated against config/schema.json, with environment
// overrides on top. An invalid value stops start-up with a message that names it.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve } from 'node:path';
import { Ajv } from 'ajv';
import defaults from '../config/default.json' with { type: 'json' };
import schema from '../config/schema.json' with { type: 'json' };

/** Cluster mode (NATS_URL set). */
export interface ClusterSettings {
  /** First token of every subject, stream and bucket name. */
  prefix: string;
  /** Lease TTL: a dead owner's tenants are taken over within about this long. */
  leaseTtlMs: number;
  /** Replicas of the stream and the lease bucket (1 on one server, 3 in production). */
  replicas: number;
  /** How long a forwarded request may take on its owner. */
  forwardTimeoutMs: number;
  /** How long a request keeps retrying while its tenant has no reachable owner. */
  retryMs: number;
  /** Interval of the membership heartbeats. */
  heartbeatMs: number;
  /** An owned tenant's snapshot is written after this many commits, the platform's after this many platform batches (0: not by count; core/cluster/snapshots.ts, platform-snapshots.ts). */
  snapshotEveryCommits?: number;
  /** ... or this long after its last one when it changed meanwhile (0: not by time). */
  snapshotEveryMs?: number;
  /** In a burst of a tenant's writes, how long its next append waits for more to fold in (0: never). */
  commitLingerMs?: number;
  /** In a burst of requests forwarded to one owner, how long their next message waits for more to fold in (0: never). */
  forwardLingerMs?: number;
  /** How long a tenant this node let go stays on its disk before it is cleared (0: kept until held again). */
  droppedKeepMs?: number;
  /** How long a node's applier position holds the platform purge back after the node last wrote it. */
  positionKeepMs?: number;
}

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  jwtSecret: string | null;
  natsUrl: string | null;
  nodeId: string | null;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  http: {
    maxBodyBytes: number;
    corsOrigins: string[];
    shutdownGraceMs: number;
    /** Body cap of routes that take no credentials, unless the route sets its own. */
    anonymousMaxBodyBytes: number;
    /** Bytes of bodies buffered at once on this node; past it a new body answers 503. */
    maxInflightBodyBytes: number;
    /** Compile every route's schemas before ready (else each on its first request). */
    compileAtStart: boolean;
  };
  /** Bounds of every client document (core/document-limits.ts) and of every stored value. */
  documents: { maxDepth: number; maxKeys: number; maxItems: number; maxStringLength: number; maxRecordBytes: number };
  rateLimits: {
    enabled: boolean;
    defaultPlan: string;
    /** Plan written on organisations created by sign-up; null: none (they get defaultPlan). */
    signupPlan?: string | null;
    plans: Record<string, { perSecond: number; burst: number }>;
    perAddress: { perSecond: number; burst: number };
    /** One customer token's share of its organisation's plan (edge/rate-limit.ts). */
    customerShare: number;
    /** An organisation's anonymous bucket, as a share of its plan. */
    anonymousShare: number;
    /** Per client address, on requests without a credential that name an organisation. */
    anonymousPerAddress: { perSecond: number; burst: number };
  };
  store: {
    mapSizeGiB: number;
    defaultPageSize: number;
    maxPageSize: number;
    durability: 'flush' | 'commit';
    /** Indexes an organisation may declare (POST /repository/indexes). */
    maxTenantIndexes: number;
    /** Records per transaction of a declared index's background build. */
    indexBuildStep: number;
    /** MiB the cache of records client reads decoded may hold in all, and per organisation (core/store/record-cache.ts). */
    recordCacheMb: number;
    recordCacheTenantMb: number;
  };
  /** Client queries: their worker pool and budget (core/query/pool.ts, core/query/limits.ts). */
  query: {
    workers: number;
    timeoutMs: number;
    workerHeapMb: number;
    tenantWorkers: number | null;
    spareWorkers: number;
    warmAtStart: boolean;
    slowTenantMs: number;
    queueMax: number;
    tenantQueueMax: number;
    maxRange: number;
    maxArray: number;
    maxString: number;
    maxRegexLength: number;
    maxStageDocuments: number;
    maxResultBytes: number;
    /** Index-narrowed candidates a simple client find may read on the event loop (actors/records/reads.ts). */
    inPlaceMaxCandidates: number;
  };
  /** Media uploads: file size cap, chunk size and idle time-out of chunked uploads, storage directory (null: <dataDir>/media). */
  uploads: { maxBytes: number; chunkBytes: number; chunkTimeoutMs: number; dir: string | null };
  chat: {
    presenceGraceMs: number;
    presenceTtlMs: number;
    typingClearMs: number;
    customerIdleMs: number;
    sessionWarningMs: number;
    chatInactivityMs: number;
    tokenExpiryGraceMs: number;
    sweepIntervalMs: number;
    sseHeartbeatMs: number;
    aiStreamTtlMs: number;
    maxMessageLength: number;
    /** Largest `metadata` of a chat message, as JSON bytes. */
    maxMetadataBytes: number;
    /** Most messages replayed to a /chat socket on connect, over every chat its handshake names. */
    replayLimit: number;
    /** Most messages replayed to a /community-chat socket on connect, over all its conversations. */
    communityReplayLimit: number;
    maxBackpressureBytes: number;
    /** When a chat message is acknowledged (core/store/write-journal.ts): journaled, journal flushed, or store transaction. */
    durability: 'commit' | 'flush' | 'store';
    /** How often journaled chat writes move into the store proper. */
    journalMs: number;
  };
  providers: {
    outbox: 'local' | 'smtp';
    smtp: { host: string; port: number; secure: boolean; user: string | null; pass: string | null; from: string };
    ai: {
      provider: 'local' | 'openai';
      baseUrl: string | null;
      apiKey: string | null;
      model: string;
      wordDelayMs: number;
      timeoutMs: number;
    };
  };
  actors: { idleMs: number; askTimeoutMs: number };
  /** The door's write-behind of ticket door fields (actors/scanner/door-backlog.ts). */
  door: { materializeMs: number; materializeBatch: number; materializeBusyPercent: number; materializeMaxWaitMs: number; annulWindowS: number; viewStreams: number; viewStreamsPerOrg: number };
  /** The dispatcher of queued outbox messages (core/outbox-dispatcher.ts). */
  outbox: { pollMs: number; batchSize: number; concurrency: number; maxAttempts: number; retryBaseMs: number; retryMaxMs: number };
  /** Webhook endpoints and the dispatcher of their deliveries (core/webhooks/dispatcher.ts). */
  webhooks: {
    allowHosts: string[];
    timeoutMs: number;
    responseCapBytes: number;
    /** Idle look for due deliveries of every tenant (a node's own writes and retries need none). */
    pollMs: number;
    concurrency: number;
    orgConcurrency: number;
    endpointConcurrency: number;
    retryBaseMs: number;
    retryMaxMs: number;
    /** An event older than this is not tried again (`failed`). */
    maxAgeMs: number;
    /** An endpoint failing without a success for this long is disabled. */
    disableAfterMs: number;
    /** Deliveries and events are deleted this long after the event (never sooner than `maxAgeMs`). */
    retentionMs: number;
    /**
     * While requests come and the event loop was busier than this percent of the time since the
     * last look, at most `busyRate` attempts a second start on the node: deliveries yield to
     * requests and catch up once the rush is over. A rate, not a concurrency, so a hanging
     * endpoint's attempts hold no one else back. 100 never yields.
     */
    busyPercent: number;
    busyRate: number;
    maxEndpoints: number;
  };
  cluster: ClusterSettings;
  auth: { accessTokenTtlSeconds: number; refreshTokenTtlSeconds: number; tokenCacheSize: number; tokenSkewSeconds?: number };
  /** Storage quotas per plan and the node's free-disk floor (core/store/usage.ts, disk-floor.ts). */
  quotas: {
    enabled: boolean;
    plans: Record<string, { recordBytes: number | null; mediaBytes: number | null }>;
    minFreeDiskBytes: number;
  };
  /** Long jobs on libuv's thread pool besides the store's (core/pool-work.ts). */
  poolWork: { concurrency: number; queueMax: number };
  payments: {
    /** Gateways offered (`local`, `stripe`); `stripe` is added when its secret key is set. */
    gateways: string[];
    /** The processor used when a request names none. */
    defaultProcessor: string;
    /** ISO 4217 currency of an order whose location names none. */
    currency: string;
    stripe: { secretKey: string | null; publishableKey: string | null; apiBase: string | null };
  };
  voice: {
    provider: 'local' | 'twilio';
    accountSid: string | null;
    apiKeySid: string | null;
    apiKeySecret: string | null;
    outgoingApplicationSid: string | null;
    pushCredentialSid: string | null;
    tokenTtlSeconds: number;
    webhookSecret: string | null;
    /** Accept the unsigned shared-secret header on inbound webhooks (edge/routes/phone/inbound.ts). */
    acceptSharedSecretHeader: boolean;
  };
}

export class ConfigError extends Error {
  override name = 'ConfigError';
}

type Parse = (raw: string) => unknown;
const int: Parse = (raw) => (/^-?\d+$/.test(raw) ? Number(raw) : raw);
const text: Parse = (raw) => raw;
const decimal: Parse = (raw) => (/^-?(\d+(\.\d*)?|\.\d+)$/.test(raw) ? Number(raw) : raw);
const bool: Parse = (raw) => (/^(true|1|yes|on)$/i.test(raw) ? true : /^(false|0|no|off)$/i.test(raw) ? false : raw);
const list: Parse = (raw) => raw.split(',').map((s) => s.trim()).filter(Boolean);

/** Environment variable → config path and how to read it. */
const ENV: ReadonlyArray<[string, string[], Parse]> = [
  ['PORT', ['port'], int],
  ['HOST', ['host'], text],
  ['DATA_DIR', ['dataDir'], text],
  ['JWT_SECRET', ['jwtSecret'], text],
  ['NATS_URL', ['natsUrl'], text],
  ['NODE_ID', ['nodeId'], text],
  ['CLUSTER_PREFIX', ['cluster', 'prefix'], text],
  ['CLUSTER_LEASE_TTL_MS', ['cluster', 'leaseTtlMs'], int],
  ['CLUSTER_REPLICAS', ['cluster', 'replicas'], int],
  ['CLUSTER_RETRY_MS', ['cluster', 'retryMs'], int],
  ['CLUSTER_SNAPSHOT_EVERY_COMMITS', ['cluster', 'snapshotEveryCommits'], int],
  ['CLUSTER_SNAPSHOT_EVERY_MS', ['cluster', 'snapshotEveryMs'], int],
  ['CLUSTER_COMMIT_LINGER_MS', ['cluster', 'commitLingerMs'], int],
  ['CLUSTER_FORWARD_LINGER_MS', ['cluster', 'forwardLingerMs'], int],
  ['CLUSTER_DROPPED_KEEP_MS', ['cluster', 'droppedKeepMs'], int],
  ['CLUSTER_POSITION_KEEP_MS', ['cluster', 'positionKeepMs'], int],
  ['LOG_LEVEL', ['logLevel'], text],
  ['MAX_BODY_BYTES', ['http', 'maxBodyBytes'], int],
  ['COMPILE_ROUTES_AT_START', ['http', 'compileAtStart'], bool],
  ['MAX_ANONYMOUS_BODY_BYTES', ['http', 'anonymousMaxBodyBytes'], int],
  ['MAX_INFLIGHT_BODY_BYTES', ['http', 'maxInflightBodyBytes'], int],
  ['JSON_MAX_DEPTH', ['documents', 'maxDepth'], int],
  ['JSON_MAX_KEYS', ['documents', 'maxKeys'], int],
  ['JSON_MAX_ITEMS', ['documents', 'maxItems'], int],
  ['JSON_MAX_STRING_LENGTH', ['documents', 'maxStringLength'], int],
  ['MAX_RECORD_BYTES', ['documents', 'maxRecordBytes'], int],
  ['STORE_DURABILITY', ['store', 'durability'], text],
  ['STORE_MAX_TENANT_INDEXES', ['store', 'maxTenantIndexes'], int],
  ['STORE_INDEX_BUILD_STEP', ['store', 'indexBuildStep'], int],
  ['STORE_RECORD_CACHE_MB', ['store', 'recordCacheMb'], decimal],
  ['STORE_RECORD_CACHE_TENANT_MB', ['store', 'recordCacheTenantMb'], decimal],
  ['QUERY_WORKERS', ['query', 'workers'], int],
  ['QUERY_TIMEOUT_MS', ['query', 'timeoutMs'], int],
  ['QUERY_WORKER_HEAP_MB', ['query', 'workerHeapMb'], int],
  ['QUERY_TENANT_WORKERS', ['query', 'tenantWorkers'], int],
  ['QUERY_SPARE_WORKERS', ['query', 'spareWorkers'], int],
  ['QUERY_WARM_AT_START', ['query', 'warmAtStart'], bool],
  ['QUERY_SLOW_TENANT_MS', ['query', 'slowTenantMs'], int],
  ['QUERY_IN_PLACE_MAX_CANDIDATES', ['query', 'inPlaceMaxCandidates'], int],
  ['QUERY_QUEUE_MAX', ['query', 'queueMax'], int],
  ['QUERY_TENANT_QUEUE_MAX', ['query', 'tenantQueueMax'], int],
  ['QUERY_MAX_RANGE', ['query', 'maxRange'], int],
  ['QUERY_MAX_ARRAY', ['query', 'maxArray'], int],
  ['QUERY_MAX_STRING', ['query', 'maxString'], int],
  ['QUERY_MAX_REGEX_LENGTH', ['query', 'maxRegexLength'], int],
  ['QUERY_MAX_STAGE_DOCUMENTS', ['query', 'maxStageDocuments'], int],
  ['QUERY_MAX_RESULT_BYTES', ['query', 'maxResultBytes'], int],
  ['CHAT_MAX_METADATA_BYTES', ['chat', 'maxMetadataBytes'], int],
  ['CHAT_REPLAY_LIMIT', ['chat', 'replayLimit'], int],
  ['COMMUNITY_REPLAY_LIMIT', ['chat', 'communityReplayLimit'], int],
  ['CHAT_DURABILITY', ['chat', 'durability'], text],
  ['CHAT_JOURNAL_MS', ['chat', 'journalMs'], int],
  ['UPLOAD_MAX_BYTES', ['uploads', 'maxBytes'], int],
  ['UPLOAD_DIR', ['uploads', 'dir'], text],
  ['CORS_ORIGINS', ['http', 'corsOrigins'], list],
  ['RATE_LIMITS', ['rateLimits', 'enabled'], bool],
  ['RATE_LIMIT_DEFAULT_PLAN', ['rateLimits', 'defaultPlan'], text],
  ['SIGNUP_PLAN', ['rateLimits', 'signupPlan'], text],
  ['RATE_LIMIT_CUSTOMER_SHARE', ['rateLimits', 'customerShare'], decimal],
  ['RATE_LIMIT_ANONYMOUS_SHARE', ['rateLimits', 'anonymousShare'], decimal],
  ['ACTOR_IDLE_MS', ['actors', 'idleMs'], int],
  ['AUTH_ACCESS_TOKEN_TTL_SECONDS', ['auth', 'accessTokenTtlSeconds'], int],
  ['AUTH_TOKEN_SKEW_SECONDS', ['auth', 'tokenSkewSeconds'], int],
  ['STORAGE_QUOTAS', ['quotas', 'enabled'], bool],
  ['STORAGE_MIN_FREE_DISK_BYTES', ['quotas', 'minFreeDiskBytes'], int],
  ['POOL_WORK_CONCURRENCY', ['poolWork', 'concurrency'], int],
  ['POOL_WORK_QUEUE_MAX', ['poolWork', 'queueMax'], int],
  ['OUTBOX_PROVIDER', ['providers', 'outbox'], text],
  ['OUTBOX_POLL_MS', ['outbox', 'pollMs'], int],
  ['DOOR_MATERIALIZE_MS', ['door', 'materializeMs'], int],
  ['DOOR_MATERIALIZE_BATCH', ['door', 'materializeBatch'], int],
  ['DOOR_MATERIALIZE_BUSY_PERCENT', ['door', 'materializeBusyPercent'], int],
  ['DOOR_MATERIALIZE_MAX_WAIT_MS', ['door', 'materializeMaxWaitMs'], int],
  ['DOOR_ANNUL_WINDOW_S', ['door', 'annulWindowS'], int],
  ['DOOR_VIEW_STREAMS', ['door', 'viewStreams'], int],
  ['DOOR_VIEW_STREAMS_PER_ORG', ['door', 'viewStreamsPerOrg'], int],
  ['OUTBOX_BATCH_SIZE', ['outbox', 'batchSize'], int],
  ['OUTBOX_CONCURRENCY', ['outbox', 'concurrency'], int],
  ['OUTBOX_MAX_ATTEMPTS', ['outbox', 'maxAttempts'], int],
  ['OUTBOX_RETRY_BASE_MS', ['outbox', 'retryBaseMs'], int],
  ['OUTBOX_RETRY_MAX_MS', ['outbox', 'retryMaxMs'], int],
  ['WEBHOOK_ALLOW_HOSTS', ['webhooks', 'allowHosts'], list],
  ['WEBHOOK_TIMEOUT_MS', ['webhooks', 'timeoutMs'], int],
  ['WEBHOOK_RESPONSE_CAP_BYTES', ['webhooks', 'responseCapBytes'], int],
  ['WEBHOOK_POLL_MS', ['webhooks', 'pollMs'], int],
  ['WEBHOOK_CONCURRENCY', ['webhooks', 'concurrency'], int],
  ['WEBHOOK_ORG_CONCURRENCY', ['webhooks', 'orgConcurrency'], int],
  ['WEBHOOK_ENDPOINT_CONCURRENCY', ['webhooks', 'endpointConcurrency'], int],
  ['WEBHOOK_RETRY_BASE_MS', ['webhooks', 'retryBaseMs'], int],
  ['WEBHOOK_RETRY_MAX_MS', ['webhooks', 'retryMaxMs'], int],
  ['WEBHOOK_MAX_AGE_MS', ['webhooks', 'maxAgeMs'], int],
  ['WEBHOOK_DISABLE_AFTER_MS', ['webhooks', 'disableAfterMs'], int],
  ['WEBHOOK_RETENTION_MS', ['webhooks', 'retentionMs'], int],
  ['WEBHOOK_BUSY_PERCENT', ['webhooks', 'busyPercent'], int],
  ['WEBHOOK_BUSY_RATE', ['webhooks', 'busyRate'], int],
  ['WEBHOOK_MAX_ENDPOINTS', ['webhooks', 'maxEndpoints'], int],
  ['SMTP_HOST', ['providers', 'smtp', 'host'], text],
  ['SMTP_PORT', ['providers', 'smtp', 'port'], int],
  ['SMTP_USER', ['providers', 'smtp', 'user'], text],
  ['SMTP_PASS', ['providers', 'smtp', 'pass'], text],
  ['SMTP_FROM', ['providers', 'smtp', 'from'], text],
  ['AI_PROVIDER', ['providers', 'ai', 'provider'], text],
  ['AI_BASE_URL', ['providers', 'ai', 'baseUrl'], text],
  ['AI_API_KEY', ['providers', 'ai', 'apiKey'], text],
  ['AI_MODEL', ['providers', 'ai', 'model'], text],
  ['PAYMENT_GATEWAYS', ['payments', 'gateways'], list],
  ['PAYMENT_DEFAULT_PROCESSOR', ['payments', 'defaultProcessor'], text],
  ['PAYMENT_CURRENCY', ['payments', 'currency'], text],
  ['STRIPE_SECRET_KEY', ['payments', 'stripe', 'secretKey'], text],
  ['STRIPE_PUBLISHABLE_KEY', ['payments', 'stripe', 'publishableKey'], text],
  ['STRIPE_API_BASE', ['payments', 'stripe', 'apiBase'], text],
  ['VOICE_PROVIDER', ['voice', 'provider'], text],
  ['VOICE_ACCOUNT_SID', ['voice', 'accountSid'], text],
  ['VOICE_API_KEY_SID', ['voice', 'apiKeySid'], text],
  ['VOICE_API_KEY_SECRET', ['voice', 'apiKeySecret'], text],
  ['VOICE_APP_SID', ['voice', 'outgoingApplicationSid'], text],
  ['VOICE_WEBHOOK_SECRET', ['voice', 'webhookSecret'], text],
  ['VOICE_WEBHOOK_ACCEPT_SHARED_HEADER', ['voice', 'acceptSharedSecretHeader'], bool],
];

/** Every environment variable the server reads and the config path it sets (`.env.example` lists them). */
export const ENV_VARIABLES: ReadonlyArray<{ name: string; path: readonly string[] }> = ENV.map(([name, path]) => ({ name, path }));

const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);

function deepMerge<T>(base: T, over: unknown): T {
  if (over === undefined) return base;
  if (typeof base !== 'object' || base === null || Array.isArray(base)) return over as T;
  if (typeof over !== 'object' || over === null || Array.isArray(over)) return over as T;
  const out: Record<string, unknown> = { ...(base as Record<string, unknown>) };
  for (const [k, v] of Object.entries(over)) out[k] = deepMerge(out[k], v);
  return out as T;
}

/**
 * Builds the configuration: defaults, then `overrides` (tests and embedders), then the
 * environment. Throws ConfigError naming every invalid value.
 */
export function loadConfig(
  overrides: Record<string, unknown> = {},
  env: NodeJS.ProcessEnv = process.env,
): Config {
  const cfg = deepMerge(structuredClone(defaults) as unknown as Config, overrides) as unknown as Record<
    string,
    unknown
  >;
  const fromEnv = new Map<string, string>();
  for (const [name, path, parse] of ENV) {
    const raw = env[name];
    if (raw === undefined || raw === '') continue;
    let node = cfg;
    for (const key of path.slice(0, -1)) node = node[key] as Record<string, unknown>;
    node[path[path.length - 1]] = parse(raw);
    fromEnv.set('/' + path.join('/'), name);
  }
  if (!validate(cfg)) {
    const problems = (validate.errors ?? []).map((e) => {
      const at = e.instancePath || '/';
      const source = fromEnv.get(at);
      return `${source ? `${source} (config ${at})` : `config ${at}`} ${e.message ?? 'is invalid'}`;
    });
    throw new ConfigError(`invalid configuration: ${[...new Set(problems)].join('; ')}`);
  }
  const out = cfg as unknown as Config;
  out.dataDir = resolve(out.dataDir);
  // Media files live under DATA_DIR unless an absolute directory is given.
  if (out.uploads) out.uploads.dir = resolve(out.dataDir, out.uploads.dir ?? 'media');
  if (!out.nodeId) out.nodeId = `${hostname().replace(/[^A-Za-z0-9_-]/g, '-').slice(0, 40)}-${process.pid}`;
  return out;
}

/**
 * The JWT secret: the configured one, else one generated on first start and kept under the data
 * directory so tokens survive restarts. `warn` is told when the generated one is used.
 */
export function resolveJwtSecret(cfg: Config, warn: (msg: string) => void): string {
  if (cfg.jwtSecret) return cfg.jwtSecret;
  // Every node of a cluster must verify every other node's tokens (requests are forwarded to the
  // tenant's owner): a secret of its own would make each node refuse the others' with 401.
  if (cfg.natsUrl) {
    throw new ConfigError(
      'JWT_SECRET must be set in cluster mode (NATS_URL is set): every node must share one secret, or each node refuses the tokens the others issued. Set the same JWT_SECRET (at least 32 characters) on every node.',
    );
  }
  mkdirSync(cfg.dataDir, { recursive: true });
  const file = join(cfg.dataDir, 'jwt-secret');
  let secret: string;
  try {
    secret = readFileSync(file, 'utf8').trim();
  } catch {
    secret = randomBytes(48).toString('base64url');
    writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  }
  warn(`JWT_SECRET is not set: using the secret generated in ${file}; set JWT_SECRET in production`);
  return secret;
}
