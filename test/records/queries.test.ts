// /repository/find, find-page-data and find-by-attribute: the list envelope, paging, sort order,
// values compared as stored, declared indexes, validation.
import t from 'tap';
import { A, B, seed, setup } from './setup.js';

t.test('queries', async (t) => {
  const { app, a, b } = await setup(t, { modules: ['records'] });
  // 45 products; prices are numeric strings whose text order differs from their numeric order.
  const prices = Array.from({ length: 45 }, (_, i) => String((i * 37) % 101));
  await seed(app, A, 'sf_product', prices.map((price, i) => ({ name: `p${String(i).padStart(2, '0')}`, price, kind: i % 3 === 0 ? 'food' : 'drink' })));
  await seed(app, B, 'sf_product', [{ name: 'b-only', price: '1', kind: 'food' }]);
  const byNumberDesc = [...prices].sort((x, y) => Number(y) - Number(x));

  t.test('find - paging reports the exact total and hasNext on every page', async (t) => {
    const pages = [];
    for (let page = 1; page <= 3; page++) {
      const r = await a.post('/repository/find/sf_product', { query: {}, options: { page, pageSize: 20 } });
      t.equal(r.status, 200);
      pages.push(r.body);
    }
    t.same(pages.map((p) => [p.total, p.hasNext, p.page, p.pageSize, p.data.length]), [
      [45, true, 1, 20, 20],
      [45, true, 2, 20, 20],
      [45, false, 3, 20, 5],
    ]);
    const sks = pages.flatMap((p) => p.data.map((r: { sk: string }) => r.sk));
    t.equal(new Set(sks).size, 45, 'pages do not overlap');
    const beyond = await a.post('/repository/find/sf_product', { options: { page: 9, pageSize: 20 } });
    t.same([beyond.body.data, beyond.body.total, beyond.body.hasNext], [[], 45, false]);
    const exact = await a.post('/repository/find/sf_product', { options: { page: 3, pageSize: 15 } });
    t.same([exact.body.data.length, exact.body.hasNext], [15, false], 'the last full page has no next');
    const dflt = await a.post('/repository/find/sf_product', {});
    t.equal(dflt.body.pageSize, 20, 'default page size');
  });

  t.test('find - sorts numeric strings as numbers when every value is numeric', async (t) => {
    const asc = await a.post('/repository/find/sf_product', { options: { sort: 'data.price', sortType: 'asc', pageSize: 200 } });
    const values = asc.body.data.map((r: { data: { price: string } }) => Number(r.data.price));
    t.same(values, [...values].sort((x, y) => x - y));
    t.not(values.join(), [...prices].sort().map(Number).join(), 'not text order');
    const desc = await a.post('/repository/find/sf_product', { options: { sort: 'data.price', sortType: 'desc', pageSize: 5 } });
    t.same(desc.body.data.map((r: { data: { price: string } }) => r.data.price), byNumberDesc.slice(0, 5));
    t.same(byNumberDesc.slice(0, 3), ['100', '97', '94'], 'the fixture has 100 first: text order would put it after 97');
  });

  t.test('find - values compare as stored', async (t) => {
    await seed(app, A, 'stock', [{ qty: '5' }, { qty: 5 }, { qty: '05' }]);
    const text = await a.post('/repository/find/stock', { query: { 'data.qty': '5' } });
    t.same(text.body.data.map((r: { data: unknown }) => r.data), [{ qty: '5' }]);
    const num = await a.post('/repository/find/stock', { query: { 'data.qty': 5 } });
    t.same(num.body.data.map((r: { data: unknown }) => r.data), [{ qty: 5 }]);
    const op = await a.post('/repository/find/sf_product', { query: { kind: 'food' } });
    t.equal(op.body.total, 0, 'a bare field is a root field, and products have none');
    const food = await a.post('/repository/find/sf_product', { query: { 'data.kind': 'food', 'data.name': { $regex: '^p0' } } });
    t.equal(food.body.total, 4);
  });

  t.test('find - no match is 200 with an empty list envelope, never 404', async (t) => {
    for (const r of [
      await a.post('/repository/find/sf_product', { query: { 'data.name': 'nope' } }),
      await a.post('/repository/find/never_written', {}),
      await a.get('/repository/find-page-data/never_written'),
      await a.get('/repository/find-by-attribute/sf_product/name/nope'),
    ]) {
      t.equal(r.status, 200);
      t.same(r.body, { data: [], total: 0, hasNext: false, page: 1, pageSize: 20 });
    }
  });

  t.test('find-page-data - p, ps, s and st page and sort', async (t) => {
    const r = await a.get('/repository/find-page-data/sf_product?p=2&ps=10&s=data.price&st=desc');
    t.equal(r.status, 200);
    t.same([r.body.total, r.body.hasNext, r.body.page, r.body.pageSize], [45, true, 2, 10]);
    t.same(r.body.data.map((x: { data: { price: string } }) => x.data.price), byNumberDesc.slice(10, 20));
    const last = await a.get('/repository/find-page-data/sf_product?p=5&ps=10');
    t.same([last.body.data.length, last.body.hasNext], [5, false]);
  });

  t.test('find-by-attribute - a bare attribute is looked up inside data', async (t) => {
    const bare = await a.get('/repository/find-by-attribute/sf_product/name/p07');
    t.equal(bare.body.total, 1);
    t.equal(bare.body.data[0].data.name, 'p07');
    const full = await a.get('/repository/find-by-attribute/sf_product/data.name/p07');
    t.same(full.body, bare.body);
    const many = await a.get('/repository/find-by-attribute/sf_product/kind/food?ps=4&p=4&s=data.name&st=asc');
    t.same([many.body.total, many.body.data.length, many.body.hasNext], [15, 3, false]);
    // A path parameter is text: it matches the numeric string and the number, nothing else.
    const n = await a.get('/repository/find-by-attribute/stock/qty/5');
    t.same(n.body.data.map((r: { data: unknown }) => r.data).sort((x: { qty: unknown }, y: { qty: unknown }) => typeof x.qty < typeof y.qty ? -1 : 1), [{ qty: 5 }, { qty: '5' }]);
    const enc = await seed(app, A, 'setting', [{ name: 'base setting/1' }]);
    const e = await a.get(`/repository/find-by-attribute/setting/name/${encodeURIComponent('base setting/1')}`);
    t.equal(e.body.data[0]?.sk, enc[0].sk, 'percent-encoded values are decoded');
  });

  t.test('indexes - the known lookup fields are declared and kept current', async (t) => {
    const want: Array<[string, string]> = [
      ['location', 'data.name'],
      ['reservation', 'data.customerId'],
      ['ticket', 'data.event'],
      ['ticket', 'data.number'],
      ['ticket', 'data.holderEmail'],
      ['sf_order', 'data.orderNumber'],
      ['sf_order', 'data.customerId'],
      ['service_point', 'data.name'],
      ['customer', 'data.email'],
      ['user', 'data.email'],
      ['setting', 'data.name'],
      ['lead', 'data.status'],
      ['task', 'data.businessLocationId'],
    ];
    for (const [dt, path] of want) t.ok(app.deps.store.indexedPaths(dt).includes(path), `${dt} ${path}`);
    const loc = await a.post('/repository/create', { datatype: 'location', data: { name: 'downtown' }, isNew: true, version: 0 });
    const byName = await a.post('/repository/find/location', { query: { 'data.name': 'downtown' } });
    t.equal(byName.body.data[0]?.sk, loc.body.sk);
    await a.post(`/repository/update/location/${loc.body.sk}`, { data: { name: 'uptown' }, version: 1 });
    t.equal((await a.post('/repository/find/location', { query: { 'data.name': 'downtown' } })).body.total, 0, 'old value left the index');
    t.equal((await a.post('/repository/find/location', { query: { 'data.name': 'uptown' } })).body.total, 1);
    await a.del(`/repository/delete/location/${loc.body.sk}`);
    t.equal((await a.get('/repository/find-by-attribute/location/name/uptown')).body.total, 0, 'deleted records leave the index');
  });

  t.test('validation - bad paging, sort and queries answer 400 naming the field', async (t) => {
    const bodies: Array<[unknown, RegExp]> = [
      [{ options: { pageSize: 0 } }, /options\/pageSize/],
      [{ options: { pageSize: 201 } }, /options\/pageSize/],
      [{ options: { page: 0 } }, /options\/page/],
      [{ options: { sortType: 'up' } }, /options\/sortType/],
      [{ options: { limit: 5 } }, /limit is not allowed/],
      [{ query: 'x' }, /body\/query/],
      // An operator outside the client allow-list is refused by name before the query runs.
      [{ query: { 'data.a': { $nope: 1 } } }, /may not use \$nope/],
      [{ query: { $where: 'true' } }, /may not use \$where/],
      [{ filter: {} }, /filter is not allowed/],
    ];
    for (const [body, msg] of bodies) {
      const r = await a.post('/repository/find/sf_product', body);
      t.equal(r.status, 400, JSON.stringify(body));
      t.match(JSON.stringify(r.body.message), msg, JSON.stringify(body));
    }
    for (const q of ['p=0', 'ps=500', 'ps=x', 'st=sideways', 's=']) {
      const r = await a.get(`/repository/find-page-data/sf_product?${q}`);
      t.equal(r.status, 400, q);
      t.match(JSON.stringify(r.body.message), /query\//, q);
    }
    t.equal((await a.post('/repository/find/bad%20type', {})).status, 400);
    t.equal((await a.get('/repository/find-by-attribute/sf_product/a..b/x')).status, 400);
  });

  t.test('tenants - each organisation finds only its own records', async (t) => {
    const inB = await b.post('/repository/find/sf_product', {});
    t.equal(inB.body.total, 1);
    t.equal(inB.body.data[0].pk, B);
    const inA = await a.get('/repository/find-by-attribute/sf_product/name/b-only');
    t.equal(inA.body.total, 0);
    t.equal((await a.post('/repository/find/sf_product', { options: { pageSize: 200 } })).body.data.filter((r: { pk: string }) => r.pk !== A).length, 0);
    const aAtB = await a.post('/repository/find/sf_product', {}, { orgid: B });
    t.equal(aAtB.status, 403);
  });
});
