import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { AppError } from '../../core/errors.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import { newRecord, nextVersion } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

function openStore(tt: Parameters<typeof tempDir>[0]) {
  const store = new LmdbStore({ path: tempDir(tt), mapSizeGiB: 1 });
  tt.teardown(() => store.close());
  return store;
}

t.test('LmdbStore - create stores the spec envelope at version 1', async (t) => {
  const store = openStore(t);
  const rec = newRecord('acme', 'product', { name: 'Tea', price: 3 });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  const got = store.getRecord('acme', 'product', rec.sk)!;
  t.match(got, { pk: 'acme', datatype: 'product', version: 1, state: 'new', data: { name: 'Tea', price: 3 } });
  t.match(got.sk, /^[0-9a-f]{24}$/);
  t.ok(!Number.isNaN(Date.parse(got.createdate)) && got.createdate.endsWith('Z'), 'createdate is ISO UTC');
  t.equal(got.modifydate, got.createdate);
  t.same(Object.keys(got).sort(), ['createdate', 'data', 'datatype', 'modifydate', 'pk', 'sk', 'state', 'version']);
});

t.test('LmdbStore - a data directory whose name has a dot in it is a directory, and reopens', async (t) => {
  const dir = join(tempDir(t), 'tmp.AbC123');
  let store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  const rec = newRecord('acme', 'product', { name: 'Tea' });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  await store.close();
  t.ok(statSync(dir).isDirectory());
  t.ok(existsSync(join(dir, 'data.mdb')), 'the database file is inside it');
  store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  t.teardown(() => store.close());
  t.equal(store.getRecord('acme', 'product', rec.sk)?.data.name, 'Tea');
});

t.test('LmdbStore - every write increments the version; a stale version is a 409 and writes nothing', async (t) => {
  const store = openStore(t);
  const rec = newRecord('acme', 'product', { name: 'Tea' });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  const v2 = nextVersion(rec, { data: { name: 'Green tea' } });
  await store.commit(new WriteBatch().putRecord(v2, 1));
  t.equal(store.getRecord('acme', 'product', rec.sk)!.version, 2);
  const stale = nextVersion(rec, { data: { name: 'Stale' } });
  const other = newRecord('acme', 'product', { name: 'Other' });
  const err = await store.commit(new WriteBatch().putRecord(other, 0).putRecord(stale, 1)).catch((e) => e);
  t.type(err, AppError);
  t.equal(err.statusCode, 409);
  t.match(err.message, /expected version 1, stored version is 2/);
  t.equal(store.getRecord('acme', 'product', rec.sk)!.data.name, 'Green tea', 'record untouched');
  t.equal(store.getRecord('acme', 'product', other.sk), undefined, 'nothing of the failed batch was written');
  const dup = await store.commit(new WriteBatch().putRecord(rec, 0)).catch((e) => e);
  t.equal(dup.statusCode, 409, 'create over an existing id conflicts');
});

t.test('LmdbStore - 50 concurrent updates carrying the same version: exactly one succeeds', async (t) => {
  const store = openStore(t);
  const rec = newRecord('acme', 'counter', { n: 0 });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  const results = await Promise.allSettled(
    Array.from({ length: 50 }, (_, i) => store.commit(new WriteBatch().putRecord(nextVersion(rec, { data: { n: i } }), 1))),
  );
  const ok = results.filter((r) => r.status === 'fulfilled');
  const conflicts = results.filter((r) => r.status === 'rejected' && (r.reason as AppError).statusCode === 409);
  t.equal(ok.length, 1);
  t.equal(conflicts.length, 49);
  t.equal(store.getRecord('acme', 'counter', rec.sk)!.version, 2);
});

t.test('LmdbStore - delete with version check', async (t) => {
  const store = openStore(t);
  const rec = newRecord('acme', 'note', { c: 1 });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  const err = await store.commit(new WriteBatch().deleteRecord('acme', 'note', rec.sk, 5)).catch((e) => e);
  t.equal(err.statusCode, 409);
  await store.commit(new WriteBatch().deleteRecord('acme', 'note', rec.sk, 1));
  t.equal(store.getRecord('acme', 'note', rec.sk), undefined);
});

