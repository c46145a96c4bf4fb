// One node of a test cluster, run as its own process so a test can SIGKILL it: serves on an
// ephemeral port over the data directory argv[2], joins the cluster named by the environment
// (NATS_URL, NODE_ID, CLUSTER_*), makes sure the organisations in ORGS exist, and prints
// `ready <url> <nodeId>`. SIGTERM stops it cleanly.
import { WriteBatch } from '../../core/store/store.js';
import { startApp } from '../../edge/app.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';

const env: Record<string, string> = {};
for (const k of ['NATS_URL', 'NODE_ID', 'CLUSTER_PREFIX', 'CLUSTER_LEASE_TTL_MS', 'CLUSTER_RETRY_MS', 'CLUSTER_SNAPSHOT_EVERY_COMMITS', 'CLUSTER_SNAPSHOT_EVERY_MS', 'LOG_LEVEL', 'PORT', 'WEBHOOK_ALLOW_HOSTS']) {
  const v = process.env[k];
  if (v) env[k] = v;
}
const app = await startApp({
  env,
  config: {
    port: 0,
    host: '127.0.0.1',
    dataDir: process.argv[2],
    logLevel: 'silent',
    jwtSecret: TEST_JWT_SECRET,
    rateLimits: { enabled: false },
    chat: { presenceGraceMs: 300 },
    cluster: { heartbeatMs: 250 },
  },
});
for (const orgId of (process.env.ORGS ?? '').split(',').filter(Boolean)) {
  if (!app.deps.store.getOrg(orgId)) {
    await app.deps.store.commit(new WriteBatch().putOrg({ orgId, displayName: orgId, createdate: new Date().toISOString() }));
  }
}
process.stdout.write(`ready ${app.url} ${app.config.nodeId}\n`);
// Which tenants this node serves, whenever that changes: `owns acme,globex` (or `owns -`).
let owned = '';
setInterval(() => {
  const now = (app.cluster?.ownedTenants() ?? []).sort().join(',') || '-';
  if (now !== owned) process.stdout.write(`owns ${(owned = now)}\n`);
}, 50).unref();
// REPORT_HOLDS=1: which tenants this node's LMDB holds data of, whenever that changes:
// `holds acme,globex` (or `holds -`): organisations whose records, logs or kv take bytes here.
if (process.env.REPORT_HOLDS === '1') {
  const local = app.cluster?.store.local;
  let held = '';
  setInterval(() => {
    if (!local) return;
    const now = local.listOrgs().map((o) => o.orgId).filter((t) => local.measureRecordBytes(t) > 0).sort().join(',') || '-';
    if (now !== held) process.stdout.write(`holds ${(held = now)}\n`);
  }, 100).unref();
}
process.on('SIGTERM', () => {
  void app.close().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
