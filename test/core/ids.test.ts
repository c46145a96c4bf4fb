// Record ids (issue 28 item 8): 24 hex, ordered by creation time, with 64 random bits after the
// seconds, so one id tells nothing of the next (the old ones were seconds, a per-process constant
// and a counter).
import t from 'tap';
import { isId, newId } from '../../core/ids.js';

const T0 = Date.UTC(2026, 4, 3, 12, 0, 0);

t.test('newId - 24 hex, seconds first', async (t) => {
  const id = newId(T0 + 999);
  t.ok(isId(id));
  t.equal(parseInt(id.slice(0, 8), 16), T0 / 1000, 'the first 4 bytes are the seconds');
});

t.test('newId - the 16-hex tail is 64 random bits: no part is shared, no step is a counter', async (t) => {
  // The first id of each of 256 seconds: every one of the 64 tail bits is seen both set and clear.
  const firsts = Array.from({ length: 256 }, (_, i) => newId(T0 + i * 1000).slice(8));
  let ones = 0n;
  let zeros = 0n;
  for (const tail of firsts) {
    const v = BigInt(`0x${tail}`);
    ones |= v;
    zeros |= ~v & ((1n << 64n) - 1n);
  }
  t.equal(ones.toString(16), 'f'.repeat(16), 'every tail bit is set in some id');
  t.equal(zeros.toString(16), 'f'.repeat(16), 'and clear in some other');
  t.equal(new Set(firsts.map((x) => x.slice(0, 10))).size, firsts.length, 'no 10-hex part repeats across ids');

  // Two ids of the same millisecond share no tail, and the step between them is not guessable.
  const ms = T0 + 500_000;
  const same = Array.from({ length: 1000 }, () => newId(ms));
  t.equal(new Set(same.map((x) => x.slice(8))).size, same.length, 'ids of one millisecond share no 16-hex tail');
  const steps = same.slice(1).map((x, i) => BigInt(`0x${x.slice(8)}`) - BigInt(`0x${same[i].slice(8)}`));
  t.ok(steps.filter((d) => d > 0n && d < 1n << 20n).length < 5, 'the step from one id to the next is not a small count');
  t.ok(new Set(steps.map(String)).size > 990, 'nor a constant');
});

t.test('newId - time-ordered, and in order within one second', async (t) => {
  const ids: string[] = [];
  for (let s = 0; s < 50; s++) for (let i = 0; i < 40; i++) ids.push(newId(T0 + 2_000_000 + s * 1000 + i));
  const sorted = [...ids].sort();
  t.same(sorted, ids, 'sorted order is creation order, across and within seconds');
  t.ok(newId(T0 + 3_000_000) > newId(T0 + 2_999_000), 'a later second sorts after');
});