async function seed(store: LmdbStore, tenant: string, n: number) {
  const b = new WriteBatch();
  for (let i = 0; i < n; i++) {
    b.putRecord(
      newRecord(tenant, 'product', {
        name: `p${i}`,
        price: (i * 7) % 23,
        priceText: String((i * 7) % 23),
        colour: i % 3 === 0 ? 'red' : 'blue',
        tags: i % 2 ? ['odd'] : ['even'],
      }),
      0,
    );
  }
  await store.commit(b);
}

t.test('LmdbStore - filters, numeric sort (numbers and numeric strings), stable paging', async (t) => {
  const store = openStore(t);
  await seed(store, 'acme', 45);
  const red = store.find('acme', 'product', { 'data.colour': 'red' }, { pageSize: 100 });
  t.equal(red.total, 15);
  t.ok(red.data.every((r) => r.data.colour === 'red'));
  const gt = store.find('acme', 'product', { 'data.price': { $gte: 20 } }, { pageSize: 100 });
  t.ok(gt.total > 0 && gt.data.every((r) => (r.data.price as number) >= 20));
  t.equal(store.find('acme', 'product', { 'data.tags': 'odd' }).total, 22, 'array fields match an element');

  const bySortedText = store.find('acme', 'product', {}, { sort: 'data.priceText', sortType: 'asc', pageSize: 200 });
  const texts = bySortedText.data.map((r) => Number(r.data.priceText));
  t.same(texts, [...texts].sort((a, b) => a - b), 'numeric strings sort as numbers');
  const desc = store.find('acme', 'product', {}, { sort: 'data.price', sortType: 'desc', pageSize: 200 });
  const prices = desc.data.map((r) => r.data.price as number);
  t.same(prices, [...prices].sort((a, b) => b - a));

  // Paging: totals exact, hasNext right, pages disjoint and in a stable order.
  const seen = new Set<string>();
  let page = 1;
  for (;;) {
    const p = store.find('acme', 'product', {}, { page, pageSize: 20, sort: 'data.colour' });
    t.equal(p.total, 45);
    t.equal(p.page, page);
    t.equal(p.pageSize, 20);
    for (const r of p.data) seen.add(r.sk);
    if (!p.hasNext) {
      t.equal(page, 3);
      t.equal(p.data.length, 5);
      break;
    }
    page++;
  }
  t.equal(seen.size, 45, 'every record exactly once across pages');
  const past = store.find('acme', 'product', {}, { page: 9 });
  t.same({ data: past.data, total: past.total, hasNext: past.hasNext }, { data: [], total: 45, hasNext: false });
});

t.test('LmdbStore - page size defaults to 20 and is clamped to 200', async (t) => {
  const store = openStore(t);
  await seed(store, 'acme', 210);
  t.equal(store.find('acme', 'product').data.length, 20);
  const big = store.find('acme', 'product', {}, { pageSize: 5000 });
  t.equal(big.pageSize, 200);
  t.equal(big.data.length, 200);
  t.equal(big.hasNext, true);
});

t.test('LmdbStore - an unknown operator is a 400 naming the problem', async (t) => {
  const store = openStore(t);
  const err = (() => {
    try {
      store.find('acme', 'product', { 'data.x': { $bogus: 1 } });
    } catch (e) {
      return e as AppError;
    }
  })();
  t.equal(err?.statusCode, 400);
  t.match(err?.message, /\$bogus/);
});

