// Issue 28, item 6: failed sign-ins slow the guesser, not the owner. Failures count per account at
// one address and per address, so a guesser's address waits while the owner's does not; a slow
// per-account ceiling still stops a guesser spread over many addresses, and the owner then signs
// in with a magic code. Requests come from different loopback addresses (127.0.0.x) so the server
// sees different callers.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, lastCode, signupOrg, signupStaff } from '../helpers/auth.js';
import { request, type Reply } from '../helpers/http.js';

const clock = new ManualClock(Date.UTC(2026, 4, 1, 9, 0, 0));
const app = await startTestApp(t, { modules: ['auth'], clock });
const acme = await signupOrg(app, { email: 'owner@lock.example', orgName: 'Lockout Cafe' });
await signupStaff(app, acme.orgId, acme.token, { email: 'sam@lock.example', employeeId: 'E-7' });
await signupStaff(app, acme.orgId, acme.token, { email: 'dana@lock.example' });

/** A JSON request sent from the loopback address `ip` (the server sees it as the caller's address). */
function from(ip: string, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Reply> {
  return request(app.url, path, { method, body, headers: { orgid: acme.orgId, ...headers }, localAddress: ip });
}

const signIn = (ip: string, email: string, password: string) => from(ip, 'POST', '/profile/user/signin', { email, password });

t.test('password sign-in - a guesser at one address does not make the owner wait at theirs', async (t) => {
  const guesser = '127.0.0.2';
  const statuses: number[] = [];
  for (let i = 0; i < 20; i++) statuses.push((await signIn(guesser, 'sam@lock.example', `guess-${i}`)).status);
  t.same(statuses.slice(0, 5), [401, 401, 401, 401, 401]);
  t.ok(statuses.slice(5).every((s) => s === 429), 'then the guessing address waits');
  const there = await signIn(guesser, 'sam@lock.example', DEFAULT_PASSWORD);
  t.equal(there.status, 429, 'even the right password waits at the guessing address');
  t.equal(there.headers['retry-after'], '30');
  const owner = await signIn('127.0.0.1', 'sam@lock.example', DEFAULT_PASSWORD);
  t.equal(owner.status, 200, "the owner's address is not slowed by the guesser");
  t.ok(owner.body.token);

  // Changing the password counts on the same account: the guesser's failures do not refuse it either.
  const changed = await from('127.0.0.1', 'POST', '/profile/password', { currentPassword: DEFAULT_PASSWORD, newPassword: 'another-good-pass' }, bearer({ orgId: acme.orgId, token: owner.body.token }));
  t.equal(changed.status, 200);
  clock.advance(16 * 60_000);
});

t.test('password sign-in - the account ceiling stops a guesser spread over many addresses; a magic code still signs the owner in', async (t) => {
  const statuses = new Set<number>();
  // 25 addresses, 4 failures each: no address nor account-at-address count is reached.
  for (let a = 0; a < 25; a++) {
    for (let i = 0; i < 4; i++) statuses.add((await signIn(`127.0.1.${a + 1}`, 'dana@lock.example', `spray-${a}-${i}`)).status);
  }
  t.same([...statuses], [401], '100 failures spread over 25 addresses are each answered 401');
  const next = await signIn('127.0.2.1', 'dana@lock.example', DEFAULT_PASSWORD);
  t.equal(next.status, 429, 'past the ceiling every address waits, the right password too');
  t.equal(next.headers['retry-after'], '60');
  t.equal((await signIn('127.0.2.1', 'owner@lock.example', DEFAULT_PASSWORD)).status, 200, 'other accounts are not affected');

  t.equal((await from('127.0.0.1', 'GET', '/profile/user/magic-link?email=dana%40lock.example&type=code')).status, 200);
  const code = lastCode(app, acme.orgId, 'dana@lock.example', 'magic-code');
  t.ok(code);
  const magic = await from('127.0.0.1', 'POST', '/profile/user/magic-link/redirect', { email: 'dana@lock.example', code });
  t.equal(magic.status, 200, 'the owner signs in with a magic code meanwhile');

  clock.advance(61_000);
  t.equal((await signIn('127.0.2.1', 'dana@lock.example', DEFAULT_PASSWORD)).status, 200, 'after Retry-After the right password works');
  t.equal((await signIn('127.0.2.2', 'dana@lock.example', 'one-more-guess')).status, 401);
  const slower = await signIn('127.0.2.3', 'dana@lock.example', DEFAULT_PASSWORD);
  t.equal(slower.status, 429);
  t.equal(slower.headers['retry-after'], '90', 'the ceiling grows slowly');
  clock.advance(16 * 60_000);
});

t.test('passcode sign-in - a PIN guesser at one address does not hold the till at another', async (t) => {
  await app.deps.store.commit(
    new WriteBatch().putRecord(newRecord(acme.orgId, 'setting', { name: 'base-setting', passcodeLoginSettings: { enable: true, mode: 'pin' } }, { now: clock.now() }), 0),
  );
  const sam = await signIn('127.0.0.1', 'sam@lock.example', 'another-good-pass');
  t.equal(sam.status, 200);
  t.equal((await from('127.0.0.1', 'POST', '/profile/passcode/set', { pin: '480213' }, bearer({ orgId: acme.orgId, token: sam.body.token }))).status, 200);
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++) statuses.push((await from('127.0.0.3', 'POST', '/profile/user/signin/passcode', { employeeId: 'E-7', pin: String(100000 + i) })).status);
  t.same(statuses, [401, 401, 401, 401, 401, 429, 429, 429]);
  const till = await from('127.0.0.1', 'POST', '/profile/user/signin/passcode', { employeeId: 'E-7', pin: '480213' });
  t.equal(till.status, 200, "the till's address is not slowed by the guesser");
});
