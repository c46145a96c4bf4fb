// Listings whose records may lack the sort value (core/store/lmdb-listings.ts): such a record is an
// entry keyed '', first ascending and last descending by id, as the store's sort puts it, so a
// location's closed tabs page by index while tabs are open (an open tab has no `closedAt`), and a
// listing made irregular by one before this was so is built again at start.
import t from 'tap';
import { open } from 'lmdb';
import { listingName } from '../../core/store/listing-plan.js';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch, type Store } from '../../core/store/store.js';
import type { LmdbStore } from '../../core/store/lmdb-store.js';
import { createOrg, startTestApp, tempDir } from '../helpers/app.js';
import { EPOCH } from './listing-kit.js';

const SHAPE = { datatype: 'sf_order', equals: ['data.businessLocationId', 'data.status'], sort: 'data.closedAt' };

function order(org: string, i: number, data: Record<string, unknown>): StoredRecord {
  const iso = new Date(EPOCH + i).toISOString();
  // Ids not in closing order.
  const sk = `o${String((i * 7919) % 100_003).padStart(8, '0')}x${i}`;
  return { pk: org, sk, datatype: 'sf_order', version: 1, state: String(data.status), createdate: iso, modifydate: iso, data: { businessLocationId: 'main', ...data } };
}

async function seed(store: Store, rs: StoredRecord[]): Promise<void> {
  for (let i = 0; i < rs.length; i += 1000) {
    const b = new WriteBatch();
    for (const r of rs.slice(i, i + 1000)) b.putRecord(r);
    await store.commit(b);
  }
}

/** The store's order of `data.<path>`: missing and null first (ascending), then by value, ties by id. */
function storeOrder(rs: StoredRecord[], path: string, dir: 1 | -1): string[] {
  const v = (r: StoredRecord) => r.data[path] as string | null | undefined;
  return [...rs]
    .sort((a, b) => {
      const x = v(a) ?? undefined;
      const y = v(b) ?? undefined;
      if (x !== y) {
        if (x === undefined) return -dir;
        if (y === undefined) return dir;
        return x < y ? -dir : dir;
      }
      return a.sk < b.sk ? -1 : 1;
    })
    .map((r) => r.sk);
}

t.test('listing sort values - records without a sort value are entries: first ascending, last descending, by id', async (t) => {
  const app = await startTestApp(t, { modules: ['records'] });
  await createOrg(app, 'acme');
  const store = app.deps.store;
  await store.declareListing({ datatype: 'shelf_note', equals: ['data.shelf'], sort: 'data.at' });
  const rs: StoredRecord[] = [];
  for (let i = 0; i < 400; i++) {
    const iso = new Date(EPOCH).toISOString();
    const at = i % 5 === 0 ? {} : i % 5 === 1 ? { at: null } : { at: new Date(EPOCH + Math.floor(i / 4) * 45_000).toISOString() };
    rs.push({ pk: 'acme', sk: `n${String((i * 389) % 1009).padStart(5, '0')}`, datatype: 'shelf_note', version: 1, state: 'new', createdate: iso, modifydate: iso, data: { shelf: i % 3 ? 'top' : 'low', ...at } });
  }
  await seed(store, rs);
  const top = rs.filter((r) => r.data.shelf === 'top');
  for (const [sortType, dir] of [['asc', 1], ['desc', -1]] as const) {
    const want = storeOrder(top, 'at', dir);
    for (const pageSize of [7, 50]) {
      const byNumber: string[] = [];
      for (let page = 1; page <= Math.ceil(top.length / pageSize); page++) {
        const r = store.find('acme', 'shelf_note', { 'data.shelf': 'top' }, { sort: 'data.at', sortType, page, pageSize });
        t.equal(r.total, top.length);
        byNumber.push(...r.data.map((x) => x.sk));
      }
      t.same(byNumber, want, `${sortType}, by number, pages of ${pageSize}`);
    }
    const byCursor: string[] = [];
    let after: string | undefined;
    do {
      const r = store.find('acme', 'shelf_note', { 'data.shelf': 'top' }, { sort: 'data.at', sortType, pageSize: 9, ...(after ? { after } : {}) });
      byCursor.push(...r.data.map((x) => x.sk));
      after = r.next;
    } while (after);
    t.same(byCursor, want, `${sortType}, by cursor`);
  }
  const ex = store.explain('acme', 'shelf_note', { 'data.shelf': 'top' }, { sort: 'data.at', page: 2, pageSize: 40 });
  t.match(ex, { sort: { by: 'index' }, docsExamined: 40, total: top.length }, 'read by index, not sorted in memory');
});

