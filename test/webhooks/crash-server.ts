// A node for the webhook kill -9 test: serves over the data directory argv[2] with the config
// overrides of argv[3] (JSON), creates organisation acme, and prints `ready <url>`.
import { WriteBatch } from '../../core/store/store.js';
import { startApp } from '../../edge/app.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';

const app = await startApp({
  env: {},
  modules: ['events', 'webhooks'],
  config: { port: 0, host: '127.0.0.1', dataDir: process.argv[2], logLevel: 'silent', jwtSecret: TEST_JWT_SECRET, ...JSON.parse(process.argv[3] ?? '{}') },
});
if (!app.deps.store.getOrg('acme')) {
  await app.deps.store.commit(new WriteBatch().putOrg({ orgId: 'acme', displayName: 'Acme', createdate: new Date().toISOString() }));
}
process.stdout.write(`ready ${app.url}\n`);
