// Passcodes (PINs) and access cards (spec: Endpoints → Passcodes and access cards): setting and
// removing PINs, the employees list, card registration and status, passcode and card sign-in
// including revoked and lost cards, the base-setting switch and mode, and the device token's org.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { startTestApp } from '../helpers/app.js';
import { DEFAULT_PASSWORD, bearer, signIn, signupCustomer, signupOrg, signupStaff, type Session } from '../helpers/auth.js';
import { LeakGuard } from './leak-guard.js';

const clock = new ManualClock(Date.UTC(2026, 3, 1, 7, 0, 0));
const app = await startTestApp(t, { modules: ['auth'], clock });
const guard = new LeakGuard();
const send = guard.sender(app);
const http = guard.client(app);
guard.secret(DEFAULT_PASSWORD);
for (const pin of ['2468', '13579', '97531864', '8642']) guard.secret(pin);

const acme = await signupOrg(app, { email: 'owner@pc.example', orgName: 'Passcode Diner' }, send);
const other = await signupOrg(app, { email: 'owner@pc2.example', orgName: 'Other Diner' }, send);
await signupStaff(app, acme.orgId, acme.token, { email: 'cook@pc.example', name: 'Cody Cook', employeeId: 'E-1' }, send);
await signupStaff(app, acme.orgId, acme.token, { email: 'server@pc.example', name: 'Sara Server' }, send);

async function session(org: Session, email: string, headers: Record<string, string> = {}): Promise<Session> {
  const r = await signIn(app, org.orgId, email, DEFAULT_PASSWORD, { headers }, send);
  if (r.status !== 200) throw new Error(`sign-in ${email}: ${r.status} ${r.text}`);
  return { orgId: org.orgId, token: r.body.token, refreshToken: r.body.refreshToken, user: r.body.user };
}

let setting: StoredRecord | undefined;
/** Writes the base-setting document (a `setting` record) directly in the store. */
async function passcodeLogin(enable: boolean, mode = 'either'): Promise<void> {
  const data = { name: 'base-setting', passcodeLoginSettings: { enable, mode } };
  const rec = setting ? nextVersion(setting, { data }, clock.now()) : newRecord(acme.orgId, 'setting', data, { now: clock.now() });
  await app.deps.store.commit(new WriteBatch().putRecord(rec, setting?.version ?? 0));
  setting = rec;
}

const passcode = (body: Record<string, unknown>, headers: Record<string, string> = { orgid: acme.orgId }) =>
  http.post('/profile/user/signin/passcode', body, headers);