t.test('LmdbStore - declared index answers equality queries exactly like a scan, and follows updates', async (t) => {
  const store = openStore(t);
  await seed(store, 'acme', 60);
  await store.declareIndex('product', 'data.colour'); // built over existing records
  const viaIndex = store.find('acme', 'product', { 'data.colour': 'red' }, { pageSize: 200 });
  const viaScan = store.find('acme', 'product', { 'data.colour': { $regex: '^red$' } }, { pageSize: 200 });
  t.equal(viaIndex.total, 20);
  t.same(viaIndex.data.map((r) => r.sk), viaScan.data.map((r) => r.sk));
  // Update moves the record between index entries; delete removes it.
  const first = viaIndex.data[0];
  await store.commit(new WriteBatch().putRecord(nextVersion(first, { data: { ...first.data, colour: 'green' } }), first.version));
  t.equal(store.find('acme', 'product', { 'data.colour': 'red' }).total, 19);
  t.equal(store.find('acme', 'product', { 'data.colour': { $in: ['green', 'red'] } }).total, 20);
  await store.commit(new WriteBatch().deleteRecord('acme', 'product', first.sk));
  t.equal(store.find('acme', 'product', { 'data.colour': 'green' }).total, 0);
  // Mixed filter: the index narrows, the rest of the filter still applies.
  const mixed = store.find('acme', 'product', { 'data.colour': 'blue', 'data.price': { $lt: 5 } }, { pageSize: 200 });
  t.ok(mixed.data.every((r) => r.data.colour === 'blue' && (r.data.price as number) < 5));
  t.equal(mixed.total, store.scan('acme', 'product').filter((r) => r.data.colour === 'blue' && (r.data.price as number) < 5).length);
});

t.test('LmdbStore - candidatesUpTo counts what a find would read, on keys, no further than the cap', async (t) => {
  const store = openStore(t);
  await seed(store, 'acme', 60);
  await seed(store, 'other', 5);
  await store.declareIndex('product', 'data.colour');
  t.equal(store.candidatesUpTo('acme', 'product', undefined, 1000), 60, 'no filter: every record of the datatype');
  t.equal(store.candidatesUpTo('acme', 'product', { 'data.price': { $lt: 5 } }, 1000), 60, 'no indexed equality: every record');
  t.equal(store.candidatesUpTo('acme', 'product', undefined, 25), 25, 'capped');
  t.equal(store.candidatesUpTo('acme', 'product', { 'data.colour': 'red' }, 1000), 20, 'through the index');
  t.equal(store.candidatesUpTo('acme', 'product', { 'data.colour': { $in: ['red', 'blue'] } }, 1000), 60);
  t.equal(store.candidatesUpTo('acme', 'product', { 'data.colour': { $in: ['red', 'blue'] } }, 30), 30, 'capped across values');
  t.equal(store.candidatesUpTo('other', 'product', undefined, 1000), 5, 'one tenant only');
});

t.test('LmdbStore - findUpTo answers what find answers when an index narrows it to at most max, else nothing', async (t) => {
  const store = openStore(t);
  await seed(store, 'acme', 60);
  await seed(store, 'other', 5);
  await store.declareIndex('product', 'data.colour');
  const cases: Array<[Record<string, unknown>, Record<string, unknown>]> = [
    [{ 'data.colour': 'red' }, {}],
    [{ 'data.colour': 'red', 'data.price': { $lt: 10 } }, { sort: 'data.price', sortType: 'desc' }],
    [{ $and: [{ 'data.colour': 'red' }, { 'data.tags': 'odd' }] }, { page: 2, pageSize: 5 }],
    [{ $or: [{ 'data.colour': 'red' }, { 'data.colour': 'green' }] }, {}],
  ];
  for (const [filter, opts] of cases) {
    t.same(store.findUpTo('acme', 'product', filter, opts, 20), store.find('acme', 'product', filter, opts), JSON.stringify({ filter, opts }));
  }
  t.equal(store.findUpTo('acme', 'product', { 'data.colour': 'blue' }, {}, 39), undefined, 'more candidates than max');
  t.same(store.findUpTo('acme', 'product', { 'data.colour': 'blue' }, {}, 40), store.find('acme', 'product', { 'data.colour': 'blue' }), 'as many as max');
  t.equal(store.findUpTo('acme', 'product', { 'data.price': { $lt: 5 } }, {}, 1000), undefined, 'no index narrows it: never a scan');
  t.equal(store.findUpTo('acme', 'product', undefined, {}, 1000), undefined, 'no filter');
  t.equal(store.findUpTo('other', 'product', { 'data.colour': 'red' }, {}, 20)?.total, 2, 'one tenant only');
});

