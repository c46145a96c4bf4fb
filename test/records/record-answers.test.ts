// GET /repository/get and an exact POST /repository/find answer from the store's cached record
// envelopes (core/store/record-cache.ts): every write through the routes is read back at once,
// the bytes are the routes' serializers', and a stripped datatype stays stripped.
import t from 'tap';
import { createBody, seed, setup, A } from './setup.js';

t.test('record answers', async (t) => {
  const { app, a, b } = await setup(t, { modules: ['records'] });

  t.test('get and find - a record read (and cached) is read anew after each update, partial update and delete through the routes', async (t) => {
    const c = await a.post('/repository/create', createBody('sf_order', { customerId: 'cust-1', total: '10' }));
    const id = c.body.sk;
    const find = () => a.post('/repository/find/sf_order', { query: { 'data.customerId': 'cust-1' } });
    const findAnd = () => a.post('/repository/find/sf_order', { query: { $and: [{ 'data.customerId': 'cust-1' }] } });
    for (let i = 0; i < 2; i++) {
      t.equal((await a.get(`/repository/get/sf_order/${id}`)).body.version, 1);
      t.equal((await find()).body.data[0].version, 1);
    }
    const g = await a.get(`/repository/get/sf_order/${id}`);
    t.equal(g.text, JSON.stringify(c.body), 'the bytes of the record envelope, fields in the schema order');
    t.equal(g.headers['content-type'], 'application/json');
    t.equal(g.headers['cache-control'], 'no-store');
    const f = await find();
    t.equal(f.text, JSON.stringify({ data: [c.body], total: 1, hasNext: false, page: 1, pageSize: 20 }));
    t.equal((await findAnd()).text, f.text, 'the same equality inside $and answers the same bytes');

    const u = await a.post(`/repository/update/sf_order/${id}`, { data: { total: '12' }, version: 1 });
    t.equal(u.status, 200);
    t.same((await a.get(`/repository/get/sf_order/${id}`)).body, u.body);
    t.same((await find()).body.data, [u.body]);

    const p = await a.post(`/repository/update-partial/sf_order/${id}`, { 'data.customerId': 'cust-2', version: 2 });
    t.equal(p.status, 200);
    t.equal((await a.get(`/repository/get/sf_order/${id}`)).body.data.customerId, 'cust-2');
    t.match((await find()).body, { data: [], total: 0 });
    t.equal((await a.post('/repository/find/sf_order', { query: { 'data.customerId': 'cust-2' } })).body.data[0].version, 3);

    const d = await a.del(`/repository/delete/sf_order/${id}`);
    t.equal(d.status, 200);
    t.equal((await a.get(`/repository/get/sf_order/${id}`)).status, 404);
    t.match((await a.post('/repository/find/sf_order', { query: { 'data.customerId': 'cust-2' } })).body, { data: [], total: 0 });
    // Another organisation never reads it, cached or not.
    t.equal((await b.get(`/repository/get/sf_order/${id}`)).status, 404);
  });

  t.test('get and find - a user record read twice is stripped of credential fields both times', async (t) => {
    const [u] = await seed(app, A, 'user', [{ email: 'twice@example.com', name: 'Twice', passwordHash: 'scrypt$abc' }]);
    for (let i = 0; i < 2; i++) {
      const g = await a.get(`/repository/get/user/${u.sk}`);
      t.same(g.body.data, { email: 'twice@example.com', name: 'Twice' });
      const f = await a.post('/repository/find/user', { query: { 'data.email': 'twice@example.com' } });
      t.same(f.body.data[0].data, { email: 'twice@example.com', name: 'Twice' });
      t.notOk(f.text.includes('scrypt'));
    }
  });
});
