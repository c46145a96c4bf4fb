// Sign-in challenges (spec: Authentication → Sign-in sequence 3 to 7; Errors 5 and 6): the three
// cases, the code checks, resends, trusted devices, authenticator enrolment with backup codes,
// the passcode and magic-code skips, and the 404 for staff with no customer record.
import t, { type Test } from 'tap';
import { base32Decode, totp } from '../../core/auth/totp.js';
import { ManualClock } from '../../core/clock.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, lastCode, proveEmail, signIn, signupCustomer, signupOrg, signupStaff, type Session } from '../helpers/auth.js';
import type { Reply } from '../helpers/http.js';
import { LeakGuard } from './leak-guard.js';

const clock = new ManualClock(Date.UTC(2026, 2, 1, 8, 0, 0));
const app = await startTestApp(t, { modules: ['auth'], clock });
const guard = new LeakGuard();
const send = guard.sender(app);
const http = guard.client(app);
guard.secret(DEFAULT_PASSWORD);

const acme = await signupOrg(app, { email: 'owner@tf.example', orgName: 'Two Factor Co' }, send);
await signupStaff(app, acme.orgId, acme.token, { email: 'staff@tf.example', name: 'Sam Staff' }, send);
await signupCustomer(app, acme.orgId, { email: 'cust@tf.example' }, send);

/** A fresh owner session; when a challenge is due, it is answered with the emailed code. */
async function admin(): Promise<Session> {
  let r = await signIn(app, acme.orgId, 'owner@tf.example', DEFAULT_PASSWORD, {}, send);
  if (r.body.requiresTwoFactor) {
    const code = lastCode(app, acme.orgId, 'owner@tf.example', 'two-factor');
    r = await http.post('/profile/security/challenge/verify', { challengeToken: r.body.challengeToken, code });
  }
  if (!r.body.token) throw new Error(`owner sign-in did not answer tokens: ${r.text}`);
  return { ...acme, token: r.body.token };
}

async function settings(patch: Record<string, boolean>): Promise<void> {
  const r = await http.put('/profile/org/security-settings', patch, bearer(await admin()));
  if (r.status !== 200) throw new Error(`settings: ${r.status} ${r.text}`);
}

function isChallenge(t: Test, r: Reply, method: string): string {
  t.equal(r.status, 200);
  t.same(Object.keys(r.body).sort(), ['challengeToken', 'message', 'requiresTwoFactor', 'twoFactorMethod'], 'exactly the challenge fields');
  t.equal(r.body.requiresTwoFactor, true);
  t.equal(r.body.twoFactorMethod, method);
  t.notOk(r.body.token, 'no token');
  t.notOk(r.body.refreshToken, 'no refresh token');
  return r.body.challengeToken;
}

const verify = (challengeToken: string, code: string, extra: Record<string, unknown> = {}, headers: Record<string, string> = {}) =>
  http.post('/profile/security/challenge/verify', { challengeToken, code, ...extra }, headers);

t.test('security settings - Admin reads and changes them partially', async (t) => {
  const a = await admin();
  const r = await http.get('/profile/org/security-settings', bearer(a));
  t.equal(r.status, 200);
  t.same(r.body, { enableTwoFactorForUsers: false, enableTwoFactorForCustomers: false, enableNewDeviceAuthentication: false, requireTwoFactorForMagicCode: false });
  const put = await http.put('/profile/org/security-settings', { enableNewDeviceAuthentication: true }, bearer(a));
  t.same(put.body, { enableTwoFactorForUsers: false, enableTwoFactorForCustomers: false, enableNewDeviceAuthentication: true, requireTwoFactorForMagicCode: false });
  const put2 = await http.put('/profile/org/security-settings', { enableTwoFactorForCustomers: true }, bearer(a));
  t.same(put2.body, { enableTwoFactorForUsers: false, enableTwoFactorForCustomers: true, enableNewDeviceAuthentication: true, requireTwoFactorForMagicCode: false }, 'the earlier change is kept');
  const concurrent = await Promise.all([
    http.put('/profile/org/security-settings', { enableTwoFactorForUsers: true }, bearer(a)),
    http.put('/profile/org/security-settings', { enableNewDeviceAuthentication: false }, bearer(a)),
  ]);
  t.same(concurrent.map((c) => c.status), [200, 200]);
  t.same((await http.get('/profile/org/security-settings', bearer(a))).body, {
    enableTwoFactorForUsers: true,
    enableTwoFactorForCustomers: true,
    enableNewDeviceAuthentication: false,
    requireTwoFactorForMagicCode: false,
  }, 'concurrent partial updates both land');
  t.equal((await http.put('/profile/org/security-settings', {}, bearer(a))).status, 400, 'empty body');
  const bad = await http.put('/profile/org/security-settings', { enableTwoFactorForUsers: 'yes' }, bearer(a));
  t.equal(bad.status, 400);
  t.match(bad.body.message, [/enableTwoFactorForUsers/]);
  t.equal((await http.put('/profile/org/security-settings', { other: true }, bearer(a))).status, 400, 'unknown field');
  const other = await signupOrg(app, { email: 'owner@tf2.example', orgName: 'Elsewhere' }, send);
  const theirs = await http.get('/profile/org/security-settings', bearer(other));
  t.same(theirs.body, { enableTwoFactorForUsers: false, enableTwoFactorForCustomers: false, enableNewDeviceAuthentication: false, requireTwoFactorForMagicCode: false }, 'per organisation');
  t.equal((await http.get('/profile/org/security-settings', { orgid: acme.orgId })).status, 401);
  await settings({ enableTwoFactorForUsers: false, enableTwoFactorForCustomers: false, enableNewDeviceAuthentication: false });
});

