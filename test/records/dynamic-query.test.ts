// /dynamic-query/*: driver-style find, findOne, count, distinct and aggregate over one datatype,
// with the stages that could reach another datatype, write or run code refused.
import t from 'tap';
import { MAX_RESULT_DOCUMENTS } from '../../actors/records/dynamic-query.js';
import { A, B, seed, setup } from './setup.js';

t.test('dynamic-query', async (t) => {
  const { app, a, b, as, anon } = await setup(t, { modules: ['records'] });
  const orders = await seed(
    app,
    A,
    'sf_order',
    Array.from({ length: 30 }, (_, i) => ({
      orderNumber: `N${i}`,
      customerId: `c${i % 3}`,
      total: String(i * 7),
      tags: i % 2 ? ['vip', 'web'] : ['web'],
      status: i < 10 ? 'open' : 'closed',
    })),
  );
  await seed(app, B, 'sf_order', [{ orderNumber: 'B1', customerId: 'c0', total: '999', status: 'open' }]);

  t.test('find - filter, one-field sort, limit, skip and projection', async (t) => {
    const r = await a.post('/dynamic-query/find', {
      datatype: 'sf_order',
      filter: { 'data.customerId': 'c1' },
      sort: { 'data.total': -1 },
      limit: 3,
      skip: 2,
      projection: { 'data.orderNumber': 1, 'data.total': 1 },
    });
    t.equal(r.status, 200);
    t.same([r.body.total, r.body.hasNext, r.body.pageSize], [10, true, 3]);
    const totals = orders.filter((o) => o.data.customerId === 'c1').map((o) => Number(o.data.total)).sort((x, y) => y - x);
    t.same(r.body.data.map((d: { data: { total: string } }) => Number(d.data.total)), totals.slice(2, 5));
    t.same(Object.keys(r.body.data[0].data).sort(), ['orderNumber', 'total'], 'projected');
    const alias = await a.post('/dynamic-query/find', { datatype: 'sf_order', query: { 'data.status': 'open' }, options: { page: 2, pageSize: 4 } });
    t.same([alias.body.total, alias.body.page, alias.body.data.length, alias.body.hasNext], [10, 2, 4, true]);
    const str = await a.post('/dynamic-query/find', { datatype: 'sf_order', sort: 'data.total', sortType: 'desc', limit: 1 });
    t.equal(str.body.data[0].data.total, '203');
    const none = await a.post('/dynamic-query/find', { datatype: 'sf_order', filter: { 'data.customerId': 'zz' } });
    t.same([none.status, none.body.data, none.body.total, none.body.hasNext], [200, [], 0, false]);
  });

  t.test('findOne - the first match, or null', async (t) => {
    const r = await a.post('/dynamic-query/findOne', { datatype: 'sf_order', filter: { 'data.orderNumber': 'N4' } });
    t.equal(r.status, 200);
    t.equal(r.body.data.sk, orders[4].sk);
    const sorted = await a.post('/dynamic-query/findOne', { datatype: 'sf_order', filter: { 'data.status': 'open' }, sort: { 'data.total': 'desc' } });
    t.equal(sorted.body.data.data.orderNumber, 'N9');
    const none = await a.post('/dynamic-query/findOne', { datatype: 'sf_order', filter: { 'data.orderNumber': 'nope' } });
    t.same(none.body, { data: null });
  });

  t.test('count and distinct', async (t) => {
    t.same((await a.post('/dynamic-query/count', { datatype: 'sf_order' })).body, { count: 30 });
    t.same((await a.post('/dynamic-query/count', { datatype: 'sf_order', filter: { 'data.status': 'open' } })).body, { count: 10 });
    t.same((await a.post('/dynamic-query/count', { datatype: 'nothing_here' })).body, { count: 0 });
    const d = await a.post('/dynamic-query/distinct', { datatype: 'sf_order', field: 'data.customerId' });
    t.same(d.body.values.sort(), ['c0', 'c1', 'c2']);
    const tags = await a.post('/dynamic-query/distinct', { datatype: 'sf_order', field: 'data.tags', filter: { 'data.status': 'open' } });
    t.same(tags.body.values.sort(), ['vip', 'web'], 'array values are unwound');
    const none = await a.post('/dynamic-query/distinct', { datatype: 'sf_order', field: 'data.missing' });
    t.same(none.body, { values: [] });
  });

  t.test('aggregate - runs a pipeline over the datatype', async (t) => {
    const r = await a.post('/dynamic-query/aggregate', {
      datatype: 'sf_order',
      pipeline: [
        { $match: { 'data.status': 'closed' } },
        { $group: { _id: '$data.customerId', orders: { $sum: 1 }, revenue: { $sum: { $toDouble: '$data.total' } } } },
        { $sort: { _id: 1 } },
      ],
    });
    t.equal(r.status, 200);
    const expect = ['c0', 'c1', 'c2'].map((c) => {
      const mine = orders.filter((o) => o.data.status === 'closed' && o.data.customerId === c);
      return { _id: c, orders: mine.length, revenue: mine.reduce((s, o) => s + Number(o.data.total), 0) };
    });
    t.same(r.body.data, expect);
    const facet = await a.post('/dynamic-query/aggregate', {
      datatype: 'sf_order',
      pipeline: [{ $facet: { n: [{ $count: 'n' }], vip: [{ $match: { 'data.tags': 'vip' } }, { $count: 'n' }] } }],
    });
    t.same(facet.body.data, [{ n: [{ n: 30 }], vip: [{ n: 15 }] }]);
    const empty = await a.post('/dynamic-query/aggregate', { datatype: 'sf_order', pipeline: [] });
    t.equal(empty.body.data.length, 30);
  });

  t.test('aggregate - stages that reach another datatype, write or run code are refused with 400', async (t) => {
    const refused: Array<[unknown[], RegExp]> = [
      [[{ $lookup: { from: 'user', localField: 'data.customerId', foreignField: 'sk', as: 'u' } }], /\$lookup is not allowed/],
      [[{ $graphLookup: { from: 'user', startWith: '$sk', connectFromField: 'sk', connectToField: 'sk', as: 'g' } }], /\$graphLookup is not allowed/],
      [[{ $unionWith: 'user_security' }], /\$unionWith is not allowed/],
      [[{ $out: 'copy' }], /\$out is not allowed/],
      [[{ $merge: { into: 'copy' } }], /\$merge is not allowed/],
      [[{ $documents: [{ a: 1 }] }], /\$documents is not allowed/],
      [[{ $facet: { x: [{ $lookup: { from: 'user', as: 'u', pipeline: [] } }] } }], /\$facet\/x\/0: stage \$lookup is not allowed/],
      [[{ $addFields: { x: { $function: { body: 'return 1', args: [], lang: 'js' } } } }], /may not use \$function/],
      [[{ $group: { _id: null, x: { $accumulator: {} } } }], /may not use \$accumulator/],
      [[{ $match: { $where: 'true' } }], /may not use \$where/],
      [[{ $match: {}, $limit: 1 }], /exactly one stage operator/],
      [['$match'], /pipeline\/0/],
      [Array.from({ length: 21 }, () => ({ $limit: 5 })), /pipeline/],
      [[{ $facet: Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`f${i}`, Array.from({ length: 5 }, () => ({ $skip: 0 }))])) }], /at most 20/],
      // Unknown operators are refused by name before the pipeline runs (the client allow-list).
      [[{ $group: { _id: '$x', n: { $nonsense: 1 } } }], /pipeline\/0 may not use \$nonsense/],
    ];
    for (const [pipeline, msg] of refused) {
      const r = await a.post('/dynamic-query/aggregate', { datatype: 'sf_order', pipeline });
      t.equal(r.status, 400, JSON.stringify(pipeline).slice(0, 80));
      t.match(JSON.stringify(r.body.message), msg, JSON.stringify(pipeline).slice(0, 80));
    }
    for (const filter of [{ $where: 'x' }, { 'data.a': { $nope: 1 } }]) {
      const r = await a.post('/dynamic-query/find', { datatype: 'sf_order', filter });
      t.equal(r.status, 400);
    }
  });

  t.test('aggregate and distinct - results are bounded', async (t) => {
    await seed(app, A, 'bulk', Array.from({ length: MAX_RESULT_DOCUMENTS + 1 }, (_, i) => ({ i })));
    const all = await a.post('/dynamic-query/aggregate', { datatype: 'bulk', pipeline: [{ $project: { 'data.i': 1 } }] });
    t.equal(all.status, 400);
    t.match(all.body.message, /add a \$limit stage/);
    const limited = await a.post('/dynamic-query/aggregate', { datatype: 'bulk', pipeline: [{ $sort: { 'data.i': -1 } }, { $limit: 2 }] });
    t.same(limited.body.data.map((d: { data: { i: number } }) => d.data.i), [MAX_RESULT_DOCUMENTS, MAX_RESULT_DOCUMENTS - 1]);
    const distinct = await a.post('/dynamic-query/distinct', { datatype: 'bulk', field: 'data.i' });
    t.equal(distinct.status, 400);
    t.match(distinct.body.message, /distinct values/);
    const tooMany = await a.post('/dynamic-query/find', { datatype: 'bulk', limit: 201 });
    t.equal(tooMany.status, 400);
    t.match(JSON.stringify(tooMany.body.message), /body\/limit/);
  });

  t.test('validation - bodies answer 400 naming the field', async (t) => {
    const cases: Array<[string, unknown, RegExp]> = [
      ['find', {}, /datatype is required/],
      ['find', { datatype: 'sf_order', filter: 'x' }, /body\/filter/],
      ['find', { datatype: 'sf_order', filter: {}, query: {} }, /either body\/filter or body\/query/],
      ['find', { datatype: 'sf_order', sort: { a: 1, b: -1 } }, /sort may name one field/],
      ['find', { datatype: 'sf_order', sort: { a: 2 } }, /body\/sort/],
      ['find', { datatype: 'sf_order', skip: -1 }, /body\/skip/],
      ['find', { datatype: 'sf_order', limit: 0 }, /body\/limit/],
      ['find', { datatype: 'sf_order', extra: 1 }, /extra is not allowed/],
      ['findOne', { datatype: 'sf_order', limit: 1 }, /limit is not allowed/],
      ['distinct', { datatype: 'sf_order' }, /field is required/],
      ['distinct', { datatype: 'sf_order', field: '$data' }, /body\/field/],
      ['aggregate', { datatype: 'sf_order' }, /pipeline is required/],
      ['aggregate', { datatype: 'sf_order', pipeline: {} }, /body\/pipeline/],
      ['count', { datatype: 'bad type' }, /body\/datatype/],
    ];
    for (const [op, body, msg] of cases) {
      const r = await a.post(`/dynamic-query/${op}`, body);
      t.equal(r.status, 400, `${op} ${JSON.stringify(body)}`);
      t.match(JSON.stringify(r.body.message), msg, `${op} ${JSON.stringify(body)}`);
    }
    const get = await a.get('/dynamic-query/find');
    t.equal(get.status, 405, 'always POST');
    t.match(get.headers.allow, /^POST\b/);
  });

  t.test('sensitive datatypes - unreadable ones are refused, users are stripped', async (t) => {
    await seed(app, A, 'user_security', [{ email: 'u@example.com', passwordHash: 'scrypt$x' }]);
    await seed(app, A, 'user', [{ email: 'u@example.com', passwordHash: 'scrypt$x', name: 'U' }]);
    for (const dt of ['user_security', 'two_factor_backup', 'apikey', 'passcode_card']) {
      for (const [op, body] of [
        ['find', { datatype: dt }],
        ['findOne', { datatype: dt }],
        ['count', { datatype: dt }],
        ['distinct', { datatype: dt, field: 'data.email' }],
        ['aggregate', { datatype: dt, pipeline: [] }],
      ] as const) {
        const r = await a.post(`/dynamic-query/${op}`, body);
        t.equal(r.status, 403, `${op} ${dt}`);
      }
    }
    const users = await a.post('/dynamic-query/aggregate', { datatype: 'user', pipeline: [{ $project: { _id: 0, data: 1 } }] });
    t.same(users.body.data, [{ data: { email: 'u@example.com', name: 'U' } }]);
    const f = await a.post('/dynamic-query/find', { datatype: 'user', projection: { 'data.passwordHash': 1 } });
    t.equal(f.status, 403);
    const byHash = await a.post('/dynamic-query/count', { datatype: 'user', filter: { 'data.passwordHash': 'scrypt$x' } });
    t.equal(byHash.status, 403);
    const expr = await a.post('/dynamic-query/aggregate', { datatype: 'user', pipeline: [{ $group: { _id: '$data.passwordHash' } }] });
    t.equal(expr.status, 403);
    const dist = await a.post('/dynamic-query/distinct', { datatype: 'user', field: 'data.passwordHash' });
    t.equal(dist.status, 403);
  });

  t.test('auth and tenants - staff of the tenant only', async (t) => {
    const customer = as({ org: A, kind: 'customer', sub: 'c0', customerId: 'c0' });
    for (const op of ['find', 'findOne', 'count', 'distinct', 'aggregate']) {
      const clean = op === 'distinct' ? { datatype: 'sf_order', field: 'data.status' } : op === 'aggregate' ? { datatype: 'sf_order', pipeline: [] } : { datatype: 'sf_order' };
      t.equal((await anon(A).post(`/dynamic-query/${op}`, clean)).status, 401, op);
      t.equal((await customer.post(`/dynamic-query/${op}`, clean)).status, 403, op);
      t.equal((await a.post(`/dynamic-query/${op}`, clean, { orgid: B })).status, 403, `${op}: A's token at B`);
    }
    t.same((await b.post('/dynamic-query/count', { datatype: 'sf_order' })).body, { count: 1 });
    const fromA = await a.post('/dynamic-query/find', { datatype: 'sf_order', filter: { 'data.orderNumber': 'B1' } });
    t.equal(fromA.body.total, 0);
    const aggA = await a.post('/dynamic-query/aggregate', { datatype: 'sf_order', pipeline: [{ $match: { 'data.total': '999' } }] });
    t.same(aggA.body.data, []);
  });
});
