// Proven identity (issue 28): an email typed at sign-up claims nothing until its owner proves it.
// Each reproduction of the probe is a subtest here (a stranger takes over a staff member's 2FA, a
// ticket holder's ticket, an address before its owner signs up), with its twin: the owner who
// proves the address gets what is theirs, and a reset ends a stolen session. Real server, real LMDB,
// real clock (revocations are kept in whole seconds).
import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { startTestApp } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, lastCode, proveEmail, signIn, signupCustomer, signupOrg, signupStaff } from '../helpers/auth.js';
import { client, request } from '../helpers/http.js';

const app = await startTestApp(t, { modules: ['auth', 'records', 'events'] });
const http = (path: string, opts: Parameters<typeof request>[2] = {}) => request(app.url, path, opts);
const founder = await signupOrg(app, { email: 'founder@a.example', orgName: 'Proven Co' });
const org = founder.orgId;
await signupStaff(app, org, founder.token, { email: 'sam@a.example', name: 'Sam Staff' });

const SECURITY_ROUTES: Array<[string, string, unknown?]> = [
  ['GET', '/profile/security/status'],
  ['POST', '/profile/security/totp/setup', {}],
  ['POST', '/profile/security/totp/verify', { code: '123456' }],
  ['POST', '/profile/security/enable', { method: 'sms' }],
  ['POST', '/profile/security/disable', {}],
  ['POST', '/profile/security/backup-codes', {}],
  ['GET', '/profile/security/trusted-devices'],
  ['POST', '/profile/security/trusted-devices/forget', {}],
];

async function magicSignIn(email: string): Promise<{ status: number; body: any }> {
  const issued = await http(`/profile/user/magic-link?email=${encodeURIComponent(email)}&type=code`, { headers: { orgid: org } });
  if (issued.status !== 200) throw new Error(`magic-link: ${issued.status} ${issued.text}`);
  const code = lastCode(app, org, email, 'magic-code');
  return http('/profile/user/magic-link/redirect', { method: 'POST', headers: { orgid: org }, body: { email, code } });
}

t.test('proven identity - a stranger signed up with a staff email touches no /profile/security/* route and never decides how staff sign in', async (t) => {
  const stranger = await signupCustomer(app, org, { email: 'sam@a.example', phone: '+15550001111', verify: false });
  t.equal(stranger.user.emailVerified, false, 'the sign-up answer says the address is not proven');
  t.equal((await http('/profile/security/enable', { method: 'POST', headers: bearer(stranger), body: { method: 'sms' } })).status, 403, 'the probe: enable sms');
  for (const [method, path, body] of SECURITY_ROUTES) {
    const r = await http(path, { method, headers: bearer(stranger), body });
    t.equal(r.status, 403, `${method} ${path}`);
    t.match(r.body.message, /verify-email/, `${path} names verify-email`);
  }
  const sam = await signIn(app, org, 'sam@a.example');
  t.ok(sam.body.token, 'the staff member signs in with no challenge sent to the stranger');
  t.notOk(sam.body.requiresTwoFactor);
  t.equal(readOutbox(app.deps.store, org, '+15550001111').length, 0, 'nothing was texted to the stranger');

  // Records written before this rule (a stranger's 2FA on an unproven record) stop counting.
  const { WriteBatch } = await import('../../core/store/store.js');
  const sec = app.deps.store.getRecord(org, 'user_security', stranger.customerId)!;
  await app.deps.store.commit(new WriteBatch().putRecord({ ...sec, version: sec.version + 1, data: { ...sec.data, twoFactorEnabled: true, twoFactorMethod: 'sms' } }, sec.version));
  const again = await signIn(app, org, 'sam@a.example');
  t.ok(again.body.token, 'an old unproven record with 2FA on does not challenge the staff member');
});