t.test('case (a) - org-wide 2FA challenges that kind of account; the emailed code answers tokens', async (t) => {
  await settings({ enableTwoFactorForUsers: true });
  for (const path of ['/profile/user/signin', '/profile/signin', '/user/signin']) {
    const r = await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, { path }, send);
    isChallenge(t, r, 'email');
  }
  const r = await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send);
  const token = isChallenge(t, r, 'email');
  t.match(token, new RegExp(`^${acme.orgId}\\.`), 'the token names the organisation');
  const code = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  t.match(code, /^\d{6}$/);
  const cust = await signIn(app, acme.orgId, 'cust@tf.example', DEFAULT_PASSWORD, { kind: 'customer' }, send);
  t.ok(cust.body.token, 'customers are not covered by the users setting');

  const wrong = await verify(token, code === '123456' ? '654321' : '123456');
  t.equal(wrong.status, 400);
  t.match(wrong.body.message, /the code is not right/);
  t.match(wrong.body.message, /4 attempts left/);
  const ok = await verify(token, code);
  t.equal(ok.status, 200);
  t.ok(ok.body.token && ok.body.refreshToken);
  t.equal(ok.body.user.email, 'staff@tf.example');
  t.equal((await http.get('/profile', bearer({ orgId: acme.orgId, token: ok.body.token }))).status, 200);
  t.equal((await verify(token, code)).status, 401, 'a challenge answers once');

  await settings({ enableTwoFactorForUsers: false, enableTwoFactorForCustomers: true });
  t.ok((await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send)).body.token, 'staff no longer challenged');
  const c = await signIn(app, acme.orgId, 'cust@tf.example', DEFAULT_PASSWORD, { kind: 'customer', path: '/profile/customer/signin' }, send);
  const ctoken = isChallenge(t, c, 'email');
  const ccode = lastCode(app, acme.orgId, 'cust@tf.example', 'two-factor')!;
  const cok = await verify(ctoken, ccode);
  t.equal(cok.status, 200);
  t.equal(cok.body.user.kind, 'customer');
  await settings({ enableTwoFactorForCustomers: false });
});

