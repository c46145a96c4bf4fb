// A page of a kv namespace (Store.rangeKv): the same entries, in the same order, as the whole
// namespace cut by hand, forwards and backwards, with the write journal's entries merged over LMDB's.
import { join } from 'node:path';
import t from 'tap';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { WriteBatch, type KvRange } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

/** What a range should answer, from the whole namespace. */
function cut(all: Array<{ key: string; value: unknown }>, r: KvRange): Array<{ key: string; value: unknown }> {
  const ordered = r.reverse ? [...all].reverse() : all;
  const past = (k: string, bound: string) => (r.reverse ? k < bound : k > bound);
  return ordered.filter((e) => (r.after === undefined || past(e.key, r.after)) && (r.until === undefined || past(r.until, e.key))).slice(0, r.limit);
}

const ranges = (keys: string[]): KvRange[] => {
  const out: KvRange[] = [];
  const bounds = [undefined, '', keys[0], keys[7], keys[7] + '\u0000', 'k15', 'k15~', 'zzz', keys[keys.length - 1]];
  for (const reverse of [false, true])
    for (const after of bounds) for (const until of bounds) for (const limit of [0, 1, 3, 50]) out.push({ after, until, limit, reverse });
  return out;
};

t.test('rangeKv - every page equals the namespace cut by hand, with and without journaled writes over it', async (t) => {
  const dir = tempDir(t);
  const store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  await store.openJournal({ dir: join(dir, 'journal'), sync: 'commit', intervalMs: 3_600_000 });
  t.teardown(() => store.close());
  const keys = Array.from({ length: 30 }, (_, i) => `k${String(i).padStart(2, '0')}`);
  const b = new WriteBatch();
  for (const k of keys) b.putKv('acme', 'ns', k, { v: k });
  b.putKv('acme', 'ns-other', 'k00', 'beside').putKv('acme', 'n', 'k00', 'before').putKv('globex', 'ns', 'k05', 'theirs');
  await store.commit(b);
  const check = (label: string) => {
    const all = store.listKv('acme', 'ns');
    let n = 0;
    for (const r of ranges(all.map((e) => e.key))) {
      const got = store.rangeKv('acme', 'ns', r);
      const want = cut(all, r);
      if (JSON.stringify(got) !== JSON.stringify(want)) {
        t.same(got, want, `${label}: ${JSON.stringify(r)}`);
        return;
      }
      n++;
    }
    t.pass(`${label}: ${n} ranges agree`);
  };
  check('LMDB alone');
  // Journaled: a new key between others, a deleted one, one rewritten, one past the end.
  await store.commit(new WriteBatch().journal().putKv('acme', 'ns', 'k07a', { v: 'new' }).deleteKv('acme', 'ns', 'k10').putKv('acme', 'ns', 'k12', { v: 'rewritten' }).putKv('acme', 'ns', 'k99', { v: 'last' }));
  t.same(store.getKv('acme', 'ns', 'k12'), { v: 'rewritten' });
  check('journal over LMDB');
  t.same(
    store.rangeKv('acme', 'ns', { after: 'k06', limit: 3 }).map((e) => e.key),
    ['k07', 'k07a', 'k08'],
    'a journaled key in its place',
  );
  t.same(
    store.rangeKv('acme', 'ns', { after: 'k12', limit: 2, reverse: true }).map((e) => e.key),
    ['k11', 'k09'],
    'backwards over a journaled delete',
  );
});
