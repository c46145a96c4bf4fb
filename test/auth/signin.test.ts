// Sign-up, sign-in on every alias, the org directory, /profile, self-delete, magic codes, the outbox
// listing and the failure slow-down, against a real server. Every reply is checked at the end for
// credentials (leak-guard.ts).
import t from 'tap';
import { hashPassword, verifyPassword } from '../../core/auth/password.js';
import { configurePoolWork, DEFAULT_POOL_WORK, poolWork } from '../../core/pool-work.js';
import { ManualClock } from '../../core/clock.js';
import { createOrg, startTestApp, tokenFor } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, lastCode, proveEmail, signIn, signupCustomer, signupOrg, signupStaff, type Session } from '../helpers/auth.js';
import { LeakGuard } from './leak-guard.js';

const clock = new ManualClock(Date.UTC(2026, 0, 1, 9, 0, 0));
const app = await startTestApp(t, { modules: ['auth', 'records'], clock });
const guard = new LeakGuard();
const send = guard.sender(app);
const http = guard.client(app);
guard.secret(DEFAULT_PASSWORD);

const orgs: string[] = [];
let acme: Session;

/** A fresh owner token (tests move the clock past the 15-minute access token life). */
async function owner(): Promise<Session> {
  const r = await signIn(app, acme.orgId, 'owner@acme.example', DEFAULT_PASSWORD, {}, send);
  if (r.status !== 200) throw new Error(`owner sign-in: ${r.status} ${r.text}`);
  return { orgId: acme.orgId, token: r.body.token, refreshToken: r.body.refreshToken, user: r.body.user };
}

t.test('signup - without orgid creates an organisation and its primary contact', async (t) => {
  acme = await signupOrg(app, { email: 'Owner@Acme.Example', orgName: 'Acme Coffee & Co.', name: 'Olive Owner' }, send);
  orgs.push(acme.orgId);
  t.equal(acme.user.emailVerified, false, 'the typed address is not proven yet');
  await proveEmail(app, acme, send);
  t.equal((await http.get('/profile', bearer(acme))).body.emailVerified, true, 'proven by the code sent to it');
  t.match(acme.orgId, /^acme-coffee-co-[a-z0-9]{6}$/, 'org id is a slug plus suffix');
  t.ok(acme.token && acme.refreshToken, 'tokens');
  t.same(acme.user.roles, ['User', 'Admin', 'ConfigAdmin']);
  t.equal(acme.user.email, 'owner@acme.example', 'email stored lowercase');
  t.equal(acme.user.name, 'Olive Owner');
  t.equal(acme.user.isPrimaryContact, true);
  const org = app.deps.store.getOrg(acme.orgId);
  t.equal(org?.displayName, 'Acme Coffee & Co.');
  t.equal(org?.primaryContactUserId, acme.user.id);
  const me = await http.get('/profile', bearer(acme));
  t.equal(me.status, 200);
  t.equal(me.body.id, acme.user.id);
  t.equal(me.body.kind, 'staff');
});

t.test('signup - validation names the field', async (t) => {
  const short = await http.post('/profile/user/signup', { email: 'a@b.example', password: 'short', orgName: 'X' });
  t.equal(short.status, 400);
  t.match(short.body.message, [/body\/password/]);
  const badEmail = await http.post('/profile/user/signup', { email: 'not-an-email', password: DEFAULT_PASSWORD, orgName: 'X' });
  t.equal(badEmail.status, 400);
  t.match(badEmail.body.message, [/body\/email/]);
  const noOrg = await http.post('/profile/user/signup', { email: 'a@b.example', password: DEFAULT_PASSWORD });
  t.equal(noOrg.status, 400);
  t.match(noOrg.body.message, /body\/orgName/);
  const extra = await http.post('/profile/user/signup', { email: 'a@b.example', password: DEFAULT_PASSWORD, orgName: 'X', isAdmin: true });
  t.equal(extra.status, 400);
  t.match(extra.body.message, [/isAdmin is not allowed/]);
  const roles = await http.post('/profile/user/signup', { email: 'a@b.example', password: DEFAULT_PASSWORD, orgName: 'X', roles: ['Admin'] });
  t.equal(roles.status, 400, 'roles are not chosen at organisation sign-up');
  const unknownOrg = await http.post('/profile/user/signup', { email: 'a@b.example', password: DEFAULT_PASSWORD }, { orgid: 'no-such-org' });
  t.equal(unknownOrg.status, 400);
});