t.test('challenge - five wrong codes end it; send replaces the code; codes expire', async (t) => {
  await settings({ enableTwoFactorForUsers: true });
  const token = (await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send)).body.challengeToken;
  const code = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  const wrongCode = code === '000000' ? '999999' : '000000';
  const parallel = await Promise.all(Array.from({ length: 5 }, () => verify(token, wrongCode)));
  t.same(parallel.map((r) => r.status), [400, 400, 400, 400, 400], 'five wrong codes, even in parallel, are counted');
  t.ok(parallel.some((r) => /no attempts left/.test(r.body.message)), 'the fifth says so');
  t.equal((await verify(token, code)).status, 401, 'the right code after five wrong ones');

  const t2 = (await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send)).body.challengeToken;
  const first = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  const resent = await http.post('/profile/security/challenge/send', { challengeToken: t2 });
  t.equal(resent.status, 200);
  t.same(resent.body.sent, true);
  t.equal(resent.body.twoFactorMethod, 'email');
  const second = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  if (second !== first) t.equal((await verify(t2, first)).status, 400, 'the replaced code no longer works');
  t.equal((await verify(t2, second)).status, 200, 'the new one does');
  const badToken = await http.post('/profile/security/challenge/send', { challengeToken: `${acme.orgId}.${'x'.repeat(43)}` });
  t.equal(badToken.status, 401, 'unknown challenge');
  const badOrg = await verify(`nope-org.${'x'.repeat(43)}`, '123456');
  t.equal(badOrg.status, 401);
  t.equal((await verify('short', '123456')).status, 400, 'validation');

  const t3 = (await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send)).body.challengeToken;
  const c3 = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  clock.advance(10 * 60_000 + 1);
  t.equal((await verify(t3, c3)).status, 401, 'expired after 10 minutes');
  const t4 = (await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send)).body.challengeToken;
  for (let i = 0; i < 4; i++) t.equal((await http.post('/profile/security/challenge/send', { challengeToken: t4 })).status, 200);
  const limited = await http.post('/profile/security/challenge/send', { challengeToken: t4 });
  t.equal(limited.status, 429, 'at most 5 codes per challenge');
  t.ok(limited.headers['retry-after']);
  t.ok(app.deps.store.listKv(acme.orgId, 'auth_challenge').length > 0, 'challenges are kept in the tenant store');
  await settings({ enableTwoFactorForUsers: false });
});

t.test('case (b) - a personal authenticator challenges the person as customer and as staff', async (t) => {
  const email = 'pat@tf.example';
  const cust = await signupCustomer(app, acme.orgId, { email }, send);
  await signupStaff(app, acme.orgId, (await admin()).token, { email }, send);
  const setup = await http.post('/profile/security/totp/setup', {}, bearer(cust));
  t.equal(setup.status, 200);
  t.match(setup.body.secret, /^[A-Z2-7]{32}$/);
  t.match(setup.body.otpauthUrl, /^otpauth:\/\/totp\//);
  t.equal(setup.body.issuer, 'Two Factor Co');
  guard.secret(setup.body.secret, 'POST /profile/security/totp/setup');
  const key = base32Decode(setup.body.secret);
  let status = await http.get('/profile/security/status', bearer(cust));
  t.same(status.body, { email, twoFactorEnabled: false, authenticatorEnrolled: false, backupCodesRemaining: 0, trustedDevices: 0 }, 'not on until confirmed');
  t.ok((await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, { kind: 'customer' }, send)).body.token, 'sign-in unchanged before confirmation');
  const wrong = await http.post('/profile/security/totp/verify', { code: '000000' === totp(key, clock.now()) ? '111111' : '000000' }, bearer(cust));
  t.equal(wrong.status, 400);
  t.match(wrong.body.message, /the code is not right/);
  const enrolCode = totp(key, clock.now());
  const ok = await http.post('/profile/security/totp/verify', { code: enrolCode }, bearer(cust));
  t.equal(ok.status, 200);
  t.equal(ok.body.twoFactorEnabled, true);
  t.equal(ok.body.twoFactorMethod, 'authenticator');
  t.equal(ok.body.authenticatorEnrolled, true);

  const before = lastCode(app, acme.orgId, email);
  const c = await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, { kind: 'customer' }, send);
  const token = isChallenge(t, c, 'authenticator');
  t.equal(lastCode(app, acme.orgId, email), before, 'nothing is sent for an authenticator');
  const nothing = await http.post('/profile/security/challenge/send', { challengeToken: token });
  t.equal(nothing.status, 400, 'authenticator codes are not sent');
  t.equal((await verify(token, enrolCode)).status, 400, 'a code already used (same step) is refused');
  clock.advance(30_000);
  const cv = await verify(token, totp(key, clock.now()));
  t.equal(cv.status, 200);
  t.equal(cv.body.user.kind, 'customer');

  const s = await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, {}, send);
  const stoken = isChallenge(t, s, 'authenticator');
  clock.advance(30_000);
  const sv = await verify(stoken, totp(key, clock.now()));
  t.equal(sv.status, 200, 'the staff account of the same person is challenged with the same factor');
  t.equal(sv.body.user.kind, 'staff');

  t.equal((await http.post('/profile/security/backup-codes', {}, bearer(cust))).status, 200);
  const gen = await http.post('/profile/security/backup-codes', {}, bearer(cust));
  t.equal(gen.body.codes.length, 10);
  t.match(gen.body.codes[0], /^[A-Z2-7]{5}-[A-Z2-7]{5}$/);
  for (const code of gen.body.codes) guard.secret(code, 'POST /profile/security/backup-codes');
  const b1 = (await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, { kind: 'customer' }, send)).body.challengeToken;
  t.equal((await verify(b1, gen.body.codes[0].toLowerCase())).status, 200, 'a backup code (any case) answers an authenticator challenge');
  const b2 = (await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, { kind: 'customer' }, send)).body.challengeToken;
  t.equal((await verify(b2, gen.body.codes[0])).status, 400, 'a backup code is used once');
  status = await http.get('/profile/security/status', bearer(cust));
  t.equal(status.body.backupCodesRemaining, 9);

  const off = await http.post('/profile/security/disable', { code: '00000000' }, bearer(cust));
  t.equal(off.status, 400, 'disabling needs a current code');
  clock.advance(30_000);
  const disabled = await http.post('/profile/security/disable', { code: totp(key, clock.now()) }, bearer(cust));
  t.equal(disabled.status, 200);
  t.same(disabled.body, { email, twoFactorEnabled: false, authenticatorEnrolled: false, backupCodesRemaining: 0, trustedDevices: 0 });
  t.ok((await signIn(app, acme.orgId, email, DEFAULT_PASSWORD, { kind: 'customer' }, send)).body.token, 'no challenge once off');
});

