import t from 'tap';
import { client } from '../helpers/http.js';
import { A, assertStaffOnly, messages, setup, WEBHOOK_SECRET } from '../crm/setup.js';

const SMS = { from: '+15551234567', to: '+15550000001', body: 'hello', sid: 'SM1' };
const CALL = { sid: 'CA1', from: '+15551234567', to: '+15550000001', status: 'ringing' };

t.test('inbound webhooks - a missing or wrong shared secret is refused with 401 and stores nothing', async (t) => {
  const env = await setup(t, { modules: ['phone'] });
  const { app } = env;
  const seen: unknown[] = [];
  app.deps.bus.subscribe('sms.received.>', (e) => seen.push(e));
  for (const path of ['/phone/inbound/sms', '/phone/inbound/call']) {
    const body = path.endsWith('sms') ? SMS : CALL;
    const none = await client(app.url, { orgid: A }).post(path, body);
    t.equal(none.status, 401, `${path}: no secret`);
    t.match(none.body.message, /x-webhook-secret/);
    const wrong = await client(app.url, { orgid: A, 'x-webhook-secret': WEBHOOK_SECRET + 'x' }).post(path, body);
    t.equal(wrong.status, 401, `${path}: wrong secret`);
    const short = await client(app.url, { orgid: A, 'x-webhook-secret': 'hook' }).post(path, body);
    t.equal(short.status, 401, `${path}: a prefix of the secret`);
    const staff = await env.a.post(path, body);
    t.equal(staff.status, 401, `${path}: a staff token is not the webhook secret`);
    const invalidAndWrong = await client(app.url, { orgid: A, 'x-webhook-secret': 'nope' }).post(path, { junk: true });
    t.equal(invalidAndWrong.status, 401, `${path}: the secret is checked before the body`);
    const noOrg = await client(app.url, { 'x-webhook-secret': WEBHOOK_SECRET }).post(path, body);
    t.equal(noOrg.status, 400, `${path}: the orgid header names the tenant`);
  }
  await app.deps.bus.flush();
  t.equal(seen.length, 0, 'nothing published');
  for (const dt of ['comm_message', 'inbox_conversation', 'phone_call', 'call_recording']) {
    t.equal(app.deps.store.count(A, dt), 0, `no ${dt} stored`);
  }
});

t.test('inbound webhooks - with no secret configured every webhook is refused', async (t) => {
  const env = await setup(t, { modules: ['phone'], config: { voice: { provider: 'local', tokenTtlSeconds: 3600, webhookSecret: null } } });
  const r = await client(env.app.url, { orgid: A, 'x-webhook-secret': WEBHOOK_SECRET }).post('/phone/inbound/sms', SMS);
  t.equal(r.status, 401);
  t.match(r.body.message, /not configured/);
  t.equal((await env.a.get('/phone/system')).body.webhooks.enabled, false);
});

t.test('inbound webhooks - body validation names the fields (after the secret)', async (t) => {
  const env = await setup(t, { modules: ['phone'] });
  const hook = client(env.app.url, { orgid: A, 'x-webhook-secret': WEBHOOK_SECRET });
  const sms = await hook.post('/phone/inbound/sms', { to: 5, body: 'x' });
  t.equal(sms.status, 400);
  t.match(messages(sms), /body\/from is required/);
  t.match(messages(sms), /body\/to/);
  const from = await hook.post('/phone/inbound/sms', { ...SMS, from: 'ACME' });
  t.equal(from.status, 400);
  t.match(messages(from), /body\/from/);
  const call = await hook.post('/phone/inbound/call', { ...CALL, status: 'exploded', durationSeconds: -1 });
  t.equal(call.status, 400);
  t.match(messages(call), /body\/status must be one of/);
  t.match(messages(call), /body\/durationSeconds/);
  t.equal((await hook.post('/phone/inbound/call', {})).status, 400);
  t.equal(env.app.deps.store.count(A, 'phone_call'), 0);
});

