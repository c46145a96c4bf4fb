import { readFileSync } from 'node:fs';
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { A, assertStaffOnly, B, messages, setup, WEBHOOK_SECRET } from '../crm/setup.js';

const reg = (deviceId: string, extra: Record<string, unknown> = {}) => ({
  deviceId,
  platform: 'ios',
  label: "Ana's iPhone",
  capabilities: ['voice', 'sms'],
  clientInfo: { appVersion: '3.2.1', os: 'iOS 18' },
  ...extra,
});

t.test('phone devices - register, heartbeat TTL of 90 s on a controllable clock, unregister', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 4, 1, 9));
  const env = await setup(t, { modules: ['phone'], clock });
  const { a, admin } = env;

  const r = await a.post('/phone/voice/register-device', reg('dev-ana-1'));
  t.equal(r.status, 200);
  t.equal(r.body.identity, `user:${A}:agent@acme.test`, 'identity user:<orgId>:<email>');
  t.type(r.body.token, 'string');
  t.equal(r.body.provider, 'local');
  t.same(r.body.numbers, [], 'no numbers yet');
  t.equal(r.body.device.deviceId, 'dev-ana-1');
  t.equal(r.body.device.online, true, 'registration counts as a heartbeat');
  t.equal(r.body.heartbeatIntervalSeconds, 60);
  t.equal(r.body.heartbeatTtlSeconds, 90);
  t.same(r.body.device.capabilities, ['voice', 'sms']);
  t.same(r.body.device.clientInfo, { appVersion: '3.2.1', os: 'iOS 18' });

  const list = () => a.get('/phone/voice/devices');
  t.equal((await list()).body.data[0].online, true);

  // 89 s of silence: still online. A heartbeat then keeps it for another 90 s.
  clock.advance(89_000);
  t.equal((await list()).body.data[0].online, true, 'online at 89 s');
  const hb = await a.post('/phone/voice/heartbeat', { deviceId: 'dev-ana-1' });
  t.equal(hb.status, 200);
  t.equal(hb.body.online, true);
  t.equal(hb.body.lastSeenAt, new Date(clock.now()).toISOString());
  t.equal(hb.body.expiresAt, new Date(clock.now() + 90_000).toISOString());
  clock.advance(60_000);
  t.equal((await list()).body.data[0].online, true, '60 s after a heartbeat: online');
  clock.advance(30_000);
  const gone = await list();
  t.equal(gone.body.data[0].online, false, '90 s after the last heartbeat: offline');
  t.equal(gone.body.online, 0);
  t.equal(gone.body.offline, 1);
  t.equal((await a.get('/phone/voice/devices?online=false')).body.total, 1);
  t.equal((await a.get('/phone/voice/devices?online=true')).body.total, 0);
  // A heartbeat brings a registered device back.
  await a.post('/phone/voice/heartbeat', { deviceId: 'dev-ana-1' });
  t.equal((await list()).body.data[0].online, true, 'back online after a heartbeat');

  // A second user's device; filters.
  const bo = env.as({ org: A, email: 'bo@acme.test', sub: 'user-bo' });
  await bo.post('/phone/voice/register-device', reg('dev-bo-1', { platform: 'Android', capabilities: ['sms'] }));
  t.equal((await list()).body.total, 2);
  t.equal((await a.get('/phone/voice/devices?email=bo@acme.test')).body.data[0].deviceId, 'dev-bo-1');
  t.equal((await a.get('/phone/voice/devices?mine=true')).body.data[0].deviceId, 'dev-ana-1');
  t.equal((await a.get('/phone/voice/devices?platform=android')).body.total, 1, 'platform is lower-cased');

  // Someone else's device: heartbeat and unregister answer 404 and change nothing.
  t.equal((await a.post('/phone/voice/heartbeat', { deviceId: 'dev-bo-1' })).status, 404);
  t.equal((await a.post('/phone/voice/unregister-device', { deviceId: 'dev-bo-1' })).status, 404);
  t.equal((await a.post('/phone/voice/heartbeat', { deviceId: 'never-registered' })).status, 404);

  // Re-registering updates the device in place.
  const again = await a.post('/phone/voice/register-device', reg('dev-ana-1', { label: 'Work phone' }));
  t.equal(again.body.device.label, 'Work phone');
  t.equal(again.body.device.id, r.body.device.id);
  t.equal((await list()).body.total, 2);

  const un = await a.post('/phone/voice/unregister-device', { deviceId: 'dev-ana-1' });
  t.same(un.body, { deviceId: 'dev-ana-1', unregistered: true });
  t.equal((await list()).body.total, 1);
  t.equal((await a.post('/phone/voice/heartbeat', { deviceId: 'dev-ana-1' })).status, 404, 'an unregistered device must register again');
  // An Admin may remove anyone's device.
  t.equal((await admin.post('/phone/voice/unregister-device', { deviceId: 'dev-bo-1' })).status, 200);
  t.equal((await list()).body.total, 0);
});