t.test('signup - with orgid needs an Admin token of that organisation', async (t) => {
  const body = { email: 'barista@acme.example', password: DEFAULT_PASSWORD, name: 'Bea Barista', employeeId: 'E100' };
  const anon = await http.post('/profile/user/signup', body, { orgid: acme.orgId });
  t.equal(anon.status, 403, 'no token');
  const other = await signupOrg(app, { email: 'owner@other.example', orgName: 'Other' }, send);
  orgs.push(other.orgId);
  const foreign = await http.post('/profile/user/signup', body, { orgid: acme.orgId, authorization: `Bearer ${other.token}` });
  t.equal(foreign.status, 403, "another organisation's Admin");
  const created = await http.post('/profile/user/signup', body, bearer(acme));
  t.equal(created.status, 201);
  t.equal(created.body.orgId, acme.orgId);
  t.same(created.body.user.roles, ['User'], 'User only by default');
  t.equal(created.body.user.employeeId, 'E100');
  t.equal(created.body.user.isPrimaryContact, false);
  t.notOk(created.body.token, 'no tokens for the new user in the Admin answer');
  t.notOk(created.body.refreshToken);
  const plain = await signIn(app, acme.orgId, 'barista@acme.example', DEFAULT_PASSWORD, {}, send);
  t.equal(plain.status, 200);
  const notAdmin = await http.post('/profile/user/signup', { ...body, email: 'x@acme.example', employeeId: undefined }, bearer({ orgId: acme.orgId, token: plain.body.token }));
  t.equal(notAdmin.status, 403, 'a User without Admin');
  const dup = await http.post('/profile/user/signup', { ...body, email: 'BARISTA@acme.example', employeeId: 'E101' }, bearer(acme));
  t.equal(dup.status, 409, 'email taken (case-insensitive)');
  const dupEmp = await http.post('/profile/user/signup', { ...body, email: 'other@acme.example' }, bearer(acme));
  t.equal(dupEmp.status, 409, 'employee id taken');
  t.match(dupEmp.body.message, /employee id E100/);
  const manager = await http.post('/profile/user/signup', { email: 'mgr@acme.example', password: DEFAULT_PASSWORD, roles: ['Admin'] }, bearer(acme));
  t.equal(manager.status, 201);
  t.same(manager.body.user.roles, ['User', 'Admin'], 'User is always included');
  const system = await http.post('/profile/user/signup', { email: 'sys@acme.example', password: DEFAULT_PASSWORD, roles: ['System'] }, bearer(acme));
  t.equal(system.status, 400, 'System is not a grantable role');
});

t.test('signup - concurrent signups of one email: exactly one wins', async (t) => {
  const body = { email: 'race@acme.example', password: DEFAULT_PASSWORD };
  const replies = await Promise.all(Array.from({ length: 6 }, () => http.post('/profile/user/signup', body, bearer(acme))));
  t.same(replies.map((r) => r.status).sort(), [201, 409, 409, 409, 409, 409]);
  t.equal(app.deps.store.scan(acme.orgId, 'user', { 'data.email': 'race@acme.example' }).length, 1);
});

t.test('signin - every staff alias answers tokens, user and orgId', async (t) => {
  for (const path of ['/profile/user/signin', '/profile/signin', '/user/signin']) {
    const r = await signIn(app, acme.orgId, 'owner@acme.example', DEFAULT_PASSWORD, { path }, send);
    t.equal(r.status, 200, path);
    t.ok(r.body.token, `${path} token`);
    t.ok(r.body.refreshToken, `${path} refreshToken`);
    t.equal(r.body.orgId, acme.orgId);
    t.equal(r.body.user.id, acme.user.id);
    t.equal(r.body.tokenType, 'Bearer');
    t.equal(r.body.expiresIn, 900);
    t.notOk(r.body.requiresTwoFactor);
    const me = await http.get('/profile', { orgid: acme.orgId, authorization: `Bearer ${r.body.token}` });
    t.equal(me.status, 200, `${path} token works`);
  }
  const mixed = await signIn(app, acme.orgId, '  OWNER@acme.EXAMPLE ', DEFAULT_PASSWORD, {}, send);
  t.equal(mixed.status, 200, 'email is trimmed and case-insensitive');
});

