// Issue 28, item 7: the organisation a device last signed into is remembered by a device token the
// server issued at a staff sign-in (x-device-token), not by the client-chosen x-device-id, and no
// sign-in to another organisation can re-point it.
import t from 'tap';
import { DEVICE_TOKEN_NS } from '../../actors/auth/device-token.js';
import { sweepExpired } from '../../actors/auth/index.js';
import { ManualClock } from '../../core/clock.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, signIn, signupCustomer, signupOrg, signupStaff, type Session } from '../helpers/auth.js';
import { client } from '../helpers/http.js';

const clock = new ManualClock(Date.UTC(2026, 4, 2, 8, 0, 0));
const app = await startTestApp(t, { modules: ['auth'], clock });
const http = client(app.url);

const orgA = await signupOrg(app, { email: 'owner@a.example', orgName: 'Org A' });
const orgB = await signupOrg(app, { email: 'owner@b.example', orgName: 'Org B' });
/** Each organisation has passcode sign-in on and an employee E-1 with PIN 4821. */
async function withPinEmployee(org: Session, email: string): Promise<void> {
  await app.deps.store.commit(
    new WriteBatch().putRecord(newRecord(org.orgId, 'setting', { name: 'base-setting', passcodeLoginSettings: { enable: true, mode: 'pin' } }, { now: clock.now() }), 0),
  );
  await signupStaff(app, org.orgId, org.token, { email, employeeId: 'E-1' });
  const s = await signIn(app, org.orgId, email);
  const set = await http.post('/profile/passcode/set', { pin: '4821' }, bearer({ orgId: org.orgId, token: s.body.token }));
  if (set.status !== 200) throw new Error(`passcode/set: ${set.status} ${set.text}`);
}
await withPinEmployee(orgA, 'e1@a.example');
await withPinEmployee(orgB, 'e1@b.example');

const passcode = (headers: Record<string, string>) => http.post('/profile/user/signin/passcode', { employeeId: 'E-1', pin: '4821' }, headers);
const TOKEN = (org: string) => new RegExp(`^${org}\\.[A-Za-z0-9_-]{43}$`);

t.test('device token - a sign-in to another organisation cannot redirect a token issued by the first', async (t) => {
  const tablet = { 'x-device-id': 'POS-TABLET-1' };
  const a = await signIn(app, orgA.orgId, 'owner@a.example', DEFAULT_PASSWORD, { headers: tablet });
  t.equal(a.status, 200);
  t.match(a.body.deviceToken, TOKEN(orgA.orgId), 'a staff sign-in answers a device token for its organisation');
  const tokenA: string = a.body.deviceToken;
  const viaToken = await passcode({ 'x-device-token': tokenA });
  t.equal(viaToken.status, 200);
  t.equal(viaToken.body.orgId, orgA.orgId, 'passcode sign-in without orgid goes to the organisation of the token');

  // Org B's owner signs in claiming the tablet's id, and even presenting the tablet's token.
  const b = await signIn(app, orgB.orgId, 'owner@b.example', DEFAULT_PASSWORD, { headers: { ...tablet, 'x-device-token': tokenA } });
  t.equal(b.status, 200);
  t.match(b.body.deviceToken, TOKEN(orgB.orgId), "org B's sign-in answers a token of its own");
  t.not(b.body.deviceToken, tokenA);
  const after = await passcode({ ...tablet, 'x-device-token': tokenA });
  t.equal(after.status, 200);
  t.equal(after.body.orgId, orgA.orgId, "the tablet's token still names org A");
  t.equal((await passcode({ 'x-device-token': b.body.deviceToken })).body.orgId, orgB.orgId, "org B's token names org B");

  const forged = `${orgB.orgId}.${tokenA.slice(tokenA.indexOf('.') + 1)}`;
  t.equal((await passcode({ 'x-device-token': forged })).status, 400, "A's secret under B's name is no token");

  const again = await signIn(app, orgA.orgId, 'owner@a.example', DEFAULT_PASSWORD, { headers: { 'x-device-token': tokenA } });
  t.equal(again.body.deviceToken, tokenA, 'a sign-in to the same organisation answers the token back');
  const stored = app.deps.store.listKv(orgA.orgId, DEVICE_TOKEN_NS);
  t.notOk(JSON.stringify(stored).includes(tokenA.slice(tokenA.indexOf('.') + 1)), 'the store keeps a digest, not the secret');
  t.equal(app.deps.store.listKv(orgB.orgId, DEVICE_TOKEN_NS).length, 3, "org B's store holds its own tokens only");
});

t.test('device token - x-device-id alone selects no organisation', async (t) => {
  const kiosk = { 'x-device-id': 'POS-TABLET-2' };
  t.equal((await signIn(app, orgA.orgId, 'owner@a.example', DEFAULT_PASSWORD, { headers: kiosk })).status, 200);
  const byId = await passcode(kiosk);
  t.equal(byId.status, 400, 'a device id the device signed in with does not choose the organisation');
  t.match(byId.body.message, /orgid.*x-device-token/);
  t.equal((await passcode({ 'x-device-token': 'not-a-token' })).status, 400);
  t.equal((await passcode({ 'x-device-token': `${orgA.orgId}.${'A'.repeat(43)}` })).status, 400, 'a well-formed token never issued');
  t.equal((await passcode({ 'x-device-token': 'x'.repeat(5000) })).status, 400, 'an overlong one');
  const header = await passcode({ ...kiosk, orgid: orgB.orgId });
  t.equal(header.status, 200, 'the orgid header still chooses');
  t.equal(header.body.orgId, orgB.orgId);
  t.match(header.body.deviceToken, TOKEN(orgB.orgId), 'and a passcode sign-in answers a device token too');
});

t.test('device token - staff only; unused for 90 days it expires and the sweep forgets it', async (t) => {
  const c = await signupCustomer(app, orgA.orgId, { email: 'guest@a.example' });
  const cs = await signIn(app, orgA.orgId, 'guest@a.example', DEFAULT_PASSWORD, { kind: 'customer' });
  t.equal(cs.status, 200);
  t.notOk('deviceToken' in cs.body, 'a customer sign-in has no device token');
  t.ok(c.token);

  const s = await signIn(app, orgA.orgId, 'owner@a.example');
  const token: string = s.body.deviceToken;
  clock.advance(89 * 24 * 60 * 60_000);
  t.equal((await passcode({ 'x-device-token': token })).status, 200, 'used within 90 days: renewed');
  clock.advance(89 * 24 * 60 * 60_000);
  t.equal((await passcode({ 'x-device-token': token })).status, 200, 'still within 90 days of its last use');
  clock.advance(91 * 24 * 60 * 60_000);
  const expired = await passcode({ 'x-device-token': token });
  t.equal(expired.status, 400, 'unused for 91 days');
  t.match(expired.body.message, /not valid/);
  await sweepExpired(app.deps);
  t.same(app.deps.store.listKv(orgA.orgId, DEVICE_TOKEN_NS), [], 'the sweep dropped every expired token');
  const fresh = await signIn(app, orgA.orgId, 'owner@a.example', DEFAULT_PASSWORD, { headers: { 'x-device-token': token } });
  t.match(fresh.body.deviceToken, TOKEN(orgA.orgId));
  t.not(fresh.body.deviceToken, token, 'an expired token is replaced by a new one');
});