t.test('LmdbStore - an index survives reopening', async (t) => {
  const dir = tempDir(t);
  let store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  await store.declareIndex('location', 'data.name');
  await store.commit(new WriteBatch().putRecord(newRecord('acme', 'location', { name: 'main' }), 0));
  await store.close();
  store = new LmdbStore({ path: dir, mapSizeGiB: 1 });
  t.teardown(() => store.close());
  t.same(store.indexedPaths('location'), ['data.name']);
  t.equal(store.find('acme', 'location', { 'data.name': 'main' }).total, 1);
});

t.test('LmdbStore - tenants never see each other', async (t) => {
  const store = openStore(t);
  await store.declareIndex('product', 'data.colour');
  await seed(store, 'acme', 10);
  await seed(store, 'acme-2', 7);
  await seed(store, 'acm', 3);
  t.equal(store.find('acme', 'product').total, 10);
  t.equal(store.find('acme-2', 'product').total, 7);
  t.equal(store.find('acm', 'product').total, 3, 'a tenant id that prefixes another sees only its own');
  t.equal(store.find('acm', 'product', { 'data.colour': 'red' }).total, 1);
  t.equal(store.count('acme', 'product'), 10);
  const one = store.find('acme-2', 'product').data[0];
  t.equal(store.getRecord('acme', 'product', one.sk), undefined, 'another tenant id is not found');
  t.equal(store.find('nobody', 'product').total, 0);
});

t.test('LmdbStore - logs and kv', async (t) => {
  const store = openStore(t);
  t.equal(store.lastLogSeq('acme', 'scan:e1'), 0);
  const b = new WriteBatch();
  for (let i = 1; i <= 5; i++) b.append('acme', 'scan:e1', i, { i });
  b.append('acme', 'scan:e2', 1, { other: true });
  b.putKv('acme', 'idem', 'k1', { v: 1 });
  await store.commit(b);
  t.equal(store.lastLogSeq('acme', 'scan:e1'), 5);
  t.same(store.readLog('acme', 'scan:e1', 3).map((e) => e.seq), [3, 4, 5]);
  t.same(store.readLog('acme', 'scan:e1', 1, 2).map((e) => e.entry), [{ i: 1 }, { i: 2 }]);
  t.same(store.getKv('acme', 'idem', 'k1'), { v: 1 });
  t.same(store.listKv('acme', 'idem').map((e) => e.key), ['k1']);
  await store.commit(new WriteBatch().deleteKv('acme', 'idem', 'k1'));
  t.equal(store.getKv('acme', 'idem', 'k1'), undefined);
});

for (const unflushed of [false, true]) {
  t.test(`LmdbStore - a batch that fails half-way (a key LMDB refuses) writes nothing at all (${unflushed ? 'unflushed: committed on the loop' : 'flushed'})`, async (t) => {
    const dir = tempDir(t);
    let store = new LmdbStore({ path: dir, mapSizeGiB: 1, unflushed });
    const first = newRecord('acme', 'shape_a', { alpha: 1, beta: 'x' });
    const bad = new WriteBatch().putRecord(first, 0).putKv('acme', 'ns', 'k'.repeat(3000), { v: 1 });
    await t.rejects(store.commit(bad), 'the oversized key fails the batch');
    t.equal(store.getRecord('acme', 'shape_a', first.sk), undefined, 'the record before it in the batch was rolled back');
    // Records of the shape first seen in the rolled-back batch are written and read back fine, also
    // after reopening (the msgpack structures saved in the rolled-back transaction were reloaded).
    const again = newRecord('acme', 'shape_a', { alpha: 2, beta: 'y' });
    await store.commit(new WriteBatch().putRecord(again, 0));
    await store.close();
    store = new LmdbStore({ path: dir, mapSizeGiB: 1, unflushed });
    t.teardown(() => store.close());
    t.same(store.getRecord('acme', 'shape_a', again.sk)?.data, { alpha: 2, beta: 'y' });
    t.equal(store.scan('acme', 'shape_a').length, 1);
  });
}

