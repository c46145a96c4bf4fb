// Tokens: refresh rotation and reuse detection (also across a restart), expiry, tampering and
// `alg: none`, wrong role and wrong organisation.
import jwt from 'jsonwebtoken';
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { startTestApp, tempDir, TEST_JWT_SECRET } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, signIn, signupCustomer, signupOrg, signupStaff, type Session } from '../helpers/auth.js';
import { LeakGuard } from './leak-guard.js';

const guard = new LeakGuard();
guard.secret(DEFAULT_PASSWORD);

function b64(obj: unknown): string {
  return Buffer.from(JSON.stringify(obj)).toString('base64url');
}

t.test('refresh - rotates both tokens; reusing a rotated one revokes the whole family', async (t) => {
  const clock = new ManualClock();
  const app = await startTestApp(t, { modules: ['auth'], clock });
  const http = guard.client(app);
  const s = await signupOrg(app, { email: 'owner@rot.example', orgName: 'Rot' }, guard.sender(app));

  clock.advance(1000);
  const r1 = await http.post('/profile/user/refresh', {}, { authorization: `Bearer ${s.refreshToken}` });
  t.equal(r1.status, 200, 'refresh token as bearer, empty body');
  t.ok(r1.body.token && r1.body.refreshToken);
  t.not(r1.body.refreshToken, s.refreshToken, 'a new refresh token');
  t.not(r1.body.token, s.token, 'a new access token');
  t.equal(r1.body.user.id, s.user.id);
  t.equal((await http.get('/profile', bearer({ orgId: s.orgId, token: r1.body.token }))).status, 200, 'the new access token works');

  clock.advance(1000);
  const r2 = await http.post('/profile/user/refresh', { refreshToken: r1.body.refreshToken });
  t.equal(r2.status, 200, 'refresh token in the body');

  const reuse = await http.post('/profile/user/refresh', { refreshToken: s.refreshToken });
  t.equal(reuse.status, 401, 'the first, already rotated token');
  t.match(reuse.body.message, /already used/);
  const descendant = await http.post('/profile/user/refresh', { refreshToken: r2.body.refreshToken });
  t.equal(descendant.status, 401, 'the newest token of the family is revoked too');
  const fam = (jwt.decode(s.refreshToken) as { fam: string }).fam;
  t.equal(app.deps.store.getKv<{ revoked: boolean }>(s.orgId, 'refresh_family', fam)?.revoked, true, 'stored as revoked');

  const other = await signIn(app, s.orgId, 'owner@rot.example', DEFAULT_PASSWORD, {}, guard.sender(app));
  const r3 = await http.post('/profile/user/refresh', { refreshToken: other.body.refreshToken });
  t.equal(r3.status, 200, 'another sign-in (another family) is unaffected');
  guard.harvest(app, [s.orgId]);
});

t.test('refresh - concurrent use of one refresh token: one rotation wins, the family is then revoked', async (t) => {
  const app = await startTestApp(t, { modules: ['auth'] });
  const http = guard.client(app);
  const s = await signupOrg(app, { email: 'owner@race.example', orgName: 'Race' }, guard.sender(app));
  const replies = await Promise.all(Array.from({ length: 4 }, () => http.post('/profile/user/refresh', { refreshToken: s.refreshToken })));
  const ok = replies.filter((r) => r.status === 200);
  t.equal(ok.length, 1, 'exactly one rotation');
  t.equal(replies.filter((r) => r.status === 401).length, 3);
  const after = await http.post('/profile/user/refresh', { refreshToken: ok[0].body.refreshToken });
  t.equal(after.status, 401, 'reuse revoked the family, the winner included');
  guard.harvest(app, [s.orgId]);
});