t.test('signin - the organisation comes from orgid, else body.orgId', async (t) => {
  const bodyOnly = await http.post('/profile/user/signin', { orgId: acme.orgId, email: 'owner@acme.example', password: DEFAULT_PASSWORD });
  t.equal(bodyOnly.status, 200, 'body.orgId alone');
  const mismatch = await http.post('/profile/user/signin', { orgId: orgs[1], email: 'owner@acme.example', password: DEFAULT_PASSWORD }, { orgid: acme.orgId });
  t.equal(mismatch.status, 400);
  t.match(mismatch.body.message, /orgId differs/);
  const none = await http.post('/profile/user/signin', { email: 'owner@acme.example', password: DEFAULT_PASSWORD });
  t.equal(none.status, 400);
  t.match(none.body.message, /orgid/);
  const unknown = await http.post('/profile/user/signin', { orgId: 'nope-123', email: 'owner@acme.example', password: DEFAULT_PASSWORD });
  t.equal(unknown.status, 400);
  const missing = await http.post('/profile/user/signin', { orgId: acme.orgId, email: 'owner@acme.example' });
  t.equal(missing.status, 400);
  t.match(missing.body.message, [/body\/password is required/]);
});

t.test('signin - wrong password and unknown email answer the same 401', async (t) => {
  const wrong = await signIn(app, acme.orgId, 'mgr@acme.example', 'wrong-password', {}, send);
  const unknown = await signIn(app, acme.orgId, 'nobody@acme.example', 'wrong-password', {}, send);
  t.equal(wrong.status, 401);
  t.equal(unknown.status, 401);
  t.equal(wrong.body.message, unknown.body.message, 'one generic message');
  t.same(Object.keys(wrong.body).sort(), ['error', 'message', 'statusCode']);
  const otherOrg = await signIn(app, orgs[1], 'mgr@acme.example', DEFAULT_PASSWORD, {}, send);
  t.equal(otherOrg.status, 401, "an account of another organisation doesn't exist here");
});

t.test('signin - customers sign up and sign in on the customer aliases only', async (t) => {
  const c = await signupCustomer(app, acme.orgId, { email: 'Carla@Customer.example', name: 'Carla' }, send);
  t.equal(c.user.kind, 'customer');
  t.equal(c.user.customerId, c.user.id);
  t.equal(c.user.email, 'carla@customer.example');
  t.same(c.user.roles, []);
  const rec = app.deps.store.getRecord(acme.orgId, 'customer', c.customerId);
  t.equal(rec?.data.email, 'carla@customer.example');
  t.notOk('passwordHash' in (rec?.data ?? {}), 'credentials are not on the customer record');
  for (const path of ['/customer/signin', '/profile/customer/signin']) {
    const r = await signIn(app, acme.orgId, 'carla@customer.example', DEFAULT_PASSWORD, { path }, send);
    t.equal(r.status, 200, path);
    t.equal(r.body.user.customerId, c.customerId);
  }
  const asStaff = await signIn(app, acme.orgId, 'carla@customer.example', DEFAULT_PASSWORD, {}, send);
  t.equal(asStaff.status, 401, 'a customer is not staff');
  const staffAsCustomer = await signIn(app, acme.orgId, 'owner@acme.example', DEFAULT_PASSWORD, { kind: 'customer' }, send);
  t.equal(staffAsCustomer.status, 401, 'staff credentials are not a customer account');
  const dup = await http.post('/profile/customer/signup', { email: 'carla@customer.example', password: DEFAULT_PASSWORD }, { orgid: acme.orgId });
  t.equal(dup.status, 409);
  const noOrg = await http.post('/profile/customer/signup', { email: 'z@customer.example', password: DEFAULT_PASSWORD });
  t.equal(noOrg.status, 400, 'orgid is required');
  const short = await http.post('/profile/customer/signup', { email: 'z@customer.example', password: '1234567' }, { orgid: acme.orgId });
  t.equal(short.status, 400);
  t.match(short.body.message, [/body\/password/]);
  const asProfile = await http.get('/profile', bearer(c));
  t.equal(asProfile.status, 403, 'GET /profile is staff only');
});

