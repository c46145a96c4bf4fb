// The door without a network, end to end (issue 32's Must show): a door kit enrolled by staff
// syncs event A (two lists, 1,000 tickets) from a real server; the server stops; the kit admits 50
// tickets offline and refuses a forged code and a ticket refunded before the sync; the server
// comes back on the same data directory and the kit uploads: the server's scan log and
// check-in stats show the 50 admitted at their original times, and a ticket admitted offline at
// two devices is exactly one conflict.
import { generateKeyPairSync, sign } from 'node:crypto';
import t from 'tap';
import { DoorKit, JsonFileStorage, type Fetch } from '../../clients/door-kit/index.js';
import { createOrg, startTestApp, tempDir, tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';

const ORG = 'acme';
const BASE = 'http://door.invalid';

t.test('door kit - admits 50 offline, refuses a forged code and a refunded ticket, uploads after the restart: log, stats and one conflict', async (t) => {
  t.setTimeout(180_000);
  const dataDir = tempDir(t);
  let app = await startTestApp(t, { dataDir, modules: ['events', 'records'] });
  await createOrg(app, ORG);
  const admin = () => client(app.url, { orgid: ORG, authorization: `Bearer ${tokenFor(app, { org: ORG, sub: 'admin-1', roles: ['User', 'Admin'] })}` });
  let staff = admin();

  // Event A: two lists, 1,000 tickets (900 GA, 100 VIP).
  const ev = (await staff.post('/events', { name: 'Event A', zones: [{ id: 'hall', name: 'Hall' }, { id: 'lounge', name: 'Lounge' }], ticketTypes: [{ title: 'GA' }, { title: 'VIP' }] })).body;
  const [ga, vip] = ev.ticketTypes.map((x: any) => x.sk);
  const general = (await staff.post(`/events/${ev.sk}/checkin-lists`, { name: 'General', zones: ['hall'] })).body;
  const lounge = (await staff.post(`/events/${ev.sk}/checkin-lists`, { name: 'Lounge', zones: ['lounge'], ticketTypeIds: [vip] })).body;
  const tickets: any[] = [];
  for (const [type, quantity] of [[ga, 500], [ga, 400], [vip, 100]] as const) {
    const r = await staff.post('/events/tickets/comp', { items: [{ ticketTypeId: type, quantity, holderEmail: 'crowd@example.com' }] });
    t.equal(r.status, 201);
    tickets.push(...r.body.tickets);
  }
  t.equal(tickets.length, 1000);
  const gaTickets = tickets.filter((x) => x.data.ticketTypeId === ga);

  // Codes to show at the door: 5 dynamic and 5 signed static codes, minted before the sync.
  const qr = new Map<string, any>();
  for (const tk of gaTickets.slice(0, 10)) {
    const r = await staff.get(`/events/tickets/${tk.sk}/qr`);
    t.equal(r.status, 200);
    qr.set(tk.sk, r.body.data);
  }
  const refunded = gaTickets[60];
  t.equal((await staff.post(`/events/tickets/${refunded.sk}/refund`, {})).status, 200, 'refunded before the sync');

  // Two devices at the General door: staff enrols, each kit initializes itself.
  let url = app.url;
  const fetch: Fetch = (u, init) => globalThis.fetch(u.replace(BASE, url), init);
  const kits: DoorKit[] = [];
  const kitDirs = [tempDir(t), tempDir(t)];
  for (const [i, dir] of kitDirs.entries()) {
    const enrolled = await staff.post('/events/devices', { name: `Gate ${i + 1}`, eventIds: [ev.sk], listId: general.sk });
    t.equal(enrolled.status, 201);
    const kit = await DoorKit.open({ baseUrl: BASE, orgId: ORG, fetch, storage: new JsonFileStorage(dir) });
    t.match(await kit.enrol(enrolled.body.initToken, `phone-${i + 1}`), { deviceId: enrolled.body.sk, listId: general.sk, eventIds: [ev.sk] });
    await kit.sync();
    kits.push(kit);
  }
  const [kit1, kit2] = kits;
  const view = kit1.view(ev.sk)!;
  t.equal(Object.keys(view.tickets).length, 1000, 'the whole feed, paged');
  t.same(Object.keys(view.lists).sort(), [general.sk, lounge.sk].sort(), 'both lists');
  t.match(view.revoked[refunded.sk], { reason: 'refunded' });
  t.ok(view.keys?.keys.length, 'the event’s public keys');

  // The server stops: the kits' fetch fails and they keep deciding.
  await app.close();
  await t.rejects(kit1.sync(), { name: 'KitOfflineError' }, 'no network');

  const admitted = new Map<string, string>();
  for (const [i, tk] of gaTickets.slice(0, 50).entries()) {
    const code = i < 5 ? qr.get(tk.sk).code : i < 10 ? qr.get(tk.sk).staticCode : tk.data.number;
    const d = await kit1.scan({ code });
    t.ok(d.admitted && d.ticket?.id === tk.sk, `offline admit ${i + 1} (${i < 5 ? 'dynamic' : i < 10 ? 'signed static' : 'number'})`) || t.comment(JSON.stringify(d));
    admitted.set(tk.sk, d.scannedAt);
  }
  const target = gaTickets[70];
  const kid = view.keys!.activeKid;
  const { privateKey } = generateKeyPairSync('ed25519');
  const forged = `${target.sk}:S:${kid}${sign(null, Buffer.from(`${target.sk}:S:${view.tickets[target.sk].codeTag ?? 'x'}`), privateKey).toString('base64url')}`;
  t.match(await kit1.scan({ code: forged }), { admitted: false, reason: 'bad_signature' }, 'a forged code, with no network');
  t.match(await kit1.scan({ code: refunded.data.number }), { admitted: false, reason: 'refunded' }, 'a ticket refunded before the sync');
  t.match(await kit1.scan({ code: gaTickets[20].data.number }), { admitted: false, reason: 'already_checked_in' }, 'the kit admits a ticket once itself');
  const twice = gaTickets[30];
  t.match(await kit2.scan({ code: twice.data.number }), { admitted: true }, 'the other device cannot know: it admits too');
  t.match(await kit1.upload(), { offline: true, left: 53 }, 'no network: the queue stays');

  // The app restarts too: its queue is on disk.
  const kit1b = await DoorKit.open({ baseUrl: BASE, orgId: ORG, fetch, storage: new JsonFileStorage(kitDirs[0]) });
  t.equal(kit1b.queued, 53);

  // The server comes back on the same data directory.
  app = await startTestApp(t, { dataDir, modules: ['events', 'records'] });
  url = app.url;
  staff = admin();
  const up1 = await kit1b.upload();
  t.match(up1, { uploaded: 53, left: 0, offline: false, rejected: [] });
  t.same(up1.conflicts, [], 'device 1 was first: no conflict');
  const up2 = await kit2.upload();
  t.match(up2, { uploaded: 1, left: 0 });
  t.match(up2.conflicts, [{ ticketId: twice.sk, conflictReason: 'already_checked_in', eventId: ev.sk }], 'device 2’s entry is the conflict');
  t.equal(kit2.conflicts.length, 1);
  t.match(await kit1b.upload(), { uploaded: 0, left: 0 }, 'nothing left to send');

  const log: any[] = [];
  for (let after: string | null = null; ; ) {
    const r: { status: number; body: any } = await staff.get(`/events/${ev.sk}/scans?limit=500${after ? `&after=${after}` : ''}`);
    t.equal(r.status, 200);
    log.push(...r.body.data);
    if (!(after = r.body.next)) break;
  }
  const dev1 = kit1b.device!.deviceId;
  const ok1 = log.filter((x) => x.deviceId === dev1 && x.success);
  t.equal(ok1.length, 50, 'the 50 are admitted in the log');
  t.ok(ok1.every((x) => x.offline && admitted.get(x.ticketId) === x.at), 'each at its original time, marked offline');
  t.match(log.filter((x) => x.deviceId === dev1 && !x.success).map((x) => x.reason).sort(), ['already_checked_in', 'bad_signature', 'refunded']);
  const conflicts = log.filter((x) => x.conflict);
  t.equal(conflicts.length, 1, 'exactly one conflict in the log');
  t.match(conflicts[0], { ticketId: twice.sk, deviceId: kit2.device!.deviceId, success: true, offline: true });

  const stats = (await staff.get(`/events/${ev.sk}/checkin-stats`)).body;
  t.match(stats, { uniqueAttendees: 50, conflicts: 1 }, 'fifty people in, one conflict');
  t.equal(stats.byList[general.sk].uniqueAttendees, 50);
  t.equal(stats.byList[lounge.sk].successful, 0);
});
