// The door kit's offline decisions on a hand-built feed (issue 32): signed codes checked with the
// event's public key alone (valid, forged, expired, an earlier code generation, an unknown key),
// plain static codes, and each rule of the check-in lists and the ticket's state, with the
// network gone after the sync.
import t from 'tap';
import { DoorKit } from '../../clients/door-kit/index.js';
import { codeTag, eventKey, fakeEvent, fakeServer, feedEvent, feedList, feedTicket } from './hand-feed.js';

// Wednesday 1 July 2026, 18:00 UTC: already Thursday 06:00 in Auckland.
const NOW = Date.UTC(2026, 6, 1, 18);
const EV = 'e'.repeat(24);
const OTHER = 'f'.repeat(24);

async function kitFor(events: Parameters<typeof fakeServer>[0], now = () => NOW) {
  const server = fakeServer(events);
  const kit = await DoorKit.open({ baseUrl: 'http://door.test', orgId: 'acme', fetch: server.fetch, now });
  await kit.enrol('bpdi_x');
  await kit.sync([...Object.keys(events)]);
  server.online = false;
  return { kit, server };
}

t.test('door kit rules - signed codes verify with the public key alone: valid, forged, expired, an earlier generation, an unknown key', async (t) => {
  const key = eventKey('kid00001');
  const stranger = eventKey('kid00001');
  const a = feedTicket();
  const b = feedTicket();
  const moved = feedTicket({ codeTag: codeTag('after-transfer') });
  const { kit } = await kitFor({ [EV]: fakeEvent(EV, key, { tickets: [a, b, moved] }) });

  const fresh = key.dynamic(a.id, NOW - 5_000, a.codeTag!);
  t.match(await kit.scan({ code: fresh }), { admitted: true, ticket: { id: a.id } }, 'a fresh dynamic code admits offline');
  t.match(await kit.scan({ code: key.dynamic(a.id, NOW, a.codeTag!) }), { admitted: false, reason: 'already_checked_in' }, 'the kit does not admit it twice');
  t.match(kit.decide({ code: key.static(b.id, b.codeTag!) }), { admitted: true, ticket: { id: b.id } }, 'a signed static code admits');

  const forged = stranger.dynamic(b.id, NOW, b.codeTag!);
  t.match(kit.decide({ code: forged }), { admitted: false, reason: 'bad_signature', ticket: undefined }, 'signed by another key with the same id: forged (no ticket, as the server answers)');
  t.match(kit.decide({ code: stranger.static(b.id, b.codeTag!) }), { admitted: false, reason: 'bad_signature' }, 'a forged static code');
  const tampered = key.dynamic(b.id, NOW, b.codeTag!).replace(`:${NOW}:`, `:${NOW - 1}:`);
  t.match(kit.decide({ code: tampered }), { admitted: false, reason: 'bad_signature' }, 'a timestamp changed after signing');
  t.match(kit.decide({ code: key.dynamic(b.id, NOW - 91_000, b.codeTag!) }), { admitted: false, reason: 'expired_code' }, 'older than the window (30 s) plus skew (60 s)');
  t.match(kit.decide({ code: key.dynamic(b.id, NOW - 89_000, b.codeTag!) }), { admitted: true }, 'inside window plus skew');
  t.match(kit.decide({ code: key.dynamic(b.id, NOW + 61_000, b.codeTag!) }), { admitted: false, reason: 'expired_code' }, 'too far in the future');
  t.match(kit.decide({ code: key.dynamic(moved.id, NOW, codeTag('before-transfer')) }), { admitted: false, reason: 'bad_signature' }, 'a code of the earlier generation (the tag changed on transfer)');
  t.match(kit.decide({ code: key.static(moved.id, moved.codeTag!) }), { admitted: true }, 'the current generation admits');
  const otherKid = eventKey('kid00002');
  t.match(kit.decide({ code: otherKid.dynamic(b.id, NOW, b.codeTag!) }), { admitted: false, reason: 'bad_signature' }, 'a key id the event does not have');
  t.match(kit.decide({ code: `${b.id}:${NOW}:${'A'.repeat(43)}` }), { admitted: false, reason: 'bad_signature' }, 'a legacy HMAC code cannot be checked offline');
  t.match(kit.decide({ code: key.dynamic('0'.repeat(24), NOW, 'whatever') }), { admitted: false, reason: 'invalid_code' }, 'a ticket the feed does not have');
});

