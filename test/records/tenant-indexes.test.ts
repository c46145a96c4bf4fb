// Indexes an organisation declares (issue 33, part 2): built in the background while writes go on,
// used by its finds once ready (explain shows them, results are a scan's), unique ones refuse
// duplicates, capped per organisation, invisible to others, deleted, and kept across a restart.
import t from 'tap';
import type { LmdbStore } from '../../core/store/lmdb-store.js';
import type { RunningApp } from '../../edge/app.js';
import { staffHeaders, startTestApp, tempDir } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { createBody, seed, setup, A, B } from './setup.js';

const DT = 'tx_item';
type Client = ReturnType<typeof client>;

const admin = (app: RunningApp, org: string) => client(app.url, staffHeaders(app, org, ['User', 'Admin']));

/** Polls an index until it leaves `building`. */
async function settled(c: Client, id: string): Promise<Record<string, any>> {
  for (let i = 0; i < 2000; i++) {
    const r = await c.get(`/repository/indexes/${id}`);
    if (r.status !== 200) throw new Error(`index ${id}: ${r.status} ${r.text}`);
    if (r.body.state !== 'building') return r.body;
    await new Promise((res) => setTimeout(res, 10));
  }
  throw new Error(`index ${id} still building`);
}

/** The sorted ids a find answers, and its explain's top stage and index path. */
async function found(c: Client, datatype: string, query: Record<string, unknown>) {
  const r = await c.post(`/repository/find/${datatype}`, { query, options: { pageSize: 200 } });
  if (r.status !== 200) throw new Error(`find ${r.status} ${r.text}`);
  const e = await c.post('/dynamic-query/explain', { datatype, filter: query, limit: 200 });
  if (e.status !== 200) throw new Error(`explain ${e.status} ${e.text}`);
  const ids = (r.body.data as Array<{ sk: string }>).map((d) => d.sk).sort();
  const plan = e.body.plan;
  return { ids, total: r.body.total as number, stage: plan.stage as string, path: plan.index?.path as string | undefined, indexId: plan.index?.id as string | undefined, ranIn: e.body.ranIn as string };
}

t.test('tenant indexes - declared on a custom datatype, used once ready, with the answers of a scan; arrays of objects are indexed per element', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  const adm = admin(app, A);
  const datas = Array.from({ length: 300 }, (_, i) => {
    const sku = i % 7 === 0 ? i % 3 : `S${i % 25}`;
    const items = [{ sku: `I${i % 11}` }, { sku: `I${(i + 1) % 11}` }];
    return { sku, skuCopy: sku, items, itemsCopy: items, n: i };
  });
  await seed(app, A, DT, datas);
  // A query worker started before the declaration must see it (a non-simple filter runs there).
  const inWorker = { 'data.sku': 'S3', 'data.n': { $not: { $lt: 0 } } };
  const before = await found(a, DT, inWorker);
  t.equal(before.stage, 'COLLSCAN');
  t.equal(before.ranIn, 'query-worker');

  const made = await adm.post('/repository/indexes', { datatype: DT, path: 'data.sku' });
  t.equal(made.status, 202, made.text);
  t.match(made.body, { datatype: DT, path: 'data.sku', unique: false, state: 'building', progress: { done: 0, total: 300 } });
  t.ok(/^[0-9a-f]{24}$/.test(made.body.id));
  const items = await adm.post('/repository/indexes', { datatype: DT, path: 'data.items.sku' });
  t.equal(items.status, 202, items.text);
  const ready = await settled(adm, made.body.id);
  t.match(ready, { state: 'ready', progress: { done: 300, total: 300 } });
  t.equal((await settled(adm, items.body.id)).state, 'ready');

  for (const v of ['S3', 'S24', 0, 1, 2, 'nope']) {
    const byIndex = await found(a, DT, { 'data.sku': v });
    const byScan = await found(a, DT, { 'data.skuCopy': v });
    t.equal(byIndex.stage, 'IXSCAN', `sku ${v}`);
    t.equal(byIndex.path, 'data.sku');
    t.equal(byIndex.indexId, made.body.id, 'explain names the declared index');
    t.equal(byScan.stage, 'COLLSCAN');
    t.same(byIndex.ids, byScan.ids, `sku ${v}: the scan's records`);
  }
  const range = await found(a, DT, { 'data.sku': { $gte: 'S10', $lt: 'S2' } });
  t.same(range.ids, (await found(a, DT, { 'data.skuCopy': { $gte: 'S10', $lt: 'S2' } })).ids, 'a range');
  t.equal(range.stage, 'IXSCAN');
  for (const v of ['I0', 'I5', 'I10']) {
    const byIndex = await found(a, DT, { 'data.items.sku': v });
    t.equal(byIndex.stage, 'IXSCAN', `items.sku ${v}`);
    t.ok(byIndex.ids.length > 0);
    t.same(byIndex.ids, (await found(a, DT, { 'data.itemsCopy.sku': v })).ids, `items.sku ${v}: the scan's records`);
  }
  const after = await found(a, DT, inWorker);
  t.equal(after.ranIn, 'query-worker');
  t.equal(after.stage, 'IXSCAN', 'the worker plans with an index declared after it started');
  t.same(after.ids, before.ids);

  const list = await a.get('/repository/indexes');
  t.equal(list.status, 200);
  t.same(list.body.declared.map((d: { path: string }) => d.path).sort(), ['data.items.sku', 'data.sku']);
  t.ok(Array.isArray(list.body.builtIn));
  const store = app.deps.store as unknown as LmdbStore;
  t.equal(store.usage(A).recordBytes, store.measureRecordBytes(A), "the index entries count in the organisation's storage");

  // A module's index declared after the worker started is seen by it too, and listed read-only.
  await app.deps.store.declareIndex(DT, 'data.skuCopy');
  const builtIn = await found(a, DT, { 'data.skuCopy': 'S3', 'data.n': { $not: { $lt: 0 } } });
  t.equal(builtIn.ranIn, 'query-worker');
  t.equal(builtIn.path, 'data.skuCopy', 'the worker plans with a built-in index declared after it started');
  const listed = (await a.get('/repository/indexes')).body.builtIn as Array<Record<string, unknown>>;
  t.match(listed.find((b) => b.datatype === DT), { id: `builtin:${DT}:data.skuCopy`, path: 'data.skuCopy', builtIn: true, state: 'ready' });
  t.equal((await adm.del(`/repository/indexes/builtin:${DT}:data.skuCopy`)).status, 403, 'a built-in index cannot be deleted');
});

