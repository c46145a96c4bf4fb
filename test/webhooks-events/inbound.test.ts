// Inbound phone webhooks (issue 34): signed as Standard Webhooks with voice.webhookSecret, a
// timestamp more than five minutes away refused as a replay, and the older shared-secret header
// accepted only when voice.acceptSharedSecretHeader says so. The sender here is the
// `standardwebhooks` package itself, as a provider's proxy would use it.
import t from 'tap';
import { Webhook } from 'standardwebhooks';
import { request } from '../helpers/http.js';
import { A, setup, WEBHOOK_SECRET } from '../crm/setup.js';

const SMS = { from: '+15551234567', to: '+15550000001', body: 'hello', sid: 'SM1' };
const CALL = { sid: 'CA1', from: '+15551234567', to: '+15550000001', status: 'ringing' };
const VOICE = { provider: 'local', tokenTtlSeconds: 3600, webhookSecret: WEBHOOK_SECRET };
const sender = new Webhook(WEBHOOK_SECRET, { format: 'raw' });

type Env = Awaited<ReturnType<typeof setup>>;

/** Posts `body` as sent (the exact bytes signed), with `headers`. */
function post(env: Env, path: string, body: string, headers: Record<string, string>) {
  return request(env.app.url, path, { method: 'POST', body, headers: { orgid: A, 'content-type': 'application/json', ...headers } });
}

/** The Standard Webhooks headers of `body`, signed at `at`. */
function signed(body: string, at = new Date(), id = `msg_${Math.random().toString(36).slice(2)}`, secret = sender): Record<string, string> {
  return { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(at.getTime() / 1000)), 'webhook-signature': secret.sign(id, at, body) };
}

function stored(env: Env): number {
  return ['comm_message', 'phone_call'].reduce((n, dt) => n + env.app.deps.store.count(A, dt), 0);
}

t.test('inbound signature - a request signed with standardwebhooks is accepted on both routes', async (t) => {
  const env = await setup(t, { modules: ['phone'], config: { voice: VOICE } });
  const sms = JSON.stringify(SMS);
  const r = await post(env, '/phone/inbound/sms', sms, signed(sms));
  t.equal(r.status, 200, r.text);
  t.match(r.body, { received: true, duplicate: false });
  const call = JSON.stringify(CALL);
  const c = await post(env, '/phone/inbound/call', call, signed(call));
  t.equal(c.status, 200, c.text);
  t.match(c.body, { status: 'ringing' });
  // A sender rotating its key sends two signatures: one that matches is enough.
  const other = new Webhook('another-secret-0123456789', { format: 'raw' });
  const sms2 = JSON.stringify({ ...SMS, sid: 'SM2' });
  const h = signed(sms2);
  const both = { ...h, 'webhook-signature': `${other.sign(h['webhook-id'], new Date(Number(h['webhook-timestamp']) * 1000), sms2)} ${h['webhook-signature']}` };
  t.equal((await post(env, '/phone/inbound/sms', sms2, both)).status, 200, 'a second signature of the list matches');
  t.equal(stored(env), 3);
});

t.test('inbound signature - a wrong key, a changed body, a stale or future timestamp, missing headers: 401, nothing stored', async (t) => {
  const env = await setup(t, { modules: ['phone'], config: { voice: VOICE } });
  const sms = JSON.stringify(SMS);
  const now = Date.now();
  const cases: Array<[string, string, Record<string, string>]> = [
    ['a wrong key', sms, signed(sms, new Date(), 'msg_1', new Webhook('not-the-secret-0123456789', { format: 'raw' }))],
    ['a body changed after signing', JSON.stringify({ ...SMS, body: 'pay me' }), signed(sms)],
    ['signed six minutes ago (a replay)', sms, signed(sms, new Date(now - 6 * 60_000))],
    ['signed six minutes ahead', sms, signed(sms, new Date(now + 6 * 60_000))],
    ['no webhook-id', sms, (({ 'webhook-id': _, ...rest }) => rest)(signed(sms))],
    ['no webhook-timestamp', sms, (({ 'webhook-timestamp': _, ...rest }) => rest)(signed(sms))],
    ['a timestamp that is no number', sms, { ...signed(sms), 'webhook-timestamp': 'yesterday' }],
    ['a v2 signature only', sms, { ...signed(sms), 'webhook-signature': 'v2,' + signed(sms)['webhook-signature'].slice(3) }],
    ['no signature at all', sms, {}],
  ];
  for (const [what, body, headers] of cases) {
    const r = await post(env, '/phone/inbound/sms', body, headers);
    t.equal(r.status, 401, what);
  }
  const stale = await post(env, '/phone/inbound/sms', sms, signed(sms, new Date(now - 6 * 60_000)));
  t.match(stale.body.message, /five minutes/);
  // Four minutes old is within the window.
  t.equal((await post(env, '/phone/inbound/sms', sms, signed(sms, new Date(now - 4 * 60_000)))).status, 200, 'within five minutes');
  t.equal(stored(env), 1, 'only the request within the window was stored');
});

t.test('inbound signature - the shared header is refused by default and accepted only with the setting', async (t) => {
  const off = await setup(t, { modules: ['phone'], config: { voice: VOICE } });
  const sms = JSON.stringify(SMS);
  const refused = await post(off, '/phone/inbound/sms', sms, { 'x-webhook-secret': WEBHOOK_SECRET });
  t.equal(refused.status, 401, 'the right shared secret alone is not enough by default');
  t.match(refused.body.message, /VOICE_WEBHOOK_ACCEPT_SHARED_HEADER/, 'the answer names the setting');
  t.equal(stored(off), 0);

  const on = await setup(t, { modules: ['phone'], config: { voice: { ...VOICE, acceptSharedSecretHeader: true } } });
  t.equal((await post(on, '/phone/inbound/sms', sms, { 'x-webhook-secret': WEBHOOK_SECRET })).status, 200, 'accepted with the setting');
  t.equal((await post(on, '/phone/inbound/sms', sms, { 'x-webhook-secret': WEBHOOK_SECRET + 'x' })).status, 401, 'a wrong one still is not');
  const sms2 = JSON.stringify({ ...SMS, sid: 'SM2' });
  t.equal(
    (await post(on, '/phone/inbound/sms', sms2, { ...signed(sms2, new Date(Date.now() - 6 * 60_000)), 'x-webhook-secret': WEBHOOK_SECRET })).status,
    401,
    'a signature, when sent, is checked even beside the right shared header',
  );
  t.equal(stored(on), 1);
});
