// A listing new to the code over a data directory that already holds its records
// (core/store/lmdb-listing-builder.ts): the node starts before the build ends, finds read the
// usual way meanwhile, writes during the build are neither missed nor counted twice, and the
// listing then answers the same pages by index.
import t from 'tap';
import type { LmdbStore } from '../../core/store/lmdb-store.js';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch, type Store } from '../../core/store/store.js';
import type { Module } from '../../edge/module.js';
import { createOrg, startTestApp, tempDir } from '../helpers/app.js';

const EPOCH = Date.UTC(2026, 2, 1);
const DATATYPE = 'shelf_box';
const SHAPE = { datatype: DATATYPE, equals: ['data.shelf'], sort: 'data.at' };
const shelves: Module = { name: 'shelves', listings: [SHAPE] };

function box(org: string, i: number, shelf = i % 3 ? 'top' : 'low'): StoredRecord {
  const iso = new Date(EPOCH).toISOString();
  // Ids not in the sort's order; runs of four share one `at`; every 11th has none.
  const at = i % 11 === 0 ? {} : { at: new Date(EPOCH + Math.floor(i / 4) * 61_000).toISOString() };
  return { pk: org, sk: `b${String((i * 7919) % 100_003).padStart(6, '0')}`, datatype: DATATYPE, version: 1, state: 'new', createdate: iso, modifydate: iso, data: { shelf, n: i, ...at } };
}

async function put(store: Store, rs: StoredRecord[]): Promise<void> {
  for (let i = 0; i < rs.length; i += 1000) {
    const b = new WriteBatch();
    for (const r of rs.slice(i, i + 1000)) b.putRecord(r);
    await store.commit(b);
  }
}

/** A listing read whole by page number, with every page's total. */
function pages(store: Store, org: string, shelf: string, sortType: 'asc' | 'desc', pageSize: number): { sks: string[]; totals: Set<number>; by: Set<string> } {
  const sks: string[] = [];
  const totals = new Set<number>();
  const by = new Set<string>();
  for (let page = 1; ; page++) {
    const opts = { sort: 'data.at', sortType, page, pageSize };
    const r = store.find(org, DATATYPE, { 'data.shelf': shelf }, opts);
    by.add(store.explain(org, DATATYPE, { 'data.shelf': shelf }, opts).sort?.by ?? 'none');
    sks.push(...r.data.map((x) => x.sk));
    totals.add(r.total);
    if (!r.hasNext) return { sks, totals, by };
  }
}

t.test('listing build - a listing new to the code builds in steps after the node starts; pages the same before and after', async (t) => {
  const dataDir = tempDir(t);
  const first = await startTestApp(t, { dataDir, modules: ['records'] });
  await createOrg(first, 'acme');
  await createOrg(first, 'bolt');
  const acme = Array.from({ length: 4000 }, (_, i) => box('acme', i));
  const bolt = Array.from({ length: 600 }, (_, i) => box('bolt', i));
  await put(first.deps.store, [...acme, ...bolt]);
  await first.close();

  // Ten records a step: the 4,600 take hundreds of steps, each yielding to the event loop.
  const app = await startTestApp(t, { dataDir, modules: ['records', shelves], config: { store: { indexBuildStep: 10 } } });
  const store = app.deps.store;
  const before = pages(store, 'acme', 'top', 'asc', 170);
  t.same([...before.by], ['memory'], 'started before the build ended: finds read the usual way');
  const ready = await fetch(`${app.url}/readyz`);
  t.equal(ready.status, 200, 'and the node answers ready');

  // Writes while it builds, to records it has passed and records ahead of it: updated, moved, deleted, added.
  const changed = new Map<string, StoredRecord>();
  for (let round = 0; round < 6; round++) {
    const b = new WriteBatch();
    for (let k = 0; k < 40; k++) {
      const i = (round * 677 + k * 97) % 4000;
      const r = { ...box('acme', i), version: 2, data: { ...box('acme', i).data, shelf: k % 2 ? 'top' : 'low', at: new Date(EPOCH + (k * 3_600_000) % 86_400_000).toISOString() } };
      b.putRecord(r);
      changed.set(r.sk, r);
    }
    const gone = box('acme', (round * 1231 + 5) % 4000);
    b.deleteRecord('acme', DATATYPE, gone.sk);
    changed.set(gone.sk, undefined as unknown as StoredRecord);
    const added = box('acme', 5000 + round);
    b.putRecord(added);
    changed.set(added.sk, added);
    await store.commit(b);
    await new Promise((r) => setTimeout(r, 5));
  }
  const during = pages(store, 'acme', 'top', 'asc', 170);
  t.same([...during.by], ['memory'], 'still building while those writes came');
  await (store as unknown as LmdbStore).indexBuildsIdle();

  const now = [...acme.filter((r) => !changed.has(r.sk)), ...[...changed.values()].filter((r) => r !== undefined)];
  const expected = (org: string, rs: StoredRecord[], shelf: string, dir: 1 | -1) =>
    rs
      .filter((r) => r.pk === org && r.data.shelf === shelf)
      .sort((a, b) => {
        const x = (a.data.at as string | undefined) ?? '';
        const y = (b.data.at as string | undefined) ?? '';
        return x !== y ? (x < y ? -dir : dir) : a.sk < b.sk ? -1 : 1;
      })
      .map((r) => r.sk);
  for (const [org, rs] of [['acme', now], ['bolt', bolt]] as const) {
    for (const shelf of ['top', 'low']) {
      for (const [sortType, dir] of [['asc', 1], ['desc', -1]] as const) {
        const after = pages(store, org, shelf, sortType, 130);
        t.same([...after.by], ['index'], `${org} ${shelf} ${sortType}: read by the listing once built`);
        t.same(after.sks, expected(org, rs, shelf, dir), `${org} ${shelf} ${sortType}: the store's order`);
        t.same([...after.totals], [expected(org, rs, shelf, dir).length], `${org} ${shelf} ${sortType}: total exact`);
      }
    }
  }
  t.same(during.sks, expected('acme', now, 'top', 1), 'pages read during the build: the same records in the same order');
  t.same(before.sks, expected('acme', acme, 'top', 1), 'pages read before any write: the same');
});
