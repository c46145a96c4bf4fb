// Issue 17, "codes reach only their owner": a plain Admin asks for the founder's magic code and
// 2FA code and tries every route that lists messages; none answers a code, while the founder reads
// their own at /profile/outbox/mine and finishes a magic-code sign-in with the second factor. The
// takeover by PIN, card or status change is refused too. The operator finds codes in a file under
// DATA_DIR (owner-only), never in the log.
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { readOutbox } from '../../core/outbox.js';
import { LOCAL_CODES_FILE } from '../../actors/auth/index.js';
import { startTestApp } from '../helpers/app.js';
import { captureLog } from '../helpers/log-capture.js';
import { DEFAULT_PASSWORD, bearer, proveEmail, signIn, signupCustomer, signupOrg, signupStaff } from '../helpers/auth.js';
import { LeakGuard } from './leak-guard.js';

const log = captureLog('debug');
const logLines = log.lines;
const app = await startTestApp(t, { modules: ['auth', 'records'], logger: log.logger });
const guard = new LeakGuard();
const send = guard.sender(app);
const http = guard.client(app);
guard.secret(DEFAULT_PASSWORD);

const FOUNDER = 'founder@owner.example';
const founder = await signupOrg(app, { email: FOUNDER, orgName: 'Owner Only' }, send);
const org = founder.orgId;
await signupStaff(app, org, founder.token, { email: 'admin@owner.example', roles: ['Admin'] }, send);
const adminSignIn = await signIn(app, org, 'admin@owner.example', DEFAULT_PASSWORD, {}, send);
const admin = { orgId: org, token: adminSignIn.body.token as string };
const turnOn = await http.put('/profile/org/security-settings', { enableTwoFactorForUsers: true }, bearer(founder));
if (turnOn.status !== 200) throw new Error(`settings: ${turnOn.status} ${turnOn.text}`);

/** Every outbox-like listing an Admin can call, each answer's text. */
async function adminListings(): Promise<Array<{ what: string; status: number; text: string; body: any }>> {
  const paths = [
    '/profile/outbox',
    `/profile/outbox?to=${encodeURIComponent(FOUNDER)}`,
    `/profile/outbox?to=${encodeURIComponent(FOUNDER.toUpperCase())}&kind=magic-code`,
    '/profile/outbox?kind=two-factor',
    '/profile/outbox/mine',
    `/profile/outbox/mine?kind=magic-code`,
  ];
  const out = [];
  for (const p of paths) {
    const r = await http.get(p, bearer(admin));
    out.push({ what: `GET ${p}`, status: r.status, text: r.text, body: r.body });
  }
  const posts: Array<[string, unknown]> = [
    ['/repository/find/outbox_message', { query: {} }],
    ['/dynamic-query/find', { datatype: 'outbox_message', filter: {} }],
    ['/dynamic-query/aggregate', { datatype: 'user', pipeline: [{ $lookup: { from: 'outbox_message', localField: 'data.email', foreignField: 'data.to', as: 'm' } }] }],
  ];
  for (const [p, body] of posts) {
    const r = await http.post(p, body, bearer(admin));
    out.push({ what: `POST ${p}`, status: r.status, text: r.text, body: r.body });
  }
  return out;
}

t.test('an Admin cannot obtain the founder magic code or 2FA code through any route', async (t) => {
  const asked = await http.get(`/profile/user/magic-link?email=${encodeURIComponent(FOUNDER)}&type=code`, { orgid: org, ...bearer(admin) });
  t.equal(asked.status, 200, 'anyone may ask for a code to be sent to an address');
  const link = await http.get(`/profile/user/magic-link?email=${encodeURIComponent(FOUNDER)}&type=link`, { orgid: org, ...bearer(admin) });
  t.equal(link.status, 400, 'type=link is not offered');
  // The founder's password sign-in sends a 2FA code (org-wide 2FA is on).
  const challenged = await signIn(app, org, FOUNDER, DEFAULT_PASSWORD, {}, send);
  t.equal(challenged.body.requiresTwoFactor, true);

  const stored = readOutbox(app.deps.store, org, FOUNDER);
  const magic = stored.filter((m) => m.kind === 'magic-code').at(-1)?.code;
  const twoFactor = stored.filter((m) => m.kind === 'two-factor').at(-1)?.code;
  t.match(magic, /^\d{6}$/, 'the magic code was recorded (operator view)');
  t.match(twoFactor, /^\d{6}$/, 'the 2FA code was recorded (operator view)');

  for (const r of await adminListings()) {
    t.notMatch(r.text, new RegExp(`\\b(${magic}|${twoFactor})\\b`), `${r.what} (${r.status}) carries no founder code`);
    if (r.what.startsWith('GET /profile/outbox?')) {
      t.equal(r.status, 200, r.what);
      for (const m of r.body.data.filter((x: { to: string }) => x.to === FOUNDER)) {
        t.same(Object.keys(m).sort(), ['channel', 'id', 'kind', 'provider', 'sentAt', 'subject', 'to', 'withheld'], `${r.what}: an envelope only`);
      }
    }
  }
  const listed = (await adminListings())[1].body.data.map((m: { kind: string }) => m.kind).sort();
  t.same(listed, ['magic-code', 'two-factor'], "the Admin sees that both were sent, to whom and when");
  const own = (await adminListings()).find((r) => r.what === 'GET /profile/outbox/mine')!;
  t.same(own.body.data, [], "the Admin's own listing holds nothing addressed to the founder");

  // Typing an address proves nothing: a customer signed up with the founder's address, who never
  // received the code sent to it, reads no message to that address at all.
  const lookalike = await signupCustomer(app, org, { email: FOUNDER, verify: false }, send);
  const theirs = await http.get('/profile/outbox/mine', bearer(lookalike));
  t.equal(theirs.status, 200);
  t.same(theirs.body.data, [], 'an unproven account reads nothing addressed to its email');
  t.notMatch(theirs.text, new RegExp(`\\b(${magic}|${twoFactor})\\b`), "a customer with the founder's email reads none of the founder's codes");

  const guessed = await http.post('/profile/user/magic-link/redirect', { email: FOUNDER, code: '000000' }, { orgid: org });
  t.equal(guessed.status, 401, 'without the code there is no way in');
});

