// The limits every request is held to, as the reference shows them: each with the setting that
// changes it and the value in force on this server (read from its config, so the page never
// disagrees with what the server does).
import type { Config } from '../../core/config.js';
import { MAX_PENDING_OPS } from '../../core/store/write-journal.js';

export interface LimitRow {
  /** Environment variable that sets it. */
  setting: string;
  value: string;
  /** What is bounded, and the answer past the bound. */
  meaning: string;
}

const n = (v: number): string => v.toLocaleString('en-US');

export function limitRows(config: Config): LimitRow[] {
  const d = config.documents;
  const h = config.http;
  const q = config.query;
  return [
    { setting: 'MAX_BODY_BYTES', value: `${n(h.maxBodyBytes)} bytes`, meaning: 'JSON body of a route that takes credentials; 413 past it (the declared length is checked before any byte is read)' },
    { setting: 'MAX_ANONYMOUS_BODY_BYTES', value: `${n(h.anonymousMaxBodyBytes)} bytes`, meaning: 'body of a route that takes no credentials (sign-up, sign-in, storefront, webhooks) unless the route sets its own; 413' },
    { setting: 'MAX_INFLIGHT_BODY_BYTES', value: `${n(h.maxInflightBodyBytes)} bytes`, meaning: 'request bodies this node holds at once, across all callers; a new body past it answers 503 with `Retry-After`' },
    { setting: 'JSON_MAX_DEPTH', value: n(d.maxDepth), meaning: 'nesting levels of a JSON body, a socket payload or a stored record (the outermost counts as 1; each segment of a partial update\'s dotted key counts as a level); 400, and a write whose resulting record passes any of these document limits stores nothing' },
    { setting: 'JSON_MAX_KEYS', value: n(d.maxKeys), meaning: 'keys of one object in a body or payload; 400' },
    { setting: 'JSON_MAX_ITEMS', value: n(d.maxItems), meaning: 'items of one array in a body or payload; 400' },
    { setting: 'JSON_MAX_STRING_LENGTH', value: n(d.maxStringLength), meaning: 'characters of one string or key in a body or payload; 400' },
    { setting: 'MAX_RECORD_BYTES', value: `${n(d.maxRecordBytes)} bytes`, meaning: 'one stored record, log entry or key-value entry, encoded; a create or update past it answers 413 and stores nothing' },
    {
      setting: 'STORAGE_QUOTAS (quotas.plans)',
      value: config.quotas.enabled
        ? Object.entries(config.quotas.plans)
            .map(([plan, p]) => `${plan}: ${p.recordBytes === null ? 'no limit' : n(p.recordBytes)} / ${p.mediaBytes === null ? 'no limit' : n(p.mediaBytes)} bytes`)
            .join('; ')
        : 'off (counted only)',
      meaning:
        "an organisation's record bytes (stored records, log entries, key-value entries) / media bytes (stored files) by its plan; a record write or upload past its quota answers 413 `ERR_STORAGE_QUOTA` and stores nothing. Deletes, sign-ins, door scans and messages are never refused by it. `GET /profile/org/usage` shows both",
    },
    {
      setting: 'STORAGE_MIN_FREE_DISK_BYTES',
      value: config.quotas.minFreeDiskBytes > 0 ? `${n(config.quotas.minFreeDiskBytes)} bytes` : 'off',
      meaning: "free disk this node keeps under its data and upload directories; below it every write but a delete answers 507 `ERR_INSUFFICIENT_STORAGE`",
    },
    { setting: '(fixed)', value: `${n(MAX_PENDING_OPS)} writes`, meaning: "chat writes the store's write journal holds before they move into LMDB (more only while LMDB refuses them: a full disk); past it a chat message answers 503" },
    { setting: '(fixed)', value: '`__proto__`, `constructor`, `prototype`', meaning: 'keys (or dotted-path segments) refused with 400 anywhere in a body or payload' },
    {
      setting: 'POOL_WORK_CONCURRENCY, POOL_WORK_QUEUE_MAX',
      value: `${n(config.poolWork.concurrency)}, ${n(config.poolWork.queueMax)}`,
      meaning:
        'password and PIN checks (scrypt, ~50 ms each) and media file writes and syncs running at once on this node, and waiting for a turn: they share a thread pool with the store\'s commits, so more at once would stall every organisation\'s writes; past the queue the request (a sign-in, an upload) answers 503 with `Retry-After`',
    },
    {
      setting: 'CLUSTER_SNAPSHOT_EVERY_COMMITS, CLUSTER_SNAPSHOT_EVERY_MS',
      value: `${n(config.cluster.snapshotEveryCommits ?? 0)} commits, ${n(config.cluster.snapshotEveryMs ?? 0)} ms`,
      meaning:
        "cluster mode only: how often an organisation's owner snapshots it (a large organisation only after at least one commit per 10 keys of its last snapshot, so copying it stays a bounded cost per write), after which the commit stream drops the organisation's older writes, so the stream keeps about this many of its commits beyond a snapshot (0: off); a node taking the organisation over loads the snapshot and replays the rest before it serves; the organisations themselves (platform data) are snapshotted on the same count of platform writes, and the stream keeps about two such intervals of them",
    },
    {
      setting: 'CLUSTER_DROPPED_KEEP_MS',
      value: config.cluster.droppedKeepMs ? `${n(config.cluster.droppedKeepMs)} ms` : 'kept',
      meaning: "cluster mode only: how long an organisation's data stays on a node that let it go (its lease moved) before that node clears it; a node taking it back within that time catches up from its copy",
    },
    {
      setting: 'CLUSTER_POSITION_KEEP_MS',
      value: `${n(config.cluster.positionKeepMs ?? 300000)} ms`,
      meaning:
        'cluster mode only: how long the commit stream keeps the platform writes (organisations) a node has not read yet after the node last said how far it read (cut off from NATS, stalled or stopped); a node away for longer loads the platform snapshot before it applies more',
    },
    {
      setting: 'DOOR_VIEW_STREAMS, DOOR_VIEW_STREAMS_PER_ORG',
      value: `${n(config.door.viewStreams)}, ${n(config.door.viewStreamsPerOrg)}`,
      meaning: 'live door views (`GET /events/:id/door/stream`) open on this node at once, and per organisation; past them a new one answers 503, or 429 `ERR_TOO_MANY_STREAMS`',
    },
    { setting: 'WEBHOOK_MAX_ENDPOINTS', value: n(config.webhooks.maxEndpoints), meaning: 'webhook endpoints an organisation may have (`POST /webhooks/endpoints`); one more answers 409' },
    {
      setting: 'WEBHOOK_TIMEOUT_MS, WEBHOOK_RESPONSE_CAP_BYTES',
      value: `${n(config.webhooks.timeoutMs)} ms, ${n(config.webhooks.responseCapBytes)} bytes`,
      meaning: 'time a webhook endpoint has to answer 2xx, and how much of its answer is read; a slower or other answer is retried with back-off',
    },
    { setting: 'STORE_MAX_TENANT_INDEXES', value: n(config.store.maxTenantIndexes), meaning: 'indexes an organisation may declare on its datatypes (`POST /repository/indexes`); one more answers 409' },
    { setting: 'STORE_INDEX_BUILD_STEP', value: `${n(config.store.indexBuildStep)} records`, meaning: "records a declared index's background build indexes per transaction before it yields to requests and writes (fewer when the step has run 2 ms); a listing new to the code, built over the records already stored, takes the same steps" },
    {
      setting: 'STORE_RECORD_CACHE_MB, STORE_RECORD_CACHE_TENANT_MB',
      value: `${n(config.store.recordCacheMb)} MiB, ${n(config.store.recordCacheTenantMb)} MiB`,
      meaning: 'memory the records recently read by `GET /repository/get` and small finds may hold on this node (decoded and serialized), and per organisation; a write or delete drops its record once it lands, and past the bound the oldest leave first',
    },
    { setting: 'QUERY_TIMEOUT_MS', value: `${n(q.timeoutMs)} ms`, meaning: 'time of one client query (find, dynamic query, aggregation) in a worker; past it the query is stopped and answers 400 naming the budget' },
    { setting: 'QUERY_WORKER_HEAP_MB', value: `${n(q.workerHeapMb)} MiB`, meaning: 'heap of a query worker; a query that needs more is stopped and answers 400' },
    { setting: 'QUERY_WORKERS', value: n(q.workers), meaning: 'query worker threads on this node' },
    { setting: 'QUERY_TENANT_WORKERS', value: q.tenantWorkers === null ? 'half the pool (at least 1)' : n(q.tenantWorkers), meaning: 'workers one organisation may hold at once, so its slow queries never hold every worker' },
    { setting: 'QUERY_SPARE_WORKERS', value: n(q.spareWorkers), meaning: 'query workers kept started and idle beyond `QUERY_WORKERS`, so one ended by the budget is taken over at once rather than after a thread start (0.5-1 s); `/readyz` answers ready once every worker has started (with `QUERY_WARM_AT_START` false the workers start with the first query and readiness does not wait for them)' },
    { setting: 'QUERY_SLOW_TENANT_MS', value: `${n(q.slowTenantMs)} ms`, meaning: "how long an organisation whose query ran into the time or memory budget has its queries served after every other organisation's, on all workers but one (organisations otherwise take turns by the worker time they used lately)" },
    { setting: 'QUERY_IN_PLACE_MAX_CANDIDATES', value: n(q.inPlaceMaxCandidates), meaning: 'candidates, counted on index keys, a client find of simple operators (equality, `$in`, ranges, `$exists`, `$and`/`$or` of those) on an indexed field may read on the event loop; a larger one, a scan, or any other operator runs in a query worker under the budget' },
    { setting: 'QUERY_TENANT_QUEUE_MAX, QUERY_QUEUE_MAX', value: `${n(q.tenantQueueMax)}, ${n(q.queueMax)}`, meaning: 'queries waiting for a worker, per organisation and in all; past either, 503 with `Retry-After` (a full queue first sheds the newest query of the organisation that has used the most)' },
    { setting: 'QUERY_MAX_RANGE', value: n(q.maxRange), meaning: 'elements one `$range` may make; 400' },
    { setting: 'QUERY_MAX_ARRAY, QUERY_MAX_STRING', value: `${n(q.maxArray)}, ${n(q.maxString)}`, meaning: 'elements of an array and characters of a string an operator may build; 400' },
    { setting: 'QUERY_MAX_REGEX_LENGTH', value: n(q.maxRegexLength), meaning: 'characters of a client regex; every regex runs on RE2 (linear time), and one that needs backtracking (backreferences, lookaround) is refused with 400' },
    { setting: 'QUERY_MAX_STAGE_DOCUMENTS', value: n(q.maxStageDocuments), meaning: 'documents one aggregation stage may hold; 400' },
    { setting: 'QUERY_MAX_RESULT_BYTES', value: `${n(q.maxResultBytes)} bytes`, meaning: 'encoded answer of one query; 400' },
    {
      setting: 'RATE_LIMIT_CUSTOMER_SHARE',
      value: String(config.rateLimits.customerShare),
      meaning: "share of its organisation's plan (rate and burst) one customer token may spend, before the plan itself; 429 with `Retry-After`",
    },
    {
      setting: 'RATE_LIMIT_ANONYMOUS_SHARE, rateLimits.anonymousPerAddress',
      value: `${config.rateLimits.anonymousShare} of the plan; ${n(config.rateLimits.anonymousPerAddress.perSecond)}/s, burst ${n(config.rateLimits.anonymousPerAddress.burst)} per address`,
      meaning: "requests without a credential that name an organisation: they spend the caller's address and the organisation's anonymous bucket, never the bucket its signed-in users spend; 429 with `Retry-After`",
    },
    { setting: 'AUTH_ACCESS_TOKEN_TTL_SECONDS', value: `${n(config.auth.accessTokenTtlSeconds)} s`, meaning: 'lifetime of an access token; a token without `exp`, or living longer (plus `AUTH_TOKEN_SKEW_SECONDS`), is refused with 401' },
  ];
}

export function limitsMd(config: Config): string[] {
  return [
    '## Limits',
    '',
    'Every request is bounded before the work it would cause. Each limit names itself in the error message; an operator changes it with the setting shown.',
    '',
    '| Setting | Value here | What it bounds |',
    '|---|---|---|',
    ...limitRows(config).map((r) => `| \`${r.setting}\` | ${r.value} | ${r.meaning} |`),
    '',
  ];
}