t.test('passcode set - own PIN, validation, employee ids, Admin for others', async (t) => {
  const cook = await session(acme, 'cook@pc.example');
  const ok = await http.post('/profile/passcode/set', { pin: '2468' }, bearer(cook));
  t.equal(ok.status, 200);
  t.same(ok.body, { userId: cook.user.id, employeeId: 'E-1', hasPasscode: true });
  const sec = app.deps.store.getRecord(acme.orgId, 'user_security', cook.user.id)?.data;
  t.match(sec?.pinHash, /^scrypt\$/, 'stored as a scrypt hash');
  t.notOk('pinHash' in (app.deps.store.getRecord(acme.orgId, 'user', cook.user.id)?.data ?? {}), 'not on the user record');

  for (const pin of ['12', '123456789', 'abcd', '12a4', 1234]) {
    const r = await http.post('/profile/passcode/set', { pin }, bearer(cook));
    t.equal(r.status, 400, `pin ${JSON.stringify(pin)}`);
    t.match(r.body.message, [/body\/pin/]);
  }
  const server = await session(acme, 'server@pc.example');
  const noEmp = await http.post('/profile/passcode/set', { pin: '13579' }, bearer(server));
  t.equal(noEmp.status, 400);
  t.match(noEmp.body.message, /employeeId is required/);
  const taken = await http.post('/profile/passcode/set', { pin: '13579', employeeId: 'E-1' }, bearer(server));
  t.equal(taken.status, 409, 'employee id of another user');
  const mine = await http.post('/profile/passcode/set', { pin: '13579', employeeId: 'E-2' }, bearer(server));
  t.equal(mine.status, 200);
  t.equal(mine.body.employeeId, 'E-2');
  t.equal(app.deps.store.getRecord(acme.orgId, 'user', server.user.id)?.data.employeeId, 'E-2');
  const forOther = await http.post('/profile/passcode/set', { pin: '8642', userId: cook.user.id }, bearer(server));
  t.equal(forOther.status, 403, 'a User setting a colleague PIN');
  const admin = await session(acme, 'owner@pc.example');
  const byAdmin = await http.post('/profile/passcode/set', { pin: '8642', userId: server.user.id }, bearer(admin));
  t.equal(byAdmin.status, 200, "an Admin sets another user's PIN");
  t.equal((await http.post('/profile/passcode/set', { pin: '8642', userId: '0123456789abcdef01234567' }, bearer(admin))).status, 404);
  t.equal((await http.post('/profile/passcode/set', { pin: '8642', employeeId: 'bad id!' }, bearer(admin))).status, 400);
  t.equal((await http.post('/profile/passcode/set', { pin: '8642' })).status, 400, 'orgid required');
  t.equal((await http.post('/profile/passcode/set', { pin: '8642' }, { orgid: acme.orgId })).status, 401, 'token required');
  const customer = await signupCustomer(app, acme.orgId, { email: 'guest@pc.example' }, send);
  t.equal((await http.post('/profile/passcode/set', { pin: '8642', employeeId: 'C1' }, bearer(customer))).status, 403, 'customers have no passcode');
});

t.test('employees - staff with their employee ids and whether a PIN is set', async (t) => {
  const cook = await session(acme, 'cook@pc.example');
  const r = await http.get('/business-made/employees', bearer(cook));
  t.equal(r.status, 200);
  t.equal(r.body.total, 3);
  const byEmail = Object.fromEntries(r.body.data.map((e: { email: string }) => [e.email, e]));
  t.match(byEmail['cook@pc.example'], { employeeId: 'E-1', hasPasscode: true, name: 'Cody Cook', roles: ['User'] });
  t.match(byEmail['server@pc.example'], { employeeId: 'E-2', hasPasscode: true });
  t.match(byEmail['owner@pc.example'], { employeeId: null, hasPasscode: false });
  const withIds = await http.get('/business-made/employees?withEmployeeId=true&pageSize=1', bearer(cook));
  t.equal(withIds.body.total, 2);
  t.equal(withIds.body.data.length, 1);
  t.equal(withIds.body.hasNext, true);
  const theirs = await http.get('/business-made/employees', bearer(other));
  t.equal(theirs.body.total, 1, 'only the own organisation');
  t.equal((await http.get('/business-made/employees', { orgid: acme.orgId, authorization: `Bearer ${other.token}` })).status, 403);
});

t.test('passcode sign-in - refused while the base-setting is missing or disabled', async (t) => {
  const none = await passcode({ employeeId: 'E-1', pin: '2468' });
  t.equal(none.status, 403, 'no base-setting document: off');
  t.match(none.body.message, /disabled/);
  await passcodeLogin(false);
  t.equal((await passcode({ employeeId: 'E-1', pin: '2468' })).status, 403, 'enable: false');
  await passcodeLogin(true);
  const ok = await passcode({ employeeId: 'E-1', pin: '2468' });
  t.equal(ok.status, 200, 'enable: true');
  t.ok(ok.body.token && ok.body.refreshToken);
  t.equal(ok.body.user.employeeId, 'E-1');
  t.equal(ok.body.orgId, acme.orgId);
  t.equal((await http.get('/profile', bearer({ orgId: acme.orgId, token: ok.body.token }))).status, 200);
});

