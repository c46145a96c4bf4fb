// The door view's scans per minute per checkpoint: a ring of 60 one-minute buckets per checkpoint,
// so memory stays flat however long the door runs and however many checkpoints scanners type.
import t from 'tap';
import { RATE_CHECKPOINTS_MAX, ScanRate } from '../../actors/scanner/scan-rate.js';

const MIN = 60_000;
const t0 = Date.UTC(2026, 8, 14, 18, 0);

t.test('scan rate - each minute of the last hour, oldest first', async (t) => {
  const r = new ScanRate();
  r.add('Gate A', t0);
  r.add('Gate A', t0 + 30_000);
  r.add('Gate A', t0 + 59 * MIN);
  r.add(null, t0 + 10 * MIN);
  const w = r.window(t0 + 59 * MIN + 5_000);
  t.equal(w.from, new Date(t0).toISOString());
  t.equal(w.minutes, 60);
  const a = w.checkpoints.find((c) => c.checkpoint === 'Gate A')!;
  t.equal(a.perMinute.length, 60);
  t.equal(a.perMinute[0], 2, 'two scans in the first minute');
  t.equal(a.perMinute[59], 1, 'one in the current minute');
  t.equal(a.total, 3);
  t.equal(w.checkpoints.find((c) => c.checkpoint === null)!.perMinute[10], 1, 'scans that named no checkpoint');
  t.same(w.checkpoints.map((c) => c.checkpoint), ['Gate A', null], 'busiest first');
});

t.test('scan rate - an hour later a bucket counts its new minute only; older scans are left out', async (t) => {
  const r = new ScanRate();
  r.add('Gate A', t0);
  r.add('Gate A', t0 + 60 * MIN);
  t.same(r.window(t0 + 60 * MIN).checkpoints[0].perMinute.slice(-1), [1], 'the slot was reset for its new minute');
  r.add('Gate A', t0 + 1_000);
  t.equal(r.window(t0 + 60 * MIN).checkpoints[0].total, 1, 'a scan more than an hour older than the slot is not counted');
  t.same(r.window(t0 + 200 * MIN).checkpoints, [], 'a quiet hour: nothing to chart');
});

t.test('scan rate - checkpoints are bounded: the quietest goes', async (t) => {
  const r = new ScanRate();
  for (let i = 0; i < RATE_CHECKPOINTS_MAX; i++) r.add(`cp-${i}`, t0 + i * 1_000 + (i === 0 ? 30 * MIN : 0));
  r.add('one more', t0 + 31 * MIN);
  const names = r.window(t0 + 31 * MIN).checkpoints.map((c) => c.checkpoint);
  t.equal(names.length, RATE_CHECKPOINTS_MAX);
  t.ok(names.includes('one more'));
  t.ok(names.includes('cp-0'), 'the checkpoint that scanned lately stays');
  t.notOk(names.includes('cp-1'), 'the one quiet the longest went');
});
