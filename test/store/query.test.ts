// compileFilter's plain-equality path must agree with mingo on every record shape: scalars,
// missing fields, nulls, nested objects and arrays along the path (where it hands over to mingo).
import fc from 'fast-check';
import { Query } from 'mingo';
import t from 'tap';
import { compileFilter } from '../../core/store/query.js';

const scalar = fc.oneof(fc.constantFrom('a', 'b', '1', '', 'A'), fc.constantFrom(1, 0, -1, 2.5), fc.boolean());
const leaf = fc.oneof(scalar, fc.constant(null), fc.array(scalar, { maxLength: 3 }));
const inner = fc.dictionary(fc.constantFrom('x', 'y'), fc.oneof(leaf, fc.array(fc.dictionary(fc.constantFrom('x', 'y'), leaf), { maxLength: 2 })), { maxKeys: 2 });
const record = fc.record({ data: fc.dictionary(fc.constantFrom('a', 'b', 'c'), fc.oneof(leaf, inner), { maxKeys: 3 }) });
const path = fc.constantFrom('data.a', 'data.b', 'data.a.x', 'data.b.y', 'data.c.x', 'state');
const filter = fc.dictionary(path, scalar, { minKeys: 1, maxKeys: 2 });

t.test('plain equality filters match exactly what mingo matches', async (t) => {
  let runs = 0;
  fc.assert(
    fc.property(filter, fc.array(record, { minLength: 1, maxLength: 8 }), (f, records) => {
      const ours = compileFilter(f);
      const theirs = new Query(f);
      for (const r of records) {
        runs++;
        if (ours.test(r) !== theirs.test(r)) {
          throw new Error(`disagree on ${JSON.stringify(f)} with ${JSON.stringify(r)}: ours ${ours.test(r)}`);
        }
      }
    }),
    { numRuns: 2000, seed: 20261122 },
  );
  t.ok(runs > 2000, `${runs} record checks agreed`);
});

t.test('examples: arrays along the path, type-strict equality, operators still go to mingo', async (t) => {
  const f = compileFilter({ 'data.tags': 'vip' });
  t.equal(f.test({ data: { tags: ['a', 'vip'] } }), true, 'an array field matches an element');
  t.equal(f.test({ data: { tags: 'vip' } }), true);
  t.equal(f.test({ data: { tags: 'VIP' } }), false);
  t.equal(compileFilter({ 'data.n': 5 }).test({ data: { n: '5' } }), false, 'a number never equals a numeric string');
  t.equal(compileFilter({ 'data.items.sku': 'k1' }).test({ data: { items: [{ sku: 'k0' }, { sku: 'k1' }] } }), true);
  t.equal(compileFilter({ 'data.n': { $gt: 3 } }).test({ data: { n: 5 } }), true);
  t.throws(() => compileFilter({ 'data.n': { $nope: 3 } }), { message: /not a valid filter/ });
});