t.test('proven identity - against the founder: the stranger cannot enrol an authenticator; the founder proves the address and the stranger is out', async (t) => {
  const stranger = await signupCustomer(app, org, { email: 'founder@a.example', verify: false });
  t.equal((await http('/profile/security/totp/setup', { method: 'POST', headers: bearer(stranger), body: {} })).status, 403, 'the probe: totp/setup');
  const f = await signIn(app, org, 'founder@a.example');
  t.ok(f.body.token, 'the founder signs in without the stranger’s factor');
  const fs = { orgId: org, token: f.body.token, user: f.body.user };
  const before = await http('/profile/security/status', { headers: bearer(fs) });
  t.equal(before.status, 403, 'the founder proves the address before managing 2FA');
  await proveEmail(app, fs);
  const status = await http('/profile/security/status', { headers: bearer(fs) });
  t.equal(status.status, 200, "the founder's proof claims the customer record of the address");
  t.equal((await http('/profile/security/disable', { method: 'POST', headers: bearer(fs), body: {} })).status, 200, 'and her token manages it');
  t.equal((await signIn(app, org, 'founder@a.example', DEFAULT_PASSWORD, { kind: 'customer' })).status, 401, "the stranger's password on that record is gone");
  t.equal((await http('/profile', { headers: bearer(stranger) })).status, 401, "and the stranger's session ended");
});

t.test('proven identity - a ticket is matched by holder email only once the address is proven', async (t) => {
  const staff = client(app.url, bearer(founder));
  const ev = await staff.post('/events', { name: 'Gala', ticketTypes: [{ title: 'General', price: 10, quantity: 100 }] });
  t.equal(ev.status, 201);
  const tk = await staff.post(`/events/${ev.body.sk}/tickets`, { ticketTypeId: ev.body.ticketTypes[0].sk, holderEmail: 'grace@holder.example', holderName: 'Grace' });
  t.equal(tk.status, 201);

  const stranger = await signupCustomer(app, org, { email: 'grace@holder.example', verify: false });
  const mine = await http('/client/events/tickets/mine', { headers: bearer(stranger) });
  t.equal(mine.status, 200);
  t.same(mine.body.data, [], 'the stranger sees no ticket');
  t.equal((await http(`/client/events/tickets/${tk.body.sk}/qr`, { headers: bearer(stranger) })).status, 404, 'and gets no signed code');

  // The real holder: sign-up is refused with the way to take the address over.
  const refused = await http('/profile/customer/signup', { method: 'POST', headers: { orgid: org }, body: { email: 'grace@holder.example', password: 'grace-own-password' } });
  t.equal(refused.status, 409);
  t.match(refused.body.message, /magic-link/);
  t.match(refused.body.message, /password\/forgot/);
  const grace = await magicSignIn('grace@holder.example');
  t.equal(grace.status, 200, 'the holder signs in with a code sent to the address');
  t.equal(grace.body.user.emailVerified, true, 'which proves it');
  const hers = await http('/client/events/tickets/mine', { headers: bearer({ orgId: org, token: grace.body.token }) });
  t.same(hers.body.data.map((x: { sk: string }) => x.sk), [tk.body.sk], 'the existing ticket appears');
  const qr = await http(`/client/events/tickets/${tk.body.sk}/qr`, { headers: bearer({ orgId: org, token: grace.body.token }) });
  t.equal(qr.status, 200);
  t.equal((await signIn(app, org, 'grace@holder.example', DEFAULT_PASSWORD, { kind: 'customer' })).status, 401, "the squatter's password stopped working");
  t.equal((await http('/client/events/tickets/mine', { headers: bearer(stranger) })).status, 401, "and the squatter's session ended");
});

