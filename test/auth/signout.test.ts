// Issue 28, item 8: POST /profile/signout ends the session's access token too, not only its refresh
// tokens, while the account's other sessions keep working. The access token carries its session
// (`sid`, the refresh family); ending the family writes a session revocation in the same batch,
// checked on every verification, cached or not.
import t from 'tap';
import { REVOKED_SESSIONS_NS } from '../../core/auth/revocations.js';
import { ManualClock } from '../../core/clock.js';
import { NS } from '../../actors/auth/model.js';
import { sweepExpired } from '../../actors/auth/index.js';
import { startTestApp } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, signIn, signupCustomer, signupOrg } from '../helpers/auth.js';
import { client } from '../helpers/http.js';

const clock = new ManualClock(Date.UTC(2026, 4, 4, 10, 0, 0));
const app = await startTestApp(t, { modules: ['auth'], clock });
const http = client(app.url);
const acme = await signupOrg(app, { email: 'owner@so.example', orgName: 'Signout Bistro' });
const org = acme.orgId;

function sidOf(token: string): string {
  return JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sid;
}

t.test('signout - the access token is refused after sign-out; another session of the account works', async (t) => {
  const a = await signIn(app, org, 'owner@so.example');
  const b = await signIn(app, org, 'owner@so.example');
  const sa = { orgId: org, token: a.body.token };
  const sb = { orgId: org, token: b.body.token };
  for (let i = 0; i < 3; i++) t.equal((await http.get('/profile', bearer(sa))).status, 200, 'working, and now cached as verified');
  const out = await http.post('/profile/signout', {}, bearer(sa));
  t.same(out.body, { signedOut: true });

  const after = await http.get('/profile', bearer(sa));
  t.equal(after.status, 401, 'the signed-out access token is refused on the next request');
  t.match(after.body.message, /session has ended/);
  t.equal((await http.post('/profile/signout', {}, bearer(sa))).status, 401, 'signing out twice: the token is already dead');
  t.equal((await http.post('/profile/user/refresh', { refreshToken: a.body.refreshToken })).status, 401, 'its refresh token too');

  t.equal((await http.get('/profile', bearer(sb))).status, 200, 'the other session of the same account works');
  const rb = await http.post('/profile/user/refresh', { refreshToken: b.body.refreshToken });
  t.equal(rb.status, 200, 'and refreshes');
  t.equal(sidOf(rb.body.token), sidOf(b.body.token), 'a refreshed token stays in its session');
  t.equal((await http.get('/profile', bearer({ orgId: org, token: rb.body.token }))).status, 200);

  const ended = app.deps.store.getKv<{ at: number; reason: string }>(org, REVOKED_SESSIONS_NS, sidOf(a.body.token));
  t.match(ended, { at: clock.now(), reason: 'signed out' }, 'the session revocation is in the store (it travels the commit stream)');
  t.equal(app.deps.store.getKv<{ revoked: boolean }>(org, NS.family, sidOf(a.body.token))?.revoked, true, 'beside the revoked family');
});

t.test('signout - customers too; a refresh-token reuse ends the access tokens of its session', async (t) => {
  const c = await signupCustomer(app, org, { email: 'guest@so.example' });
  const other = await signIn(app, org, 'guest@so.example', DEFAULT_PASSWORD, { kind: 'customer' });
  t.same((await http.post('/profile/signout', {}, bearer(c))).body, { signedOut: true });
  t.equal((await http.get('/profile/outbox/mine', bearer(c))).status, 401);
  t.equal((await http.get('/profile/outbox/mine', bearer({ orgId: org, token: other.body.token }))).status, 200);

  // A stolen refresh token used twice revokes its family: the access tokens minted from it stop too.
  const s = await signIn(app, org, 'owner@so.example');
  const rotated = await http.post('/profile/user/refresh', { refreshToken: s.body.refreshToken });
  t.equal(rotated.status, 200);
  t.equal((await http.get('/profile', bearer({ orgId: org, token: rotated.body.token }))).status, 200);
  t.equal((await http.post('/profile/user/refresh', { refreshToken: s.body.refreshToken })).status, 401, 'reuse');
  t.equal((await http.get('/profile', bearer({ orgId: org, token: rotated.body.token }))).status, 401, "the session's access token stops with it");
});

t.test('signout - session revocations are swept once no token of theirs can be alive', async (t) => {
  t.ok(app.deps.store.listKv(org, REVOKED_SESSIONS_NS).length >= 3);
  clock.advance((app.deps.tokens.maxLifetimeSeconds + 3600) * 1000);
  clock.advance(app.deps.config.auth.refreshTokenTtlSeconds * 1000);
  await sweepExpired(app.deps);
  t.same(app.deps.store.listKv(org, REVOKED_SESSIONS_NS), []);
});
