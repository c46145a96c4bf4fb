// A tenant's own datatype sorted on a path it declared an index on (POST /repository/indexes):
// unfiltered, or with a range of strings on that path, one page is read in index order by page
// number (skipped on keys) or by cursor, `total` counted on keys, as long as the index orders
// every record as the store's sort does; else the find runs the usual way, with the same answers.
import t from 'tap';
import { sortRecords, type Filter, type SortOrder } from '../../core/store/query.js';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import type { RunningApp } from '../../edge/app.js';
import { staffHeaders } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { A, setup } from './setup.js';

type Client = ReturnType<typeof client>;
const DT = 'gadget';
const EPOCH = Date.UTC(2026, 0, 1);

async function declare(app: RunningApp, path: string): Promise<void> {
  const adm = client(app.url, staffHeaders(app, A, ['User', 'Admin']));
  const made = await adm.post('/repository/indexes', { datatype: DT, path });
  if (made.status !== 202) throw new Error(`${made.status} ${made.text}`);
  for (let i = 0; i < 2000; i++) {
    const r = await adm.get(`/repository/indexes/${made.body.id}`);
    if (r.body.state === 'ready') return;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error('index still building');
}

let n = 0;
function gadget(data: Record<string, unknown>): StoredRecord {
  const iso = new Date(EPOCH + n * 1000).toISOString();
  n++;
  return { pk: A, sk: `g${String((n * 7919) % 100_003).padStart(6, '0')}${n}`, datatype: DT, version: 1, state: 'new', createdate: iso, modifydate: iso, data };
}

async function put(app: RunningApp, rs: StoredRecord[], gone: string[] = []): Promise<void> {
  for (let i = 0; i < Math.max(rs.length, 1); i += 2000) {
    const b = new WriteBatch();
    for (const r of rs.slice(i, i + 2000)) b.putRecord(r);
    if (i === 0) for (const sk of gone) b.deleteRecord(A, DT, sk);
    await app.deps.store.commit(b);
  }
}

/** The store's full sorted read (every match read and sorted in memory). */
function fullRead(app: RunningApp, filter: Filter, sort: string, order: SortOrder): string[] {
  const all = app.deps.store.scan(A, DT, filter);
  sortRecords(all, sort, order);
  return all.map((r) => r.sk);
}

async function pagesByNumber(c: Client, body: Record<string, unknown>, pageSize: number): Promise<{ sks: string[]; totals: Set<number> }> {
  const sks: string[] = [];
  const totals = new Set<number>();
  for (let page = 1; ; page++) {
    const r = await c.post(`/repository/find/${DT}`, { ...body, options: { ...(body.options as object), page, pageSize } });
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    sks.push(...r.body.data.map((x: StoredRecord) => x.sk));
    totals.add(r.body.total);
    if (!r.body.hasNext) return { sks, totals };
  }
}

async function pagesByCursor(c: Client, body: Record<string, unknown>, pageSize: number, between?: (page: number) => Promise<void>): Promise<{ sks: string[]; totals: Set<number> }> {
  const sks: string[] = [];
  const totals = new Set<number>();
  let after: string | undefined;
  for (let page = 1; ; page++) {
    const r = await c.post(`/repository/find/${DT}`, { ...body, options: { ...(body.options as object), pageSize, ...(after ? { after } : {}) } });
    if (r.status !== 200) throw new Error(`${r.status} ${r.text}`);
    sks.push(...r.body.data.map((x: StoredRecord) => x.sk));
    totals.add(r.body.total);
    if (!r.body.hasNext) return { sks, totals };
    if (typeof r.body.next !== 'string') throw new Error('a page with more after it hands out no cursor');
    after = r.body.next;
    await between?.(page);
  }
}

t.test('listing index order - a custom datatype sorted on a declared index: pages by number and by cursor equal a full sorted read, total exact, one page read', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  const rs: StoredRecord[] = [];
  // Prices repeat (runs of equal values, ordered by id); codes are short strings, one per record.
  for (let i = 0; i < 3000; i++) rs.push(gadget({ price: Math.round(((i * 37) % 1009) * 2.5) / 10 - 20, code: `c${String((i * 613) % 3001).padStart(5, '0')}`, name: `Gadget ${i}` }));
  await put(app, rs);
  await declare(app, 'data.price');
  await declare(app, 'data.code');

  for (const [sort, order] of [['data.price', 'asc'], ['data.price', 'desc'], ['data.code', 'desc']] as const) {
    const want = fullRead(app, {}, sort, order);
    const body = { query: {}, options: { sort, sortType: order } };
    const numbered = await pagesByNumber(a, body, 97);
    t.same([numbered.sks, [...numbered.totals]], [want, [3000]], `${sort} ${order}: by number, total exact`);
    t.same((await pagesByCursor(a, body, 113)).sks, want, `${sort} ${order}: by cursor`);
    const page = await a.get(`/repository/find-page-data/${DT}?p=20&ps=50&s=${sort}&st=${order}`);
    t.same(page.body.data.map((r: StoredRecord) => r.sk), want.slice(950, 1000), `${sort} ${order}: find-page-data`);
  }
  const ex = await a.post('/dynamic-query/explain', { datatype: DT, filter: {}, sort: 'data.price', options: { page: 25, pageSize: 40 } });
  t.match(ex.body, { plan: { stage: 'IXSCAN', index: { path: 'data.price' } }, sort: { by: 'index' }, total: 3000, docsExamined: 40, nReturned: 40 });

  // A range of strings on the sorted path.
  const range = { 'data.code': { $gte: 'c00500', $lt: 'c02250' } };
  for (const order of ['asc', 'desc'] as const) {
    const want = fullRead(app, range, 'data.code', order);
    const body = { query: range, options: { sort: 'data.code', sortType: order } };
    const numbered = await pagesByNumber(a, body, 61);
    t.same([numbered.sks, [...numbered.totals]], [want, [want.length]], `a string range ${order}: by number`);
    t.same((await pagesByCursor(a, body, 59)).sks, want, `a string range ${order}: by cursor`);
  }
  const rex = await a.post('/dynamic-query/explain', { datatype: DT, filter: range, sort: 'data.code', options: { page: 3, pageSize: 30 } });
  t.match(rex.body, { sort: { by: 'index' }, docsExamined: 30 });
});