t.test('LmdbStore - long indexed values: stored, found by equality, never break the index', async (t) => {
  const store = openStore(t);
  await store.declareIndex('order', 'data.customerId');
  const long = 'c'.repeat(5000);
  const longToo = 'c'.repeat(4999) + 'd'; // the same indexed prefix as `long`
  const a = newRecord('acme', 'order', { customerId: 'c1' });
  const b = newRecord('acme', 'order', { customerId: longToo });
  await store.commit(new WriteBatch().putRecord(a, 0).putRecord(b, 0));
  // An update to a value far over LMDB's key limit lands, and the index follows it.
  await store.commit(new WriteBatch().putRecord({ ...a, version: 2, data: { customerId: long } }, 1));
  t.same(store.find('acme', 'order', { 'data.customerId': long }).data.map((r) => r.sk), [a.sk], 'exact match only');
  t.same(store.find('acme', 'order', { 'data.customerId': longToo }).data.map((r) => r.sk), [b.sk]);
  t.equal(store.find('acme', 'order', { 'data.customerId': 'c1' }).data.length, 0, 'the old value is gone from the index');
  await store.commit(new WriteBatch().putRecord({ ...a, version: 3, data: { customerId: 'c1' } }, 2));
  t.same(store.find('acme', 'order', { 'data.customerId': 'c1' }).data.map((r) => r.sk), [a.sk], 'and back');
  t.equal(store.find('acme', 'order', { 'data.customerId': long }).data.length, 0);
});

t.test('LmdbStore - patchOrg merges fields into the stored organisation; a missing one fails the whole batch', async (t) => {
  const store = openStore(t);
  await store.commit(new WriteBatch().putOrg({ orgId: 'org-p', displayName: 'P', createdate: '2026-01-01T00:00:00.000Z' }));
  // Two batches of one turn, each naming only its own field: both land.
  await Promise.all([
    store.commit(new WriteBatch().patchOrg('org-p', { securitySettings: { a: true } })),
    store.commit(new WriteBatch().patchOrg('org-p', { settings: { b: 1 } })),
  ]);
  t.same(store.getOrg('org-p'), { orgId: 'org-p', displayName: 'P', createdate: '2026-01-01T00:00:00.000Z', securitySettings: { a: true }, settings: { b: 1 } });
  await store.commit(new WriteBatch().patchOrg('org-p', { orgId: 'other', displayName: 'P2' }));
  t.match(store.getOrg('org-p'), { orgId: 'org-p', displayName: 'P2' }, 'the id stays');
  t.equal(store.getOrg('other'), undefined);

  const rec = newRecord('org-p', 'note', { n: 1 });
  const err = await store.commit(new WriteBatch().putRecord(rec, 0).patchOrg('missing-org', { x: 1 })).catch((e) => e);
  t.ok(err instanceof AppError);
  t.equal(err.statusCode, 404);
  t.equal(store.getRecord('org-p', 'note', rec.sk), undefined, 'nothing of the batch was written');
});

t.test('LmdbStore - listOrgIds lists every organisation once its commit lands, in id order, and none of a failed batch', async (t) => {
  const store = openStore(t);
  const org = (orgId: string) => ({ orgId, displayName: orgId, createdate: '2026-01-01T00:00:00.000Z' });
  t.same(store.listOrgIds(), []);
  await store.commit(new WriteBatch().putOrg(org('org-b')));
  t.same(store.listOrgIds(), ['org-b']);
  const landing = store.commit(new WriteBatch().putOrg(org('org-a')));
  t.same(store.listOrgIds(), ['org-b'], 'not before it lands');
  await landing;
  t.same(store.listOrgIds(), ['org-a', 'org-b'], 'a new one, in id order');
  await store.commit(new WriteBatch().patchOrg('org-a', { displayName: 'A' }));
  t.same(store.listOrgIds(), ['org-a', 'org-b']);
  const err = await store.commit(new WriteBatch().putOrg(org('org-c')).patchOrg('missing-org', { x: 1 })).catch((e) => e);
  t.ok(err instanceof AppError);
  t.same(store.listOrgIds(), ['org-a', 'org-b'], 'nothing of a batch that failed');
  t.same(store.listOrgIds(), store.listOrgs().map((o) => o.orgId), 'the same ids listOrgs reads');
});
