// Annulments after kill -9: the fold is from the scan log, so annulled scans stay annulled, with
// the lists' door state, their entry counts and the tickets' records as they were answered.
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { crashNode, scanAt as scan, twoListVenue } from './crash-node.js';

t.test('annul - annulments and list state survive a SIGKILL and restart', async (t) => {
  // The records stay behind the log: after the restart the tickets' fields come from its replay.
  const { dataDir, child, headers, staff } = await crashNode(t, { doorPaused: true });
  const { ev, general, lounge, tGa, tVip } = await twoListVenue(staff);

  // GA: in, out, in on General, its first entry annulled (one entry of two used); VIP: into the
  // lounge and annulled by its nonce (never entered).
  t.equal((await scan(staff, tGa.data.number, general.sk)).success, true);
  t.equal((await scan(staff, tGa.data.number, general.sk, 'checkout')).success, true);
  t.equal((await scan(staff, tGa.data.number, general.sk)).success, true);
  t.equal((await scan(staff, tVip.data.number, lounge.sk, 'checkin', { nonce: 'vip-1' })).success, true);
  const firstId = `${ev.sk}-1`;
  const annulled = await staff.post('/events/checkin/annul', { scanId: firstId });
  t.equal(annulled.status, 200, annulled.text);
  t.equal((await staff.post('/events/checkin/annul', { nonce: 'vip-1', listId: lounge.sk })).status, 200);
  const before = (await staff.get(`/events/${ev.sk}/checkin-stats`)).body;
  const log = (await staff.get(`/events/${ev.sk}/scans`)).body;
  t.match(before, { successful: 1, uniqueAttendees: 1, inside: 1 });

  await child.kill9();
  t.equal(child.proc.signalCode, 'SIGKILL', 'killed, not stopped');

  const app = await startTestApp(t, { dataDir });
  const after = client(app.url, headers);
  t.same((await after.get(`/events/${ev.sk}/checkin-stats`)).body, before, 'the figures, net of the annulments, as before');
  t.same((await after.get(`/events/${ev.sk}/scans`)).body, log, 'the log, with what was annulled');
  t.same((await after.post('/events/checkin/annul', { scanId: firstId })).body, annulled.body, 'annulling again answers the same');
  t.match((await after.get(`/events/tickets/${tVip.sk}`)).body.data, { status: 'valid', inside: false, checkedInAt: null }, 'the VIP ticket never entered');
  t.match((await after.get(`/events/tickets/${tGa.sk}`)).body.data, { status: 'checked_in', inside: true, zone: 'hall' });

  t.equal((await scan(after, tVip.data.number, lounge.sk)).success, true, 'the VIP enters the lounge');
  t.equal((await scan(after, tGa.data.number, general.sk, 'checkout')).success, true);
  t.equal((await scan(after, tGa.data.number, general.sk)).success, true, 'GA enters a second time: the annulled entry does not count');
  t.equal((await scan(after, tGa.data.number, general.sk, 'checkout')).success, true);
  t.equal((await scan(after, tGa.data.number, general.sk)).reason, 'max_entries', 'and not a third');
});