t.test('signin - a customer record made elsewhere is not claimed by typing its address; proving the address links it', async (t) => {
  const { WriteBatch } = await import('../../core/store/store.js');
  const { newRecord } = await import('../../core/store/record.js');
  const pre = newRecord(acme.orgId, 'customer', { email: 'walkin@customer.example', name: 'Walk In', phone: '+15550001' }, { now: clock.now() });
  const booking = newRecord(acme.orgId, 'reservation', { customerId: pre.sk, name: 'Walk In', phone: '+15550001', date: '2026-02-01' }, { now: clock.now() });
  await app.deps.store.commit(new WriteBatch().putRecord(pre, 0).putRecord(booking, 0));
  const c = await signupCustomer(app, acme.orgId, { email: 'walkin@customer.example', verify: false }, send);
  t.not(c.customerId, pre.sk, 'the sign-up gets a record of its own');
  t.equal(c.user.emailVerified, false);
  t.same((await http.get('/client-data/reservations', bearer(c))).body, [], 'and sees nothing made for the address before proving it');
  await proveEmail(app, c, send);
  const mine = await http.get('/client-data/reservations', bearer(c));
  t.same(mine.body.map((r: { sk: string }) => r.sk), [booking.sk], 'once proven, the booking made for the address is listed');
  t.equal((await http.get(`/client-data/reservations/${booking.sk}`, bearer(c))).status, 200);
});

t.test('directory - lists the orgs of an email, most recently used first', async (t) => {
  const email = 'multi@example.com';
  const first = await signupOrg(app, { email, orgName: 'First Shop' }, send);
  clock.advance(1000);
  const second = await signupOrg(app, { email, orgName: 'Second Shop' }, send);
  clock.advance(1000);
  orgs.push(first.orgId, second.orgId);
  // An account made by an Admin that never signed in sorts after the used ones.
  await signupStaff(app, acme.orgId, acme.token, { email }, send);
  const lookup = () => http.post('/profile/user/directory/lookup', { email: 'MULTI@example.com' });
  let r = await lookup();
  t.equal(r.status, 200);
  t.same(r.body.orgs, [
    { orgId: second.orgId, displayName: 'Second Shop' },
    { orgId: first.orgId, displayName: 'First Shop' },
    { orgId: acme.orgId, displayName: 'Acme Coffee & Co.' },
  ]);
  clock.advance(1000);
  t.equal((await signIn(app, first.orgId, email, DEFAULT_PASSWORD, {}, send)).status, 200);
  r = await lookup();
  t.same(r.body.orgs.map((o: { orgId: string }) => o.orgId), [first.orgId, second.orgId, acme.orgId], 'sign-in moves an org first');
  clock.advance(1000);
  t.equal((await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, {}, send)).status, 200);
  r = await lookup();
  t.same(r.body.orgs.map((o: { orgId: string }) => o.orgId), [acme.orgId, first.orgId, second.orgId]);
  const none = await http.post('/profile/user/directory/lookup', { email: 'nobody@example.com' });
  t.equal(none.status, 200);
  t.same(none.body, { orgs: [] }, 'no account: empty list');
  const customerOnly = await http.post('/profile/user/directory/lookup', { email: 'carla@customer.example' });
  t.same(customerOnly.body, { orgs: [] }, 'customer accounts are not in the staff directory');
  const withHeader = await http.post('/profile/user/directory/lookup', { email }, { orgid: 'whatever-org' });
  t.equal(withHeader.status, 200, 'orgid is not needed nor checked');
  const bad = await http.post('/profile/user/directory/lookup', {});
  t.equal(bad.status, 400);
  t.match(bad.body.message, [/body\/email is required/]);
});