t.test('case (b) - email and sms methods; sms needs a phone', async (t) => {
  const noPhone = await signupCustomer(app, acme.orgId, { email: 'nophone@tf.example' }, send);
  const bad = await http.post('/profile/security/enable', { method: 'sms' }, bearer(noPhone));
  t.equal(bad.status, 400);
  t.match(bad.body.message, /phone/);
  t.equal((await http.post('/profile/security/enable', { method: 'authenticator' }, bearer(noPhone))).status, 400, 'authenticator needs enrolment');
  t.equal((await http.post('/profile/security/enable', { method: 'fax' }, bearer(noPhone))).status, 400);
  const on = await http.post('/profile/security/enable', { method: 'email' }, bearer(noPhone));
  t.equal(on.body.twoFactorMethod, 'email');
  const e = await signIn(app, acme.orgId, 'nophone@tf.example', DEFAULT_PASSWORD, { kind: 'customer' }, send);
  const et = isChallenge(t, e, 'email');
  t.equal((await verify(et, lastCode(app, acme.orgId, 'nophone@tf.example', 'two-factor')!)).status, 200);

  const withPhone = await signupCustomer(app, acme.orgId, { email: 'phone@tf.example', phone: '+15551234' }, send);
  t.equal((await http.post('/profile/security/enable', { method: 'sms' }, bearer(withPhone))).status, 200);
  const s = await signIn(app, acme.orgId, 'phone@tf.example', DEFAULT_PASSWORD, { kind: 'customer' }, send);
  const st = isChallenge(t, s, 'sms');
  const smsCode = lastCode(app, acme.orgId, '+15551234', 'two-factor');
  t.match(smsCode, /^\d{6}$/, 'the code went by sms to the phone');
  t.equal((await verify(st, smsCode!)).status, 200);
  const off = await http.post('/profile/security/disable', {}, bearer(withPhone));
  t.equal(off.body.twoFactorEnabled, false, 'email/sms 2FA turns off with the session alone');
});

