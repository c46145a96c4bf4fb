// Check-in lists after kill -9: the lists and each list's door state (who is inside on it, its
// entry counts, its figures) come back from the store and the scan log as they were answered.
import t from 'tap';
import { startTestApp } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { crashNode, scanAt as scan, twoListVenue } from './crash-node.js';

t.test('checkin lists - list state survives a SIGKILL and restart', async (t) => {
  const { dataDir, child, headers, staff } = await crashNode(t);
  const { ev, general, lounge, tGa, tVip } = await twoListVenue(staff);

  // GA: in and out twice on General (its two entries used); VIP: inside on both lists.
  for (let i = 0; i < 2; i++) {
    t.equal((await scan(staff, tGa.data.number, general.sk)).success, true);
    t.equal((await scan(staff, tGa.data.number, general.sk, 'checkout')).success, true);
  }
  t.equal((await scan(staff, tVip.data.number, general.sk)).success, true);
  t.equal((await scan(staff, tVip.data.number, lounge.sk)).success, true);
  t.equal((await scan(staff, tGa.data.number, lounge.sk)).reason, 'product');
  const before = (await staff.get(`/events/${ev.sk}/checkin-stats`)).body;

  await child.kill9();
  t.equal(child.proc.signalCode, 'SIGKILL', 'killed, not stopped');

  const app = await startTestApp(t, { dataDir });
  const after = client(app.url, headers);
  const stats = (await after.get(`/events/${ev.sk}/checkin-stats`)).body;
  t.same(stats, before, 'the event and each list count as before');
  t.match(stats.byList, { [general.sk]: { successful: 3, inside: 1 }, [lounge.sk]: { successful: 1, denied: 1, inside: 1 } });
  t.same((await after.get(`/events/${ev.sk}/checkin-lists`)).body.data.map((x: any) => x.sk), [general.sk, lounge.sk], 'the lists are there');
  t.equal((await scan(after, tGa.data.number, general.sk)).reason, 'max_entries', 'the entries counted before still count');
  t.equal((await scan(after, tGa.data.number, lounge.sk)).reason, 'product', 'the list rules are back in memory');
  t.equal((await scan(after, tVip.data.number, lounge.sk)).reason, 'already_checked_in', 'inside on the lounge list');
  t.equal((await scan(after, tVip.data.number, general.sk, 'checkout')).success, true, 'inside on the general list');
  t.equal((await scan(after, tVip.data.number, lounge.sk)).reason, 'already_checked_in', 'leaving one list leaves the other as it was');
  t.match((await after.get(`/events/${ev.sk}/occupancy?listId=${lounge.sk}`)).body, { lounge: { currentOccupancy: 1 } });
});