t.test('passcode sign-in - wrong PIN or employee, validation, slow-down', async (t) => {
  const wrong = await passcode({ employeeId: 'E-2', pin: '0000' });
  t.equal(wrong.status, 401);
  const unknown = await passcode({ employeeId: 'E-404', pin: '0000' });
  t.equal(unknown.status, 401);
  t.equal(wrong.body.message, unknown.body.message, 'one message for both');
  t.equal((await passcode({ employeeId: 'E-2' })).status, 400, 'neither pin nor card');
  const badPin = await passcode({ employeeId: 'E-2', pin: '12' });
  t.equal(badPin.status, 400);
  t.match(badPin.body.message, [/body\/pin/]);
  t.equal((await passcode({ pin: '8642' })).status, 400, 'employeeId required');
  for (let i = 0; i < 4; i++) t.equal((await passcode({ employeeId: 'E-2', pin: '1111' })).status, 401);
  const blocked = await passcode({ employeeId: 'E-2', pin: '8642' });
  t.equal(blocked.status, 429, 'five failures for one employee');
  t.equal(blocked.headers['retry-after'], '30');
  clock.advance(31_000);
  t.equal((await passcode({ employeeId: 'E-2', pin: '8642' })).status, 200, 'the PIN the Admin set');
});

t.test('passcode sign-in - the organisation of the device token when orgid is absent', async (t) => {
  const device = { 'x-device-id': 'pos-terminal-7' };
  const noOrg = await passcode({ employeeId: 'E-1', pin: '2468' }, device);
  t.equal(noOrg.status, 400, 'a device id alone selects nothing');
  t.match(noOrg.body.message, /orgid/);
  t.equal((await passcode({ employeeId: 'E-1', pin: '2468' }, {})).status, 400, 'no orgid, no device token');
  const inOther = await signIn(app, other.orgId, 'owner@pc2.example', DEFAULT_PASSWORD, { headers: device }, send);
  const inAcme = await signIn(app, acme.orgId, 'owner@pc.example', DEFAULT_PASSWORD, { headers: device }, send);
  const viaDevice = await passcode({ employeeId: 'E-1', pin: '2468' }, { 'x-device-token': inAcme.body.deviceToken });
  t.equal(viaDevice.status, 200, 'the org the device token was issued for');
  t.equal(viaDevice.body.orgId, acme.orgId);
  const moved = await passcode({ employeeId: 'E-1', pin: '2468' }, { 'x-device-token': inOther.body.deviceToken });
  t.equal(moved.status, 403, "the other org's token goes to the other org, where passcode sign-in is off");
  const header = await passcode({ employeeId: 'E-1', pin: '2468' }, { 'x-device-token': inOther.body.deviceToken, orgid: acme.orgId });
  t.equal(header.status, 200, 'orgid wins over the device token');
});

