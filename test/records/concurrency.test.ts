// Optimistic concurrency and idempotent create under concurrent requests (spec: Versioning;
// Limits → Idempotency), against a real server and a real LMDB.
import { randomUUID } from 'node:crypto';
import t from 'tap';
import { RECORDS_ACTOR, RECORDS_KEY, type CreateReply, type RecordsMsg } from '../../actors/records/messages.js';
import { ManualClock } from '../../core/clock.js';
import { IDEMPOTENCY_NS, IDEMPOTENCY_TTL_MS } from '../../core/idempotency.js';
import { startTestApp, staffHeaders, tempDir } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { A, B, createBody, setup } from './setup.js';

t.test('update - 50 concurrent updates of one version: exactly one wins, 49 get 409', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  const c = await a.post('/repository/create', createBody('sf_order', { total: '0' }));
  const id = c.body.sk;
  const replies = await Promise.all(
    Array.from({ length: 50 }, (_, i) => a.post(`/repository/update/sf_order/${id}`, { data: { total: String(i), by: i }, version: 1 })),
  );
  const won = replies.filter((r) => r.status === 200);
  const lost = replies.filter((r) => r.status === 409);
  t.equal(won.length, 1, 'one winner');
  t.equal(lost.length, 49, 'every other update is a conflict');
  for (const r of lost) t.equal(r.body.error, 'Conflict');
  const stored = app.deps.store.getRecord(A, 'sf_order', id)!;
  t.equal(stored.version, 2);
  t.same(stored.data, won[0].body.data, "the stored record is the winner's");
  // The actor still serves after the failures.
  const next = await a.post(`/repository/update/sf_order/${id}`, { data: { total: 'x' }, version: 2 });
  t.equal(next.status, 200);
  t.equal(next.body.version, 3);
});

t.test('update-partial and delete - concurrent version-checked writes: exactly one wins', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  const c = await a.post('/repository/create', createBody('task', { n: 0 }));
  const id = c.body.sk;
  const replies = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      i % 2 === 0
        ? a.post(`/repository/update-partial/task/${id}`, { 'data.n': i, version: 1 })
        : a.del(`/repository/delete/task/${id}?version=1`),
    ),
  );
  t.equal(replies.filter((r) => r.status === 200).length, 1);
  t.equal(replies.filter((r) => r.status === 409).length, 19);
  const stored = app.deps.store.getRecord(A, 'task', id);
  t.ok(stored === undefined || stored.version === 2);
});

t.test('create - 20 concurrent creates with one idempotencyKey make one record', async (t) => {
  const { app, a, b } = await setup(t, { modules: ['records'] });
  const key = randomUUID();
  const body = createBody('sf_order', { total: '42.00', customerId: 'c1' }, { idempotencyKey: key });
  const replies = await Promise.all(Array.from({ length: 20 }, () => a.post('/repository/create', body)));
  t.ok(replies.every((r) => r.status === 201), 'every retry answers 201');
  const sks = new Set(replies.map((r) => r.body.sk));
  t.equal(sks.size, 1, 'every answer is the same record');
  t.equal(replies.filter((r) => r.headers['idempotent-replayed'] === 'true').length, 19);
  t.equal(app.deps.store.count(A, 'sf_order'), 1, 'one record stored');
  t.same(replies[0].body, replies[19].body);

  // A later retry, after the actor was passivated, is answered from the store.
  app.deps.runtime.passivateIdle();
  const later = await a.post('/repository/create', body);
  t.equal(later.status, 201);
  t.equal(later.body.sk, replies[0].body.sk);
  t.equal(later.headers['idempotent-replayed'], 'true');

  // The same key with another body is a conflict, and creates nothing.
  const other = await a.post('/repository/create', { ...body, data: { total: '1.00' } });
  t.equal(other.status, 409);
  t.match(other.body.message, /idempotencyKey was already used with a different request body/);
  const otherType = await a.post('/repository/create', { ...body, datatype: 'lead' });
  t.equal(otherType.status, 409);
  t.equal(app.deps.store.count(A, 'sf_order'), 1);
  t.equal(app.deps.store.count(A, 'lead'), 0);

  // Leaving out `version: 0` does not change the request.
  const { version: _v, ...noVersion } = body;
  t.equal((await a.post('/repository/create', noVersion)).body.sk, replies[0].body.sk);

  // Keys are per tenant: the same key in B is a different request.
  const inB = await b.post('/repository/create', body);
  t.equal(inB.status, 201);
  t.equal(inB.headers['idempotent-replayed'], undefined);
  t.not(inB.body.sk, replies[0].body.sk);
  t.equal(inB.body.pk, B);
});