t.test('phone devices - capabilities only voice and/or sms; validation names the fields', async (t) => {
  const env = await setup(t, { modules: ['phone'] });
  const { a } = env;
  const bad = await a.post('/phone/voice/register-device', reg('dev-1', { capabilities: ['voice', 'video'] }));
  t.equal(bad.status, 400);
  t.match(messages(bad), /body\/capabilities\/1 must be one of: voice, sms/);
  t.equal((await a.post('/phone/voice/register-device', reg('dev-1', { capabilities: [] }))).status, 400);
  t.match(messages(await a.post('/phone/voice/register-device', reg('dev-1', { capabilities: ['sms', 'sms'] }))), /body\/capabilities/);
  t.match(messages(await a.post('/phone/voice/register-device', reg('dev-1', { capabilities: 'voice' }))), /body\/capabilities/);
  const missing = await a.post('/phone/voice/register-device', {});
  t.match(messages(missing), /body\/deviceId is required/);
  t.match(messages(missing), /body\/platform is required/);
  t.match(messages(missing), /body\/capabilities is required/);
  t.match(messages(await a.post('/phone/voice/register-device', reg('bad id with spaces'))), /body\/deviceId/);
  t.match(messages(await a.post('/phone/voice/heartbeat', {})), /body\/deviceId is required/);
  t.match(messages(await a.post('/phone/voice/unregister-device', { deviceId: 7 })), /body\/deviceId/);
  t.match(messages(await a.get('/phone/voice/devices?online=perhaps')), /query\/online/);
  t.equal(env.app.deps.store.count(A, 'phone_device'), 0, 'nothing registered');
  // A staff token without an email cannot have a voice identity.
  const noEmail = env.as({ org: A, email: '' });
  t.equal((await noEmail.post('/phone/voice/register-device', reg('dev-2'))).status, 403);
});

