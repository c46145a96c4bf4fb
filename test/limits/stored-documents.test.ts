// Depth counts every way in (issue 29, item 6): a partial update's dotted key counts one level per
// segment against JSON_MAX_DEPTH, and every record is held to the document limits before it
// commits, whatever built it (a partial update, an update's merge, an area's own code). Before, a
// 3,518-segment key answered 200 and left a record no read could decode; 5,000 overflowed the stack.
import t from 'tap';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { createOrg, staffHeaders, startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const app = await startTestApp(t, { modules: ['records'] });
await createOrg(app, 'org-a');
const A = staffHeaders(app, 'org-a');

async function createDeep2() {
  const r = await request(app.url, '/repository/create', { headers: A, body: { datatype: 'deep2', isNew: true, data: { name: 'kept' } } });
  t.equal(r.status, 201);
  return r.body;
}

const path = (segments: number, seg = 'a') => Array.from({ length: segments }, (_, i) => (i === 0 ? 'data' : seg)).join('.');

t.test('stored documents - a dotted key of 3,518 or 5,000 segments is refused, and the record stays readable', async (t) => {
  const rec = await createDeep2();
  for (const segments of [3518, 5000]) {
    const r = await request(app.url, `/repository/update-partial/deep2/${rec.sk}`, { headers: A, body: { [path(segments)]: 1 } });
    t.equal(r.status, 400, `${segments} segments: 400`);
    t.match(r.body.message, /nest the record more than 32 levels deep; at most 32 are allowed \(JSON_MAX_DEPTH\), and each segment of a dotted path counts/);
  }
  const read = await request(app.url, `/repository/get/deep2/${rec.sk}`, { headers: A });
  t.equal(read.status, 200, 'the record still decodes');
  t.same(read.body.data, { name: 'kept' }, 'and nothing was set');
  t.equal(read.body.version, 1);
  const list = await request(app.url, '/repository/find/deep2', { headers: A, body: {} });
  t.equal(list.status, 200, 'its datatype still lists');
  t.equal(list.body.total, 1);
});

t.test('stored documents - segments count with the value: 32 levels in all is the bound', async (t) => {
  const rec = await createDeep2();
  // Each case under its own branch of data, so none lands on another's scalar.
  const at = (segments: number, seg: string, value: unknown) =>
    request(app.url, `/repository/update-partial/deep2/${rec.sk}`, { headers: A, body: { [path(segments, seg)]: value } });
  t.equal((await at(32, 'a', 1)).status, 200, 'a scalar 32 segments down reaches level 32');
  const over = await at(33, 'b', 1);
  t.equal(over.status, 400, 'one segment more does not');
  t.match(over.body.message, /more than 32 levels deep/);
  t.equal((await at(31, 'c', { b: { c: 1 } })).status, 400, '31 segments and a value of 2 levels reach level 33');
  t.equal((await at(30, 'd', { b: { c: 1 } })).status, 200, '30 segments and a value of 2 levels reach level 32');
  const read = await request(app.url, `/repository/get/deep2/${rec.sk}`, { headers: A });
  t.equal(read.status, 200);
});

t.test("stored documents - an update's merge past JSON_MAX_KEYS is refused before it commits", async (t) => {
  const rec = await createDeep2();
  const keys = (from: number) => Object.fromEntries(Array.from({ length: 600 }, (_, i) => [`k${from + i}`, 1]));
  const first = await request(app.url, `/repository/update/deep2/${rec.sk}`, { headers: A, body: { data: keys(0), version: 1 } });
  t.equal(first.status, 200, '601 keys in data: within');
  const second = await request(app.url, `/repository/update/deep2/${rec.sk}`, { headers: A, body: { data: keys(600), version: 2 } });
  t.equal(second.status, 400, 'each body is within the limits, the merged record is not');
  t.match(second.body.message, /record deep2 .*\/data has more than 1000 keys \(JSON_MAX_KEYS\)/);
  const read = await request(app.url, `/repository/get/deep2/${rec.sk}`, { headers: A });
  t.equal(read.body.version, 2, 'the refused write stored nothing');
  t.equal(Object.keys(read.body.data).length, 601);
});

t.test('stored documents - a record built by code past the limits fails its own batch at commit', async (t) => {
  let deep: Record<string, unknown> = { leaf: 1 };
  for (let i = 0; i < 40; i++) deep = { a: deep };
  const rec = newRecord('org-a', 'deep2', { deep }, { now: Date.now() });
  await t.rejects(app.deps.store.commit(new WriteBatch().putRecord(rec, 0)), { code: 'ERR_DOCUMENT_LIMIT', statusCode: 400 });
  t.equal(app.deps.store.getRecord('org-a', 'deep2', rec.sk), undefined, 'nothing was written');
  const fine = newRecord('org-a', 'deep2', { shallow: true }, { now: Date.now() });
  await app.deps.store.commit(new WriteBatch().putRecord(fine, 0));
  t.ok(app.deps.store.getRecord('org-a', 'deep2', fine.sk), 'a record within the limits commits');
});
