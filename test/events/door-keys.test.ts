// The event's door keys (issue 32): QR codes signed with an Ed25519 key of the event, checkable by a
// device holding only the public keys, a transfer voiding earlier codes, legacy HMAC codes still
// good at the server, rotation, and the keys' scope.
import t from 'tap';
import { createPublicKey, generateKeyPairSync, sign, verify } from 'node:crypto';
import { ManualClock } from '../../core/clock.js';
import { codeTag, signCode } from '../../actors/scanner/ticket-code.js';
import { tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeEvent, makeTicket, type Client } from './setup.js';

const clock = new ManualClock(Date.UTC(2026, 6, 1, 18));
const w = await eventsWorld(t, { clock });
const admin = client(w.app.url, { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'admin-1', roles: ['User', 'Admin'] })}` });

async function device(eventIds: string[]): Promise<Client> {
  const { initToken } = (await admin.post('/events/devices', { name: 'Gate', eventIds })).body;
  const r = await w.anon.post('/events/devices/initialize', { initToken });
  if (r.status !== 200) throw new Error(`initialize failed: ${r.status} ${r.text}`);
  return client(w.app.url, { orgid: w.org, authorization: `Device ${r.body.token}` });
}

const secretOf = (id: string) => w.app.deps.store.getKv<string>(w.org, 'ticket-secret', id)!;
const qr = async (c: Client, id: string) => (await c.get(`/events/tickets/${id}/qr`)).body.data as { code: string; staticCode: string };
const validate = async (code: string) => (await w.staff.post('/events/tickets/validate', { code })).body;

/** What a device does offline: the key named by the signature's kid, verified over the ticket's code tag. */
function deviceAccepts(keys: Array<{ kid: string; publicKey: string }>, code: string, tag: string): boolean {
  const [id, stamp, sig] = code.split(':');
  const key = keys.find((k) => k.kid === sig.slice(0, 8));
  if (!key) return false;
  const pub = createPublicKey({ key: { kty: 'OKP', crv: 'Ed25519', x: key.publicKey }, format: 'jwk' });
  return verify(null, Buffer.from(`${id}:${stamp}:${tag}`), pub, Buffer.from(sig.slice(8), 'base64url'));
}

/** A code of the same shape signed with a key the event never had, under the event's own kid. */
function forge(code: string, kid: string, tag: string): string {
  const [id, stamp] = code.split(':');
  const { privateKey } = generateKeyPairSync('ed25519');
  return `${id}:${stamp}:${kid}${sign(null, Buffer.from(`${id}:${stamp}:${tag}`), privateKey).toString('base64url')}`;
}

t.test('door keys - a device checks a code with only the public key: a real code passes, a forged one fails', async (t) => {
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const gate = await device([ev.id]);
  const codes = await qr(w.staff, tk.sk);
  t.match(codes.code, new RegExp(`^${tk.sk}:${clock.now()}:[A-Za-z0-9_-]{94}$`), 'the spec shape, a 94-character signature');
  t.match(codes.staticCode, new RegExp(`^${tk.sk}:S:[A-Za-z0-9_-]{94}$`));
  const r = await gate.get(`/events/${ev.id}/door-keys`);
  t.equal(r.status, 200);
  t.match(r.body, { eventId: ev.id, activeKid: codes.code.split(':')[2].slice(0, 8), keys: [{ alg: 'Ed25519', retiredAt: null, createdAt: new Date(clock.now()).toISOString() }] });
  t.equal(r.body.keys.length, 1);
  t.equal(Buffer.from(r.body.keys[0].publicKey, 'base64url').length, 32, 'the raw public key');
  t.same(Object.keys(r.body.keys[0]).sort(), ['alg', 'createdAt', 'kid', 'publicKey', 'retiredAt'], 'nothing private');
  const stored = w.app.deps.store.getKv<{ keys: Array<{ d: string }> }>(w.org, 'event-door-keys', ev.id)!;
  t.notOk(r.text.includes(stored.keys[0].d), 'the private key is in no answer');

  const tag = codeTag(secretOf(tk.sk));
  t.ok(deviceAccepts(r.body.keys, codes.code, tag), 'the dynamic code verifies on the device');
  t.ok(deviceAccepts(r.body.keys, codes.staticCode, tag), 'the static code verifies on the device');
  t.notOk(deviceAccepts(r.body.keys, forge(codes.code, r.body.activeKid, tag), tag), 'a forged code does not');
  t.notOk(deviceAccepts(r.body.keys, codes.code.replace(/:(\d+):/, (_, ts) => `:${Number(ts) + 1}:`), tag), 'a changed timestamp does not');
  t.notOk(deviceAccepts(r.body.keys, codes.code, codeTag('another secret')), 'nor under another code generation');
});

t.test('door keys - the server admits an Ed25519 dynamic code and a signed static code, refuses forged ones', async (t) => {
  const ev = await makeEvent(w.staff);
  const [a, b, c] = [await makeTicket(w.staff, ev), await makeTicket(w.staff, ev), await makeTicket(w.staff, ev)];
  const ca = await qr(w.staff, a.sk);
  const cb = await qr(w.staff, b.sk);
  await qr(w.staff, c.sk);
  const kid = ca.code.split(':')[2].slice(0, 8);
  t.match(await validate(ca.code), { valid: true, ticket: { sk: a.sk } });
  t.match(await validate(ca.staticCode), { valid: true, ticket: { sk: a.sk } });
  t.match(await validate(forge(ca.code, kid, codeTag(secretOf(a.sk)))), { valid: false, reason: 'bad_signature' }, 'a forged dynamic code');
  t.match(await validate(forge(ca.staticCode, kid, codeTag(secretOf(a.sk)))), { valid: false, reason: 'bad_signature' }, 'a forged static code');
  t.match(await validate(`${c.sk}:S:${ca.staticCode.split(':')[2]}`), { valid: false, reason: 'bad_signature' }, "another ticket's signature");
  t.match(await validate(`${a.sk}:S:${'x'.repeat(8)}${ca.staticCode.split(':')[2].slice(8)}`), { valid: false, reason: 'bad_signature' }, 'a kid the event does not have');

  // The scan names no event: the signed static code routes it to its ticket's event.
  let r = await w.staff.post('/events/checkin', { code: cb.staticCode, zone: 'main' });
  t.match(r.body, { success: true, ticket: { sk: b.sk } });
  r = await w.staff.post('/events/checkin', { code: ca.code, eventId: ev.id, zone: 'main' });
  t.match(r.body, { success: true, ticket: { sk: a.sk } });
  clock.advance(91_000);
  t.match(await validate(ca.code), { valid: false, reason: 'expired_code' }, 'a dynamic code outside the window (30 s + 60 s)');
  t.match(await validate((await qr(w.staff, c.sk)).staticCode), { valid: true }, 'a static code does not expire');
});

t.test("door keys - the attendee's QR route answers both signed codes", async (t) => {
  const ev = await makeEvent(w.staff);
  const mine = await makeTicket(w.staff, ev, { customerId: 'cust-1' });
  const codes = (await w.customer.get(`/client/events/tickets/${mine.sk}/qr`)).body.data;
  t.match(codes, { code: new RegExp(`^${mine.sk}:\\d+:[A-Za-z0-9_-]{94}$`), staticCode: new RegExp(`^${mine.sk}:S:[A-Za-z0-9_-]{94}$`) });
  t.match(await validate(codes.code), { valid: true, ticket: { sk: mine.sk } });
  t.match(await validate(codes.staticCode), { valid: true, ticket: { sk: mine.sk } });
});

t.test('door keys - a transfer voids the codes signed before it', async (t) => {
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const before = await qr(w.staff, tk.sk);
  t.equal((await w.staff.post(`/events/tickets/${tk.sk}/transfer`, { holderEmail: 'new@example.com' })).status, 200);
  t.match(await validate(before.code), { valid: false, reason: 'bad_signature' }, 'the old dynamic code');
  t.match(await validate(before.staticCode), { valid: false, reason: 'bad_signature' }, 'the old static code');
  const after = await qr(w.staff, tk.sk);
  t.not(after.staticCode, before.staticCode, 'a new static code');
  t.match(await validate(after.code), { valid: true });
  t.match(await validate(after.staticCode), { valid: true });
});

t.test('door keys - a legacy HMAC code keeps verifying at the server', async (t) => {
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  await qr(w.staff, tk.sk);
  const legacy = signCode(secretOf(tk.sk), tk.sk, clock.now() - 5000);
  t.equal(legacy.split(':')[2].length, 43);
  t.match(await validate(legacy), { valid: true, ticket: { sk: tk.sk } });
  t.match(await validate(legacy.slice(0, -2) + (legacy.endsWith('AA') ? 'BB' : 'AA')), { valid: false, reason: 'bad_signature' });
  t.match((await w.staff.post('/events/checkin', { code: legacy, zone: 'main' })).body, { success: true });
});

t.test('door keys - rotation (Admin) lists both keys and the old codes still verify', async (t) => {
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const old = await qr(w.staff, tk.sk);
  const oldKid = old.code.split(':')[2].slice(0, 8);
  t.equal((await w.staff.post(`/events/${ev.id}/door-keys/rotate`)).status, 403, 'staff without Admin');
  clock.advance(1000);
  const r = await admin.post(`/events/${ev.id}/door-keys/rotate`);
  t.equal(r.status, 200);
  t.not(r.body.activeKid, oldKid);
  t.match(r.body.keys, [
    { kid: r.body.activeKid, retiredAt: null },
    { kid: oldKid, retiredAt: new Date(clock.now()).toISOString() },
  ]);
  t.same((await w.staff.get(`/events/${ev.slug}/door-keys`)).body, r.body, 'the list, by slug too');
  t.match(await validate(old.code), { valid: true }, 'a dynamic code of the retired key');
  t.match(await validate(old.staticCode), { valid: true }, 'a static code of the retired key');
  const tag = codeTag(secretOf(tk.sk));
  t.ok(deviceAccepts(r.body.keys, old.staticCode, tag), 'and on the device');
  const now = await qr(w.staff, tk.sk);
  t.equal(now.code.split(':')[2].slice(0, 8), r.body.activeKid, 'new codes are signed with the new key');
  t.not(now.staticCode, old.staticCode, 'the static code is signed again');
  t.ok(deviceAccepts(r.body.keys, now.staticCode, tag));
  t.match(await validate(now.staticCode), { valid: true });
});

t.test('door keys - at most 8 keys: the oldest retired key goes once its dynamic codes are dead', async (t) => {
  const ev = await makeEvent(w.staff);
  const tk = await makeTicket(w.staff, ev);
  const first = await qr(w.staff, tk.sk);
  for (let i = 0; i < 7; i++) t.equal((await admin.post(`/events/${ev.id}/door-keys/rotate`)).status, 200);
  t.equal((await w.staff.get(`/events/${ev.id}/door-keys`)).body.keys.length, 8);
  const r = await admin.post(`/events/${ev.id}/door-keys/rotate`);
  t.equal(r.status, 409, 'the oldest was retired less than the window + skew ago');
  t.match(r.body.message, /dynamic codes may still be live/);
  t.match(await validate(first.staticCode), { valid: true });
  clock.advance(91_000);
  const keys = (await admin.post(`/events/${ev.id}/door-keys/rotate`)).body.keys as Array<{ kid: string }>;
  t.equal(keys.length, 8);
  t.notOk(keys.some((k) => k.kid === first.code.split(':')[2].slice(0, 8)), 'the first key is dropped');
  t.match(await validate(first.staticCode), { valid: false, reason: 'bad_signature' }, 'its static code with it');
  t.match(await validate((await qr(w.staff, tk.sk)).staticCode), { valid: true }, 'a fresh one verifies');
});

t.test('door keys - a device of another event gets 403, and no device rotates', async (t) => {
  const a = await makeEvent(w.staff, { name: 'Event A' });
  const b = await makeEvent(w.staff, { name: 'Event B' });
  const gate = await device([a.id]);
  t.equal((await gate.get(`/events/${a.id}/door-keys`)).status, 200);
  const r = await gate.get(`/events/${b.id}/door-keys`);
  t.equal(r.status, 403);
  t.match(r.body.message, /not enrolled for event/);
  t.equal((await gate.post(`/events/${a.id}/door-keys/rotate`)).status, 403);
  t.equal((await w.staff.get(`/events/${'f'.repeat(24)}/door-keys`)).status, 404);
  t.equal((await w.customer.get(`/events/${a.id}/door-keys`)).status, 403);
  t.equal((await w.other.get(`/events/${a.id}/door-keys`)).status, 404, "another organisation's staff");
});