t.test('proven identity - sign-up, verify, see my ticket', async (t) => {
  const staff = client(app.url, bearer(founder));
  const ev = await staff.post('/events', { name: 'Matinee', ticketTypes: [{ title: 'General', price: 10, quantity: 100 }] });
  const tk = await staff.post(`/events/${ev.body.sk}/tickets`, { ticketTypeId: ev.body.ticketTypes[0].sk, holderEmail: 'ivy@holder.example' });
  const ivy = await signupCustomer(app, org, { email: 'ivy@holder.example', verify: false });
  t.same((await http('/client/events/tickets/mine', { headers: bearer(ivy) })).body.data, []);
  const wrong = await http('/profile/customer/verify-email', { method: 'POST', headers: bearer(ivy), body: { code: '000000' === lastCode(app, org, 'ivy@holder.example', 'verify-email') ? '111111' : '000000' } });
  t.equal(wrong.status, 400);
  t.match(wrong.body.message, /not right \(4 attempts left\)/);
  const sends: number[] = [];
  for (let i = 0; i < 5; i++) sends.push((await http('/profile/customer/verify-email/send', { method: 'POST', headers: bearer(ivy) })).status);
  t.same(sends, [200, 200, 200, 200, 429], 'five codes per 10 minutes (the sign-up sent the first), then 429');
  const mine = await http('/profile/outbox/mine', { headers: bearer(ivy) });
  t.same(mine.body.data, [], 'the code is never shown to the unproven account itself');
  const ok = await http('/profile/customer/verify-email', { method: 'POST', headers: bearer(ivy), body: { code: lastCode(app, org, 'ivy@holder.example', 'verify-email') } });
  t.same(ok.body, { emailVerified: true });
  t.equal((await http('/profile/customer/verify-email/send', { method: 'POST', headers: bearer(ivy) })).body.emailVerified, true, 'send on a proven address sends nothing');
  const after = await http('/client/events/tickets/mine', { headers: bearer(ivy) });
  t.same(after.body.data.map((x: { sk: string }) => x.sk), [tk.body.sk], 'proven: the ticket is mine');
  t.equal((await http('/profile/security/status', { headers: bearer(ivy) })).status, 200, 'and 2FA is mine to manage');
});

t.test('proven identity - pre-hijacking: the squatter’s password dies when the owner proves the address by magic code; the owner sets one by reset', async (t) => {
  const squatter = await signupCustomer(app, org, { email: 'victim@mail.example', password: 'squatter-password', verify: false });
  const refused = await http('/profile/customer/signup', { method: 'POST', headers: { orgid: org }, body: { email: 'victim@mail.example', password: 'victim-password' } });
  t.equal(refused.status, 409, "the victim's sign-up is refused...");
  const victim = await magicSignIn('victim@mail.example');
  t.equal(victim.status, 200, '...but a magic code signs the victim in');
  const vs = { orgId: org, token: victim.body.token };
  t.equal((await signIn(app, org, 'victim@mail.example', 'squatter-password', { kind: 'customer' })).status, 401, "the squatter's password no longer signs in");
  t.equal((await http('/client-data/profile', { headers: bearer(squatter) })).status, 401, "the squatter's access token is refused");
  t.equal((await http('/profile/customer/refresh', { method: 'POST', headers: { orgid: org, authorization: `Bearer ${squatter.refreshToken}` }, body: {} })).status, 401, 'and the refresh token');
  t.equal((await http('/client-data/profile', { headers: bearer(vs) })).status, 200, "the victim's own session works");

  const forgot = await http('/profile/password/forgot', { method: 'POST', headers: { orgid: org }, body: { email: 'victim@mail.example' } });
  t.equal(forgot.status, 200);
  const code = lastCode(app, org, 'victim@mail.example', 'password-reset');
  const reset = await http('/profile/password/reset', { method: 'POST', headers: { orgid: org }, body: { email: 'victim@mail.example', code, newPassword: 'victim-password' } });
  t.equal(reset.status, 200);
  t.same(reset.body, { reset: true, emailVerified: true, accounts: 1 });
  const signedIn = await signIn(app, org, 'victim@mail.example', 'victim-password', { kind: 'customer' });
  t.equal(signedIn.status, 200, 'the owner signs in with the password they set');
});

