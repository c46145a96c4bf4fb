// A node of the service for the crash test: serves on an ephemeral port over the data directory
// given as argv[2] and prints `ready <url>`; the test kills it with SIGKILL mid-load. With argv[3]
// `door-paused` the door's background materializer is paused: ticket records stay behind the log.
import { WriteBatch } from '../../core/store/store.js';
import { startApp } from '../../edge/app.js';
import { TEST_JWT_SECRET } from '../helpers/app.js';

const app = await startApp({
  env: {},
  config: {
    port: 0,
    host: '127.0.0.1',
    dataDir: process.argv[2],
    logLevel: 'silent',
    jwtSecret: TEST_JWT_SECRET,
    ...(process.argv[3] === 'door-paused' ? { door: { materializeMs: 0, materializeBatch: 500 } } : {}),
  },
});
if (!app.deps.store.getOrg('acme')) {
  await app.deps.store.commit(new WriteBatch().putOrg({ orgId: 'acme', displayName: 'Acme', createdate: new Date().toISOString() }));
}
process.stdout.write(`ready ${app.url}\n`);