t.test('cards - register, list, get; who may register', async (t) => {
  const cook = await session(acme, 'cook@pc.example');
  const server = await session(acme, 'server@pc.example');
  const admin = await session(acme, 'owner@pc.example');
  const own = await http.post('/profile/passcode/card/register', { employeeId: 'E-1', cardUid: 'CARD-AAA', label: 'blue fob' }, bearer(cook));
  t.equal(own.status, 201);
  t.match(own.body, { employeeId: 'E-1', userId: cook.user.id, cardUid: 'CARD-AAA', status: 'active', label: 'blue fob' });
  t.match(own.body.id, /^[0-9a-f]{24}$/);
  t.equal((await http.post('/profile/passcode/card/register', { employeeId: 'E-2', cardUid: 'CARD-BBB' }, bearer(cook))).status, 403, "a User registering a colleague's card");
  const byAdmin = await http.post('/profile/passcode/card/register', { employeeId: 'E-2', cardUid: 'CARD-BBB' }, bearer(admin));
  t.equal(byAdmin.status, 201);
  t.equal((await http.post('/profile/passcode/card/register', { employeeId: 'E-2', cardUid: 'CARD-AAA' }, bearer(admin))).status, 409, 'a card UID once');
  t.equal((await http.post('/profile/passcode/card/register', { employeeId: 'E-404', cardUid: 'CARD-CCC' }, bearer(admin))).status, 404, 'unknown employee');
  const bad = await http.post('/profile/passcode/card/register', { employeeId: 'E-1' }, bearer(admin));
  t.equal(bad.status, 400);
  t.match(bad.body.message, [/body\/cardUid is required/]);
  const race = await Promise.all(['E-1', 'E-2'].map((e) => http.post('/profile/passcode/card/register', { employeeId: e, cardUid: 'CARD-RACE' }, bearer(admin))));
  t.same(race.map((r) => r.status).sort(), [201, 409], 'two registrations of one card: one wins');

  const all = await http.get('/profile/passcode/cards', bearer(server));
  t.equal(all.status, 200);
  t.equal(all.body.total, 3);
  // Issue 17: a card UID signs in, so a colleague sees only its last 4 characters; the holder and
  // an Admin who may act for the holder see it whole.
  const uids = (r: { body: { data: Array<{ cardUid: string }> } }) => r.body.data.map((c) => c.cardUid).sort();
  const e1Cards = ['CARD-AAA', ...(race[0].status === 201 ? ['CARD-RACE'] : [])].sort();
  t.same(uids(await http.get('/profile/passcode/cards/E-1', bearer(admin))), e1Cards, 'the Admin sees the UIDs');
  t.same(uids(await http.get('/profile/passcode/cards/E-1', bearer(cook))), e1Cards, 'the holder sees the UIDs');
  const e1 = await http.get('/profile/passcode/cards/E-1', bearer(server));
  t.same(uids(e1), e1Cards.map((u) => (u.length > 8 ? `…${u.slice(-4)}` : '…')).sort(), 'a colleague sees them masked');
  const byUid = await http.get('/profile/passcode/card/CARD-BBB', bearer(server));
  t.equal(byUid.status, 200);
  t.equal(byUid.body.employeeId, 'E-2');
  const byId = await http.get(`/profile/passcode/card/${own.body.id}`, bearer(server));
  t.equal(byId.body.employeeId, 'E-1', 'by card id too');
  t.equal(byId.body.cardUid, '…', 'masked for a colleague');
  t.equal((await http.get(`/profile/passcode/card/${own.body.id}`, bearer(cook))).body.cardUid, 'CARD-AAA', 'whole for its holder');
  t.equal((await http.get('/profile/passcode/card/NOPE', bearer(server))).status, 404);
  t.same((await http.get('/profile/passcode/cards', bearer(other))).body.data, [], "another org sees none of these cards");
  t.equal((await http.get('/profile/passcode/card/CARD-AAA', bearer(other))).status, 404);
  t.equal((await http.get('/profile/passcode/cards', { orgid: acme.orgId })).status, 401);
});