t.test('refresh - customer tokens at /profile/customer/refresh only, and the reverse', async (t) => {
  const app = await startTestApp(t, { modules: ['auth'] });
  const http = guard.client(app);
  const s = await signupOrg(app, { email: 'owner@cust.example', orgName: 'Cust' }, guard.sender(app));
  const c = await signupCustomer(app, s.orgId, { email: 'cust@cust.example' }, guard.sender(app));
  const ok = await http.post('/profile/customer/refresh', {}, { authorization: `Bearer ${c.refreshToken}`, orgid: s.orgId });
  t.equal(ok.status, 200);
  t.equal(ok.body.user.customerId, c.customerId);
  t.ok(ok.body.token && ok.body.refreshToken);
  const claims = jwt.decode(ok.body.token) as Record<string, unknown>;
  t.equal(claims.kind, 'customer');
  t.equal(claims.customerId, c.customerId);
  t.equal(claims.email, 'cust@cust.example');
  const staffAtCustomer = await http.post('/profile/customer/refresh', {}, { authorization: `Bearer ${s.refreshToken}` });
  t.equal(staffAtCustomer.status, 401);
  t.match(staffAtCustomer.body.message, /\/profile\/user\/refresh/);
  const customerAtStaff = await http.post('/profile/user/refresh', { refreshToken: ok.body.refreshToken });
  t.equal(customerAtStaff.status, 401);
  const wrongOrg = await signupOrg(app, { email: 'x@cust.example', orgName: 'Else' }, guard.sender(app));
  const mismatch = await http.post('/profile/customer/refresh', {}, { authorization: `Bearer ${ok.body.refreshToken}`, orgid: wrongOrg.orgId });
  t.equal(mismatch.status, 403, 'orgid of another organisation');
  t.equal((await http.post('/profile/customer/refresh', {})).status, 401, 'no refresh token at all');
  guard.harvest(app, [s.orgId, wrongOrg.orgId]);
  const access = await http.post('/profile/user/refresh', { refreshToken: s.token });
  t.equal(access.status, 401, 'an access token is not a refresh token');
  const asAccess = await http.get('/profile', { orgid: s.orgId, authorization: `Bearer ${s.refreshToken}` });
  t.equal(asAccess.status, 401, 'a refresh token is not an access token');
});

t.test('refresh - rotation state survives a restart', async (t) => {
  const dataDir = tempDir(t);
  const first = await startTestApp(t, { modules: ['auth'], dataDir });
  const s = await signupOrg(first, { email: 'owner@restart.example', orgName: 'Restart' }, guard.sender(first));
  const r1 = await guard.client(first).post('/profile/user/refresh', { refreshToken: s.refreshToken });
  t.equal(r1.status, 200);
  const reused = await guard.client(first).post('/profile/user/refresh', { refreshToken: s.refreshToken });
  t.equal(reused.status, 401, 'reuse before the restart');
  const s2 = await signIn(first, s.orgId, 'owner@restart.example', DEFAULT_PASSWORD, {}, guard.sender(first));
  await first.close();

  const second = await startTestApp(t, { modules: ['auth'], dataDir });
  const http = guard.client(second);
  t.equal((await http.post('/profile/user/refresh', { refreshToken: r1.body.refreshToken })).status, 401, 'the revoked family stays revoked');
  const r2 = await http.post('/profile/user/refresh', { refreshToken: s2.body.refreshToken });
  t.equal(r2.status, 200, 'a live family rotates on the new process');
  t.equal((await http.post('/profile/user/refresh', { refreshToken: s2.body.refreshToken })).status, 401, 'and reuse is still detected');
  guard.harvest(second, [s.orgId]);
});

