// The edge's own guards over real HTTP: rate limits per organisation plan and per address (429 in
// the envelope with Retry-After), security headers on every kind of answer, request ids, and
// bodies that are not UTF-8.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { WriteBatch } from '../../core/store/store.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const limits = {
  enabled: true,
  defaultPlan: 'tiny',
  plans: { tiny: { perSecond: 1, burst: 3 }, roomy: { perSecond: 100, burst: 50 } },
  perAddress: { perSecond: 1, burst: 2 },
};

t.test('an organisation is limited by its plan; another organisation is not charged for it', async (t) => {
  const clock = new ManualClock(Date.now());
  const app = await startTestApp(t, { modules: ['auth', 'records', 'reference'], clock, config: { rateLimits: limits } });
  await createOrg(app, 'acme');
  await createOrg(app, 'globex');
  await app.deps.store.commit(
    new WriteBatch().putOrg({ orgId: 'bigco', displayName: 'BigCo', plan: 'roomy', createdate: new Date().toISOString() }),
  );
  const get = (org: string) =>
    request(app.url, '/repository/find/bm_note', { method: 'POST', body: {}, headers: { orgid: org, authorization: `Bearer ${tokenFor(app, { org })}` } });

  for (let i = 0; i < 3; i++) t.equal((await get('acme')).status, 200, `request ${i + 1} within the burst`);
  const refused = await get('acme');
  t.equal(refused.status, 429);
  t.same(refused.body, { statusCode: 429, message: refused.body.message, error: 'Too Many Requests' });
  t.match(refused.body.message, /retry after 1 seconds/);
  t.equal(refused.headers['retry-after'], '1');

  t.equal((await get('globex')).status, 200, 'another organisation has its own bucket');
  for (let i = 0; i < 10; i++) t.equal((await get('bigco')).status, 200, 'a bigger plan allows more');

  clock.advance(1000);
  t.equal((await get('acme')).status, 200, 'one token back after a second');
  t.equal((await get('acme')).status, 429);
});

t.test('the public authentication routes are limited per address', async (t) => {
  const clock = new ManualClock(Date.now());
  const app = await startTestApp(t, { modules: ['auth', 'records', 'reference'], clock, config: { rateLimits: { ...limits, defaultPlan: 'roomy' } } });
  await createOrg(app, 'acme');
  const signIn = () =>
    request(app.url, '/profile/user/signin', { method: 'POST', headers: { orgid: 'acme' }, body: { email: 'x@acme.test', password: 'wrong-password-1' } });
  const first = await signIn();
  t.not(first.status, 429, 'first attempt is judged on its merits');
  t.not((await signIn()).status, 429);
  const third = await signIn();
  t.equal(third.status, 429, 'third attempt within the same second is refused');
  t.equal(third.headers['retry-after'], '1');
  const routeWithToken = await request(app.url, '/repository/find/bm_note', { method: 'POST', body: {},
    headers: { orgid: 'acme', authorization: `Bearer ${tokenFor(app, { org: 'acme' })}` },
  });
  t.equal(routeWithToken.status, 200, 'routes that are not public sign-in are not charged per address');
});

t.test('security headers on JSON, error, preflight and HTML answers', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'records', 'reference'] });
  await createOrg(app, 'acme');
  const ok = await request(app.url, '/repository/find/bm_note', { method: 'POST', body: {}, headers: { orgid: 'acme', authorization: `Bearer ${tokenFor(app, { org: 'acme' })}` } });
  const missing = await request(app.url, '/no/such/route');
  const unauth = await request(app.url, '/profile', { headers: { orgid: 'acme' } });
  const preflight = await request(app.url, '/profile', { method: 'OPTIONS', headers: { origin: 'https://app.example', 'access-control-request-method': 'GET' } });
  const docs = await request(app.url, '/documentation');
  t.equal(ok.status, 200);
  t.equal(missing.status, 404);
  t.equal(unauth.status, 401);
  t.equal(preflight.status, 204);
  t.equal(docs.status, 200);
  for (const [name, r] of Object.entries({ ok, missing, unauth, preflight, docs })) {
    t.equal(r.headers['x-content-type-options'], 'nosniff', `${name}: nosniff`);
    t.equal(r.headers['x-frame-options'], 'DENY', `${name}: no framing`);
    t.equal(r.headers['referrer-policy'], 'no-referrer', `${name}: referrer policy`);
  }
  for (const [name, r] of Object.entries({ ok, missing, unauth })) {
    t.equal(r.headers['content-security-policy'], "default-src 'none'; frame-ancestors 'none'", `${name}: JSON gets a closed CSP`);
    t.equal(r.headers['cache-control'], 'no-store', `${name}: JSON is not cached`);
  }
  t.equal(docs.headers['content-security-policy'], undefined, 'the HTML reference page is not locked out of its own scripts');
});

t.test('request ids: a plain caller id is echoed, anything else is replaced, ours are unique', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'records', 'reference'] });
  const echoed = await request(app.url, '/healthz', { headers: { 'x-request-id': 'gw-1234.abc:7' } });
  t.equal(echoed.headers['x-request-id'], 'gw-1234.abc:7');
  const odd = await request(app.url, '/healthz', { headers: { 'x-request-id': 'has spaces and "quotes"' } });
  t.not(odd.headers['x-request-id'], 'has spaces and "quotes"');
  t.match(odd.headers['x-request-id'], /^[0-9a-f]{8}[0-9a-z]{8,}$/);
  const ids = new Set<string>();
  for (let i = 0; i < 20; i++) ids.add(String((await request(app.url, '/healthz')).headers['x-request-id']));
  t.equal(ids.size, 20);
});

t.test('a JSON body that is not UTF-8 is a 400 naming the problem', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'records', 'reference'] });
  await createOrg(app, 'acme');
  const body = Buffer.concat([Buffer.from('{"title":"caf'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
  const r = await request(app.url, '/profile/signout', {
    method: 'POST',
    headers: { orgid: 'acme', authorization: `Bearer ${tokenFor(app, { org: 'acme' })}`, 'content-type': 'application/json' },
    body,
  });
  t.equal(r.status, 400);
  t.match(r.body, { statusCode: 400, error: 'Bad Request', message: /not valid UTF-8/ });
});
