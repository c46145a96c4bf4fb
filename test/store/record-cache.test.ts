// The store's cache of the answers client reads write per record (core/store/record-cache.ts), and
// the exact small find that reads only its page as such answers (lmdb-records.ts exactTexts).
import t from 'tap';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import type { RecordText } from '../../core/store/record-cache.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { tempDir } from '../helpers/app.js';

async function openStore(tt: Parameters<typeof tempDir>[0], cache = { maxBytes: 2 ** 20, tenantMaxBytes: 2 ** 20 }) {
  const store = new LmdbStore({ path: tempDir(tt), mapSizeGiB: 1, recordCache: cache });
  tt.teardown(() => store.close());
  await store.declareIndex('order', 'data.customer');
  await store.declareIndex('order', 'data.tags');
  return store;
}

/** A RecordText that counts its calls: each call is a record read from LMDB and written. */
function counting(): { by: RecordText; calls: () => number } {
  let n = 0;
  return {
    by: (rec: StoredRecord) => {
      n++;
      return JSON.stringify(rec);
    },
    calls: () => n,
  };
}

t.test('record cache - a record read again is its kept text; a write or delete of it is read anew once it lands', async (t) => {
  const store = await openStore(t);
  const rec = newRecord('acme', 'order', { customer: 'c1', total: 1 });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  const { by, calls } = counting();
  t.equal(store.recordText('acme', 'order', rec.sk, by), JSON.stringify(rec));
  t.equal(store.recordText('acme', 'order', rec.sk, by), JSON.stringify(rec));
  t.equal(calls(), 1, 'the second read is served from the cache');

  const v2 = nextVersion(rec, { data: { customer: 'c1', total: 2 } });
  const landed = store.commit(new WriteBatch().putRecord(v2, 1));
  // Until the commit lands, LMDB answers the record from before it, and so may the cache.
  t.equal(JSON.parse(store.recordText('acme', 'order', rec.sk, by)!).version, 1);
  await landed;
  t.equal(store.recordText('acme', 'order', rec.sk, by), JSON.stringify(v2), 'the write is read once it landed');
  t.equal(calls(), 2);

  await store.commit(new WriteBatch().deleteRecord('acme', 'order', rec.sk, 2));
  t.equal(store.recordText('acme', 'order', rec.sk, by), undefined, 'a deleted record is not served');
  // Another reader's function never gets this one's text.
  const other = counting();
  const r2 = newRecord('acme', 'order', { customer: 'c2' });
  await store.commit(new WriteBatch().putRecord(r2, 0));
  store.recordText('acme', 'order', r2.sk, by);
  t.equal(store.recordText('acme', 'order', r2.sk, other.by), JSON.stringify(r2));
  t.equal(other.calls(), 1);
});

t.test('record cache - tenants never share a record: the same id in two tenants reads each its own', async (t) => {
  const store = await openStore(t);
  const a = newRecord('acme', 'order', { customer: 'c1', who: 'acme' });
  const b = { ...a, pk: 'globex', data: { customer: 'c1', who: 'globex' } };
  await store.commit(new WriteBatch().putRecord(a, 0).putRecord(b, 0));
  const { by } = counting();
  t.equal(JSON.parse(store.recordText('acme', 'order', a.sk, by)!).data.who, 'acme');
  t.equal(JSON.parse(store.recordText('globex', 'order', a.sk, by)!).data.who, 'globex');
  t.equal(store.recordText('initech', 'order', a.sk, by), undefined);
});

t.test('record cache - bounded per tenant: one tenant reading many records keeps under its bound and evicts none of another\'s', async (t) => {
  const store = await openStore(t, { maxBytes: 4 * 2 ** 20, tenantMaxBytes: 64 * 1024 });
  const big = 'x'.repeat(1000);
  const acme = Array.from({ length: 300 }, (_, i) => newRecord('acme', 'order', { customer: `c${i}`, big }));
  const globex = newRecord('globex', 'order', { customer: 'g', big });
  const batch = new WriteBatch().putRecord(globex, 0);
  for (const r of acme) batch.putRecord(r, 0);
  await store.commit(batch);
  const { by, calls } = counting();
  store.recordText('globex', 'order', globex.sk, by);
  for (const r of acme) store.recordText('acme', 'order', r.sk, by);
  const cache = (store as unknown as { reads: { cache: { bytesOf(t: string): number; bytes: number } } }).reads.cache;
  t.ok(cache.bytesOf('acme') <= 64 * 1024, `acme holds ${cache.bytesOf('acme')} bytes`);
  t.ok(cache.bytesOf('acme') > 32 * 1024, 'and uses its share');
  const before = calls();
  store.recordText('globex', 'order', globex.sk, by);
  t.equal(calls(), before, "globex's record is still cached");
  store.recordText('acme', 'order', acme[0].sk, by);
  t.equal(calls(), before + 1, "acme's oldest left first");
});