t.test('profile - access rules and tenant isolation', async (t) => {
  t.equal((await http.get('/profile', { orgid: acme.orgId })).status, 401, 'no token');
  t.equal((await http.get('/profile', { orgid: orgs[1], authorization: `Bearer ${acme.token}` })).status, 403, 'token of another org');
  const ghost = tokenFor(app, { org: acme.orgId, sub: '0123456789abcdef01234567', roles: ['User'] });
  t.equal((await http.get('/profile', { orgid: acme.orgId, authorization: `Bearer ${ghost}` })).status, 401, 'a token whose user does not exist');
});

t.test('profile - self delete refused for the primary contact, done for others', async (t) => {
  const owner = await http.del('/profile/user/self', bearer(acme));
  t.equal(owner.status, 403);
  t.match(owner.body.message, /primary contact/);
  await signupStaff(app, acme.orgId, acme.token, { email: 'leaver@acme.example' }, send);
  const s = await signIn(app, acme.orgId, 'leaver@acme.example', DEFAULT_PASSWORD, {}, send);
  t.equal(s.status, 200);
  const leaver = { orgId: acme.orgId, token: s.body.token };
  const del = await http.del('/profile/user/self', bearer(leaver));
  t.equal(del.status, 200);
  t.same(del.body, { deleted: true, id: s.body.user.id });
  t.equal(app.deps.store.getRecord(acme.orgId, 'user', s.body.user.id), undefined);
  t.equal(app.deps.store.getRecord(acme.orgId, 'user_security', s.body.user.id), undefined, 'credentials are gone too');
  t.equal((await http.get('/profile', bearer(leaver))).status, 401, 'the old access token no longer reaches /profile');
  t.equal((await signIn(app, acme.orgId, 'leaver@acme.example', DEFAULT_PASSWORD, {}, send)).status, 401);
  const refresh = await http.post('/profile/user/refresh', { refreshToken: s.body.refreshToken });
  t.equal(refresh.status, 401, 'the refresh token is dead');
  const dir = await http.post('/profile/user/directory/lookup', { email: 'leaver@acme.example' });
  t.same(dir.body.orgs, [], 'directory entry removed');
  t.equal((await http.del('/profile/user/self', { orgid: acme.orgId })).status, 401);
});

t.test('magic code - sends a code, redeems it once, never to an unknown email', async (t) => {
  const q = (email: string, type = 'code') => `/profile/user/magic-link?email=${encodeURIComponent(email)}&type=${type}`;
  const sent = await http.get(q('owner@acme.example'), { orgid: acme.orgId });
  t.equal(sent.status, 200);
  t.equal(sent.body.sent, true);
  const code = lastCode(app, acme.orgId, 'owner@acme.example', 'magic-code');
  t.match(code, /^\d{6}$/, 'a 6-digit code went to the outbox');
  const kv = app.deps.store.getKv<{ codeHash: string }>(acme.orgId, 'auth_magic', 'owner@acme.example');
  t.ok(kv?.codeHash, 'kept in the tenant store');
  t.not(kv?.codeHash, code, 'as a hash');
  const ok = await http.post('/profile/user/magic-link/redirect', { email: 'owner@acme.example', code }, { orgid: acme.orgId });
  t.equal(ok.status, 200);
  t.ok(ok.body.token && ok.body.refreshToken);
  t.equal(ok.body.user.id, acme.user.id);
  const again = await http.post('/profile/user/magic-link/redirect', { email: 'owner@acme.example', code }, { orgid: acme.orgId });
  t.equal(again.status, 401, 'used once');

  const before = (await import('../../core/outbox.js')).readOutbox(app.deps.store, acme.orgId).length;
  const unknown = await http.get(q('ghost@acme.example'), { orgid: acme.orgId });
  t.equal(unknown.status, 200, 'same answer for an unknown email');
  t.same(unknown.body, sent.body);
  t.equal((await import('../../core/outbox.js')).readOutbox(app.deps.store, acme.orgId).length, before, 'nothing sent');

  const link = await http.get(q('owner@acme.example', 'link'), { orgid: acme.orgId });
  t.equal(link.status, 400, 'only type=code');
  t.equal((await http.get('/profile/user/magic-link?email=owner@acme.example&type=code')).status, 400, 'orgid required');
  const badEmail = await http.get(q('not-an-email'), { orgid: acme.orgId });
  t.equal(badEmail.status, 400);
});