t.test('case (c) - new-device verification; trustDevice remembers the device', async (t) => {
  await settings({ enableNewDeviceAuthentication: true });
  const d1 = { 'x-device-id': 'tablet-001' };
  const first = await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, { headers: d1 }, send);
  const token = isChallenge(t, first, 'email');
  const code = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  t.equal((await verify(token, code, { trustDevice: true }, d1)).status, 200);
  const again = await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, { headers: d1 }, send);
  t.ok(again.body.token, 'a trusted device is not challenged');
  isChallenge(t, await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, { headers: { 'x-device-id': 'tablet-002' } }, send), 'email');
  isChallenge(t, await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send), 'email');

  const noTrust = await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, { headers: { 'x-device-id': 'kiosk-9' } }, send);
  t.equal((await verify(noTrust.body.challengeToken, lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!, {}, { 'x-device-id': 'kiosk-9' })).status, 200);
  isChallenge(t, await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, { headers: { 'x-device-id': 'kiosk-9' } }, send), 'email');

  const info = { 'x-client-info': JSON.stringify({ device: 'Pixel 8', OS: 'Android 15', userAgent: 'StaffApp/3.1' }) };
  const c = await signIn(app, acme.orgId, 'cust@tf.example', DEFAULT_PASSWORD, { kind: 'customer', headers: info }, send);
  const ct = isChallenge(t, c, 'email');
  const cv = await verify(ct, lastCode(app, acme.orgId, 'cust@tf.example', 'two-factor')!, { trustDevice: true }, info);
  t.equal(cv.status, 200);
  const cAgain = await signIn(app, acme.orgId, 'cust@tf.example', DEFAULT_PASSWORD, { kind: 'customer', headers: info }, send);
  t.ok(cAgain.body.token, 'x-client-info identifies the device when there is no x-device-id');
  const cust = { orgId: acme.orgId, token: cAgain.body.token };
  const list = await http.get('/profile/security/trusted-devices', bearer(cust));
  t.equal(list.status, 200);
  t.equal(list.body.data.length, 1);
  t.equal(list.body.data[0].label, 'Pixel 8');
  t.notOk(JSON.stringify(list.body).includes('Pixel 8","OS'), 'only a label, not the raw client info');
  t.equal((await http.post('/profile/security/trusted-devices/forget', { id: 'ffffffff' }, bearer(cust))).status, 404);
  const forgot = await http.post('/profile/security/trusted-devices/forget', { id: list.body.data[0].id }, bearer(cust));
  t.same(forgot.body, { removed: 1 });
  isChallenge(t, await signIn(app, acme.orgId, 'cust@tf.example', DEFAULT_PASSWORD, { kind: 'customer', headers: info }, send), 'email');
  await settings({ enableNewDeviceAuthentication: false });
});

t.test('skips - passcode sign-in and the magic code never challenge, unless the organisation requires 2FA for magic codes', async (t) => {
  await settings({ enableTwoFactorForUsers: true, enableNewDeviceAuthentication: true });
  await app.deps.store.commit(
    new WriteBatch().putRecord(
      newRecord(acme.orgId, 'setting', { name: 'base-setting', passcodeLoginSettings: { enable: true, mode: 'pin' } }, { now: clock.now() }),
      0,
    ),
  );
  const staff = await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send);
  const code = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  const session = await verify(staff.body.challengeToken, code);
  const pin = await http.post('/profile/passcode/set', { pin: '482913', employeeId: 'TF-7' }, bearer({ orgId: acme.orgId, token: session.body.token }));
  t.equal(pin.status, 200);
  guard.secret('482913');
  const quick = await http.post('/profile/user/signin/passcode', { employeeId: 'TF-7', pin: '482913' }, { orgid: acme.orgId, 'x-device-id': 'never-seen' });
  t.equal(quick.status, 200);
  t.ok(quick.body.token, 'passcode sign-in answers tokens despite org-wide 2FA and an unknown device');
  t.notOk(quick.body.requiresTwoFactor);

  const magicCode = async () => {
    await http.get('/profile/user/magic-link?email=staff@tf.example&type=code', { orgid: acme.orgId });
    return http.post(
      '/profile/user/magic-link/redirect',
      { email: 'staff@tf.example', code: lastCode(app, acme.orgId, 'staff@tf.example', 'magic-code') },
      { orgid: acme.orgId, 'x-device-id': 'never-seen-2' },
    );
  };
  const magic = await magicCode();
  t.equal(magic.status, 200);
  t.ok(magic.body.token, 'by default the magic code answers tokens with no 2FA check (spec: Sign-in sequence 7)');
  // The organisation that counts the inbox as one factor only turns the check on (spec's shape).
  const on = await http.put('/profile/org/security-settings', { securitySettings: { requireTwoFactorForMagicCode: true } }, bearer(await admin()));
  t.equal(on.status, 200, 'the spec\'s nested securitySettings shape is taken');
  t.equal(on.body.requireTwoFactorForMagicCode, true);
  t.equal(on.body.enableTwoFactorForUsers, true, 'fields left out keep their value');
  const challenged = await magicCode();
  t.equal(challenged.body.requiresTwoFactor, true, 'with requireTwoFactorForMagicCode, org-wide 2FA challenges a magic-code sign-in');
  t.notOk(challenged.body.token, 'no tokens before the second factor');
  const second = await verify(challenged.body.challengeToken, lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!);
  t.equal(second.status, 200);
  t.ok(second.body.token, 'tokens after the second factor');
  await settings({ enableTwoFactorForUsers: false });
  const noDevice = await magicCode();
  t.ok(noDevice.body.token, 'with only new-device verification on, the magic code (which proved the inbox) answers tokens');
  await settings({ requireTwoFactorForMagicCode: false });
  await settings({ enableNewDeviceAuthentication: false });
});