t.test('create - concurrent different keys and a mismatching retry in flight', async (t) => {
  const { app, a } = await setup(t, { modules: ['records'] });
  const key = randomUUID();
  const same = createBody('lead', { status: 'a' }, { idempotencyKey: key });
  const differ = createBody('lead', { status: 'b' }, { idempotencyKey: key });
  const replies = await Promise.all([
    a.post('/repository/create', same),
    a.post('/repository/create', differ),
    ...Array.from({ length: 10 }, () => a.post('/repository/create', createBody('lead', { status: 'c' }, { idempotencyKey: randomUUID() }))),
  ]);
  t.equal(replies[0].status, 201);
  t.equal(replies[1].status, 409, 'the other body with the in-flight key is refused');
  t.ok(replies.slice(2).every((r) => r.status === 201));
  t.equal(app.deps.store.count(A, 'lead'), 11);
});

t.test('create - an idempotent result survives a restart and expires after 24 hours', async (t) => {
  const dataDir = tempDir(t);
  const clock = new ManualClock(Date.UTC(2026, 5, 1));
  const key = randomUUID();
  const body = createBody('lead', { status: 'once' }, { idempotencyKey: key });

  const first = await setup(t, { modules: ['records'], dataDir, clock });
  const made = await first.a.post('/repository/create', body);
  t.equal(made.status, 201);
  await first.app.close();

  const app = await startTestApp(t, { modules: ['records'], dataDir, clock });
  const a = client(app.url, staffHeaders(app, A));
  const again = await a.post('/repository/create', body);
  t.equal(again.status, 201);
  t.equal(again.body.sk, made.body.sk, 'the first result, after a restart');
  t.equal(app.deps.store.count(A, 'lead'), 1);

  clock.advance(24 * 60 * 60 * 1000 + 1);
  app.deps.runtime.passivateIdle();
  // (a fresh token: the first one expired with the clock)
  const expired = await client(app.url, staffHeaders(app, A)).post('/repository/create', body);
  t.equal(expired.status, 201);
  t.not(expired.body.sk, made.body.sk, 'after 24 hours the key is free again');
  t.equal(expired.headers['idempotent-replayed'], undefined);
  t.equal(app.deps.store.count(A, 'lead'), 2);
});

t.test('records actor - a retry queued behind the first create is answered from memory', async (t) => {
  const { app } = await setup(t, { modules: ['records'] });
  const ask = (msg: RecordsMsg) => app.deps.runtime.ask<CreateReply>(A, RECORDS_ACTOR, RECORDS_KEY, msg);
  const key = randomUUID();
  const msg: RecordsMsg = { type: 'create', datatype: 'lead', data: { n: 1 }, idempotency: { key, print: 'p1' }, roles: ['User'] };
  // Both are in the mailbox before the first commit can land.
  const [first, second, clash] = await Promise.allSettled([ask(msg), ask(msg), ask({ ...msg, idempotency: { key, print: 'p2' } })]);
  t.equal(first.status, 'fulfilled');
  t.equal(second.status, 'fulfilled');
  const [r1, r2] = [first, second].map((r) => (r as PromiseFulfilledResult<CreateReply>).value);
  t.same([r1.replayed, r2.replayed], [false, true]);
  t.equal(r2.body.sk, r1.body.sk);
  t.equal(clash.status, 'rejected');
  t.match((clash as PromiseRejectedResult).reason, { code: 'ERR_IDEMPOTENCY_MISMATCH', statusCode: 409 });
  t.equal(app.deps.store.count(A, 'lead'), 1);
});

t.test('records actor - expired idempotency keys are swept', async (t) => {
  const clock = new ManualClock(Date.UTC(2026, 5, 1));
  const { app } = await setup(t, { modules: ['records'], clock });
  const ask = (msg: RecordsMsg) => app.deps.runtime.ask<CreateReply>(A, RECORDS_ACTOR, RECORDS_KEY, msg);
  const old = randomUUID();
  await ask({ type: 'create', datatype: 'lead', data: {}, idempotency: { key: old, print: 'p' }, roles: ['User'] });
  t.ok(app.deps.store.getKv(A, IDEMPOTENCY_NS, old));
  clock.advance(IDEMPOTENCY_TTL_MS + 1);
  const fresh: string[] = [];
  for (let i = 0; i < 1023; i++) {
    fresh.push(randomUUID());
    await ask({ type: 'create', datatype: 'task', data: { i }, idempotency: { key: fresh[i], print: 'p' }, roles: ['User'] });
  }
  t.equal(app.deps.store.getKv(A, IDEMPOTENCY_NS, old), undefined, 'the expired key is gone');
  t.ok(app.deps.store.getKv(A, IDEMPOTENCY_NS, fresh[0]), 'live keys stay');
  t.equal(app.deps.store.listKv(A, IDEMPOTENCY_NS).length, 1023);
});