t.test('record cache - an exact small find reads only its page, as texts, with the total of its matches', async (t) => {
  const store = await openStore(t);
  const batch = new WriteBatch();
  const mine = Array.from({ length: 25 }, () => newRecord('acme', 'order', { customer: 'c1', tags: 'one' }));
  for (const r of mine) batch.putRecord(r, 0);
  batch.putRecord(newRecord('acme', 'order', { customer: 'c2', tags: ['a', 'b'] }), 0);
  await store.commit(batch);
  mine.sort((x, y) => (x.sk < y.sk ? -1 : 1));
  const { by, calls } = counting();
  for (const filter of [{ 'data.customer': 'c1' }, { $and: [{ 'data.customer': 'c1' }] }]) {
    const p1 = store.findUpTo('acme', 'order', filter, {}, 1000, by)!;
    t.same(p1.texts, mine.slice(0, 20).map((r) => JSON.stringify(r)), JSON.stringify(filter));
    t.same(p1.data, []);
    t.match(p1, { total: 25, hasNext: true, page: 1, pageSize: 20 });
    const p2 = store.findUpTo('acme', 'order', filter, { page: 2 }, 1000, by)!;
    t.same(p2.texts, mine.slice(20).map((r) => JSON.stringify(r)));
    t.match(p2, { total: 25, hasNext: false, page: 2 });
    // Without `by` it answers records, as before.
    t.same(store.findUpTo('acme', 'order', filter, {}, 1000)!.data, mine.slice(0, 20));
  }
  t.equal(calls(), 25, 'each record written once, then served from the cache');
  // A path that held an array, or a sort, is answered the usual way (records, filter tested).
  t.equal(store.findUpTo('acme', 'order', { 'data.tags': 'a' }, {}, 1000, by)!.texts, undefined);
  t.equal(store.findUpTo('acme', 'order', { 'data.customer': 'c1' }, { sort: 'createdate' }, 1000, by)!.texts, undefined);
  // An updated record leaves the find's answer once it lands.
  const moved = nextVersion(mine[0], { data: { customer: 'c3', tags: 'one' } });
  await store.commit(new WriteBatch().putRecord(moved, 1));
  const after = store.findUpTo('acme', 'order', { 'data.customer': 'c1' }, { pageSize: 50 }, 1000, by)!;
  t.same(after.texts, mine.slice(1).map((r) => JSON.stringify(r)));
  t.same(store.findUpTo('acme', 'order', { 'data.customer': 'c3' }, {}, 1000, by)!.texts, [JSON.stringify(moved)]);
});

/** How many plans the store has made since (a find that makes none read no plan estimate or index key). */
function countPlans(store: LmdbStore): () => number {
  const indexes = (store as any).reads.indexes;
  const runner = indexes.runner.bind(indexes);
  let n = 0;
  indexes.runner = (...a: unknown[]) => {
    n++;
    return runner(...a);
  };
  return () => n;
}