t.test('tenant indexes - every write made during the build is found through the index', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'], config: { store: { indexBuildStep: 10 } } });
  const adm = admin(app, A);
  const seeded = await seed(app, A, DT, Array.from({ length: 3000 }, (_, i) => ({ sku: `S${i % 50}`, copy: `S${i % 50}` })));
  const made = await adm.post('/repository/indexes', { datatype: DT, path: 'data.sku' });
  t.equal(made.status, 202);
  // Writes spread over the build: creates, updates ahead of and behind the cursor, deletes.
  let duringBuild = 0;
  const writes: Promise<unknown>[] = [];
  for (let i = 0; i < 60; i++) {
    const rec = seeded[(i * 97) % seeded.length];
    const step = async () => {
      const c = await a.post('/repository/create', createBody(DT, { sku: 'NEW', copy: 'NEW' }));
      if (c.status !== 201) throw new Error(c.text);
      if (i % 3 === 0) {
        const d = await a.del(`/repository/delete/${DT}/${rec.sk}`);
        if (d.status !== 200) throw new Error(d.text);
      } else {
        const u = await a.post(`/repository/update/${DT}/${rec.sk}`, { data: { sku: `MOVED${i % 4}`, copy: `MOVED${i % 4}` }, version: rec.version });
        if (u.status !== 200) throw new Error(u.text);
      }
      const s = await adm.get(`/repository/indexes/${made.body.id}`);
      if (s.body.state === 'building') duringBuild++;
    };
    writes.push(step());
    if (i % 10 === 9) await Promise.all(writes.splice(0));
  }
  await Promise.all(writes);
  t.ok(duringBuild > 0, `writes landed while the index was building (${duringBuild})`);
  t.equal((await settled(adm, made.body.id)).state, 'ready');
  for (const v of ['NEW', 'MOVED0', 'MOVED1', 'MOVED2', 'MOVED3', 'S0', 'S7', 'S49']) {
    const byIndex = await found(a, DT, { 'data.sku': v });
    t.equal(byIndex.stage, 'IXSCAN');
    const byScan = await found(a, DT, { 'data.copy': v });
    t.equal(byIndex.total, byScan.total, `${v}: as many as a scan finds`);
    if (byScan.total <= 200) t.same(byIndex.ids, byScan.ids, v);
  }
  t.equal((await found(a, DT, { 'data.sku': 'NEW' })).total, 60);
  const store = app.deps.store as unknown as LmdbStore;
  t.equal(store.usage(A).recordBytes, store.measureRecordBytes(A), 'usage counts the entries exactly');
});