t.test('inbound calls - status callbacks merge per call; recordings; the communications log', async (t) => {
  const env = await setup(t, { modules: ['phone'] });
  const { a, b } = env;
  const hook = client(env.app.url, { orgid: A, 'x-webhook-secret': WEBHOOK_SECRET });

  const ring = await hook.post('/phone/inbound/call', { ...CALL, startedAt: '2026-05-01T10:00:00.000Z' });
  t.equal(ring.status, 200);
  t.equal(ring.body.status, 'ringing');
  await hook.post('/phone/inbound/call', { ...CALL, status: 'in-progress' });
  const done = await hook.post('/phone/inbound/call', {
    ...CALL,
    status: 'completed',
    durationSeconds: 95,
    endedAt: '2026-05-01T10:01:40.000Z',
    recording: { sid: 'RE1', url: 'https://media.example.com/RE1.mp3', durationSeconds: 90 },
  });
  t.equal(done.body.callId, ring.body.callId, 'one record per call SID');
  t.type(done.body.recordingId, 'string');
  // A late "in-progress" never replaces the final status.
  const late = await hook.post('/phone/inbound/call', { ...CALL, status: 'in-progress' });
  t.equal(late.body.status, 'completed');
  await hook.post('/phone/inbound/call', { sid: 'CA2', from: '+15550000001', to: '+15557654321', status: 'no-answer', direction: 'outbound', startedAt: '2026-05-01T11:00:00.000Z' });

  const calls = await a.get('/crm/communications/calls');
  t.equal(calls.status, 200);
  t.equal(calls.body.total, 2);
  t.same(calls.body.data.map((c: any) => c.data.sid), ['CA2', 'CA1'], 'newest first');
  const c1 = calls.body.data[1];
  t.equal(c1.data.status, 'completed');
  t.equal(c1.data.durationSeconds, 95);
  t.equal(c1.data.startedAt, '2026-05-01T10:00:00.000Z');
  t.same(c1.data.recordingSids, ['RE1']);
  t.equal((await a.get('/crm/communications/calls?direction=outbound')).body.data[0].data.sid, 'CA2');
  t.equal((await a.get('/crm/communications/calls?status=completed')).body.total, 1);
  t.equal((await a.get('/crm/communications/calls?contact=%2B15557654321')).body.total, 1);
  t.equal((await a.get(`/crm/communications/calls?since=${encodeURIComponent('2026-05-01T10:30:00Z')}`)).body.total, 1);

  const recs = await a.get('/crm/communications/recordings');
  t.equal(recs.body.total, 1);
  t.equal(recs.body.data[0].data.callSid, 'CA1');
  t.equal((await a.get('/crm/communications/recordings?callSid=CA2')).body.total, 0);
  const one = await a.get('/crm/communications/recordings/RE1');
  t.equal(one.status, 200);
  t.equal(one.body.data.url, 'https://media.example.com/RE1.mp3');
  t.equal(one.body.data.durationSeconds, 90);
  t.equal((await a.get('/crm/communications/recordings/RE404')).status, 404);

  // Everything together: SMS (both ways) and calls.
  await hook.post('/phone/inbound/sms', { ...SMS, receivedAt: '2026-05-01T12:00:00.000Z' });
  const all = await a.get('/crm/communications/all');
  t.same(all.body.data.map((r: any) => r.datatype), ['comm_message', 'phone_call', 'phone_call']);
  t.equal((await a.get('/crm/communications/all?type=call')).body.total, 2);
  t.equal((await a.get('/crm/communications/all?type=sms')).body.total, 1);
  t.equal((await a.get('/crm/communications/all?contact=%2B15551234567')).body.total, 2);
  t.equal((await a.get('/crm/communications/all?pageSize=1&page=2')).body.data[0].data.sid, 'CA2');
  t.match(messages(await a.get('/crm/communications/all?type=fax')), /query\/type/);
  t.match(messages(await a.get('/crm/communications/sms?since=yesterday')), /query\/since/);

  // Isolation.
  for (const p of ['/crm/communications/sms', '/crm/communications/calls', '/crm/communications/all', '/crm/communications/recordings']) {
    t.equal((await b.get(p)).body.total, 0, `${p}: nothing of A in B`);
  }
  t.equal((await b.get('/crm/communications/recordings/RE1')).status, 404);

  for (const p of ['/crm/communications/sms', '/crm/communications/calls', '/crm/communications/all', '/crm/communications/recordings', '/crm/communications/recordings/RE1']) {
    await assertStaffOnly(t, env, 'get', p);
  }
});