t.test('door kit rules - plain static codes, the ticket state and another event', async (t) => {
  const key = eventKey('kid00001');
  const ok = feedTicket({ number: 'Gate-Ab12' });
  const refunded = feedTicket();
  const cancelled = feedTicket({ status: 'cancelled' });
  const deleted = feedTicket();
  const inactive = feedTicket({ requiresActivation: true });
  const activated = feedTicket({ requiresActivation: true, activated: true });
  const used = feedTicket({ status: 'checked_in', checkedIn: true });
  const elsewhere = feedTicket();
  const revoked = [
    { id: refunded.id, reason: 'refunded' as const, at: '2026-07-01T10:00:00.000Z' },
    { id: deleted.id, reason: 'deleted' as const, at: '2026-07-01T10:00:00.000Z' },
  ];
  const { kit } = await kitFor({
    [EV]: fakeEvent(EV, key, { tickets: [ok, refunded, cancelled, deleted, inactive, activated, used], revoked }),
    [OTHER]: fakeEvent(OTHER, eventKey('kid00009'), { event: feedEvent(OTHER), tickets: [elsewhere] }),
  });
  t.match(kit.decide({ code: 'gate-AB12', eventId: EV }), { admitted: true, ticket: { id: ok.id } }, 'the number, case-blind');
  t.match(kit.decide({ code: refunded.number, eventId: EV }), { admitted: false, reason: 'refunded' }, 'refunded before the sync (revoked)');
  t.match(kit.decide({ code: key.static(refunded.id, refunded.codeTag!), eventId: EV }), { admitted: false, reason: 'refunded' }, 'its signed code too');
  t.match(kit.decide({ code: cancelled.number, eventId: EV }), { admitted: false, reason: 'cancelled' });
  t.match(kit.decide({ code: deleted.number, eventId: EV }), { admitted: false, reason: 'invalid_code' }, 'deleted: no such ticket');
  t.match(kit.decide({ code: inactive.number, eventId: EV }), { admitted: false, reason: 'not_active' });
  t.match(kit.decide({ code: activated.number, eventId: EV }), { admitted: true });
  t.match(kit.decide({ code: used.number, eventId: EV }), { admitted: false, reason: 'already_checked_in' }, 'entered before the sync, re-entry off');
  t.match(kit.decide({ code: elsewhere.number, eventId: EV }), { admitted: false, reason: 'wrong_event', ticket: { id: elsewhere.id } }, 'a ticket of the other synced event');
  t.match(kit.decide({ code: 'NOPE-1', eventId: EV }), { admitted: false, reason: 'invalid_code' });
  t.throws(() => kit.decide({ code: ok.number }), /name the event/, 'two events synced: the scan names one');
});

t.test('door kit rules - each check-in list rule, with the feed counts and the kit’s own entries', async (t) => {
  const key = eventKey('kid00001');
  const ga = feedTicket();
  const vip = feedTicket({ ticketTypeId: 'type-vip' });
  const outOnce = feedTicket({ lists: { reentry: { entries: 1, inside: false } } });
  const outOnceNoRe = feedTicket({ lists: { strict: { entries: 1, inside: false } } });
  const insideAlready = feedTicket({ lists: { reentry: { entries: 1, inside: true } } });
  const twice = feedTicket({ lists: { multi: { entries: 2, inside: true } } });
  const daily = feedTicket();
  const lists = [
    feedList('vip-only', { ticketTypeIds: ['type-vip'] }),
    feedList('later', { rules: { validFrom: '2026-07-01T19:00:00.000Z' } }),
    feedList('over', { rules: { validUntil: '2026-07-01T17:59:59.000Z' } }),
    feedList('thursday', { rules: { weekdays: [4] } }),
    feedList('wednesday', { rules: { weekdays: [3] } }),
    feedList('reentry', { allowReentry: true }),
    feedList('strict'),
    feedList('multi', { allowMultipleEntries: true, rules: { maxEntries: 3 } }),
    feedList('daily', { allowMultipleEntries: true, rules: { maxEntriesPerDay: 2 } }),
  ];
  let now = NOW;
  const { kit } = await kitFor({ [EV]: fakeEvent(EV, key, { event: feedEvent(EV, { timezone: 'Pacific/Auckland' }), tickets: [ga, vip, outOnce, outOnceNoRe, insideAlready, twice, daily], lists }) }, () => now);

  t.match(kit.decide({ code: ga.number, listId: 'vip-only' }), { admitted: false, reason: 'product' });
  t.match(kit.decide({ code: vip.number, listId: 'vip-only' }), { admitted: true });
  t.match(kit.decide({ code: ga.number, listId: 'later' }), { admitted: false, reason: 'invalid_time' }, 'before validFrom');
  t.match(kit.decide({ code: ga.number, listId: 'over' }), { admitted: false, reason: 'invalid_time' }, 'after validUntil');
  t.match(kit.decide({ code: ga.number, listId: 'thursday' }), { admitted: true }, 'Thursday in the event’s time zone');
  t.match(kit.decide({ code: ga.number, listId: 'wednesday' }), { admitted: false, reason: 'invalid_time' }, 'Wednesday in UTC is not the event’s day');
  t.match(kit.decide({ code: outOnce.number, listId: 'reentry' }), { admitted: true }, 'out again, the list allows re-entry');
  t.match(kit.decide({ code: outOnceNoRe.number, listId: 'strict' }), { admitted: false, reason: 'already_checked_in' }, 'entered once, no re-entry (the event’s)');
  t.match(kit.decide({ code: insideAlready.number, listId: 'reentry' }), { admitted: false, reason: 'already_checked_in' }, 'inside on the list by the feed');
  t.match(await kit.scan({ code: twice.number, listId: 'multi' }), { admitted: true }, 'third entry of three (two in the feed)');
  t.match(kit.decide({ code: twice.number, listId: 'multi' }), { admitted: false, reason: 'max_entries' }, 'the kit’s entry counts with the feed’s');
  t.match(await kit.scan({ code: ga.number, listId: 'reentry' }), { admitted: true });
  t.match(kit.decide({ code: ga.number, listId: 'reentry' }), { admitted: false, reason: 'already_checked_in' }, 'let in by this kit: inside');
  t.match(kit.decide({ code: ga.number, listId: 'strict' }), { admitted: true }, 'each list keeps its own door');

  t.match(await kit.scan({ code: daily.number, listId: 'daily' }), { admitted: true });
  t.match(await kit.scan({ code: daily.number, listId: 'daily' }), { admitted: true });
  t.match(kit.decide({ code: daily.number, listId: 'daily' }), { admitted: false, reason: 'max_entries' }, 'two a day');
  now = NOW + 18 * 3600_000;
  t.match(kit.decide({ code: daily.number, listId: 'daily' }), { admitted: true }, 'the next local day (Friday in Auckland)');
  t.throws(() => kit.decide({ code: ga.number, listId: 'nope' }), /not a check-in list/);
});