t.test('tenant indexes - a unique index refuses duplicates, concurrent ones included; over duplicates it fails with a reason', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  const adm = admin(app, A);
  const made = await adm.post('/repository/indexes', { datatype: 'member', path: 'data.code', unique: true });
  t.equal(made.status, 202);
  t.equal((await settled(adm, made.body.id)).state, 'ready');
  const first = await a.post('/repository/create', createBody('member', { code: 'A1' }));
  t.equal(first.status, 201);
  const dup = await a.post('/repository/create', createBody('member', { code: 'A1' }));
  t.equal(dup.status, 409, dup.text);
  t.match(dup.body.message, /unique/);
  const both = await Promise.all([a.post('/repository/create', createBody('member', { code: 'B2' })), a.post('/repository/create', createBody('member', { code: 'B2' }))]);
  t.same(both.map((r) => r.status).sort(), [201, 409], 'two concurrent creates: one lands');
  const other = await a.post('/repository/create', createBody('member', { code: 'C3' }));
  const moved = await a.post(`/repository/update/member/${other.body.sk}`, { data: { code: 'A1' }, version: 1 });
  t.equal(moved.status, 409, 'an update onto a held value');
  t.equal((await a.post(`/repository/update/member/${first.body.sk}`, { data: { code: 'A1', x: 1 }, version: 1 })).status, 200, 'a record keeps its own value');
  t.equal((await a.post('/repository/create', createBody('member', { other: 1 }))).status, 201, 'no value: not held to it');
  t.equal((await a.post('/repository/create', createBody('member', { other: 2 }))).status, 201);
  // Another organisation's values are its own.
  const b = admin(app, B);
  t.equal((await b.post('/repository/create', createBody('member', { code: 'A1' }))).status, 201);

  await seed(app, A, 'guest', [{ code: 'X' }, { code: 'Y' }, { code: 'X' }]);
  const over = await adm.post('/repository/indexes', { datatype: 'guest', path: 'data.code', unique: true });
  const failed = await settled(adm, over.body.id);
  t.equal(failed.state, 'failed');
  t.match(failed.reason, /both hold "X"/);
  t.equal((await found(a, 'guest', { 'data.code': 'X' })).stage, 'COLLSCAN', 'a failed index is not used');
  t.equal((await a.post('/repository/create', createBody('guest', { code: 'Y' }))).status, 201, 'nor enforced');

  const del = await adm.del(`/repository/indexes/${made.body.id}`);
  t.equal(del.status, 200);
  t.equal((await a.post('/repository/create', createBody('member', { code: 'A1' }))).status, 201, 'a deleted unique index refuses nothing');
});

t.test('tenant indexes - paths, roles and the cap are checked; built-in indexes cannot be deleted', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'], config: { store: { maxTenantIndexes: 2 } } });
  const adm = admin(app, A);
  for (const path of ['name', 'data', 'data.items.0.sku', 'data.a b', 'data.__proto__', 'data.' + 'x.'.repeat(10) + 'y', 'data.' + 'x'.repeat(300)]) {
    const r = await adm.post('/repository/indexes', { datatype: DT, path });
    t.equal(r.status, 400, `${path}: ${r.text}`);
  }
  t.equal((await adm.post('/repository/indexes', { datatype: 'apikey', path: 'data.key' })).status, 403, 'an account datatype');
  t.equal((await a.post('/repository/indexes', { datatype: DT, path: 'data.x' })).status, 403, 'role User');
  t.equal((await adm.post('/repository/indexes', { datatype: DT, path: 'data.x' })).status, 202);
  t.equal((await adm.post('/repository/indexes', { datatype: DT, path: 'data.x' })).status, 409, 'the same path twice');
  t.equal((await adm.post('/repository/indexes', { datatype: DT, path: 'data.y' })).status, 202);
  const third = await adm.post('/repository/indexes', { datatype: DT, path: 'data.z' });
  t.equal(third.status, 409, 'past the cap');
  t.match(third.body.message, /STORE_MAX_TENANT_INDEXES/);
  t.equal((await admin(app, B).post('/repository/indexes', { datatype: DT, path: 'data.z' })).status, 202, "another organisation's cap is its own");
  const del = await adm.del('/repository/indexes/builtin:lead:data.x');
  t.equal(del.status, 403);
  t.equal((await adm.del('/repository/indexes/0123456789abcdef01234567')).status, 404);
});

