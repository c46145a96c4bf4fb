// /repository/* writes and reads: success paths, validation, refusals, auth and tenant isolation.
import t from 'tap';
import { staffHeaders } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { A, B, createBody, seed, setup } from './setup.js';

const SENSITIVE = ['user', 'customer', 'apikey', 'user_security', 'two_factor_backup', 'passcode_card'];
const UNREADABLE = ['apikey', 'user_security', 'two_factor_backup', 'passcode_card'];

t.test('repository', async (t) => {
  const { app, a, b, as, anon } = await setup(t, { modules: ['records'] });

  t.test('create - answers 201 with the record at version 1, state new unless given', async (t) => {
    const r = await a.post('/repository/create', createBody('sf_product', { name: 'Espresso', price: '2.50' }));
    t.equal(r.status, 201);
    t.match(r.body, { pk: A, datatype: 'sf_product', version: 1, state: 'new', data: { name: 'Espresso', price: '2.50' } });
    t.match(r.body.sk, /^[0-9a-f]{24}$/);
    t.equal(r.body.createdate, r.body.modifydate);
    t.ok(!Number.isNaN(Date.parse(r.body.createdate)));
    const s = await a.post('/repository/create', createBody('lead', { status: 'open' }, { state: 'draft' }));
    t.equal(s.status, 201);
    t.equal(s.body.state, 'draft');
    // version may be left out (it is 0 by definition)
    const v = await a.post('/repository/create', { datatype: 'lead', data: {}, isNew: true });
    t.equal(v.status, 201);
    const g = await a.get(`/repository/get/sf_product/${r.body.sk}`);
    t.equal(g.status, 200);
    t.same(g.body, r.body);
  });

  t.test('create - refuses a body that is not a new record, naming the field', async (t) => {
    const cases: Array<[unknown, RegExp]> = [
      [{ datatype: 'lead', data: {}, version: 0 }, /isNew is required/],
      [{ datatype: 'lead', data: {}, isNew: false, version: 0 }, /isNew/],
      [{ datatype: 'lead', data: {}, isNew: true, version: 3 }, /version/],
      [{ data: {}, isNew: true, version: 0 }, /datatype is required/],
      [{ datatype: 'lead', isNew: true, version: 0 }, /data is required/],
      [{ datatype: 'lead', data: 'x', isNew: true, version: 0 }, /body\/data/],
      [{ datatype: 'lead', data: [], isNew: true, version: 0 }, /body\/data/],
      [{ datatype: '../etc', data: {}, isNew: true, version: 0 }, /body\/datatype/],
      [{ datatype: 'lead', data: {}, isNew: true, version: 0, pk: 'other' }, /pk is not allowed/],
      [{ datatype: 'lead', data: {}, isNew: true, version: 0, state: '' }, /body\/state/],
      [{ datatype: 'lead', data: {}, isNew: true, version: 0, idempotencyKey: 'abc' }, /idempotencyKey must be a UUID/],
    ];
    for (const [body, msg] of cases) {
      const r = await a.post('/repository/create', body);
      t.equal(r.status, 400, JSON.stringify(body));
      t.equal(r.body.error, 'Bad Request');
      t.match(JSON.stringify(r.body.message), msg, JSON.stringify(body));
    }
    const bad = await a.post('/repository/create', '{not json', { 'content-type': 'application/json' });
    t.equal(bad.status, 400);
  });

  t.test('create and update - refused on the account datatypes (spec: Authentication 6)', async (t) => {
    for (const dt of [...SENSITIVE, 'outbox_message']) {
      const r = await a.post('/repository/create', createBody(dt, { email: 'x@example.com' }));
      t.equal(r.status, 403, dt);
      t.equal(r.body.error, 'Forbidden');
    }
    const [user] = await seed(app, A, 'user', [{ email: 'u@example.com', name: 'U' }]);
    const u = await a.post(`/repository/update/user/${user.sk}`, { data: { roles: ['Admin'] }, version: 1 });
    t.equal(u.status, 403);
    t.match(u.body.message, /refuses updates of user/);
    t.equal(app.deps.store.getRecord(A, 'user', user.sk)?.version, 1);
  });

  t.test('get - 404 when absent, 400 for an id that cannot be one', async (t) => {
    const r = await a.get('/repository/get/sf_product/0123456789abcdef01234567');
    t.equal(r.status, 404);
    t.same(r.body, { statusCode: 404, message: 'sf_product 0123456789abcdef01234567 not found', error: 'Not Found' });
    const bad = await a.get('/repository/get/sf_product/' + encodeURIComponent('a b'));
    t.equal(bad.status, 400);
    t.match(bad.body.message, [/params\/id/]);
  });

  t.test('update - merges data fields, bumps the version, refuses a stale version', async (t) => {
    const c = await a.post('/repository/create', createBody('sf_order', { total: '10', note: 'keep me', lines: [1] }));
    const id = c.body.sk;
    const u = await a.post(`/repository/update/sf_order/${id}`, { data: { total: '12', lines: [1, 2] }, version: 1 });
    t.equal(u.status, 200);
    t.match(u.body, { sk: id, version: 2, data: { total: '12', note: 'keep me', lines: [1, 2] } });
    t.equal(u.body.createdate, c.body.createdate);
    t.ok(u.body.modifydate >= c.body.modifydate);
    const stale = await a.post(`/repository/update/sf_order/${id}`, { data: { total: '0' }, version: 1 });
    t.equal(stale.status, 409);
    t.equal(stale.body.error, 'Conflict');
    t.match(stale.body.message, /expected version 1, stored version is 2/);
    const st = await a.post(`/repository/update/sf_order/${id}`, { data: {}, version: 2, state: 'closed' });
    t.match(st.body, { version: 3, state: 'closed', data: { total: '12' } });
    const missing = await a.post('/repository/update/sf_order/0123456789abcdef01234567', { data: {}, version: 1 });
    t.equal(missing.status, 404);
    for (const body of [{ data: {} }, { version: 1 }, { data: {}, version: 0 }, { data: {}, version: '2' }, { data: 1, version: 2 }]) {
      const r = await a.post(`/repository/update/sf_order/${id}`, body);
      t.equal(r.status, 400, JSON.stringify(body));
      t.match(JSON.stringify(r.body.message), /body\/(data|version)/);
    }
  });

  t.test('update-partial - data.<path> sets inside data, a bare key lands at the record root', async (t) => {
    const c = await a.post('/repository/create', createBody('sf_order', { productItems: [{ sku: 'a' }], total: '5' }));
    const id = c.body.sk;
    const inData = await a.post(`/repository/update-partial/sf_order/${id}`, { 'data.productItems': [{ sku: 'b' }] });
    t.equal(inData.status, 200);
    t.equal(inData.text, 'true');
    let g = await a.get(`/repository/get/sf_order/${id}`);
    t.same(g.body.data, { productItems: [{ sku: 'b' }], total: '5' });
    t.equal(g.body.version, 2);
    t.notOk('productItems' in g.body);

    const atRoot = await a.post(`/repository/update-partial/sf_order/${id}`, { productItems: [{ sku: 'c' }] });
    t.equal(atRoot.text, 'true');
    g = await a.get(`/repository/get/sf_order/${id}`);
    t.same(g.body.productItems, [{ sku: 'c' }], 'the bare key is at the root');
    t.same(g.body.data.productItems, [{ sku: 'b' }], 'data is untouched');
    t.equal(g.body.version, 3);

    await a.post(`/repository/update-partial/sf_order/${id}`, {
      'data.customer.name': 'Ann',
      'data.productItems.0.qty': 2,
      'data.productItems.2': { sku: 'z' },
      state: 'open',
    });
    g = await a.get(`/repository/get/sf_order/${id}`);
    t.same(g.body.data.customer, { name: 'Ann' });
    t.same(g.body.data.productItems, [{ sku: 'b', qty: 2 }, null, { sku: 'z' }]);
    t.equal(g.body.state, 'open');

    const stale = await a.post(`/repository/update-partial/sf_order/${id}`, { 'data.total': '6', version: 1 });
    t.equal(stale.status, 409);
    const fresh = await a.post(`/repository/update-partial/sf_order/${id}`, { 'data.total': '6', version: 4 });
    t.equal(fresh.status, 200);
    t.equal(app.deps.store.getRecord(A, 'sf_order', id)?.data.total, '6');

    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{}, /at least one key/],
      [{ sk: 'x' }, /sk is set by the service/],
      [{ 'version.x': 1 }, /version/],
      [{ createdate: 'x' }, /createdate/],
      [{ 'data..x': 1 }, /not a valid field path/],
      [{ 'data.__proto__.x': 1 }, /the key "__proto__" is not allowed/],
      [{ 'data.$set': 1 }, /not a valid field path/],
      [{ data: 'flat' }, /data must be an object/],
      [{ state: 5 }, /state must be a string/],
      [{ 'data.total.x': 1 }, /data.total is not an object/],
      [{ 'data.total': 1, version: 'one' }, /version/],
    ];
    for (const [body, msg] of bad) {
      const r = await a.post(`/repository/update-partial/sf_order/${id}`, body);
      t.equal(r.status, 400, JSON.stringify(body));
      t.match(String(r.body.message), msg, JSON.stringify(body));
    }
    const missing = await a.post('/repository/update-partial/sf_order/0123456789abcdef01234567', { 'data.x': 1 });
    t.equal(missing.status, 404);
  });

  t.test('update-partial - refused with a message on the account datatypes and access cards', async (t) => {
    for (const dt of SENSITIVE) {
      const [rec] = await seed(app, A, dt, [{ email: 'p@example.com' }]);
      const r = await a.post(`/repository/update-partial/${dt}/${rec.sk}`, { 'data.email': 'evil@example.com' });
      t.equal(r.status, 403, dt);
      t.match(r.body.message, new RegExp(`refuses partial updates of ${dt}`));
      t.equal(app.deps.store.getRecord(A, dt, rec.sk)?.data.email, 'p@example.com');
    }
  });

  t.test('delete - removes a record; refused on user and customer', async (t) => {
    const c = await a.post('/repository/create', createBody('task', { title: 'x' }));
    const stale = await a.del(`/repository/delete/task/${c.body.sk}?version=7`);
    t.equal(stale.status, 409);
    const d = await a.del(`/repository/delete/task/${c.body.sk}`);
    t.equal(d.status, 200);
    t.same(d.body, { deleted: true, datatype: 'task', sk: c.body.sk });
    t.equal((await a.get(`/repository/get/task/${c.body.sk}`)).status, 404);
    t.equal((await a.del(`/repository/delete/task/${c.body.sk}`)).status, 404);
    t.equal((await a.del(`/repository/delete/task/${c.body.sk}?version=x`)).status, 400);
    for (const dt of SENSITIVE) {
      const [rec] = await seed(app, A, dt, [{ email: 'd@example.com' }]);
      const r = await a.del(`/repository/delete/${dt}/${rec.sk}`);
      t.equal(r.status, 403, dt);
      t.match(r.body.message, /refuses deletes/);
      t.ok(app.deps.store.getRecord(A, dt, rec.sk), `${dt} still exists`);
    }
  });

  t.test('reads - user and customer records never carry credential fields', async (t) => {
    const [u] = await seed(app, A, 'user', [
      { email: 'cred@example.com', name: 'Cred', passwordHash: 'scrypt$abc', pin: '1234', profile: { totpSecret: 'JBSW', city: 'Oslo' } },
    ], { extra: { password: 'root-level' } });
    const g = await a.get(`/repository/get/user/${u.sk}`);
    t.equal(g.status, 200);
    t.same(g.body.data, { email: 'cred@example.com', name: 'Cred', profile: { city: 'Oslo' } });
    t.notOk('password' in g.body);
    const f = await a.post('/repository/find/user', { query: { 'data.email': 'cred@example.com' } });
    t.equal(f.body.total, 1);
    t.notOk(JSON.stringify(f.body).match(/scrypt|1234|JBSW|root-level/));
    const byAttr = await a.get('/repository/find-by-attribute/user/email/cred@example.com');
    t.notOk(JSON.stringify(byAttr.body).match(/scrypt|1234|JBSW/));
    const page = await a.get('/repository/find-page-data/user');
    t.notOk(JSON.stringify(page.body).match(/scrypt|1234|JBSW|root-level/));
    // Querying or sorting by a hidden field would leak it through `total` or the order.
    const oracle = await a.post('/repository/find/user', { query: { 'data.passwordHash': { $regex: '^scrypt' } } });
    t.equal(oracle.status, 403);
    const sorted = await a.post('/repository/find/user', { options: { sort: 'data.passwordHash' } });
    t.equal(sorted.status, 403);
    const attr = await a.get('/repository/find-by-attribute/user/passwordHash/x');
    t.equal(attr.status, 403);
  });

  t.test('reads - user_security, two_factor_backup, apikey and passcode_card are refused on every read route', async (t) => {
    for (const dt of UNREADABLE) {
      const [rec] = await seed(app, A, dt, [{ secret: 's3cret', name: 'k' }]);
      const calls = [
        await a.get(`/repository/get/${dt}/${rec.sk}`),
        await a.post(`/repository/find/${dt}`, {}),
        await a.get(`/repository/find-page-data/${dt}`),
        await a.get(`/repository/find-by-attribute/${dt}/name/k`),
      ];
      for (const r of calls) {
        t.equal(r.status, 403, dt);
        t.notOk(r.text.includes('s3cret'));
      }
    }
  });

  t.test('auth - staff only: 401 without a token, 403 for a customer, 400 without orgid', async (t) => {
    const c = await a.post('/repository/create', createBody('lead', { status: 'new' }));
    const id = c.body.sk;
    const customer = as({ org: A, kind: 'customer', sub: 'c1', customerId: 'c1', email: 'c@example.com' });
    const routes: Array<[string, string, unknown?]> = [
      ['POST', '/repository/create', createBody('lead', {})],
      ['POST', `/repository/update/lead/${id}`, { data: {}, version: 1 }],
      ['POST', `/repository/update-partial/lead/${id}`, { 'data.x': 1 }],
      ['DELETE', `/repository/delete/lead/${id}`],
      ['GET', `/repository/get/lead/${id}`],
      ['POST', '/repository/find/lead', {}],
      ['GET', '/repository/find-page-data/lead'],
      ['GET', '/repository/find-by-attribute/lead/status/new'],
    ];
    const noOrgid = client(app.url, { authorization: staffHeaders(app, A).authorization });
    const send = (cl: ReturnType<typeof anon>, [m, p, body]: [string, string, unknown?]) =>
      m === 'GET' ? cl.get(p) : m === 'DELETE' ? cl.del(p) : cl.post(p, body);
    for (const r of routes) {
      t.equal((await send(anon(A), r)).status, 401, `${r[0]} ${r[1]} without a token`);
      t.equal((await send(customer, r)).status, 403, `${r[0]} ${r[1]} with a customer token`);
      t.equal((await send(noOrgid, r)).status, 400, `${r[0]} ${r[1]} without orgid`);
    }
    t.equal(app.deps.store.getRecord(A, 'lead', id)?.version, 1, 'nothing was written by refused calls');
  });

  t.test('tenants - a token of A with orgid B is refused, and B\'s ids are not found through A', async (t) => {
    const inB = await b.post('/repository/create', createBody('lead', { status: 'b-only' }));
    t.equal(inB.status, 201);
    t.equal(inB.body.pk, B);
    const id = inB.body.sk;
    // A's staff token presented to B
    const aTokenAtB = { orgid: B };
    t.equal((await a.get(`/repository/get/lead/${id}`, aTokenAtB)).status, 403);
    t.equal((await a.post('/repository/create', createBody('lead', {}), aTokenAtB)).status, 403);
    t.equal((await a.post(`/repository/update/lead/${id}`, { data: { status: 'x' }, version: 1 }, aTokenAtB)).status, 403);
    t.equal((await a.del(`/repository/delete/lead/${id}`, aTokenAtB)).status, 403);
    // B's id through A's own routes
    t.equal((await a.get(`/repository/get/lead/${id}`)).status, 404);
    t.equal((await a.post(`/repository/update/lead/${id}`, { data: { status: 'x' }, version: 1 })).status, 404);
    t.equal((await a.post(`/repository/update-partial/lead/${id}`, { 'data.status': 'x' })).status, 404);
    t.equal((await a.del(`/repository/delete/lead/${id}`)).status, 404);
    const found = await a.post('/repository/find/lead', { query: { 'data.status': 'b-only' } });
    t.equal(found.body.total, 0);
    const byAttr = await a.get('/repository/find-by-attribute/lead/status/b-only');
    t.equal(byAttr.body.total, 0);
    const page = await a.get('/repository/find-page-data/lead?ps=200');
    t.notOk(page.body.data.some((r: { sk: string }) => r.sk === id));
    t.same(app.deps.store.getRecord(B, 'lead', id)?.data, { status: 'b-only' }, "B's record is unchanged");
    t.equal(app.deps.store.getRecord(A, 'lead', id), undefined, 'nothing of B leaked into A');
  });

  t.test('reference - every route of the area is documented under its section', async (t) => {
    const doc = (await a.get('/openapi.json')).body;
    const want: Array<[string, string, string]> = [
      ['post', '/repository/create', 'Repository'],
      ['post', '/repository/update/{datatype}/{id}', 'Repository'],
      ['post', '/repository/update-partial/{datatype}/{id}', 'Repository'],
      ['delete', '/repository/delete/{datatype}/{id}', 'Repository'],
      ['get', '/repository/get/{datatype}/{id}', 'Repository'],
      ['post', '/repository/find/{datatype}', 'Repository'],
      ['get', '/repository/find-page-data/{datatype}', 'Repository'],
      ['get', '/repository/find-by-attribute/{datatype}/{attribute}/{value}', 'Repository'],
      ...['find', 'findOne', 'count', 'distinct', 'aggregate'].map((op): [string, string, string] => ['post', `/dynamic-query/${op}`, 'Dynamic query']),
      ['post', '/notes/reservation/{id}', 'Notes'],
      ['get', '/notes/reservation/{id}', 'Notes'],
      ['get', '/client-data/profile', 'Customer self-service'],
      ['get', '/client-data/orders', 'Customer self-service'],
      ['get', '/client-data/reservations', 'Customer self-service'],
      ['get', '/client-data/reservations/{id}', 'Customer self-service'],
    ];
    for (const [method, path, tag] of want) t.same(doc.paths[path]?.[method]?.tags, [tag], `${method} ${path}`);
  });
});