t.test('door kit rules - a delta sync brings revocations and transfers; the kit keeps deciding without a network', async (t) => {
  const key = eventKey('kid00001');
  const a = feedTicket();
  const b = feedTicket();
  const ev = fakeEvent(EV, key, { tickets: [a, b, feedTicket(), feedTicket(), feedTicket()] });
  const server = fakeServer({ [EV]: ev });
  const kit = await DoorKit.open({ baseUrl: 'http://door.test', orgId: 'acme', fetch: server.fetch, now: () => NOW });
  await kit.enrol('bpdi_x');
  await kit.sync();
  t.same(server.calls.filter((c) => c.includes('door-feed')), [`GET /events/${EV}/door-feed?limit=500`, `GET /events/${EV}/door-feed?limit=500&since=p2`, `GET /events/${EV}/door-feed?limit=500&since=p4`], 'paged until complete');
  const movedTag = codeTag('moved');
  ev.deltas.set('c0', {
    tickets: [{ ...b, codeTag: movedTag }],
    revoked: [
      { id: a.id, reason: 'refunded', at: '2026-07-01T17:00:00.000Z' },
      { id: b.id, reason: 'transferred', at: '2026-07-01T17:00:00.000Z' },
    ],
    lists: [],
  });
  await kit.sync();
  t.equal(server.calls.at(-1), `GET /events/${EV}/door-feed?limit=500&since=c0`, 'a delta from the saved cursor');
  server.online = false;
  await t.rejects(kit.sync(), { name: 'KitOfflineError' });
  t.match(kit.decide({ code: a.number }), { admitted: false, reason: 'refunded' });
  t.match(kit.decide({ code: key.static(b.id, b.codeTag!) }), { admitted: false, reason: 'bad_signature' }, 'the code before the transfer');
  t.match(kit.decide({ code: key.static(b.id, movedTag) }), { admitted: true }, 'the new holder’s code');
});

t.test('door kit rules - a scan naming no list is the device’s list at its event, the event’s own door elsewhere', async (t) => {
  const key = eventKey('kid00001');
  const ga = feedTicket();
  const there = feedTicket();
  const server = fakeServer(
    {
      [EV]: fakeEvent(EV, key, { tickets: [ga], lists: [feedList('vip-door', { ticketTypeIds: ['type-vip'] })] }),
      [OTHER]: fakeEvent(OTHER, eventKey('kid00009'), { event: feedEvent(OTHER), tickets: [there] }),
    },
    2,
    'vip-door',
  );
  const kit = await DoorKit.open({ baseUrl: 'http://door.test', orgId: 'acme', fetch: server.fetch, now: () => NOW });
  await kit.enrol('bpdi_x');
  await kit.sync();
  t.match(kit.decide({ code: ga.number, eventId: EV }), { admitted: false, reason: 'product', listId: 'vip-door' }, 'the device’s list decides');
  t.match(kit.decide({ code: there.number, eventId: OTHER }), { admitted: true, listId: null }, 'another event: its own door');
});
