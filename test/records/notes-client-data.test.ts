// /notes/reservation/:id (staff) and /client-data/* (the signed-in customer's own data).
import t from 'tap';
import { newId } from '../../core/ids.js';
import { tokenFor } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { A, B, seed, setup } from './setup.js';

t.test('notes', async (t) => {
  const { app, a, b, as, anon } = await setup(t, { modules: ['records'] });
  const [resv] = await seed(app, A, 'reservation', [{ customerId: 'c1', service: 'table' }]);
  const [resvB] = await seed(app, B, 'reservation', [{ customerId: 'c9' }]);
  const path = `/notes/reservation/${resv.sk}`;

  t.test('add and list - appended with author and time, listed oldest first', async (t) => {
    const first = await a.post(path, { comment: 'Window seat please' });
    t.equal(first.status, 201);
    t.match(first.body, {
      pk: A,
      datatype: 'note',
      version: 1,
      data: { comment: 'Window seat please', subjectType: 'reservation', subjectId: resv.sk, author: { id: 'user-1', email: 'staff@example.com' } },
    });
    t.ok(Date.parse(first.body.createdate));
    const other = as({ org: A, sub: 'user-2', email: 'other@example.com' });
    const second = await other.post(path, { comment: 'Allergic to nuts' });
    t.equal(second.status, 201);
    const third = await a.post(path, { comment: 'Window seat please' });
    t.not(third.body.sk, first.body.sk, 'the same text again is another note, nothing is replaced');

    const list = await a.get(path);
    t.equal(list.status, 200);
    t.same(
      list.body.data.map((n: { data: { comment: string; author: { id: string } } }) => [n.data.comment, n.data.author.id]),
      [
        ['Window seat please', 'user-1'],
        ['Allergic to nuts', 'user-2'],
        ['Window seat please', 'user-1'],
      ],
    );
    t.same([list.body.total, list.body.hasNext], [3, false]);
    const paged = await a.get(`${path}?p=2&ps=2`);
    t.same([paged.body.data.length, paged.body.data[0].sk, paged.body.hasNext], [1, third.body.sk, false]);
    const [resv2] = await seed(app, A, 'reservation', [{ customerId: 'c2' }]);
    t.same((await a.get(`/notes/reservation/${resv2.sk}`)).body.data, [], "another reservation's notes are its own");
  });

  t.test('add - an empty or non-string comment is a 400 naming comment', async (t) => {
    for (const body of [{}, { comment: '' }, { comment: '   \n' }, { comment: 5 }, { comment: null }, { comment: ['x'] }, { comment: 'x'.repeat(10_001) }, { comment: 'ok', extra: 1 }]) {
      const r = await a.post(path, body);
      t.equal(r.status, 400, JSON.stringify(body).slice(0, 60));
      t.match(JSON.stringify(r.body.message), /comment|extra/);
    }
    t.equal((await a.get(path)).body.total, 3, 'nothing was added');
  });

  t.test('unknown reservation - 404 on add and list', async (t) => {
    const unknown = `/notes/reservation/${newId()}`;
    t.equal((await a.post(unknown, { comment: 'x' })).status, 404);
    t.equal((await a.get(unknown)).status, 404);
    t.equal(app.deps.store.count(A, 'note', { 'data.subjectId': unknown.split('/').pop() }), 0);
  });

  t.test('auth and tenants - staff of the tenant only', async (t) => {
    const customer = as({ org: A, kind: 'customer', sub: 'c1', customerId: 'c1' });
    t.equal((await anon(A).get(path)).status, 401);
    t.equal((await anon(A).post(path, { comment: 'x' })).status, 401);
    t.equal((await customer.get(path)).status, 403);
    t.equal((await customer.post(path, { comment: 'x' })).status, 403);
    t.equal((await a.get(path, { orgid: B })).status, 403, "A's token at B");
    t.equal((await b.get(path)).status, 404, "A's reservation is unknown to B");
    t.equal((await b.post(path, { comment: 'x' })).status, 404);
    t.equal((await a.post(`/notes/reservation/${resvB.sk}`, { comment: 'x' })).status, 404, "B's reservation is unknown to A");
    t.equal((await a.get(path)).body.total, 3);
  });
});

