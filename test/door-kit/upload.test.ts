// The door kit's queue and upload (issue 32): scans kept across a restart of the app (JSON-file
// storage), uploaded in batches of at most 500 with the same nonces when an answer was lost,
// conflicts and bad items read from each slot of the answer, and the kit's own entries handed to
// the feed once it counts them.
import { statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { DoorKit, JsonFileStorage, type Fetch } from '../../clients/door-kit/index.js';
import { tempDir } from '../helpers/app.js';
import { eventKey, fakeEvent, fakeServer, feedList, feedTicket } from './hand-feed.js';

const NOW = Date.UTC(2026, 6, 1, 18);
const EV = 'e'.repeat(24);

t.test('door kit - a restarted app keeps its device, cursor, queue and door memory (JSON files)', async (t) => {
  const dir = tempDir(t);
  const a = feedTicket();
  const ev = fakeEvent(EV, eventKey('kid00001'), { tickets: [a, feedTicket(), feedTicket()] });
  const server = fakeServer({ [EV]: ev });
  const open = () => DoorKit.open({ baseUrl: 'http://door.test', orgId: 'acme', fetch: server.fetch, now: () => NOW, storage: new JsonFileStorage(dir) });
  const first = await open();
  await first.enrol('bpdi_x');
  await first.sync();
  server.online = false;
  // Two scans at once: their writes of the queue go one after the other.
  const [one, two] = await Promise.all([first.scan({ code: a.number }), first.scan({ code: 'NOPE' })]);
  t.match(one, { admitted: true });
  t.match(two, { admitted: false, reason: 'invalid_code' });

  const again = await open();
  t.equal(again.device?.deviceId, 'dev-1', 'enrolled still');
  t.equal(statSync(join(dir, 'device.json')).mode & 0o777, 0o600, 'the file with the device token is the user’s alone');
  t.equal(again.queued, 2, 'the queue survived');
  t.match(again.decide({ code: a.number }), { admitted: false, reason: 'already_checked_in' }, 'what it let in before the restart');
  server.online = true;
  await again.sync();
  t.equal(server.calls.at(-1), `GET /events/${EV}/door-feed?limit=500&since=c0`, 'the saved cursor: a delta, not a full sync');
  const report = await again.upload();
  t.match(report, { uploaded: 2, left: 0, offline: false });
  t.match(server.uploads[0].scans, [
    { code: a.number, eventId: EV, offline: true, decision: 'admitted', checkpoint: 'north' },
    { code: 'NOPE', offline: true, decision: 'denied', reason: 'invalid_code' },
  ]);
  t.equal(server.uploads[0].scans[0].scannedAt, new Date(NOW).toISOString(), 'the scan’s own time');
  t.equal((await open()).queued, 0, 'the emptied queue is saved');
});

t.test('door kit - uploads in batches of 500, resends the same nonces after a lost answer, reads each slot', async (t) => {
  const tickets = Array.from({ length: 501 }, () => feedTicket());
  const ev = fakeEvent(EV, eventKey('kid00001'), { tickets, lists: [feedList('door')] });
  const server = fakeServer({ [EV]: ev }, 500);
  let lose = false;
  const fetch: Fetch = async (url, init) => {
    const res = await server.fetch(url, init);
    // The server took the batch; the answer never arrived.
    if (lose) throw new TypeError('socket hang up');
    return res;
  };
  const kit = await DoorKit.open({ baseUrl: 'http://door.test', orgId: 'acme', fetch, now: () => NOW });
  await kit.enrol('bpdi_x');
  await kit.sync();
  server.online = false;
  for (const tk of tickets) await kit.scan({ code: tk.number, listId: 'door' });
  t.equal(kit.queued, 501);
  t.match(await kit.upload(), { offline: true, uploaded: 0, left: 501 }, 'no network: everything stays queued');

  server.online = true;
  lose = true;
  t.match(await kit.upload(), { offline: true, left: 501 });
  lose = false;
  server.answer = (items) =>
    items.map((i, k) =>
      k === 3
        ? { success: true, offline: true, conflict: true, conflictReason: 'already_checked_in', ticketId: tickets[3].id }
        : k === 4
          ? { success: false, error: { statusCode: 400, error: 'Bad Request', message: 'body/scans/4/zone is not a zone' } }
          : { success: true, offline: true },
    );
  const report = await kit.upload();
  t.same(server.uploads.map((u) => u.scans.length), [500, 500, 1], 'at most 500 per batch; the lost one sent again');
  t.same(server.uploads[1].scans.map((s: any) => s.nonce), server.uploads[0].scans.map((s: any) => s.nonce), 'with the same nonces');
  t.equal(new Set(server.uploads[1].scans.map((s: any) => s.nonce)).size, 500, 'a nonce per scan');
  t.match(report, { uploaded: 500, left: 0, offline: false, rejected: [{ message: 'body/scans/4/zone is not a zone' }] });
  t.match(report.conflicts, [{ ticketId: tickets[3].id, conflictReason: 'already_checked_in', eventId: EV }], 'the conflict of slot 3');
  t.equal(kit.conflicts.length, 1, 'kept for the app');
  t.equal(kit.queued, 0);
});

t.test('door kit - the kit’s entries count until a feed page after the upload carries the ticket', async (t) => {
  const a = feedTicket();
  const ev = fakeEvent(EV, eventKey('kid00001'), { tickets: [a, feedTicket()], lists: [feedList('door', { allowReentry: true })] });
  const server = fakeServer({ [EV]: ev });
  const kit = await DoorKit.open({ baseUrl: 'http://door.test', orgId: 'acme', fetch: server.fetch, now: () => NOW });
  await kit.enrol('bpdi_x');
  await kit.sync();
  await kit.scan({ code: a.number, listId: 'door' });
  await kit.sync();
  t.match(kit.decide({ code: a.number, listId: 'door' }), { reason: 'already_checked_in' }, 'not uploaded: still the kit’s');
  await kit.upload();
  t.match(kit.decide({ code: a.number, listId: 'door' }), { reason: 'already_checked_in' }, 'uploaded, the feed has not said so yet');
  // The server let it out meanwhile: the feed says one entry, not inside; re-entry is on.
  ev.deltas.set('c0', { tickets: [{ ...a, checkedIn: true, lists: { door: { entries: 1, inside: false } } }], revoked: [], lists: [] });
  await kit.sync();
  t.match(kit.decide({ code: a.number, listId: 'door' }), { admitted: true }, 'the feed’s count replaced the kit’s entry');
});

t.test('door kit - a 503 (a server stopping, a proxy without its server) is offline: the queue stays', async (t) => {
  const a = feedTicket();
  const server = fakeServer({ [EV]: fakeEvent(EV, eventKey('kid00001'), { tickets: [a] }) });
  let unavailable = false;
  const fetch: Fetch = async (url, init) =>
    unavailable ? { status: 503, text: async () => JSON.stringify({ statusCode: 503, error: 'Service Unavailable', message: 'the server is shutting down' }) } : server.fetch(url, init);
  const kit = await DoorKit.open({ baseUrl: 'http://door.test', orgId: 'acme', fetch, now: () => NOW });
  await kit.enrol('bpdi_x');
  await kit.sync();
  unavailable = true;
  await t.rejects(kit.sync(), { name: 'KitOfflineError', status: 503 });
  t.match(await kit.scan({ code: a.number }), { admitted: true });
  t.match(await kit.upload(), { offline: true, uploaded: 0, left: 1 });
  unavailable = false;
  t.match(await kit.upload(), { offline: false, uploaded: 1, left: 0 });
});