t.test('magic code - 5 wrong attempts end the code; it expires after 10 minutes', async (t) => {
  await http.get('/profile/user/magic-link?email=mgr@acme.example&type=code', { orgid: acme.orgId });
  const code = lastCode(app, acme.orgId, 'mgr@acme.example', 'magic-code')!;
  const wrong = code === '000000' ? '111111' : '000000';
  for (let i = 0; i < 5; i++) {
    const r = await http.post('/profile/user/magic-link/redirect', { email: 'mgr@acme.example', code: wrong }, { orgid: acme.orgId });
    t.equal(r.status, 401, `wrong ${i + 1}`);
  }
  const late = await http.post('/profile/user/magic-link/redirect', { email: 'mgr@acme.example', code }, { orgid: acme.orgId });
  t.equal(late.status, 401, 'the right code after 5 wrong ones');

  await http.get('/profile/user/magic-link?email=mgr@acme.example&type=code', { orgid: acme.orgId });
  const code2 = lastCode(app, acme.orgId, 'mgr@acme.example', 'magic-code')!;
  clock.advance(10 * 60_000 + 1000);
  const expired = await http.post('/profile/user/magic-link/redirect', { email: 'mgr@acme.example', code: code2 }, { orgid: acme.orgId });
  t.equal(expired.status, 401, 'expired');
});

t.test('magic code - customers get customer sessions; issuing is limited per address', async (t) => {
  await http.get('/profile/user/magic-link?email=carla@customer.example&type=code', { orgid: acme.orgId });
  const code = lastCode(app, acme.orgId, 'carla@customer.example', 'magic-code');
  const r = await http.post('/profile/user/magic-link/redirect', { email: 'carla@customer.example', code }, { orgid: acme.orgId });
  t.equal(r.status, 200);
  t.equal(r.body.user.kind, 'customer');
  for (let i = 0; i < 4; i++) await http.get('/profile/user/magic-link?email=carla@customer.example&type=code', { orgid: acme.orgId });
  const limited = await http.get('/profile/user/magic-link?email=carla@customer.example&type=code', { orgid: acme.orgId });
  t.equal(limited.status, 429, 'the 6th code within 10 minutes');
  t.ok(Number(limited.headers['retry-after']) > 0, 'Retry-After');
  clock.advance(10 * 60_000 + 1000);
  t.equal((await http.get('/profile/user/magic-link?email=carla@customer.example&type=code', { orgid: acme.orgId })).status, 200);
});

t.test('outbox - Admin lists messages newest first, filtered, per organisation', async (t) => {
  acme = await owner();
  const all = await http.get('/profile/outbox', bearer(acme));
  t.equal(all.status, 200);
  t.ok(all.body.total >= 3);
  const times = all.body.data.map((m: { sentAt: string }) => m.sentAt);
  t.same(times, [...times].sort().reverse(), 'newest first');
  const mine = await http.get('/profile/outbox?to=MGR@acme.example&pageSize=1', bearer(acme));
  t.equal(mine.body.pageSize, 1);
  t.equal(mine.body.data.length, 1);
  t.ok(mine.body.hasNext);
  t.equal(mine.body.data[0].to, 'mgr@acme.example');
  t.equal(mine.body.data[0].kind, 'magic-code');
  t.equal(mine.body.data[0].withheld, true, "an Admin sees a code's envelope only");
  t.notOk('code' in mine.body.data[0] || 'body' in mine.body.data[0], 'no code, no body');
  const sms = await http.get('/profile/outbox?channel=sms', bearer(acme));
  t.same(sms.body.data, []);
  t.equal((await http.get('/profile/outbox?channel=fax', bearer(acme))).status, 400);
  const barista = await signIn(app, acme.orgId, 'barista@acme.example', DEFAULT_PASSWORD, {}, send);
  t.equal((await http.get('/profile/outbox', bearer({ orgId: acme.orgId, token: barista.body.token }))).status, 403, 'User without Admin');
  const other = await signIn(app, orgs[1], 'owner@other.example', DEFAULT_PASSWORD, {}, send);
  const theirs = await http.get('/profile/outbox', bearer({ orgId: orgs[1], token: other.body.token }));
  t.equal(theirs.status, 200);
  t.same(theirs.body.data, [], "another organisation sees none of Acme's messages");
});

