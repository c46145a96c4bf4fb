// The store's size bound of a value before it is written (core/store/value-size.ts): from above,
// cheaply for the usual small value, exactly where the cheap bound alone would refuse.
import t from 'tap';
import { documentBytesOver } from '../../core/store/value-size.js';

t.test('a value is sized from above without counting every string byte by byte', async (t) => {
  const limit = 400 * 1024;
  t.ok(documentBytesOver({ a: 'x'.repeat(200_000) }, limit) <= limit, 'ASCII that only the loose bound puts over the limit is counted exactly');
  t.ok(documentBytesOver({ a: '€'.repeat(150_000) }, limit) > limit, '3-byte characters past the limit are refused');
  const small = { code: 'T-1', zone: 'main', n: 1, nested: [{ k: 'v' }] };
  t.ok(documentBytesOver(small, limit) >= JSON.stringify(small).length, 'an upper bound of a small value');
});
