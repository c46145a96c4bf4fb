import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import jwt from 'jsonwebtoken';
import t from 'tap';
import { loadConfig } from '../../core/config.js';
import { createVoiceProvider, LOCAL_VOICE_FILE } from '../../core/voice.js';
import { tempDir } from '../helpers/app.js';
import { A, setup } from '../crm/setup.js';

const ACCOUNT = 'AC' + 'a1'.repeat(16);
const KEY = 'SK' + 'b2'.repeat(16);
const APP = 'AP' + 'c3'.repeat(16);
const SECRET = 'configured-api-key-secret-0123456789';

t.test('voice token - the configured provider signs the access-token format with the API key secret', async (t) => {
  const env = await setup(t, {
    modules: ['phone'],
    config: { voice: { provider: 'twilio', accountSid: ACCOUNT, apiKeySid: KEY, apiKeySecret: SECRET, outgoingApplicationSid: APP, tokenTtlSeconds: 1800 } },
  });
  const r = await env.a.post('/phone/voice/register-device', { deviceId: 'dev-1', platform: 'android', capabilities: ['voice'] });
  t.equal(r.status, 200);
  t.equal(r.body.provider, 'twilio');
  const decoded = jwt.decode(r.body.token, { complete: true })!;
  t.same(decoded.header, { alg: 'HS256', typ: 'JWT', cty: 'twilio-fpa;v=1' }, 'the provider access-token header');
  const claims = jwt.verify(r.body.token, SECRET, { algorithms: ['HS256'] }) as any;
  t.equal(claims.grants.identity, `user:${A}:agent@acme.test`, 'the identity has the form user:<orgId>:<email>');
  t.equal(claims.grants.identity, r.body.identity);
  t.same(claims.grants.voice, { incoming: { allow: true }, outgoing: { application_sid: APP } }, 'a voice grant');
  t.equal(claims.iss, KEY, 'issued by the API key');
  t.equal(claims.sub, ACCOUNT, 'for the account');
  t.match(claims.jti, new RegExp(`^${KEY}-\\d+$`));
  t.equal(claims.exp - claims.iat, 1800);
  t.equal(r.body.ttlSeconds, 1800);
  t.equal(r.body.expiresAt, new Date(claims.exp * 1000).toISOString());
  t.throws(() => jwt.verify(r.body.token, 'another-secret-entirely-0123456789'), 'a different secret does not verify it');

  const fresh = await env.a.post('/phone/token');
  t.equal(fresh.status, 200);
  const c2 = jwt.verify(fresh.body.token, SECRET) as any;
  t.equal(c2.grants.identity, `user:${A}:agent@acme.test`);
  t.equal(fresh.body.identity, c2.grants.identity);

  const other = await env.as({ org: A, email: 'Bo@Acme.test' }).post('/phone/token');
  t.equal((jwt.decode(other.body.token) as any).grants.identity, `user:${A}:bo@acme.test`, 'the email is lower-cased');

  const sys = await env.a.get('/phone/system');
  t.equal(sys.body.provider, 'twilio');
  t.equal(sys.body.live, true);
  t.equal(sys.body.accountSid, ACCOUNT);
  t.equal(sys.body.outgoingApplicationSid, APP);
  t.notOk(sys.text.includes(SECRET), 'the secret is never shown');
});

t.test('voice token - the local provider signs with a generated secret kept under DATA_DIR', async (t) => {
  const dataDir = tempDir(t);
  const env = await setup(t, { modules: ['phone'], dataDir });
  const file = join(dataDir, LOCAL_VOICE_FILE);
  const creds = JSON.parse(readFileSync(file, 'utf8'));
  t.equal(statSync(file).mode & 0o777, 0o600, 'the secret file is private');
  t.match(creds.accountSid, /^AC[0-9a-f]{32}$/);
  const r = await env.a.post('/phone/token');
  const decoded = jwt.decode(r.body.token, { complete: true })!;
  t.equal(decoded.header.cty, 'twilio-fpa;v=1');
  const claims = jwt.verify(r.body.token, creds.apiKeySecret, { algorithms: ['HS256'] }) as any;
  t.equal(claims.grants.identity, `user:${A}:agent@acme.test`);
  t.equal(claims.iss, creds.apiKeySid);
  t.equal(claims.sub, creds.accountSid);
  t.same(claims.grants.voice.incoming, { allow: true });
  t.equal(claims.grants.voice.outgoing.application_sid, creds.outgoingApplicationSid);
  t.equal(claims.exp - claims.iat, 3600, 'default lifetime one hour');
  await env.app.close();

  // A restart on the same data directory keeps the same credentials.
  const cfg = loadConfig({ dataDir, voice: { provider: 'local' } }, {});
  const again = createVoiceProvider(cfg);
  t.same(JSON.parse(readFileSync(file, 'utf8')), creds, 'the generated secret is reused, not replaced');
  const tok = again.accessToken('user:x:y@z.co');
  t.equal((jwt.verify(tok.token, creds.apiKeySecret) as any).grants.identity, 'user:x:y@z.co');
});

t.test('voice token - a twilio provider without credentials refuses to start', async (t) => {
  t.throws(() => loadConfig({ voice: { provider: 'twilio', accountSid: null } }, {}), /voice/);
  t.throws(() => loadConfig({ voice: { provider: 'local', accountSid: 'XX123' } }, {}), /voice\/accountSid/);
  const cfg = loadConfig({ dataDir: tempDir(t), voice: { provider: 'local' } }, { VOICE_PROVIDER: 'twilio', VOICE_ACCOUNT_SID: ACCOUNT, VOICE_API_KEY_SID: KEY, VOICE_API_KEY_SECRET: SECRET });
  t.equal(cfg.voice.provider, 'twilio', 'the environment configures the provider');
  t.equal(createVoiceProvider(cfg).summary().apiKeySid, KEY);
});