t.test('tokens - expired, tampered, foreign and alg:none tokens answer 401', async (t) => {
  const clock = new ManualClock();
  const app = await startTestApp(t, { modules: ['auth'], clock });
  const http = guard.client(app);
  const s = await signupOrg(app, { email: 'owner@exp.example', orgName: 'Exp' }, guard.sender(app));
  const user = await signupStaff(app, s.orgId, s.token, { email: 'user@exp.example' }, guard.sender(app));
  const u = await signIn(app, s.orgId, 'user@exp.example', DEFAULT_PASSWORD, {}, guard.sender(app));
  t.equal(u.body.user.id, user.id);

  const [h, p, sig] = (u.body.token as string).split('.');
  const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
  t.same(claims.roles, ['User']);
  const tampered = `${h}.${b64({ ...claims, roles: ['User', 'Admin'] })}.${sig}`;
  const asAdmin = await http.get('/profile/outbox', { orgid: s.orgId, authorization: `Bearer ${tampered}` });
  t.equal(asAdmin.status, 401, 'payload changed, signature kept');
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ ...claims, roles: ['User', 'Admin'] })}.`;
  t.equal((await http.get('/profile', { orgid: s.orgId, authorization: `Bearer ${none}` })).status, 401, 'alg: none');
  const { iat: _i, exp: _e, ...unsigned } = claims;
  const foreign = jwt.sign(unsigned, 'another-secret-0123456789-0123456789', { algorithm: 'HS256', expiresIn: 600 });
  t.equal((await http.get('/profile', { orgid: s.orgId, authorization: `Bearer ${foreign}` })).status, 401, 'signed with another secret');
  const hs512 = jwt.sign(unsigned, TEST_JWT_SECRET, { algorithm: 'HS512', expiresIn: 600 });
  t.equal((await http.get('/profile', { orgid: s.orgId, authorization: `Bearer ${hs512}` })).status, 401, 'another algorithm with the right secret');
  t.equal((await http.get('/profile', { orgid: s.orgId, authorization: 'Bearer not.a.jwt' })).status, 401, 'garbage');
  t.equal((await http.get('/profile', { orgid: s.orgId, authorization: `Basic ${u.body.token}` })).status, 401, 'not a bearer');

  t.equal((await http.get('/profile', bearer({ orgId: s.orgId, token: u.body.token }))).status, 200, 'valid before expiry');
  clock.advance(15 * 60_000 + 1000);
  const expired = await http.get('/profile', bearer({ orgId: s.orgId, token: u.body.token }));
  t.equal(expired.status, 401, 'access token expired after 15 minutes');
  const refreshed = await http.post('/profile/user/refresh', { refreshToken: u.body.refreshToken });
  t.equal(refreshed.status, 200, 'the refresh token still works');
  clock.advance(30 * 24 * 3600_000 + 1000);
  const stale = await http.post('/profile/user/refresh', { refreshToken: refreshed.body.refreshToken });
  t.equal(stale.status, 401, 'refresh token expired after 30 days');
  guard.harvest(app, [s.orgId]);
});

t.test('tokens - wrong role answers 403, wrong organisation 403', async (t) => {
  const app = await startTestApp(t, { modules: ['auth'] });
  const http = guard.client(app);
  const s = await signupOrg(app, { email: 'owner@roles.example', orgName: 'Roles' }, guard.sender(app));
  const other = await signupOrg(app, { email: 'owner@roles2.example', orgName: 'Roles Two' }, guard.sender(app));
  await signupStaff(app, s.orgId, s.token, { email: 'user@roles.example' }, guard.sender(app));
  await signupStaff(app, s.orgId, s.token, { email: 'admin@roles.example', roles: ['Admin'] }, guard.sender(app));
  const user: Session = { ...s, token: (await signIn(app, s.orgId, 'user@roles.example', DEFAULT_PASSWORD, {}, guard.sender(app))).body.token };
  const admin: Session = { ...s, token: (await signIn(app, s.orgId, 'admin@roles.example', DEFAULT_PASSWORD, {}, guard.sender(app))).body.token };
  const customer = await signupCustomer(app, s.orgId, { email: 'c@roles.example' }, guard.sender(app));

  const adminOnly: Array<[string, string, unknown?]> = [
    ['GET', '/profile/outbox'],
    ['GET', '/profile/api-keys'],
    ['POST', '/profile/api-keys', { name: 'k' }],
    ['GET', '/profile/org/security-settings'],
    ['PUT', '/profile/org/security-settings', { enableTwoFactorForUsers: true }],
  ];
  for (const [method, path, body] of adminOnly) {
    const r = await guard.send(app, path, { method, body, headers: bearer(user) });
    t.equal(r.status, 403, `User on ${method} ${path}`);
    t.match(r.body.message, /Admin/);
  }
  for (const [method, path, body] of [
    ['POST', '/profile/app/register', { name: 'kiosk' }],
    ['GET', '/profile/apps'],
  ] as Array<[string, string, unknown?]>) {
    t.equal((await guard.send(app, path, { method, body, headers: bearer(admin) })).status, 403, `Admin without ConfigAdmin on ${path}`);
  }
  t.equal((await http.get('/profile', bearer(customer))).status, 403, 'a customer token on a staff route');
  t.equal((await http.get('/profile/passcode/cards', bearer(customer))).status, 403);
  t.equal((await http.get('/profile', { orgid: other.orgId, authorization: `Bearer ${s.token}` })).status, 403, 'token of org A, orgid B');
  t.equal((await http.get('/profile/outbox', bearer(s))).status, 200, 'the owner holds every role');
  guard.harvest(app, [s.orgId, other.orgId]);
});

t.test('password change and sign-out - staff and customers', async (t) => {
  const app = await startTestApp(t, { modules: ['auth'] });
  const http = guard.client(app);
  const s = await signupOrg(app, { email: 'owner@pw.example', orgName: 'Pw' }, guard.sender(app));
  const c = await signupCustomer(app, s.orgId, { email: 'c@pw.example' }, guard.sender(app));
  const next = 'a-brand-new-secret-pass';
  guard.secret(next);
  const wrong = await http.post('/profile/password', { currentPassword: 'not-it', newPassword: next }, bearer(s));
  t.equal(wrong.status, 400);
  t.match(wrong.body.message, /current password is not right/);
  const short = await http.post('/profile/password', { currentPassword: DEFAULT_PASSWORD, newPassword: 'short' }, bearer(s));
  t.equal(short.status, 400);
  t.match(short.body.message, [/body\/newPassword/]);
  t.equal((await http.post('/profile/password', { currentPassword: DEFAULT_PASSWORD, newPassword: next }, { orgid: s.orgId })).status, 401);
  const ok = await http.post('/profile/password', { currentPassword: DEFAULT_PASSWORD, newPassword: next }, bearer(s));
  t.same(ok.body, { changed: true });
  t.equal((await signIn(app, s.orgId, 'owner@pw.example', DEFAULT_PASSWORD, {}, guard.sender(app))).status, 401, 'the old password stops working');
  t.equal((await signIn(app, s.orgId, 'owner@pw.example', next, {}, guard.sender(app))).status, 200, 'the new one works');
  const cok = await http.post('/profile/password', { currentPassword: DEFAULT_PASSWORD, newPassword: next }, bearer(c));
  t.equal(cok.status, 200, 'customers too');
  t.equal((await signIn(app, s.orgId, 'c@pw.example', next, { kind: 'customer' }, guard.sender(app))).status, 200);

  const a = await signIn(app, s.orgId, 'owner@pw.example', next, {}, guard.sender(app));
  const b = await signIn(app, s.orgId, 'owner@pw.example', next, {}, guard.sender(app));
  const out = await http.post('/profile/signout', {}, bearer({ orgId: s.orgId, token: a.body.token }));
  t.same(out.body, { signedOut: true });
  t.equal((await http.post('/profile/user/refresh', { refreshToken: a.body.refreshToken })).status, 401, 'the signed-out session cannot refresh');
  t.equal((await http.post('/profile/user/refresh', { refreshToken: b.body.refreshToken })).status, 200, 'another session is untouched');
  t.equal((await http.post('/profile/signout', {}, { orgid: s.orgId })).status, 401);
  guard.harvest(app, [s.orgId]);
});

t.test('responses - never carry a password, hash, secret or code', async (t) => {
  // Each app's stored credentials were harvested before it closed.
  guard.check(t);
});

t.test('tokens - a cached verification costs the same with the cache full as with it nearly empty', async (t) => {
  const { TokenService } = await import('../../core/auth/tokens.js');
  const signer = new TokenService(TEST_JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 900, cacheSize: 0 });
  const tokenOf = (i: number) => signer.signAccess({ sub: `u${i}`, org: 'acme', roles: ['User'], kind: 'staff' });
  // One caller's requests in a row (a staff app's), timed as the best of a few rounds.
  const perHit = (svc: InstanceType<typeof TokenService>, token: string) => {
    let best = Infinity;
    for (let round = 0; round < 7; round++) {
      const started = performance.now();
      for (let i = 0; i < 2_000; i++) svc.verifyAccess(token);
      best = Math.min(best, (performance.now() - started) / 2_000);
    }
    return best;
  };
  const small = new TokenService(TEST_JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 900, cacheSize: 10_000 });
  const one = tokenOf(0);
  small.verifyAccess(one);
  const full = new TokenService(TEST_JWT_SECRET, { accessTtlSeconds: 900, refreshTtlSeconds: 900, cacheSize: 10_000 });
  for (let i = 1; i < 10_000; i++) full.verifyAccess(tokenOf(i));
  full.verifyAccess(one);
  const [nearlyEmpty, atCapacity] = [perHit(small, one), perHit(full, one)];
  // Reordering a 10,000-entry Map on every hit made each 3 to 30 times slower (3-28 µs here).
  t.ok(atCapacity < 2 * nearlyEmpty, `${(atCapacity * 1000).toFixed(2)} µs per hit at capacity, ${(nearlyEmpty * 1000).toFixed(2)} µs nearly empty`);
  t.equal(full.verifyAccess(one).sub, 'u0');
});