t.test('client-data', async (t) => {
  const { app, a, as, anon } = await setup(t, { modules: ['records'] });
  const [ann, bob, cid] = await seed(app, A, 'customer', [
    { email: 'ann@example.com', name: 'Ann', passwordHash: 'scrypt$ann', security: { totpSecret: 'X' } },
    { email: 'bob@example.com', name: 'Bob' },
    { email: 'cid@example.com', name: 'Cid' },
  ]);
  const annOrders = await seed(app, A, 'sf_order', [
    { customerId: ann.sk, orderNumber: 'A-1' },
    { customerId: ann.sk, orderNumber: 'A-2' },
  ]);
  await seed(app, A, 'sf_order', [{ customerId: bob.sk, orderNumber: 'B-1' }]);
  const [annRes] = await seed(app, A, 'reservation', [{ customerId: ann.sk, service: 'dinner' }]);
  const [bobRes] = await seed(app, A, 'reservation', [{ customerId: bob.sk, service: 'lunch' }]);
  const [annInB] = await seed(app, B, 'reservation', [{ customerId: ann.sk, service: 'elsewhere' }]);

  const asCustomer = (c: { sk: string; data: { email?: unknown } }, org = A) =>
    as({ org, kind: 'customer', sub: c.sk, customerId: c.sk, email: String(c.data.email), roles: [] });
  const annC = asCustomer(ann);

  t.test('profile - the caller\'s customer record without credentials', async (t) => {
    const r = await annC.get('/client-data/profile');
    t.equal(r.status, 200);
    t.equal(r.body.sk, ann.sk);
    t.same(r.body.data, { email: 'ann@example.com', name: 'Ann', security: {} });
    t.notOk(r.text.includes('scrypt'));
    const ghost = as({ org: A, kind: 'customer', sub: newId(), email: 'ghost@example.com' });
    const g = await ghost.get('/client-data/profile');
    t.equal(g.status, 404);
    t.match(g.body.message, /customer for ghost@example.com not found/);
  });

  t.test('orders and reservations - only the caller\'s, newest first; [] when none', async (t) => {
    const o = await annC.get('/client-data/orders');
    t.equal(o.status, 200);
    t.same(o.body.map((x: { data: { orderNumber: string } }) => x.data.orderNumber), ['A-2', 'A-1']);
    t.same(o.body.map((x: { sk: string }) => x.sk), [annOrders[1].sk, annOrders[0].sk]);
    const paged = await annC.get('/client-data/orders?ps=1&p=2');
    t.same(paged.body.map((x: { data: { orderNumber: string } }) => x.data.orderNumber), ['A-1']);
    const rs = await annC.get('/client-data/reservations');
    t.same(rs.body.map((x: { sk: string }) => x.sk), [annRes.sk], "B's reservation of the same customer id stays in B");
    const cidC = asCustomer(cid);
    t.same((await cidC.get('/client-data/orders')).body, []);
    const none = await cidC.get('/client-data/reservations');
    t.equal(none.status, 200);
    t.equal(none.text, '[]');
    t.equal((await annC.get('/client-data/orders?ps=0')).status, 400);
  });

  t.test('reservation by id - 24 hex characters; another customer\'s is 404', async (t) => {
    const mine = await annC.get(`/client-data/reservations/${annRes.sk}`);
    t.equal(mine.status, 200);
    t.equal(mine.body.data.service, 'dinner');
    t.equal((await annC.get(`/client-data/reservations/${annRes.sk.toUpperCase()}`)).status, 200);
    const theirs = await annC.get(`/client-data/reservations/${bobRes.sk}`);
    t.equal(theirs.status, 404);
    t.notOk(theirs.text.includes('lunch'));
    t.equal((await annC.get(`/client-data/reservations/${annInB.sk}`)).status, 404, 'another tenant\'s id is not found');
    t.equal((await annC.get(`/client-data/reservations/${newId()}`)).status, 404);
    for (const bad of ['123', 'zzzzzzzzzzzzzzzzzzzzzzzz', `${annRes.sk}0`]) {
      const r = await annC.get(`/client-data/reservations/${bad}`);
      t.equal(r.status, 400, bad);
      t.match(r.body.message, /params\/id must be a 24-character hexadecimal id/);
    }
  });

  t.test('staff token - matched to a customer record by email once both proved it', async (t) => {
    const staff = as({ org: A, kind: 'staff', sub: 'u9', email: 'bob@example.com' });
    t.equal((await staff.get('/client-data/profile')).status, 404, 'a typed email matches nothing');
    // The staff user and Bob's customer account both proved bob@example.com (actors/auth/email-proof.ts).
    const { WriteBatch } = await import('../../core/store/store.js');
    const { newRecord } = await import('../../core/store/record.js');
    const proof = { emailProven: 'bob@example.com', emailProvenAt: new Date().toISOString() };
    await app.deps.store.commit(
      new WriteBatch()
        .putRecord(newRecord(A, 'user', { email: 'bob@example.com', roles: ['User'], status: 'active' }, { sk: 'u9' }), 0)
        .putRecord(newRecord(A, 'user_security', { subjectType: 'user', ...proof }, { sk: 'u9' }), 0)
        .putRecord(newRecord(A, 'user_security', { subjectType: 'customer', ...proof }, { sk: bob.sk }), 0),
    );
    t.equal((await staff.get('/client-data/profile')).body.sk, bob.sk);
    t.same((await staff.get('/client-data/orders')).body.map((x: { data: { orderNumber: string } }) => x.data.orderNumber), ['B-1']);
    const noCustomer = await a.get('/client-data/profile');
    t.equal(noCustomer.status, 404);
    t.same((await a.get('/client-data/reservations')).body, []);
  });

  t.test('auth - 401 without a token, 403 for an app token alone, relayed customer allowed', async (t) => {
    for (const p of ['/client-data/profile', '/client-data/orders', '/client-data/reservations', `/client-data/reservations/${annRes.sk}`]) {
      t.equal((await anon(A).get(p)).status, 401, p);
      const appOnly = as({ org: A, kind: 'app', sub: 'app-1', roles: [] });
      t.equal((await appOnly.get(p)).status, 403, `${p} with an app token`);
      t.equal((await annC.get(p, { orgid: B })).status, 403, `${p}: A's customer at B`);
    }
    const relay = client(app.url, {
      orgid: A,
      authorization: `Bearer ${tokenFor(app, { org: A, kind: 'app', sub: 'app-1', roles: [] })}`,
      'x-client-authorization': `Bearer ${tokenFor(app, { org: A, kind: 'customer', sub: ann.sk, customerId: ann.sk, email: 'ann@example.com', roles: [] })}`,
    });
    const r = await relay.get('/client-data/orders');
    t.equal(r.status, 200);
    t.equal(r.body.length, 2);
  });
});