t.test('card sign-in - active cards work; revoked and lost are refused; only Admin re-activates', async (t) => {
  const ok = await passcode({ employeeId: 'E-1', cardUid: 'CARD-AAA' });
  t.equal(ok.status, 200, 'card alone (mode either)');
  t.equal(ok.body.user.employeeId, 'E-1');
  t.equal((await passcode({ employeeId: 'E-2', cardUid: 'CARD-AAA' })).status, 401, "another employee's card");
  t.equal((await passcode({ employeeId: 'E-1', cardUid: 'CARD-ZZZ' })).status, 401, 'unknown card');
  t.equal((await passcode({ employeeId: 'E-1', cardUid: 'CARD-AAA', pin: '0000' })).status, 401, 'card and a wrong PIN');
  t.equal((await passcode({ employeeId: 'E-1', cardUid: 'CARD-AAA', pin: '2468' })).status, 200, 'card and the right PIN');

  const cook = await session(acme, 'cook@pc.example');
  const lost = await http.post('/profile/passcode/card/status', { cardUid: 'CARD-AAA', status: 'lost' }, bearer(cook));
  t.equal(lost.status, 200, 'reporting your own card lost');
  t.equal(lost.body.status, 'lost');
  const refusedLost = await passcode({ employeeId: 'E-1', cardUid: 'CARD-AAA' });
  t.equal(refusedLost.status, 403);
  t.match(refusedLost.body.message, /lost/);
  t.equal((await http.post('/profile/passcode/card/status', { cardUid: 'CARD-AAA', status: 'active' }, bearer(cook))).status, 403, 'a User cannot re-activate');
  t.equal((await http.post('/profile/passcode/card/status', { cardUid: 'CARD-BBB', status: 'revoked' }, bearer(cook))).status, 403, "a colleague's card");
  const admin = await session(acme, 'owner@pc.example');
  t.equal((await http.post('/profile/passcode/card/status', { cardUid: 'CARD-BBB', status: 'revoked' }, bearer(admin))).status, 200);
  const refusedRevoked = await passcode({ employeeId: 'E-2', cardUid: 'CARD-BBB' });
  t.equal(refusedRevoked.status, 403);
  t.match(refusedRevoked.body.message, /revoked/);
  t.equal((await passcode({ employeeId: 'E-2', cardUid: 'CARD-BBB', pin: '8642' })).status, 403, 'a revoked card with the right PIN');
  const back = await http.post('/profile/passcode/card/status', { cardUid: 'CARD-AAA', status: 'active' }, bearer(admin));
  t.equal(back.status, 200);
  t.equal((await passcode({ employeeId: 'E-1', cardUid: 'CARD-AAA' })).status, 200, 're-activated by an Admin');
  t.equal((await http.post('/profile/passcode/card/status', { cardUid: 'CARD-AAA', status: 'stolen' }, bearer(admin))).status, 400);
  t.equal((await http.post('/profile/passcode/card/status', { cardUid: 'CARD-NONE', status: 'lost' }, bearer(admin))).status, 404);
  const lostList = await http.get('/profile/passcode/cards?status=revoked', bearer(admin));
  t.same(lostList.body.data.map((c: { cardUid: string }) => c.cardUid), ['CARD-BBB']);
});

t.test('passcode sign-in - the mode decides what must be sent', async (t) => {
  await passcodeLogin(true, 'pin');
  t.equal((await passcode({ employeeId: 'E-1', cardUid: 'CARD-AAA' })).status, 400, 'mode pin: a card alone');
  t.equal((await passcode({ employeeId: 'E-1', pin: '2468' })).status, 200);
  await passcodeLogin(true, 'card');
  t.equal((await passcode({ employeeId: 'E-1', pin: '2468' })).status, 400, 'mode card: a PIN alone');
  t.equal((await passcode({ employeeId: 'E-1', cardUid: 'CARD-AAA' })).status, 200);
  await passcodeLogin(true, 'both');
  t.equal((await passcode({ employeeId: 'E-1', pin: '2468' })).status, 400, 'mode both: one of them');
  t.equal((await passcode({ employeeId: 'E-1', pin: '2468', cardUid: 'CARD-AAA' })).status, 200);
  await passcodeLogin(true, 'either');
});

t.test('passcode remove - the PIN stops working', async (t) => {
  const cook = await session(acme, 'cook@pc.example');
  const r = await http.post('/profile/passcode/remove', {}, bearer(cook));
  t.equal(r.status, 200);
  t.same(r.body, { userId: cook.user.id, hasPasscode: false, removed: true });
  t.equal((await passcode({ employeeId: 'E-1', pin: '2468' })).status, 401);
  t.equal((await http.post('/profile/passcode/remove', {}, bearer(cook))).body.removed, false, 'nothing left to remove');
  const server = await session(acme, 'server@pc.example');
  t.equal((await http.post('/profile/passcode/remove', { userId: cook.user.id }, bearer(server))).status, 403);
});

t.test('responses - never carry a password, hash, secret or code', async (t) => {
  guard.harvest(app, [acme.orgId, other.orgId]);
  guard.check(t);
});
