// Quota by principal over real HTTP (issue 29, item 4): requests without a credential that name an
// organisation spend its anonymous bucket and their address, never the bucket its signed-in users
// spend; a customer token spends its own share of the plan before the plan. The clock is manual,
// so no bucket refills while a test runs.
import t, { type Test } from 'tap';
import { ManualClock } from '../../core/clock.js';
import { startTestApp, tokenFor } from '../helpers/app.js';
import { bearer, signupOrg } from '../helpers/auth.js';
import { request } from '../helpers/http.js';

const limits = {
  enabled: true,
  defaultPlan: 'tiny',
  signupPlan: null,
  // The plan's burst 40: its anonymous bucket is 10 (0.25), one customer's share 4 (0.1).
  plans: { tiny: { perSecond: 1, burst: 40 } },
  perAddress: { perSecond: 100, burst: 100 },
  anonymousShare: 0.25,
  customerShare: 0.1,
  anonymousPerAddress: { perSecond: 1, burst: 500 },
};

async function setUp(t: Test) {
  const clock = new ManualClock(Date.now());
  const app = await startTestApp(t, { modules: ['auth', 'records', 'chat', 'storefront'], clock, config: { rateLimits: limits } });
  const org = await signupOrg(app, { email: 'owner@principal.example', orgName: 'Principal' });
  return { app, org };
}

async function statuses(n: number, send: () => Promise<{ status: number }>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push((await send()).status);
  return out;
}

const count = (xs: number[], s: number) => xs.filter((x) => x === s).length;

t.test('rate limit by principal - an anonymous flood of public routes leaves staff with zero 429s', async (t) => {
  const { app, org } = await setUp(t);
  const anon = await statuses(100, () => request(app.url, '/storefront/pos-categories', { headers: { orgid: org.orgId } }));
  t.equal(count(anon, 200), 10, 'the anonymous bucket (a quarter of the plan) was granted');
  t.equal(count(anon, 429), 90, 'the rest of the flood was refused');
  const refused = await request(app.url, '/storefront/pos-categories', { headers: { orgid: org.orgId } });
  t.match(refused.body.message, /anonymous callers of organisation .*RATE_LIMIT_ANONYMOUS_SHARE/, 'the 429 names the anonymous bucket');

  const staff = await statuses(20, () => request(app.url, '/profile', { headers: bearer(org) }));
  t.same(staff, Array(20).fill(200), "every signed-in GET /profile of the organisation answers 200");
});

t.test('rate limit by principal - refused credentials are charged as anonymous, not to the staff', async (t) => {
  const { app, org } = await setUp(t);
  const forged = { orgid: org.orgId, authorization: 'Bearer not-a-token' };
  const bad = await statuses(60, () => request(app.url, '/profile', { headers: forged }));
  t.equal(count(bad, 401), 10, 'bad tokens spend the anonymous bucket');
  t.equal(count(bad, 429), 50);
  const badBody = await statuses(20, () => request(app.url, '/repository/create', { method: 'POST', headers: forged, body: { datatype: 'n', isNew: true, data: {} } }));
  t.same(badBody, Array(20).fill(429), 'refused before the body, and charged the same way');
  const staff = await statuses(20, () => request(app.url, '/profile', { headers: bearer(org) }));
  t.same(staff, Array(20).fill(200), 'the staff are not charged for them');
});

t.test('rate limit by principal - one customer token spends only its share of the plan', async (t) => {
  const { app, org } = await setUp(t);
  const customer = (sub: string) => ({ orgid: org.orgId, authorization: `Bearer ${tokenFor(app, { org: org.orgId, kind: 'customer', sub, customerId: sub })}` });
  const one = await statuses(10, () => request(app.url, '/client/community/threads', { headers: customer('c1') }));
  t.same([count(one, 200), count(one, 429)], [4, 6], "one customer gets its share (0.1 of the plan's burst 40)");
  const refused = await request(app.url, '/client/community/threads', { headers: customer('c1') });
  t.match(refused.body.message, /one customer of organisation .*RATE_LIMIT_CUSTOMER_SHARE/, 'the 429 names the customer share');
  t.equal((await request(app.url, '/client/community/threads', { headers: customer('c2') })).status, 200, 'another customer has its own share');
  const staff = await statuses(20, () => request(app.url, '/profile', { headers: bearer(org) }));
  t.same(staff, Array(20).fill(200), 'the staff still have the plan');
});
