// The first hour of an operator: an organisation made by sign-up takes a load test against its
// own server without answering 429 (it gets the server's default plan, or SIGNUP_PLAN), and a 429
// names the bucket that ran out and the setting that sizes it.
import autocannon from 'autocannon';
import t from 'tap';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp, staffHeaders } from '../helpers/app.js';
import { signupOrg } from '../helpers/auth.js';
import { request } from '../helpers/http.js';

const app = await startTestApp(t, {
  modules: ['auth', 'events'],
  config: { rateLimits: { enabled: true, defaultPlan: 'standard', signupPlan: null, plans: { free: { perSecond: 50, burst: 200 }, standard: { perSecond: 5000, burst: 20000 } }, perAddress: { perSecond: 20, burst: 100 } } },
});

t.test('first hour - a signed-up organisation takes a 2,000-request autocannon burst with no 429', async (t) => {
  const org = await signupOrg(app, { email: 'owner@first-hour.example', orgName: 'First Hour' });
  t.equal(app.deps.store.getOrg(org.orgId)?.plan, undefined, 'sign-up writes no plan: the server default applies');
  const result = await autocannon({
    url: `${app.url}/events`,
    headers: { orgid: org.orgId, authorization: `Bearer ${org.token}` },
    connections: 20,
    amount: 2000,
  });
  t.equal(result.errors, 0);
  t.equal(result.non2xx, 0, 'every answer was 2xx');
  t.equal(result['2xx'], 2000);
});

t.test('first hour - a 429 names the bucket and the setting that raises it', async (t) => {
  await app.deps.store.commit(new WriteBatch().putOrg({ orgId: 'small-plan', displayName: 'Small', createdate: new Date().toISOString(), plan: 'free' }));
  const headers = staffHeaders(app, 'small-plan');
  let refused;
  for (let i = 0; i < 400 && !refused; i++) {
    const r = await request(app.url, '/events', { headers });
    if (r.status === 429) refused = r;
  }
  t.ok(refused, 'the free plan runs out');
  t.match(refused!.body.message, /rate limit of plan "free" for organisation small-plan reached \(50 requests\/s, burst 200\)/);
  t.match(refused!.body.message, /rateLimits\.plans\.free/);
  t.ok(Number(refused!.headers['retry-after']) >= 1);
});

t.test('first hour - SIGNUP_PLAN puts new organisations on a named plan', async (t) => {
  const other = await startTestApp(t, { modules: ['auth', 'events'], env: { SIGNUP_PLAN: 'free' } });
  const org = await signupOrg(other, { email: 'owner@planned.example', orgName: 'Planned' });
  t.equal(other.deps.store.getOrg(org.orgId)?.plan, 'free');
});