t.test('listing index order - writes between cursor pages skip and repeat nothing', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  const rs = Array.from({ length: 600 }, (_, i) => gadget({ price: i * 10 }));
  await put(app, rs);
  await declare(app, 'data.price');
  const added: StoredRecord[] = [];
  const gone = new Set<string>();
  const seen = await pagesByCursor(a, { query: {}, options: { sort: 'data.price' } }, 50, async (page) => {
    // After each page: one priced past every one listed, one below the cursor, one ahead removed.
    const fresh = gadget({ price: 100_000 + page });
    const cheap = gadget({ price: -page });
    added.push(fresh);
    const ahead = rs[599 - page];
    gone.add(ahead.sk);
    await put(app, [fresh, cheap], [ahead.sk]);
  });
  t.equal(new Set(seen.sks).size, seen.sks.length, 'no record twice');
  const want = [...rs.filter((r) => !gone.has(r.sk)), ...added].sort((x, y) => (x.data.price as number) - (y.data.price as number)).map((r) => r.sk);
  t.same(seen.sks, want, 'every record in order, and every one added past the cursor; none removed ahead');
});

t.test('listing index order - where the index does not order as the store sorts, the usual way gives the same answers', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  await put(app, Array.from({ length: 200 }, (_, i) => gadget({ price: i % 50, code: `k${i % 70}` })));
  await declare(app, 'data.price');
  await declare(app, 'data.code');
  const by = async (sort: string, filter: Filter = {}) => {
    const r = await a.post('/dynamic-query/explain', { datatype: DT, filter, sort, options: { page: 2, pageSize: 30 } });
    const page = await a.post(`/repository/find/${DT}`, { query: filter, options: { sort, page: 2, pageSize: 30 } });
    t.same(page.body.data.map((x: StoredRecord) => x.sk), fullRead(app, filter, sort, 'asc').slice(30, 60), `${sort}: the store's order`);
    return r.body.sort.by as string;
  };
  t.equal(await by('data.price'), 'index');
  const missing = gadget({ code: 'k1' });
  await put(app, [missing]);
  t.equal(await by('data.price'), 'memory', 'a record without the field (first in the sort, in no index key)');
  await put(app, [], [missing.sk]);
  t.equal(await by('data.price'), 'index');
  const flag = gadget({ price: true, code: 'k2' });
  await put(app, [flag]);
  t.equal(await by('data.price'), 'memory', 'a boolean (the index keeps it among the strings, the sort after them)');
  await put(app, [], [flag.sk]);

  t.equal(await by('data.code'), 'index');
  const numeric = Array.from({ length: 200 }, (_, i) => gadget({ code: String(i * 3), price: 1 }));
  await put(app, numeric);
  t.equal(await by('data.code', { 'data.code': { $lt: 'c' } }), 'memory', 'strings all numeric in the range (the sort reads them as numbers)');
  t.equal(await by('data.code'), 'index', 'beside other strings they sort as strings');
  const long = gadget({ code: `k1${'x'.repeat(400)}`, price: 2 });
  await put(app, [long]);
  const near = fullRead(app, {}, 'data.code', 'asc').indexOf(long.sk);
  const onPage = await a.post(`/repository/find/${DT}`, { query: {}, options: { sort: 'data.code', page: Math.floor(near / 30) + 1, pageSize: 30 } });
  t.ok(onPage.body.data.some((r: StoredRecord) => r.sk === long.sk), 'a page holding a string longer than its key');
  t.same(onPage.body.data.map((r: StoredRecord) => r.sk), fullRead(app, {}, 'data.code', 'asc').slice(Math.floor(near / 30) * 30, Math.floor(near / 30) * 30 + 30), 'is read the usual way, in the store order');
  const cursorThere = await a.post(`/repository/find/${DT}`, { query: { 'data.name': { $exists: false } }, options: { sort: 'data.code', after: 'WyJrMSIsImcwMDAwMDEiXQ' } });
  t.equal(cursorThere.status, 400, 'a cursor where no index order answers');
});