t.test("listing sort values - a location's closed tabs page by index while tabs are open, and an old irregular listing is built again", async (t) => {
  const dataDir = tempDir(t);
  const modules = ['storefront', 'records', 'reference'] as const;
  const org = 'shop1';
  const closed: StoredRecord[] = [];
  for (let i = 0; i < 1500; i++) closed.push(order(org, i, { status: 'closed', closedAt: new Date(EPOCH + Math.floor(i / 2) * 30_000).toISOString() }));
  const openTabs = Array.from({ length: 30 }, (_, i) => order(org, 5000 + i, { status: 'open' }));
  const want = storeOrder(closed, 'closedAt', -1);

  const readAll = async (url: string) => {
    const sks: string[] = [];
    for (let page = 1; ; page++) {
      const r = await fetch(`${url}/storefront/pos/tabs/closed?businessLocationId=main&page=${page}&pageSize=100`, { headers: { orgid: org } });
      const body = (await r.json()) as { data: StoredRecord[]; total: number; hasNext: boolean };
      if (r.status !== 200) throw new Error(`${r.status} ${JSON.stringify(body)}`);
      t.equal(body.total, closed.length);
      sks.push(...body.data.map((x) => x.sk));
      if (!body.hasNext) return sks;
    }
  };

  let app = await startTestApp({ teardown: () => {} }, { modules, dataDir });
  await createOrg(app, org);
  await seed(app.deps.store, [...openTabs, ...closed]);
  const filter = { 'data.businessLocationId': 'main', 'data.status': 'closed' };
  t.match(app.deps.store.explain(org, 'sf_order', filter, { sort: 'data.closedAt', sortType: 'desc', page: 9, pageSize: 100 }), { sort: { by: 'index' }, docsExamined: 100 }, 'open tabs leave the listing readable');
  t.same(await readAll(app.url), want, 'most recently closed first, every page');
  await app.close();

  // As a build before records without a sort value were entries left it: marked irregular, the open tabs in no entry.
  const env = open({ path: dataDir, maxDbs: 16, noSubdir: false });
  const meta = env.openDB({ name: 'meta' });
  const key = ['listing', 'sf_order', listingName(SHAPE)];
  const m = meta.get(key) as Record<string, unknown>;
  t.equal(m?.missingFirst, true);
  await meta.put(key, { equals: m.equals, sort: m.sort, builtAt: m.builtAt, irregular: true });
  await env.close();

  app = await startTestApp(t, { modules, dataDir });
  // Built again in the background from start (lmdb-listing-builder.ts): read once it is.
  await (app.deps.store as unknown as LmdbStore).indexBuildsIdle();
  t.match(app.deps.store.explain(org, 'sf_order', filter, { sort: 'data.closedAt', sortType: 'desc', page: 9, pageSize: 100 }), { sort: { by: 'index' }, docsExamined: 100 }, 'built again at start: readable');
  t.same(await readAll(app.url), want, 'and the same pages');
  const opened = app.deps.store.find(org, 'sf_order', { 'data.businessLocationId': 'main', 'data.status': 'open' }, { sort: 'data.closedAt', sortType: 'desc', pageSize: 100 });
  t.same([opened.total, opened.data.map((r) => r.sk)], [30, storeOrder(openTabs, 'closedAt', -1)], 'open tabs counted once, by id');
});