t.test('phone devices - numbers, user phones, system summary', async (t) => {
  const env = await setup(t, { modules: ['phone'] });
  const { a, admin, b } = env;
  t.equal((await a.post('/phone/numbers', { number: '+15550000001' })).status, 403, 'adding numbers needs Admin');
  const shared = await admin.post('/phone/numbers', { number: '+1 555 000 0001', label: 'Front desk' });
  t.equal(shared.status, 201);
  t.same(shared.body, { id: shared.body.id, number: '+15550000001', label: 'Front desk', capabilities: ['voice', 'sms'], shared: true, assignedTo: [], mine: true });
  const mine = await admin.post('/phone/numbers', { number: '+15550000002', label: 'Sales', assignedTo: ['Agent@acme.test'], capabilities: ['voice'] });
  t.equal(mine.status, 201);
  await admin.post('/phone/numbers', { number: '+15550000003', assignedTo: ['bo@acme.test'] });
  const update = await admin.post('/phone/numbers', { number: '+15550000003', label: 'Bo direct' });
  t.equal(update.status, 200, 'posting a known number updates it');
  t.same(update.body.assignedTo, ['bo@acme.test'], 'unsent fields are kept');
  t.match(messages(await admin.post('/phone/numbers', { number: 'call me' })), /body\/number/);
  t.match(messages(await admin.post('/phone/numbers', { number: '+15550000009', assignedTo: ['x'] })), /body\/assignedTo\/0/);

  const reg1 = await a.post('/phone/voice/register-device', reg('dev-a'));
  t.same(reg1.body.numbers.map((n: any) => n.number), ['+15550000001', '+15550000002'], 'registration answers the assigned and shared numbers');
  t.same(reg1.body.numbers[1], { id: mine.body.id, number: '+15550000002', label: 'Sales', capabilities: ['voice'], shared: false });

  const nums = await a.get('/phone/numbers');
  t.equal(nums.body.total, 3);
  t.same(nums.body.data.map((n: any) => n.mine), [true, true, false]);
  t.equal((await a.get('/phone/numbers?mine=true')).body.total, 2);

  const up = await a.get('/phone/user-phones');
  t.equal(up.status, 200);
  t.same(up.body.sharedNumbers, ['+15550000001']);
  t.same(up.body.data, [
    { email: 'agent@acme.test', identity: `user:${A}:agent@acme.test`, numbers: ['+15550000002'], devices: { total: 1, online: 1 } },
    { email: 'bo@acme.test', identity: `user:${A}:bo@acme.test`, numbers: ['+15550000003'], devices: { total: 0, online: 0 } },
  ]);
  t.equal((await a.get('/phone/user-phones?email=BO@acme.test')).body.total, 1);

  const sys = await a.get('/phone/system');
  t.equal(sys.status, 200);
  t.equal(sys.body.provider, 'local');
  t.equal(sys.body.live, false);
  t.match(sys.body.accountSid, /^AC[0-9a-f]{32}$/);
  t.equal(sys.body.identityFormat, 'user:<orgId>:<email>');
  t.same(sys.body.heartbeat, { intervalSeconds: 60, ttlSeconds: 90 });
  t.equal(sys.body.webhooks.enabled, true);
  t.equal(sys.body.numbers, 3);
  t.same(sys.body.devices, { total: 1, online: 1, offline: 0, byPlatform: { ios: 1 } });
  const secret = JSON.parse(readFileSync(`${env.app.config.dataDir}/voice-local.json`, 'utf8')).apiKeySecret;
  t.notOk(sys.text.includes(secret), 'the API key secret is never shown');
  t.notOk(sys.text.includes(WEBHOOK_SECRET), 'the webhook secret is never shown');

  const del = await admin.del(`/phone/numbers/${mine.body.id}`);
  t.same(del.body, { id: mine.body.id, deleted: true });
  t.equal((await admin.del(`/phone/numbers/${mine.body.id}`)).status, 404);
  t.equal((await a.del(`/phone/numbers/${shared.body.id}`)).status, 403);

  // Isolation: B has none of it.
  t.equal((await b.get('/phone/numbers')).body.total, 0);
  t.equal((await b.get('/phone/voice/devices')).body.total, 0);
  t.equal((await b.get('/phone/user-phones')).body.total, 0);
  t.equal((await b.get('/phone/system')).body.devices.total, 0);
  t.equal((await b.post('/phone/voice/heartbeat', { deviceId: 'dev-a' })).status, 404);
  t.equal((await env.as({ org: B, roles: ['User', 'Admin'] }).del(`/phone/numbers/${shared.body.id}`)).status, 404);
  t.same((await b.post('/phone/voice/register-device', reg('dev-b'))).body.numbers, [], "A's numbers are not B's");
});

t.test('phone devices - access', async (t) => {
  const env = await setup(t, { modules: ['phone'] });
  await assertStaffOnly(t, env, 'post', '/phone/voice/register-device', reg('dev-x'));
  await assertStaffOnly(t, env, 'post', '/phone/voice/heartbeat', { deviceId: 'dev-x' });
  await assertStaffOnly(t, env, 'post', '/phone/voice/unregister-device', { deviceId: 'dev-x' });
  await assertStaffOnly(t, env, 'get', '/phone/voice/devices');
  await assertStaffOnly(t, env, 'post', '/phone/token');
  await assertStaffOnly(t, env, 'get', '/phone/numbers');
  await assertStaffOnly(t, env, 'post', '/phone/numbers', { number: '+15550000001' });
  await assertStaffOnly(t, env, 'del', '/phone/numbers/0123456789abcdef01234567');
  await assertStaffOnly(t, env, 'get', '/phone/user-phones');
  await assertStaffOnly(t, env, 'get', '/phone/system');
  t.equal(env.app.deps.store.count(A, 'phone_device') + env.app.deps.store.count(A, 'phone_number'), 0, 'refused calls stored nothing');
});