t.test('record cache - an exact find asked again reads no index key; a commit writing its datatype in its tenant (a new match, one moved away, a delete) is seen once it lands', async (t) => {
  const store = await openStore(t);
  const planned = countPlans(store);
  const batch = new WriteBatch();
  const c1: StoredRecord[] = [];
  for (let i = 0; i < 5; i++) {
    const r = newRecord('acme', 'order', { customer: 'c1', n: i });
    c1.push(r);
    batch.putRecord(r, 0);
  }
  batch.putRecord(newRecord('acme', 'order', { customer: 'c2' }), 0);
  batch.putRecord(newRecord('globex', 'order', { customer: 'c1' }), 0);
  await store.commit(batch);
  const { by } = counting();
  const find = (tenant = 'acme', filter: Record<string, unknown> = { 'data.customer': 'c1' }) => store.findUpTo(tenant, 'order', filter, { pageSize: 50 }, 1000, by)!;
  const sks = (p: { texts?: string[] }) => p.texts!.map((x) => JSON.parse(x).sk).sort();
  t.same(sks(find()), c1.map((r) => r.sk).sort());
  const first = planned();
  t.same(sks(find()), c1.map((r) => r.sk).sort());
  t.same(sks(find('acme', { $and: [{ 'data.customer': 'c1' }] })), c1.map((r) => r.sk).sort(), 'the same equality inside $and');
  t.equal(planned(), first, 'asked again: no plan, no index key read');
  t.equal(sks(find('globex')).length, 1, "another tenant's equality is its own");

  // Writes elsewhere keep it: another tenant's, another datatype's.
  await store.commit(new WriteBatch().putRecord(newRecord('globex', 'order', { customer: 'c1' }), 0).putRecord(newRecord('acme', 'note', { customer: 'c1' }), 0));
  const before = planned();
  t.equal(find().total, 5);
  t.equal(planned(), before, "writes of another tenant or datatype leave it valid");

  const added = newRecord('acme', 'order', { customer: 'c1', n: 99 });
  await store.commit(new WriteBatch().putRecord(added, 0));
  t.same(sks(find()), [...c1, added].map((r) => r.sk).sort(), 'a new match is seen once it lands');
  await store.commit(new WriteBatch().putRecord(nextVersion(c1[0], { data: { customer: 'c9' } }), 1));
  t.same(sks(find()), [...c1.slice(1), added].map((r) => r.sk).sort(), 'one moved away leaves');
  await store.commit(new WriteBatch().deleteRecord('acme', 'order', c1[1].sk));
  t.same(sks(find()), [...c1.slice(2), added].map((r) => r.sk).sort(), 'a deleted one leaves');
  t.equal(find('globex').total, 2, "the other tenant's answer is its own");
});

t.test("record cache - exact finds' matches are bounded per tenant and in all; one tenant caching many equalities evicts none of another's, and a write of the datatype voids them", async (t) => {
  const { ExactIdsCache } = await import('../../core/store/exact-ids-cache.js');
  const c = new ExactIdsCache();
  c.put('globex', 'order', 'k', 'p', ['g1']);
  const hundred = (i: number) => Array.from({ length: 100 }, (_, j) => `a${i}-${j}`);
  for (let i = 0; i < 5_000; i++) c.put('acme', 'order', `k${i}`, 'p', hundred(i));
  // 250,000 ids a tenant, an entry weighing its ids and 4.
  t.ok(c.size <= 1 + Math.floor(250_000 / 104), `kept ${c.size}: acme's share and globex's one`);
  t.same(c.get('globex', 'order', 'k', 'p'), ['g1'], "globex's entry survived acme's");
  t.same(c.get('acme', 'order', 'k4999', 'p'), hundred(4999), "acme's newest is kept");
  t.equal(c.get('acme', 'order', 'k0', 'p'), undefined, "acme's oldest left");
  t.equal(c.get('globex', 'order', 'k', 'other paths'), undefined, 'read with other index paths: not valid');
  c.put('acme', 'order', 'big', 'p', Array.from({ length: 101 }, (_, i) => `x${i}`));
  t.equal(c.get('acme', 'order', 'big', 'p'), undefined, 'more matches than an entry holds are not kept');
  c.touched('globex', 'order');
  t.equal(c.get('globex', 'order', 'k', 'p'), undefined, 'a landed write of the datatype voids it');
  t.same(c.get('acme', 'order', 'k4999', 'p'), hundred(4999), "another tenant's write does not");
  c.put('acme', 'order', 'k4999', 'p', ['again']);
  t.same(c.get('acme', 'order', 'k4999', 'p'), ['again'], 'an equality read again replaces its entry');
});