t.test('tenant indexes - another organisation neither sees nor uses one; a deleted one is no longer used', async (t) => {
  const { app, a, b } = await setup(t, { modules: ['records'] });
  const adm = admin(app, A);
  await seed(app, A, DT, Array.from({ length: 50 }, (_, i) => ({ sku: `S${i % 5}` })));
  await seed(app, B, DT, Array.from({ length: 50 }, (_, i) => ({ sku: `S${i % 5}` })));
  const made = await adm.post('/repository/indexes', { datatype: DT, path: 'data.sku' });
  await settled(adm, made.body.id);
  t.equal((await found(a, DT, { 'data.sku': 'S1' })).stage, 'IXSCAN');
  const theirs = await found(b, DT, { 'data.sku': 'S1' });
  t.equal(theirs.stage, 'COLLSCAN', "B's finds do not use A's index");
  t.equal(theirs.total, 10);
  t.same((await b.get('/repository/indexes')).body.declared, []);
  t.equal((await b.get(`/repository/indexes/${made.body.id}`)).status, 404);
  t.equal((await admin(app, B).del(`/repository/indexes/${made.body.id}`)).status, 404);

  t.equal((await adm.del(`/repository/indexes/${made.body.id}`)).status, 200);
  const after = await found(a, DT, { 'data.sku': 'S1' });
  t.equal(after.stage, 'COLLSCAN', 'deleted: no longer used');
  t.equal(after.total, 10);
  t.same((await a.get('/repository/indexes')).body.declared, []);
  t.equal((await a.get(`/repository/indexes/${made.body.id}`)).status, 404);
  const store = app.deps.store as unknown as LmdbStore;
  await store.indexBuildsIdle();
  t.equal(store.usage(A).recordBytes, store.measureRecordBytes(A), 'its entries are gone from the storage count');
  const again = await adm.post('/repository/indexes', { datatype: DT, path: 'data.sku' });
  t.equal(again.status, 202, 'declared again once removed');
  await settled(adm, again.body.id);

  // A module that comes to index the same path takes it over: the entries stay, no longer the tenant's.
  const own = store.usage(A).recordBytes;
  await app.deps.store.declareIndex(DT, 'data.sku');
  t.same((await a.get('/repository/indexes')).body.declared, [], 'the declaration ended');
  t.ok(store.usage(A).recordBytes < own);
  t.equal(store.usage(A).recordBytes, store.measureRecordBytes(A));
  const byModule = await found(a, DT, { 'data.sku': 'S1' });
  t.equal(byModule.stage, 'IXSCAN');
  t.equal(byModule.indexId, undefined);
  t.equal(byModule.total, 10);
});

t.test('tenant indexes - a restart keeps a ready index and completes an interrupted build', async (t) => {
  const dataDir = tempDir(t);
  const config = { store: { indexBuildStep: 5 } };
  const first = await setup(t, { modules: ['records'], dataDir, config });
  await seed(first.app, A, DT, Array.from({ length: 2000 }, (_, i) => ({ sku: `S${i % 40}`, copy: `S${i % 40}` })));
  const adm1 = admin(first.app, A);
  const done = await adm1.post('/repository/indexes', { datatype: 'small', path: 'data.k' });
  await settled(adm1, done.body.id);
  const made = await adm1.post('/repository/indexes', { datatype: DT, path: 'data.sku' });
  t.equal(made.status, 202);
  await new Promise((res) => setTimeout(res, 30));
  const mid = await adm1.get(`/repository/indexes/${made.body.id}`);
  t.equal(mid.body.state, 'building', 'still building when the node stops');
  await first.app.close();

  const app = await startTestApp(t, { modules: ['records'], dataDir, config });
  const adm = admin(app, A);
  const a = client(app.url, staffHeaders(app, A));
  t.equal((await adm.get(`/repository/indexes/${done.body.id}`)).body.state, 'ready', 'a ready index is kept');
  const ready = await settled(adm, made.body.id);
  t.match(ready, { state: 'ready', progress: { done: 2000, total: 2000 } });
  const byIndex = await found(a, DT, { 'data.sku': 'S7' });
  t.equal(byIndex.stage, 'IXSCAN');
  t.same(byIndex.ids, (await found(a, DT, { 'data.copy': 'S7' })).ids);
  const store = app.deps.store as unknown as LmdbStore;
  t.equal(store.usage(A).recordBytes, store.measureRecordBytes(A));
});