t.test('the founder reads their own codes and, where the organisation requires it, finishes a magic-code sign-in through the second factor', async (t) => {
  const before = await http.get('/profile/outbox/mine', bearer(founder));
  t.same(before.body.data, [], 'nothing is readable here before the founder proves the address');
  await proveEmail(app, founder, send);
  await http.get(`/profile/user/magic-link?email=${encodeURIComponent(FOUNDER)}&type=code`, { orgid: org });
  const mine = await http.get('/profile/outbox/mine?kind=magic-code', bearer(founder));
  t.equal(mine.status, 200);
  t.ok(mine.body.data.every((m: { to: string }) => m.to === FOUNDER), 'only messages to the founder');
  const code = mine.body.data[0].code;
  t.match(code, /^\d{6}$/, 'the newest magic code, readable by its owner');
  t.match(mine.body.data[0].body, new RegExp(code), 'with its body');

  // The spec lets a magic code alone sign in; this organisation requires the second factor too.
  const on = await http.put('/profile/org/security-settings', { requireTwoFactorForMagicCode: true }, bearer(founder));
  t.equal(on.status, 200);
  const redeemed = await http.post('/profile/user/magic-link/redirect', { email: FOUNDER, code }, { orgid: org });
  t.equal(redeemed.status, 200);
  t.equal(redeemed.body.requiresTwoFactor, true, 'org-wide 2FA challenges a magic-code sign-in when the organisation requires it');
  t.notOk(redeemed.body.token);
  const second = (await http.get('/profile/outbox/mine?kind=two-factor', bearer(founder))).body.data[0].code;
  const done = await http.post('/profile/security/challenge/verify', { challengeToken: redeemed.body.challengeToken, code: second });
  t.equal(done.status, 200);
  t.same(done.body.user.roles, ['User', 'Admin', 'ConfigAdmin']);

  const file = join(app.config.dataDir, LOCAL_CODES_FILE);
  const lines = readFileSync(file, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  t.ok(lines.some((l) => l.code === code && l.to === FOUNDER && l.kind === 'magic-code'), 'the operator finds the code in the local codes file under DATA_DIR');
  t.equal(statSync(file).mode & 0o777, 0o600, 'readable by the server user only');
  t.notOk(logLines.some((l) => l.includes(code)), 'and never in the log, at any level');
});

t.test('an Admin cannot take the founder over by PIN, card or status', async (t) => {
  const pin = await http.post('/profile/passcode/set', { pin: '5555', employeeId: 'F-1' }, bearer(founder));
  t.equal(pin.status, 200, 'the founder sets their own PIN and employee id');
  guard.secret('5555');
  guard.secret('7777');
  const setPin = await http.post('/profile/passcode/set', { pin: '7777', userId: founder.user.id }, bearer(admin));
  t.equal(setPin.status, 403, "an Admin setting the founder's PIN");
  t.match(setPin.body.message, /primary contact/);
  t.equal((await http.post('/profile/passcode/remove', { userId: founder.user.id }, bearer(admin))).status, 403);
  const card = await http.post('/profile/passcode/card/register', { employeeId: 'F-1', cardUid: 'ADMIN-HELD-CARD' }, bearer(admin));
  t.equal(card.status, 403, "an Admin registering a card for the founder");
  const disable = await http.post('/profile/user/status', { userId: founder.user.id, status: 'disabled' }, bearer(admin));
  t.equal(disable.status, 403, 'an Admin disabling the founder');
  const ownCard = await http.post('/profile/passcode/card/register', { employeeId: 'F-1', cardUid: 'FOUNDER-CARD-0042' }, bearer(founder));
  t.equal(ownCard.status, 201);
  const seen = await http.get('/profile/passcode/cards/F-1', bearer(admin));
  t.same(seen.body.data.map((c: { cardUid: string }) => c.cardUid), ['…0042'], "the founder's card UID is masked for the Admin");
});

t.test('an Admin cannot make a ConfigAdmin (a privileged role is granted only by a holder)', async (t) => {
  const body = (email: string, roles: string[]) => ({ email, password: DEFAULT_PASSWORD, roles });
  const escalate = await http.post('/profile/user/signup', body('second@owner.example', ['Admin', 'ConfigAdmin']), { ...bearer(admin) });
  t.equal(escalate.status, 403);
  t.match(escalate.body.message, /you do not hold ConfigAdmin/);
  const peer = await http.post('/profile/user/signup', body('peer@owner.example', ['Admin', 'Cashier']), { ...bearer(admin) });
  t.equal(peer.status, 201, 'roles the Admin holds, and role names that carry no privilege, are fine');
  const byFounder = await http.post('/profile/user/signup', body('config@owner.example', ['ConfigAdmin']), { ...bearer(founder) });
  t.equal(byFounder.status, 201, 'the founder holds ConfigAdmin and may grant it');
});

t.test('responses - never carry a code outside its owner listing', async (t) => {
  guard.harvest(app, [org]);
  guard.check(t);
});
