// Issue 17, "revoked access stops within seconds": a deleted or disabled user's access token,
// refresh token and API key are refused on the very next request (the token was verified and
// cached before); re-enabling lets the person sign in again but not revive old sessions. Signed
// tokens without exp, with a lifetime over the configured one, or issued in the future are refused.
import jwt from 'jsonwebtoken';
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { startTestApp, TEST_JWT_SECRET, tokenFor } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, signIn, signupOrg, signupStaff, type Session } from '../helpers/auth.js';

const clock = new ManualClock(Date.UTC(2026, 4, 1, 9, 0, 0));
const app = await startTestApp(t, { modules: ['auth'], clock });
const { request } = await import('../helpers/http.js');
const get = (path: string, headers: Record<string, string>) => request(app.url, path, { headers });
const post = (path: string, body: unknown, headers: Record<string, string> = {}) => request(app.url, path, { method: 'POST', body, headers });

const owner = await signupOrg(app, { email: 'owner@rv.example', orgName: 'Revoke Co' });
const org = owner.orgId;

async function staff(email: string, roles = ['Admin']): Promise<Session & { key: string }> {
  await signupStaff(app, org, owner.token, { email, roles });
  const r = await signIn(app, org, email);
  const s = { orgId: org, token: r.body.token, refreshToken: r.body.refreshToken, user: r.body.user };
  const k = await post('/profile/api-keys', { name: 'k' }, bearer(s));
  return { ...s, key: k.body.key };
}

/** Status of a plain read with the token, with the API key, and of a refresh. */
async function access(s: Session & { key: string }) {
  return {
    token: (await get('/profile/outbox/mine', bearer(s))).status,
    key: (await get('/profile/outbox/mine', { orgid: org, 'x-api-key': s.key })).status,
  };
}

t.test('a deleted user: token, API key and refresh refused on the very next request', async (t) => {
  const gone = await staff('gone@rv.example');
  t.same(await access(gone), { token: 200, key: 200 }, 'working (and the token now cached)');
  t.equal((await request(app.url, '/profile/user/self', { method: 'DELETE', headers: bearer(gone) })).status, 200);
  const next = await post('/profile/user/signup', { email: 'sneaky@rv.example', password: DEFAULT_PASSWORD, roles: ['Admin'] }, bearer(gone));
  t.equal(next.status, 403, 'the next request (creating an Admin, as in the probe) is refused: the token counts for nothing');
  t.equal(app.deps.store.scan(org, 'user', { 'data.email': 'sneaky@rv.example' }).length, 0, 'no user was created');
  const refused = await get('/profile/outbox/mine', bearer(gone));
  t.equal(refused.status, 401);
  t.match(refused.body.message, /token refused: access for this account was revoked/);
  t.same(await access(gone), { token: 401, key: 401 });
  t.equal((await post('/profile/user/refresh', { refreshToken: gone.refreshToken })).status, 401, 'refresh refused');
  t.equal((await get('/profile/outbox/mine', bearer(owner))).status, 200, "others' tokens are untouched");
  const unknown = tokenFor(app, { org, sub: 'user-1' });
  t.equal((await get('/profile/outbox/mine', { orgid: org, authorization: `Bearer ${unknown}` })).status, 200, 'a token for a subject the store never held still works');
});

t.test('a disabled user likewise; re-enabled, they sign in afresh but old sessions stay ended', async (t) => {
  const off = await staff('off@rv.example');
  t.same(await access(off), { token: 200, key: 200 });
  const disabled = await post('/profile/user/status', { userId: off.user.id, status: 'disabled' }, bearer(owner));
  t.equal(disabled.status, 200);
  t.equal(disabled.body.status, 'disabled');
  t.same(await access(off), { token: 401, key: 401 }, 'refused on the next request');
  t.equal((await post('/profile/user/refresh', { refreshToken: off.refreshToken })).status, 401, 'refresh refused');
  t.equal((await signIn(app, org, 'off@rv.example')).status, 401, 'sign-in refused');

  clock.advance(1000);
  t.equal((await post('/profile/user/status', { userId: off.user.id, status: 'active' }, bearer(owner))).status, 200);
  const again = await signIn(app, org, 'off@rv.example');
  t.equal(again.status, 200, 're-enabled: signs in');
  t.equal((await get('/profile/outbox/mine', bearer({ orgId: org, token: again.body.token }))).status, 200, 'the new token works');
  t.same(await access(off), { token: 401, key: 200 }, 'the old token stays refused; the key works again with its owner');
  t.equal((await post('/profile/user/refresh', { refreshToken: off.refreshToken })).status, 401, 'the old session stays ended');

  t.equal((await post('/profile/user/status', { userId: owner.user.id, status: 'disabled' }, bearer(owner))).status, 403, 'not yourself');
  const byUser = await post('/profile/user/status', { userId: owner.user.id, status: 'disabled' }, bearer({ orgId: org, token: again.body.token }));
  t.equal(byUser.status, 403, 'an Admin cannot disable the primary contact');
});

t.test('signed tokens without exp, living too long, or issued in the future are refused', async (t) => {
  const now = Math.floor(clock.now() / 1000);
  const sign = (claims: Record<string, unknown>, noTimestamp = false) =>
    jwt.sign({ org, roles: ['User', 'Admin'], kind: 'staff', typ: 'access', ...claims }, TEST_JWT_SECRET, { subject: owner.user.id, issuer: 'business-platform', noTimestamp });
  const cases: Array<[string, string, RegExp]> = [
    ['no exp', sign({ iat: now }), /no exp/],
    ['no iat', sign({ exp: now + 60 }, true), /no iat/],
    ['a day long', sign({ iat: now, exp: now + 86_400 }), /lives 86400 s, longer than .*900 s/],
    ['issued in the future', sign({ iat: now + 3600, exp: now + 3600 + 600 }), /future/],
  ];
  for (const [what, token, why] of cases) {
    const r = await get('/profile/outbox/mine', { orgid: org, authorization: `Bearer ${token}` });
    t.equal(r.status, 401, what);
    t.match(r.body.message, why, `${what}: says why`);
  }
  t.equal((await get('/profile/outbox/mine', { orgid: org, authorization: `Bearer ${sign({ iat: now, exp: now + 900 + 30 })}` })).status, 200, 'the configured lifetime plus the skew is accepted');
});