t.test("record cache - an exact find's matches survive writes that move no key of its value; a new match, one moved away, a delete, an index dropped and declared again, are seen once they land, per tenant", async (t) => {
  const store = await openStore(t);
  const planned = countPlans(store);
  const c1 = [0, 1, 2].map((n) => newRecord('acme', 'order', { customer: 'c1', n }));
  const c2 = [0, 1].map((n) => newRecord('acme', 'order', { customer: 'c2', n }));
  const theirs = newRecord('globex', 'order', { customer: 'c1' });
  const b = new WriteBatch();
  for (const r of [...c1, ...c2, theirs]) b.putRecord(r, 0);
  await store.commit(b);
  const { by } = counting();
  const find = (tenant: string, datatype: string, filter: Record<string, unknown>) => store.findUpTo(tenant, datatype, filter, { pageSize: 50 }, 1000, by)!;
  const sks = (p: { texts?: string[] }) => p.texts!.map((x) => JSON.parse(x).sk).sort();
  const ids = (rs: StoredRecord[]) => rs.map((r) => r.sk).sort();
  let mine = [...c1];
  t.same(sks(find('acme', 'order', { 'data.customer': 'c1' })), ids(mine));
  t.same(sks(find('globex', 'order', { 'data.customer': 'c1' })), ids([theirs]));

  // Writes of the datatype that move no key of c1: another customer's record changed, one added for
  // c3, c1's records rewritten with the same customer, another tenant's c1.
  const w = new WriteBatch().putRecord(nextVersion(c2[0], { data: { customer: 'c2', n: 7 } }), 1).putRecord(newRecord('acme', 'order', { customer: 'c3' }), 0);
  w.putRecord((mine[0] = nextVersion(c1[0], { data: { customer: 'c1', n: 8 } })), 1);
  w.putRecord(newRecord('globex', 'order', { customer: 'c1' }), 0);
  await store.commit(w);
  let before = planned();
  const page = find('acme', 'order', { 'data.customer': 'c1' });
  t.same(sks(page), ids(mine));
  t.equal(planned(), before, 'kept: no plan, no index key read');
  t.same(page.texts!.map((x) => JSON.parse(x)).find((r) => r.sk === c1[0].sk).data, { customer: 'c1', n: 8 }, 'a kept match rewritten is read as it now is');
  t.equal(find('globex', 'order', { 'data.customer': 'c1' }).total, 2, "the other tenant's write is seen in its own answer");

  const added = newRecord('acme', 'order', { customer: 'c1', n: 99 });
  await store.commit(new WriteBatch().putRecord(added, 0));
  mine = [...mine, added];
  t.same(sks(find('acme', 'order', { 'data.customer': 'c1' })), ids(mine), 'a new match is seen once it lands');
  await store.commit(new WriteBatch().putRecord(nextVersion(mine[1], { data: { customer: 'c9', n: 1 } }), 1));
  mine = mine.filter((r) => r.sk !== c1[1].sk);
  t.same(sks(find('acme', 'order', { 'data.customer': 'c1' })), ids(mine), 'one moved away leaves');
  t.equal(find('acme', 'order', { 'data.customer': 'c9' }).total, 1, 'and is a match where it moved');
  await store.commit(new WriteBatch().deleteRecord('acme', 'order', c1[2].sk));
  mine = mine.filter((r) => r.sk !== c1[2].sk);
  t.same(sks(find('acme', 'order', { 'data.customer': 'c1' })), ids(mine), 'a deleted one leaves');
  before = planned();
  t.same(sks(find('acme', 'order', { 'data.customer': 'c1' })), ids(mine));
  t.equal(planned(), before, 'kept again once read');

  // An organisation's declared index: a write while it is dropped is seen once it is declared again.
  const gadget = (owner: string) => newRecord('acme', 'gadget', { owner });
  const g = [gadget('o1'), gadget('o1'), gadget('o2')];
  const gb = new WriteBatch();
  for (const r of g) gb.putRecord(r, 0);
  await store.commit(gb);
  const d = await store.declareTenantIndex('acme', { datatype: 'gadget', path: 'data.owner' }, 10);
  await store.indexBuildsIdle();
  t.same(sks(find('acme', 'gadget', { 'data.owner': 'o1' })), ids(g.slice(0, 2)), 'read by the declared index');
  await store.commit(new WriteBatch().putRecord(nextVersion(g[2], { data: { owner: 'o2' }, state: 'touched' }), 1));
  before = planned();
  t.same(sks(find('acme', 'gadget', { 'data.owner': 'o1' })), ids(g.slice(0, 2)));
  t.equal(planned(), before, "a declared index's matches are kept through a write moving none of its keys");
  await store.dropTenantIndex('acme', d.id);
  await store.indexBuildsIdle();
  const late = gadget('o1');
  await store.commit(new WriteBatch().putRecord(late, 0));
  await store.declareTenantIndex('acme', { datatype: 'gadget', path: 'data.owner' }, 10);
  await store.indexBuildsIdle();
  t.same(sks(find('acme', 'gadget', { 'data.owner': 'o1' })), ids([...g.slice(0, 2), late]), 'declared again: the write made while it was dropped is a match');
});
