import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ConfigError, loadConfig, resolveJwtSecret } from '../../core/config.js';
import { tempDir } from '../helpers/app.js';

t.test('config - defaults', async (t) => {
  const c = loadConfig({}, {});
  t.equal(c.port, 8080);
  t.equal(c.natsUrl, null, 'no NATS unless asked');
  t.match(c.dataDir, /\/data$/);
  t.equal(c.http.maxBodyBytes, 1048576);
  t.equal(c.store.durability, 'flush', 'acknowledged writes are on disk unless asked otherwise');
  t.equal(c.uploads.dir, join(c.dataDir, 'media'), 'media under DATA_DIR');
  t.ok(c.nodeId);
});

t.test('config - environment overrides', async (t) => {
  const c = loadConfig({}, {
    PORT: '9090',
    HOST: '127.0.0.1',
    DATA_DIR: '/tmp/x',
    NATS_URL: 'nats://127.0.0.1:4222',
    NODE_ID: 'node-a',
    LOG_LEVEL: 'debug',
    JWT_SECRET: 'x'.repeat(40),
    CORS_ORIGINS: 'https://a.example, https://b.example',
    STORE_DURABILITY: 'commit',
    UPLOAD_DIR: 'uploads',
  });
  t.equal(c.port, 9090);
  t.equal(c.host, '127.0.0.1');
  t.equal(c.dataDir, '/tmp/x');
  t.equal(c.natsUrl, 'nats://127.0.0.1:4222');
  t.equal(c.nodeId, 'node-a');
  t.equal(c.logLevel, 'debug');
  t.same(c.http.corsOrigins, ['https://a.example', 'https://b.example']);
  t.equal(c.store.durability, 'commit');
  t.equal(c.uploads.dir, '/tmp/x/uploads', 'a relative upload directory is inside DATA_DIR');
});

t.test('config - an invalid value stops start-up naming it', async (t) => {
  t.throws(() => loadConfig({}, { PORT: 'eighty' }), { name: 'ConfigError', message: /PORT/ });
  t.throws(() => loadConfig({}, { PORT: '70000' }), { message: /PORT/ });
  t.throws(() => loadConfig({}, { LOG_LEVEL: 'loud' }), { message: /LOG_LEVEL/ });
  t.throws(() => loadConfig({}, { NATS_URL: 'http://x' }), { message: /NATS_URL/ });
  t.throws(() => loadConfig({}, { JWT_SECRET: 'short' }), { message: /JWT_SECRET/ });
  t.throws(() => loadConfig({}, { STORE_DURABILITY: 'eventually' }), { message: /STORE_DURABILITY/ });
  t.throws(() => loadConfig({ store: { maxPageSize: 0 } }, {}), ConfigError);
  t.throws(() => loadConfig({ nonsense: true }, {}), { message: /nonsense|additional/ });
});

t.test('config - JWT secret generated once, persisted under DATA_DIR, with a warning', async (t) => {
  const dir = tempDir(t);
  const c = loadConfig({}, { DATA_DIR: dir });
  const warnings: string[] = [];
  const s1 = resolveJwtSecret(c, (m) => warnings.push(m));
  const s2 = resolveJwtSecret(c, (m) => warnings.push(m));
  t.equal(s1, s2, 'the same secret on the next start');
  t.ok(s1.length >= 32);
  t.ok(existsSync(join(dir, 'jwt-secret')));
  t.equal(readFileSync(join(dir, 'jwt-secret'), 'utf8').trim(), s1);
  t.equal(statSync(join(dir, 'jwt-secret')).mode & 0o777, 0o600, 'readable by the owner only');
  t.equal(warnings.length, 2);
  t.match(warnings[0], /JWT_SECRET/);
  const given = loadConfig({}, { DATA_DIR: dir, JWT_SECRET: 'y'.repeat(40) });
  t.equal(resolveJwtSecret(given, () => t.fail('no warning when set')), 'y'.repeat(40));
});

t.test('config - a cluster node without JWT_SECRET refuses to start, saying why', async (t) => {
  const dir = tempDir(t);
  const env = { DATA_DIR: dir, NATS_URL: 'nats://127.0.0.1:4222' };
  t.throws(() => resolveJwtSecret(loadConfig({}, env), () => {}), { name: 'ConfigError', message: /JWT_SECRET must be set in cluster mode/ });
  const { startApp } = await import('../../edge/app.js');
  await t.rejects(startApp({ env, config: { port: 0, logLevel: 'silent' } }), { message: /every node must share one secret/ });
  t.notOk(existsSync(join(dir, 'jwt-secret')), 'and generates no secret of its own');
});

t.test('config - .env.example lists every environment variable the server reads', async (t) => {
  const { ENV_VARIABLES } = await import('../../core/config.js');
  const example = readFileSync(new URL('../../.env.example', import.meta.url), 'utf8');
  const listed = new Set([...example.matchAll(/^#? ?([A-Z][A-Z0-9_]*)=/gm)].map((m) => m[1]));
  t.same(ENV_VARIABLES.map((v) => v.name).filter((n) => !listed.has(n)), [], 'none missing');
  t.same([...listed].filter((n) => !ENV_VARIABLES.some((v) => v.name === n)), [], 'none the server does not read');
});
