// Client queries run under a budget, off the event loop (issue 17, items 1 and 2): every find,
// count, distinct and aggregate runs in a worker of the query pool, with a time limit, a heap
// limit, an operator allow-list and bounds on what one operator may build. Each reproduction of
// the issue is sent by organisation A while B reads: the server stays up (it runs in this very
// process, so a V8 fatal error would end the test), A gets a 4xx naming the limit, and B's read
// answers before A's attack does whenever the attack takes time.
import t from 'tap';
import type { QueryPool } from '../../core/query/pool.js';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import type { Reply } from '../helpers/http.js';
import { setup } from '../records/setup.js';

const TIMEOUT_MS = 2000;
/** The nested $map over $range 2000 x 2000 (4.9 s of event loop before). */
const NESTED_MAP = {
  $project: { x: { $map: { input: { $range: [0, 2000] }, as: 'i', in: { $size: { $map: { input: { $range: [0, 2000] }, in: { $add: ['$$i', '$$this'] } } } } } } },
};

t.test('query budget', async (t) => {
  const { app, a, b } = await setup(t, {
    modules: ['records', 'crm', 'storefront'],
    // No spare: the heap test below then runs on the replacement of the worker the test before it
    // ended, as before spares existed. On a loaded machine a worker that has already run queries
    // took 1.5-3.5 s to reach its heap limit, racing the 2 s time budget (the spares' own tests
    // are in test/core/query-pool-fairness.test.ts and query-fairness.test.ts).
    config: { query: { timeoutMs: TIMEOUT_MS, workerHeapMb: 96, workers: 2, spareWorkers: 0 } },
  });
  const pool = app.deps.queries as QueryPool;
  // One product per organisation; A's name is the 31 characters that make ^(a+)+$ backtrack.
  const batch = new WriteBatch();
  batch.putRecord(newRecord('acme', 'product', { name: 'a'.repeat(30) + '!' }));
  const bProduct = newRecord('globex', 'product', { name: 'widget' });
  batch.putRecord(bProduct);
  await app.deps.store.commit(batch);
  // Start the workers (the first query does) so no timing below includes their start.
  t.equal((await b.post('/repository/find/product', { query: {} })).status, 200);

  /** B's plain reads, sent while A's request is in flight: they must answer before it does. */
  async function whileAttacked(attack: () => Promise<Reply>, opts: { ordered: boolean }) {
    const order: string[] = [];
    const pending = attack().then((r) => (order.push('attack'), r));
    // Let the attack reach a worker first.
    await new Promise((r) => setTimeout(r, 100));
    const get = b.get(`/repository/get/product/${bProduct.sk}`).then((r) => (order.push('get'), r));
    const find = b.post('/repository/find/product', { query: { 'data.name': 'widget' } }).then((r) => (order.push('find'), r));
    const [attacked, got, found] = await Promise.all([pending, get, find]);
    t.equal(got.status, 200, 'B reads its record');
    t.equal(found.status, 200, 'B finds its record');
    t.equal(found.body.total, 1);
    if (opts.ordered) t.same(order.slice(-1), ['attack'], `B's reads answer before the attack (${order.join(', ')})`);
    return attacked;
  }

  t.test('item 1: $range of 2e8 in a find is refused before it runs, naming QUERY_MAX_RANGE', async (t) => {
    const r = await whileAttacked(
      () => a.post('/repository/find/product', { query: { $expr: { $gt: [{ $size: { $range: [0, 200000000] } }, 0] } } }),
      { ordered: false },
    );
    t.equal(r.status, 400);
    t.match(r.body.message, /\$range of 200000000 elements .*QUERY_MAX_RANGE/);
    // Bounds computed at run time are held to the same limit, in the worker.
    const computed = await a.post('/repository/find/product', {
      query: { $expr: { $gt: [{ $size: { $range: [0, { $multiply: [20000, 10000] }] } }, 0] } },
    });
    t.equal(computed.status, 400);
    t.match(computed.body.message, /QUERY_MAX_RANGE/);
  });

  t.test('item 1: $range of 2e8 in an aggregate $project is refused the same way', async (t) => {
    const r = await whileAttacked(
      () => a.post('/dynamic-query/aggregate', { datatype: 'product', pipeline: [{ $project: { x: { $size: { $range: [0, 2e8] } } } }] }),
      { ordered: false },
    );
    t.equal(r.status, 400);
    t.match(r.body.message, /QUERY_MAX_RANGE/);
  });

  t.test('item 2: the catastrophic regex runs on RE2, in linear time; a backtracking-only one is refused', async (t) => {
    const r = await whileAttacked(() => a.post('/repository/find/product', { query: { 'data.name': { $regex: '^(a+)+$' } } }), {
      ordered: false,
    });
    t.equal(r.status, 200, 'answered, not frozen: RE2 has no backtracking');
    t.equal(r.body.total, 0, 'and correctly: the name ends with "!"');
    const refs = await a.post('/repository/find/product', { query: { 'data.name': { $regex: '^(a+)\\1$' } } });
    t.equal(refs.status, 400);
    t.match(refs.body.message, /cannot be run in linear time/);
    const agg = await a.post('/dynamic-query/aggregate', {
      datatype: 'product',
      pipeline: [{ $project: { m: { $regexMatch: { input: '$data.name', regex: '^(a+)+$' } } } }],
    });
    t.equal(agg.status, 200);
    t.same(agg.body.data.map((d: { m: boolean }) => d.m), [false]);
    const long = await a.post('/repository/find/product', { query: { 'data.name': { $regex: 'a'.repeat(1001) } } });
    t.equal(long.status, 400);
    t.match(long.body.message, /QUERY_MAX_REGEX_LENGTH/);
  });

  t.test('item 2: nested $map over $range 2000 x 2000 is stopped at the time limit', async (t) => {
    const started = Date.now();
    const r = await whileAttacked(
      () =>
        a.post('/dynamic-query/aggregate', {
          datatype: 'product',
          pipeline: [NESTED_MAP],
        }),
      { ordered: true },
    );
    t.equal(r.status, 400);
    t.match(r.body.message, new RegExp(`time limit of ${TIMEOUT_MS} ms \\(QUERY_TIMEOUT_MS\\)`));
    t.match(r.body.message, /narrow the filter/);
    t.ok(Date.now() - started < TIMEOUT_MS * 2, 'answered soon after the time limit (run to its end the query takes ~5 s)');
  });

  t.test('a query over the time budget is stopped, its worker replaced, and the next query works', async (t) => {
    const stopped = pool.stopped;
    // Quadratic: each of 80,000 elements builds and searches a 10,000-element range (~10 s run to
    // its end on the development machine; 10,000 elements alone finished inside the limit once).
    const range = { $range: [0, 10000] };
    const slow = await a.post('/repository/find/product', {
      query: { $expr: { $gt: [{ $size: { $filter: { input: { $concatArrays: Array(8).fill(range) }, cond: { $in: ['$$this', range] } } } }, 0] } },
    });
    t.equal(slow.status, 400);
    t.match(slow.body.message, /QUERY_TIMEOUT_MS/);
    t.ok(pool.stopped > stopped, 'the pool stopped it');
    const next = await a.post('/repository/find/product', { query: { 'data.name': { $regex: '!$' } } });
    t.equal(next.status, 200);
    t.equal(next.body.total, 1);
  });

  t.test('a query that needs more heap than a worker has is stopped with 400, and the pool goes on', async (t) => {
    // A node of its own with a time budget the heap always runs out first against: on a loaded
    // machine (the suite runs files in parallel) reaching 96 MiB took up to 3.5 s, past 2 s.
    const heap = await setup(t, { modules: ['records', 'crm', 'storefront'], config: { query: { timeoutMs: 60_000, workerHeapMb: 96, workers: 2, spareWorkers: 0 } } });
    await heap.app.deps.store.commit(new WriteBatch().putRecord(newRecord('acme', 'product', { name: 'a' })).putRecord(newRecord('globex', 'product', { name: 'widget' })));
    const r = await heap.a.post('/dynamic-query/aggregate', {
      datatype: 'product',
      // 10,000 distinct strings of 900,000 characters: about 9 GB, each within the string bound.
      pipeline: [
        {
          $project: {
            x: {
              $let: {
                vars: { big: { $reduce: { input: { $range: [0, 9] }, initialValue: '', in: { $concat: ['$$value', 'x'.repeat(100_000)] } } } },
                in: { $map: { input: { $range: [0, 10000] }, in: { $concat: ['$$big', { $toString: '$$this' }] } } },
              },
            },
          },
        },
      ],
    });
    t.equal(r.status, 400);
    t.match(r.body.message, /more than the 96 MiB of memory a query may use \(QUERY_WORKER_HEAP_MB\)/);
    t.equal((await heap.b.post('/dynamic-query/count', { datatype: 'product' })).body.count, 1);
  });

  t.test('doubling through $reduce meets the array and string bounds, not the V8 limit', async (t) => {
    const arrays = await a.post('/dynamic-query/aggregate', {
      datatype: 'product',
      pipeline: [{ $project: { x: { $reduce: { input: { $range: [0, 40] }, initialValue: [1], in: { $concatArrays: ['$$value', '$$value'] } } } } }],
    });
    t.equal(arrays.status, 400);
    t.match(arrays.body.message, /QUERY_MAX_ARRAY/);
    const strings = await a.post('/dynamic-query/aggregate', {
      datatype: 'product',
      pipeline: [{ $project: { x: { $reduce: { input: { $range: [0, 40] }, initialValue: 'ab', in: { $concat: ['$$value', '$$value'] } } } } }],
    });
    t.equal(strings.status, 400);
    t.match(strings.body.message, /QUERY_MAX_STRING/);
  });

  t.test('operators outside the allow-list are refused by name', async (t) => {
    for (const [path, body, name] of [
      ['/repository/find/product', { query: { $where: 'true' } }, '$where'],
      ['/repository/find/product', { query: { 'data.name': { $text: 'x' } } }, '$text'],
      ['/dynamic-query/find', { datatype: 'product', filter: {}, projection: { x: { $function: { body: 'x', args: [], lang: 'js' } } } }, '$function'],
      ['/dynamic-query/aggregate', { datatype: 'product', pipeline: [{ $group: { _id: null, x: { $accumulator: {} } } }] }, '$accumulator'],
      ['/dynamic-query/aggregate', { datatype: 'product', pipeline: [{ $densify: { field: 'x' } }] }, '$densify'],
    ] as const) {
      const r = await a.post(path, body);
      t.equal(r.status, 400, `${name} refused`);
      t.ok(String(r.body.message).includes(name), `the message names ${name}: ${r.body.message}`);
    }
  });

  t.test("one organisation's slow queries hold one worker: another's finds go on", async (t) => {
    const slowQuery = () =>
      a.post('/dynamic-query/aggregate', {
        datatype: 'product',
        pipeline: [NESTED_MAP],
      });
    // Workers stopped by the tests above have replacements starting: wait until both serve.
    while (pool.readyWorkers < 2) await new Promise((r) => setTimeout(r, 50));
    const order: string[] = [];
    const attacks = [slowQuery(), slowQuery(), slowQuery()].map((p) => p.then((r) => (order.push('attack'), r)));
    await new Promise((r) => setTimeout(r, 100));
    const reads = Array.from({ length: 5 }, () => b.post('/repository/find/product', { query: { 'data.name': 'widget' } }).then((r) => (order.push('read'), r)));
    const readReplies = await Promise.all(reads);
    const attackReplies = await Promise.all(attacks);
    t.ok(readReplies.every((r) => r.status === 200 && r.body.total === 1), "B's finds answer");
    t.ok(attackReplies.every((r) => r.status === 400), 'each of A’s queries is stopped by the budget');
    t.same(order.slice(0, 5), ['read', 'read', 'read', 'read', 'read'], `B's finds all answer before A's first (${order.join(', ')})`);
  });

  t.test('reads are fresh: a find right after a create sees it', async (t) => {
    for (let i = 0; i < 10; i++) {
      const created = await a.post('/repository/create', { datatype: 'note_like', data: { n: i }, isNew: true, version: 0 });
      t.equal(created.status, 201);
      const found = await a.post('/repository/find/note_like', { query: { 'data.n': i } });
      t.equal(found.body.total, 1, `create ${i} is seen by the next find`);
      const counted = await a.post('/dynamic-query/count', { datatype: 'note_like' });
      t.equal(counted.body.count, i + 1);
    }
  });

  t.test("a route's own listings run in the pool too: A's listing of 40,000 records does not hold B's reads", async (t) => {
    // A node of its own, whose time budget no listing here reaches: what this shows is where the
    // listings run and that B is not held meanwhile, not whether a loaded machine lists 40,000
    // records within the 2 s the attacks above are held to (with three test files at once on two
    // cores, the sorted lead listing sometimes took longer and answered the budget's 400).
    const { app, a, b } = await setup(t, { modules: ['records', 'crm', 'storefront'], config: { query: { timeoutMs: 60_000, workers: 2, spareWorkers: 0 } } });
    const pool = app.deps.queries as QueryPool;
    const bProduct = newRecord('globex', 'product', { name: 'widget' });
    await app.deps.store.commit(new WriteBatch().putRecord(bProduct));
    const batch = new WriteBatch();
    const base = Date.now();
    for (let i = 0; i < 40_000; i++) {
      batch.putRecord(newRecord('acme', 'lead', { name: `lead ${i}`, status: 'new', value: i }, { now: base + i }));
      batch.putRecord(newRecord('acme', 'sf_product', { name: `product ${String(i).padStart(5, '0')}`, price: 1 }, { now: base + i }));
      const at = new Date(base + i).toISOString();
      batch.putRecord(newRecord('acme', 'comm_message', { channel: 'sms', direction: 'inbound', from: `+1555${String(i).padStart(7, '0')}`, to: '+15550000000', body: `sms ${i}`, at }, { now: base + i }));
    }
    // The CRM's other whole-datatype lists, each past the inline limit.
    for (let i = 0; i < 1_100; i++) {
      const at = new Date(base + i).toISOString();
      batch.putRecord(newRecord('acme', 'inbox_conversation', { channel: 'sms', contact: `+1666${String(i).padStart(7, '0')}`, status: 'open', unread: i % 2, lastMessageAt: at }, { now: base + i }));
      batch.putRecord(newRecord('acme', 'social_activity', { kind: 'comment', platform: 'x', text: `comment ${i}`, at }, { now: base + i }));
      batch.putRecord(newRecord('acme', 'customer_activity', { email: 'busy@example.com', type: 'screen_view', name: `screen ${i % 7}`, importance: 1, properties: {}, at }, { now: base + i }));
    }
    await app.deps.store.commit(batch);
    // On the event loop each listing held it for as long as it took (decode, filter and sort of
    // every record); B's read, sent just after it, then answered only after it.
    const listings: Array<[string, (body: any) => void]> = [
      ['/crm/leads/detail?sort=data.value&sortType=desc&pageSize=2', (body) => {
        t.equal(body.total, 40_000);
        t.same(body.data.map((l: { data: { value: number } }) => l.data.value), [39_999, 39_998]);
      }],
      ['/storefront/products?q=product 39999', (body) => t.same(body.data.map((p: { data: { name: string } }) => p.data.name), ['product 39999'])],
      ['/crm/communications/all?pageSize=2', (body) => {
        t.equal(body.total, 40_000);
        t.same(body.data.map((m: { data: { body: string } }) => m.data.body), ['sms 39999', 'sms 39998']);
      }],
    ];
    // A listing of few candidates (B's one lead) runs on the event loop, measured on keys first;
    // A's 40,000 go to a worker.
    await app.deps.store.commit(new WriteBatch().putRecord(newRecord('globex', 'lead', { name: 'only lead', status: 'new', value: 1 })));
    const before = pool.dispatched;
    const small = await b.get('/crm/leads/detail');
    t.same([small.status, small.body.total, pool.dispatched], [200, 1, before], 'a small listing runs in place');
    for (const [path, check] of listings) {
      const order: string[] = [];
      const listing = a.get(path).then((r) => (order.push('listing'), r));
      await new Promise((r) => setTimeout(r, 10));
      const got = await b.get(`/repository/get/product/${bProduct.sk}`).then((r) => (order.push('get'), r));
      const r = await listing;
      t.equal(got.status, 200);
      t.same(order, ['get', 'listing'], `${path}: B's read answers while A's listing runs`);
      t.equal(r.status, 200, path);
      check(r.body);
      t.ok(pool.dispatched > before, `${path}: in a worker`);
    }
    const crm: Array<[string, (body: any) => void]> = [
      ['/crm/inbox/conversations?unread=true&pageSize=1', (body) => t.same([body.total, body.unreadTotal, body.data[0].data.contact], [550, 550, '+16660001099'])],
      ['/sync/social-activities/comments?pageSize=1', (body) => t.same([body.total, body.data[0].data.text], [1_100, 'comment 1099'])],
      ['/crm/customer-activity/busy@example.com/timeline?pageSize=1', (body) => t.equal(body.total, 1_100)],
      ['/crm/customer-activity/busy@example.com/summary', (body) => t.equal(body.total, 1_100)],
    ];
    for (const [path, check] of crm) {
      const sent = pool.dispatched;
      const r = await a.get(path);
      t.equal(r.status, 200, path);
      check(r.body);
      t.equal(pool.dispatched, sent + 1, `${path}: in a worker`);
    }
    const few = pool.dispatched;
    t.equal((await b.get('/crm/communications/all')).body.total, 0, "B's empty communications list");
    t.equal(pool.dispatched, few, 'runs in place');
  });

  t.test('closing the app ends every worker', async (t) => {
    t.ok(pool.liveWorkers > 0);
    await app.close();
    t.equal(pool.liveWorkers, 0);
  });
});