t.test('Errors 6 - staff with no customer record get 404 on every /profile/security/* route', async (t) => {
  const staff = await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send);
  const h = bearer({ orgId: acme.orgId, token: staff.body.token });
  const routes: Array<[string, string, unknown?]> = [
    ['GET', '/profile/security/status'],
    ['POST', '/profile/security/totp/setup', {}],
    ['POST', '/profile/security/totp/verify', { code: '123456' }],
    ['POST', '/profile/security/enable', { method: 'email' }],
    ['POST', '/profile/security/disable', {}],
    ['POST', '/profile/security/backup-codes', {}],
    ['GET', '/profile/security/trusted-devices'],
    ['POST', '/profile/security/trusted-devices/forget', {}],
    ['POST', '/profile/security/challenge/verify', { challengeToken: `${acme.orgId}.${'x'.repeat(43)}`, code: '123456' }],
    ['POST', '/profile/security/challenge/send', { challengeToken: `${acme.orgId}.${'x'.repeat(43)}` }],
    // Whatever the body: the missing customer is the answer, not the body's errors.
    ['POST', '/profile/security/totp/verify', {}],
    ['POST', '/profile/security/enable', { method: 'carrier-pigeon' }],
    ['POST', '/profile/security/trusted-devices/forget', { id: 42, extra: true }],
  ];
  for (const [method, path, body] of routes) {
    const r = await guard.send(app, path, { method, body, headers: h });
    t.equal(r.status, 404, `${method} ${path}`);
    t.equal(r.body.message, 'customer for staff@tf.example not found', `${path} message`);
  }
  const withCustomer = await signIn(app, acme.orgId, 'pat@tf.example', DEFAULT_PASSWORD, {}, send);
  const patStaff = { orgId: acme.orgId, token: withCustomer.body.token, user: withCustomer.body.user };
  const unproven = await http.get('/profile/security/status', bearer(patStaff));
  t.equal(unproven.status, 403, 'a staff member who has not proven the address may not manage its 2FA');
  t.match(unproven.body.message, /verify-email/);
  await proveEmail(app, patStaff, send);
  const ok = await http.get('/profile/security/status', bearer(patStaff));
  t.equal(ok.status, 200, 'staff with a customer record of the same email manage that record');
  t.equal(ok.body.email, 'pat@tf.example');
  t.equal((await http.get('/profile/security/status', { orgid: acme.orgId })).status, 401, 'no token');
});

t.test('responses - never carry a password, hash, secret or code', async (t) => {
  const orgs = app.deps.store.listOrgs().map((o) => o.orgId);
  guard.harvest(app, orgs);
  guard.check(t);
});

t.test('challenge routes - the challenge token may come as the bearer token (the spec\'s Auth column)', async (t) => {
  await settings({ enableTwoFactorForUsers: true });
  const token = isChallenge(t, await signIn(app, acme.orgId, 'staff@tf.example', DEFAULT_PASSWORD, {}, send), 'email');
  const auth = { authorization: `Bearer ${token}` };
  const resent = await http.post('/profile/security/challenge/send', {}, auth);
  t.equal(resent.status, 200, resent.text);
  const code = lastCode(app, acme.orgId, 'staff@tf.example', 'two-factor')!;
  const ok = await http.post('/profile/security/challenge/verify', { code, trustDevice: true }, auth);
  t.equal(ok.status, 200, ok.text);
  t.ok(ok.body.token && ok.body.refreshToken);
  const none = await http.post('/profile/security/challenge/verify', { code });
  t.equal(none.status, 401);
  t.match(none.body.message, /challenge token/);
  await settings({ enableTwoFactorForUsers: false });
});
