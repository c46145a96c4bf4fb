// Enrolled scanner devices (issue 31): enrolment by an Admin, a single-use initialization token for
// a long-lived device token, scans stamped with the device, its list and checkpoint, its events as
// its scope, revocation, and the device credential refused everywhere but at the door.
import t from 'tap';
import { ManualClock } from '../../core/clock.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { eventsWorld, makeEvent, makeTicket, type Client } from './setup.js';

const clock = new ManualClock(Date.UTC(2026, 6, 1, 18));
// Auth too: its routes are among those a device token is refused on.
const w = await eventsWorld(t, { clock, modules: ['events', 'records', 'auth'] });
const admin = client(w.app.url, { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'admin-1', roles: ['User', 'Admin'] })}` });

async function enroll(body: Record<string, unknown>): Promise<{ sk: string; initToken: string }> {
  const r = await admin.post('/events/devices', body);
  if (r.status !== 201) throw new Error(`enroll failed: ${r.status} ${r.text}`);
  return r.body;
}

/** Enrolls and initializes a device: a client sending its token as `Authorization: Device`. */
async function device(body: Record<string, unknown>): Promise<{ id: string; token: string; c: Client }> {
  const { initToken } = await enroll(body);
  const r = await w.anon.post('/events/devices/initialize', { initToken });
  if (r.status !== 200) throw new Error(`initialize failed: ${r.status} ${r.text}`);
  return { id: r.body.deviceId, token: r.body.token, c: client(w.app.url, { orgid: w.org, authorization: `Device ${r.body.token}` }) };
}

function lastScan(eventId: string): any {
  const log = w.app.deps.store.readLog<any>(w.org, `scan:${eventId}`);
  return log[log.length - 1].entry;
}

t.test('scanner devices - a device scan is stamped with its deviceId, list and checkpoint', async (t) => {
  const ev = await makeEvent(w.staff, { name: 'Device night' });
  const door = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Front door', zones: ['main'] })).body;
  const other = (await w.staff.post(`/events/${ev.id}/checkin-lists`, { name: 'Side door' })).body;

  t.equal((await w.staff.post('/events/devices', { name: 'Gate 1' })).status, 403, 'enrolment needs role Admin');
  const { sk, initToken } = await enroll({ name: 'Gate 1', listId: door.sk, checkpoint: 'north' });
  t.match(initToken, /^bpdi_[A-Za-z0-9_-]{43}$/);
  const init = await w.anon.post('/events/devices/initialize', { initToken, hardwareId: 'ipad-7' });
  t.equal(init.status, 200);
  t.equal(init.body.deviceId, sk);
  t.ok(init.body.token.length >= 43, 'the device token carries at least 32 random bytes');
  t.match(init.body.device, { status: 'active', eventIds: [ev.id], listId: door.sk, checkpoint: 'north', hardwareId: 'ipad-7' }, "a list without eventIds scopes the device to the list's event");
  const dev = client(w.app.url, { orgid: w.org, authorization: `Device ${init.body.token}` });

  const t1 = await makeTicket(w.staff, ev);
  const r = await dev.post('/events/checkin', { code: t1.data.number, deviceId: 'typed-by-the-client' });
  t.same([r.status, r.body.success, r.body.ticket?.data.zone], [200, true, 'main']);
  t.match(lastScan(ev.id), { ok: true, device: sk, by: sk, list: door.sk, checkpoint: 'north', zone: 'main' }, 'its own id, list and checkpoint, never the typed deviceId');

  const t2 = await makeTicket(w.staff, ev);
  t.equal((await dev.post('/events/checkin', { code: t2.data.number, listId: other.sk, checkpoint: 'south' })).body.success, true);
  t.match(lastScan(ev.id), { device: sk, list: other.sk, checkpoint: 'south' }, 'a list of its event and a checkpoint the scan names win');

  const viaHeader = client(w.app.url, { orgid: w.org, 'x-device-token': init.body.token });
  t.equal((await viaHeader.post('/events/tickets/validate', { code: t1.data.number })).body.reason, 'already_checked_in', 'x-device-token works too, validate on its list');
  const batch = await viaHeader.post('/events/checkin/batch', { scans: [{ code: t2.data.number, direction: 'out' }, { code: 'NOPE-123' }] });
  t.same(batch.body.results.map((x: any) => x.reason ?? x.success), ['not_checked_in', 'invalid_code'], 'batch scans go to its list (t2 is inside on the side door only)');
  t.match(lastScan(ev.id), { device: sk, list: door.sk, checkpoint: 'north' });
  t.equal((await dev.get(`/events/${ev.id}/tickets`)).status, 200, 'its event’s ticket list');
  t.equal((await dev.get(`/events/tickets/lookup/${ev.id}?q=${t1.data.number}`)).body.data.length, 1, 'and lookup');

  // Counted in memory, not written per scan: the stored device has not moved, the list shows it.
  t.equal(w.app.deps.store.getKv<any>(w.org, 'scanner_device', sk).scanCount, 0, 'no store write per scan');
  const list = await admin.get('/events/devices');
  t.equal(list.status, 200);
  const row = list.body.data.find((d: any) => d.sk === sk);
  t.match(row, { name: 'Gate 1', status: 'active', scanCount: 4, lastSeenAt: new Date(clock.now()).toISOString(), revokedAt: null });
  t.notMatch(list.text, init.body.token, 'never a token');
  t.notMatch(list.text, initToken);
  // Written behind within a few seconds.
  const until = Date.now() + 8000;
  while (w.app.deps.store.getKv<any>(w.org, 'scanner_device', sk).scanCount === 0 && Date.now() < until) await new Promise((r) => setTimeout(r, 200));
  t.match(w.app.deps.store.getKv<any>(w.org, 'scanner_device', sk), { scanCount: 4, lastSeenAt: clock.now() }, 'flushed by the node');
});

t.test('scanner devices - a device undoes its own scans at its own events, no one else’s', async (t) => {
  const ev = await makeEvent(w.staff, { name: 'Undo night' });
  const elsewhere = await makeEvent(w.staff, { name: 'Elsewhere' });
  const gate = await device({ name: 'Gate U', eventIds: [ev.id] });
  const other = await device({ name: 'Gate V', eventIds: [ev.id] });
  const mine = await makeTicket(w.staff, ev);
  const theirs = await makeTicket(w.staff, ev);
  t.equal((await gate.c.post('/events/checkin', { code: mine.data.number, nonce: 'u-1' })).body.success, true);
  t.equal((await other.c.post('/events/checkin', { code: theirs.data.number, nonce: 'v-1' })).body.success, true);
  const staffScan = await makeTicket(w.staff, ev);
  t.equal((await w.staff.post('/events/checkin', { code: staffScan.data.number, eventId: ev.id, nonce: 's-1' })).body.success, true);

  t.equal((await gate.c.post('/events/checkin/annul', { nonce: 'v-1', eventId: ev.id })).status, 403, "another device's scan");
  t.equal((await gate.c.post('/events/checkin/annul', { nonce: 's-1', eventId: ev.id })).status, 403, "a staff member's scan");
  t.equal((await gate.c.post('/events/checkin/annul', { nonce: 'u-1', eventId: elsewhere.id })).status, 403, 'an event it is not enrolled for');
  const undone = await gate.c.post('/events/checkin/annul', { nonce: 'u-1', eventId: ev.id });
  t.equal(undone.status, 200, 'its own scan');
  t.match(undone.body.scan, { annulled: true, deviceId: gate.id });
  t.equal((await gate.c.post('/events/checkin', { code: mine.data.number })).body.success, true, 'the ticket enters again');
});


t.test('scanner devices - a device of event A is refused on event B (403) and after revoke (401)', async (t) => {
  const a = await makeEvent(w.staff, { name: 'Event A' });
  const b = await makeEvent(w.staff, { name: 'Event B' });
  const listB = (await w.staff.post(`/events/${b.id}/checkin-lists`, { name: 'B door' })).body;
  t.equal((await admin.post('/events/devices', { name: 'Mixed', eventIds: [a.id], listId: listB.sk })).status, 400, 'a list of none of its events');
  t.equal((await admin.post('/events/devices', { name: 'Lost', eventIds: ['no-such-event'] })).status, 404, 'an unknown event');
  const { id, c } = await device({ name: 'A gate', eventIds: [a.slug], checkpoint: 'east' });
  const ta = await makeTicket(w.staff, a);
  const tb = await makeTicket(w.staff, b);

  let r = await c.post('/events/checkin', { code: tb.data.number, eventId: b.id });
  t.equal(r.status, 403, 'a scan naming event B');
  t.match(r.body.message, /not enrolled for event/);
  t.equal((await c.post('/events/checkin', { code: tb.data.number, listId: listB.sk })).status, 403, "a scan naming B's list");
  t.equal((await c.post('/events/tickets/validate', { code: tb.data.number, eventId: b.id })).status, 403, 'validate at B');
  t.equal((await c.post('/events/checkin/batch', { scans: [{ code: ta.data.number }, { code: tb.data.number, eventId: b.id }] })).status, 403, 'a batch with a scan at B');
  t.equal((await c.get(`/events/${b.id}/tickets`)).status, 403, "B's tickets");
  t.equal((await c.get(`/events/tickets/lookup/${b.id}?q=${tb.data.number}`)).status, 403, "B's lookup");
  r = await c.post('/events/checkin', { code: tb.data.number });
  t.same([r.status, r.body.success, r.body.reason], [200, false, 'wrong_event'], "a B ticket scanned with no event goes to its one event's door");
  t.match(lastScan(a.id), { reason: 'wrong_event', device: id, checkpoint: 'east' });
  t.equal((await c.post('/events/checkin', { code: ta.data.number })).body.success, true, 'its own event');

  const staffRevoke = await w.staff.post(`/events/devices/${id}/revoke`);
  t.equal(staffRevoke.status, 403, 'revocation needs role Admin');
  const rev = await admin.post(`/events/devices/${id}/revoke`);
  t.match(rev.body, { sk: id, status: 'revoked', revokedAt: new Date(clock.now()).toISOString() });
  r = await c.post('/events/checkout', { code: ta.data.number });
  t.equal(r.status, 401, 'refused at once');
  t.match(r.body.message, /revoked/);
  t.equal((await c.get(`/events/${a.id}/tickets`)).status, 401);
  t.equal((await admin.post(`/events/devices/${id}/revoke`)).body.revokedAt, rev.body.revokedAt, 'revoking again answers the same');
  t.equal((await admin.post(`/events/devices/${'c'.repeat(24)}/revoke`)).status, 404);

  // A revocation another node wrote arrives as a store write (the commit stream): a node rereads a
  // device token it resolved at most a second before.
  const far = await device({ name: 'A gate 2', eventIds: [a.id] });
  const probe = () => far.c.post('/events/tickets/validate', { code: ta.data.number }).then((x) => x.status);
  t.equal(await probe(), 200);
  const stored = w.app.deps.store.getKv<any>(w.org, 'scanner_device', far.id);
  await w.app.deps.store.commit(new WriteBatch().putKv(w.org, 'scanner_device', far.id, { ...stored, revokedAt: clock.now() }));
  t.equal(await probe(), 200, 'within the second the node trusts what it read');
  clock.advance(1000);
  t.equal(await probe(), 401, 'refused once it reads the store again');
});

t.test('scanner devices - a device token is refused on every route that is not the door', async (t) => {
  const ev = await makeEvent(w.staff, { name: 'Locked night' });
  const { c, token } = await device({ name: 'Nosy', eventIds: [ev.id] });
  const refused: Array<[string, string, unknown?]> = [
    ['POST', '/repository/find/ticket', {}],
    ['POST', '/events', { name: 'Mine now' }],
    ['GET', '/events'],
    ['GET', `/events/${ev.id}`],
    ['GET', `/events/${ev.id}/checkin-stats`],
    ['GET', '/events/devices'],
    ['POST', '/events/devices', { name: 'Another' }],
    ['POST', `/events/${ev.id}/tickets`, { ticketTypeId: ev.types.General }],
    ['GET', '/profile'],
    ['GET', '/client-data/orders'],
    ['POST', '/profile/app/key', { appId: 'x', secret: 'y' }],
  ];
  for (const [method, path, body] of refused) {
    const r = method === 'GET' ? await c.get(path) : await c.post(path, body);
    t.equal(r.status, 403, `${method} ${path}`);
  }
  const bad = client(w.app.url, { orgid: w.org, authorization: `Device ${token}x` });
  t.equal((await bad.post('/events/checkin', { code: 'X-1234' })).status, 401, 'an unknown device token');
  const foreign = client(w.app.url, { orgid: 'globex', authorization: `Device ${token}` });
  t.equal((await foreign.post('/events/checkin', { code: 'X-1234' })).status, 401, "another organisation's orgid");
});

t.test('scanner devices - the initialization token is single use and expires after 24 hours', async (t) => {
  const ev = await makeEvent(w.staff, { name: 'Init night' });
  const first = await enroll({ name: 'Once', eventIds: [ev.id] });
  const late = await enroll({ name: 'Late', eventIds: [ev.id] });
  const revoked = await enroll({ name: 'Revoked', eventIds: [ev.id] });
  t.equal((await w.anon.post('/events/devices/initialize', { initToken: first.initToken })).status, 200);
  const again = await w.anon.post('/events/devices/initialize', { initToken: first.initToken });
  t.equal(again.status, 401, 'a used token');
  t.notOk(again.body.token);
  const stored = JSON.stringify(w.app.deps.store.listKv(w.org, 'scanner_device_init'));
  t.notMatch(stored, late.initToken, 'only digests are stored');

  await admin.post(`/events/devices/${revoked.sk}/revoke`);
  t.equal((await w.anon.post('/events/devices/initialize', { initToken: revoked.initToken })).status, 401, "a revoked device's pending token");
  t.equal((await w.anon.post('/events/devices/initialize', { initToken: 'bpdi_made-up' })).status, 401, 'an unknown token');
  t.equal((await client(w.app.url, { orgid: 'globex' }).post('/events/devices/initialize', { initToken: late.initToken })).status, 401, "another organisation's orgid");

  // Last in this file: every access token signed before is expired after this.
  clock.advance(24 * 60 * 60 * 1000);
  const expired = await w.anon.post('/events/devices/initialize', { initToken: late.initToken });
  t.equal(expired.status, 401, 'expired after 24 h');
  t.match(expired.body.message, /expired/);
  const fresh = client(w.app.url, { orgid: w.org, authorization: `Bearer ${tokenFor(w.app, { org: w.org, sub: 'admin-1', roles: ['User', 'Admin'] })}` });
  t.match((await fresh.get('/events/devices')).body.data.find((d: any) => d.sk === late.sk), { status: 'pending', initializedAt: null });
});

t.test('scanner devices - the activity counted since the last flush is written when the node stops', async (t) => {
  const dataDir = tempDir(t);
  const node = await eventsWorld(t, { dataDir });
  const nodeAdmin = client(node.app.url, { orgid: node.org, authorization: `Bearer ${tokenFor(node.app, { org: node.org, sub: 'admin-1', roles: ['User', 'Admin'] })}` });
  const ev = await makeEvent(node.staff, { name: 'Last call' });
  const { sk, initToken } = (await nodeAdmin.post('/events/devices', { name: 'Gate 9', eventIds: [ev.id] })).body;
  const { token } = (await node.anon.post('/events/devices/initialize', { initToken })).body;
  const dev = client(node.app.url, { orgid: node.org, authorization: `Device ${token}` });
  const ticket = await makeTicket(node.staff, ev);
  t.equal((await dev.post('/events/checkin', { code: ticket.data.number })).body.success, true);
  t.equal(node.app.deps.store.getKv<any>(node.org, 'scanner_device', sk).scanCount, 0, 'not written yet');
  await node.app.close();

  const again = await eventsWorld(t, { dataDir });
  t.match(again.app.deps.store.getKv<any>(again.org, 'scanner_device', sk), { scanCount: 1 }, 'written by the stopping node');
});