t.test('slow-down - 5 failures for one account answer 429 with Retry-After, then recover', async (t) => {
  const email = 'barista@acme.example';
  for (let i = 0; i < 5; i++) t.equal((await signIn(app, acme.orgId, email, 'bad-password', {}, send)).status, 401, `failure ${i + 1}`);
  const blocked = await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, {}, send);
  t.equal(blocked.status, 429, 'even the right password waits');
  t.equal(blocked.headers['retry-after'], '30');
  t.equal(blocked.body.error, 'Too Many Requests');
  const others = await signIn(app, acme.orgId, 'owner@acme.example', DEFAULT_PASSWORD, {}, send);
  t.equal(others.status, 200, 'other accounts are not affected');
  clock.advance(31_000);
  t.equal((await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, {}, send)).status, 200, 'after Retry-After');
  t.equal((await signIn(app, acme.orgId, email, 'bad-password', {}, send)).status, 401, 'the count restarted after the success');
});

t.test('slow-down - many failures from one address across accounts answer 429', async (t) => {
  clock.advance(20 * 60_000);
  let status = 0;
  let n = 0;
  for (; n < 60 && status !== 429; n++) {
    status = (await signIn(app, acme.orgId, `spray${n}@acme.example`, 'bad-password', {}, send)).status;
  }
  t.equal(status, 429);
  t.equal(n, 51, 'after 50 failures from the address');
  const good = await signIn(app, acme.orgId, 'owner@acme.example', DEFAULT_PASSWORD, {}, send);
  t.equal(good.status, 429, 'the address waits whatever the account');
  t.ok(Number(good.headers['retry-after']) >= 1);
  clock.advance(20 * 60_000);
});

t.test('tenant isolation - an org created in the store has no accounts of another org', async (t) => {
  await createOrg(app, 'plain-org');
  const r = await signIn(app, 'plain-org', 'owner@acme.example', DEFAULT_PASSWORD, {}, send);
  t.equal(r.status, 401);
});

t.test('thread-pool turns - a sign-in past the queue answers 503 with Retry-After, in the envelope', async (t) => {
  // One job at a time and one waiting (POOL_WORK_CONCURRENCY, POOL_WORK_QUEUE_MAX), on a node of its own.
  const small = await startTestApp(t, { modules: ['auth', 'records'], clock, config: { poolWork: { concurrency: 1, queueMax: 1 } } });
  t.teardown(() => configurePoolWork(DEFAULT_POOL_WORK));
  const org = await signupOrg(small, { email: 'owner@budget.example', orgName: 'Budget' });
  // Two slow checks (~0.25 s each) fill the turn and the queue while the sign-in arrives.
  const slow = await hashPassword('held', { N: 65536, r: 8, p: 1 });
  const held = [verifyPassword('held', slow), verifyPassword('held', slow)];
  t.same(poolWork(), { running: 1, waiting: 1 });
  const busy = await signIn(small, org.orgId, 'owner@budget.example', DEFAULT_PASSWORD);
  t.equal(busy.status, 503, 'no room to wait: 503');
  t.equal(busy.headers['retry-after'], '1');
  t.equal(busy.body.statusCode, 503);
  t.match(busy.body.message, /POOL_WORK_QUEUE_MAX/);
  t.same(await Promise.all(held), [true, true], 'the held checks finish');
  const later = await signIn(small, org.orgId, 'owner@budget.example', DEFAULT_PASSWORD);
  t.equal(later.status, 200, 'with turns free again, sign-in works');
});

t.test('responses - never carry a password, hash, secret or code', async (t) => {
  guard.harvest(app, [...orgs, 'plain-org']);
  guard.check(t);
});