t.test('recovery - a reset ends a stolen session, proves the address, and its code is single-use and limited', async (t) => {
  const owner = await signupCustomer(app, org, { email: 'owner@mail.example', verify: false });
  const thief = await signIn(app, org, 'owner@mail.example', DEFAULT_PASSWORD, { kind: 'customer' });
  t.ok(thief.body.token, 'the thief holds a session (a stolen password)');
  const unknown = await http('/profile/password/forgot', { method: 'POST', headers: { orgid: org }, body: { email: 'nobody@mail.example' } });
  const known = await http('/profile/password/forgot', { method: 'POST', headers: { orgid: org }, body: { email: 'owner@mail.example' } });
  t.equal(unknown.status, known.status, 'the same answer whether or not the account exists');
  t.same(unknown.body, known.body);
  t.notOk(lastCode(app, org, 'nobody@mail.example'), 'and nothing is sent to an unknown address');
  const code = lastCode(app, org, 'owner@mail.example', 'password-reset')!;
  const body = (c: string) => ({ email: 'owner@mail.example', code: c, newPassword: 'brand-new-password' });
  for (let i = 0; i < 4; i++) {
    const wrong = await http('/profile/password/reset', { method: 'POST', headers: { orgid: org }, body: body(code === '000000' ? '111111' : '000000') });
    t.equal(wrong.status, 400, `wrong guess ${i + 1}`);
  }
  const ok = await http('/profile/password/reset', { method: 'POST', headers: { orgid: org }, body: body(code) });
  t.equal(ok.status, 200, 'the right code within its five guesses');
  t.equal((await http('/profile/password/reset', { method: 'POST', headers: { orgid: org }, body: body(code) })).status, 400, 'a code is used once');
  t.equal((await http('/client-data/profile', { headers: bearer({ orgId: org, token: thief.body.token }) })).status, 401, "the thief's access token is refused");
  t.equal((await http('/profile/customer/refresh', { method: 'POST', headers: { orgid: org, authorization: `Bearer ${thief.body.refreshToken}` }, body: {} })).status, 401, "and the thief's refresh token");
  t.equal((await http('/client-data/profile', { headers: bearer(owner) })).status, 401, 'every session of the account ended');
  t.equal((await signIn(app, org, 'owner@mail.example', DEFAULT_PASSWORD, { kind: 'customer' })).status, 401, 'the old password is gone');
  const fresh = await signIn(app, org, 'owner@mail.example', 'brand-new-password', { kind: 'customer' });
  t.equal(fresh.status, 200);
  t.equal(fresh.body.user.emailVerified, true, 'the reset proved the address');

  // Five wrong guesses end the code, and the address's guessing is slowed down.
  await signupCustomer(app, org, { email: 'owner2@mail.example', verify: false });
  await http('/profile/password/forgot', { method: 'POST', headers: { orgid: org }, body: { email: 'owner2@mail.example' } });
  const second = lastCode(app, org, 'owner2@mail.example', 'password-reset')!;
  const body2 = (c: string) => ({ ...body(c), email: 'owner2@mail.example' });
  const statuses: number[] = [];
  for (let i = 0; i < 6; i++) statuses.push((await http('/profile/password/reset', { method: 'POST', headers: { orgid: org }, body: body2(second === '000000' ? '111111' : '000000') })).status);
  t.same(statuses, [400, 400, 400, 400, 400, 429], 'wrong guesses for one address are slowed down after five (429 with Retry-After)');
  t.notOk(app.deps.store.getKv<{ codeHash?: string }>(org, 'auth_reset', 'owner2@mail.example')?.codeHash, 'and five wrong guesses ended the code itself');
});

t.test('recovery - staff reset their password the same way; sessions end, the address is proven', async (t) => {
  const before = await signIn(app, org, 'sam@a.example');
  t.ok(before.body.token);
  await http('/profile/password/forgot', { method: 'POST', headers: { orgid: org }, body: { email: 'sam@a.example', accountType: 'staff' } });
  const code = lastCode(app, org, 'sam@a.example', 'password-reset');
  const r = await http('/profile/password/reset', { method: 'POST', headers: { orgid: org }, body: { email: 'sam@a.example', code, newPassword: 'sam-new-password', accountType: 'staff' } });
  t.same(r.body, { reset: true, emailVerified: true, accounts: 1 });
  t.equal((await http('/profile', { headers: bearer({ orgId: org, token: before.body.token }) })).status, 401, 'the earlier staff session ended');
  const after = await signIn(app, org, 'sam@a.example', 'sam-new-password');
  t.equal(after.status, 200);
  t.equal(after.body.user.emailVerified, true);
});
