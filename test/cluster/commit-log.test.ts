// The cluster core without HTTP: two ClusterNodes (core/cluster/node.ts) over one nats-server, each
// with its own LMDB and actor runtime. Writes of a tenant go through its owner and land in its
// owner's LMDB only; platform writes reach every node in one order; a node that lost its lease
// without knowing cannot append behind the new owner's back; a node that takes a tenant (back)
// catches up from its own mark before serving it.
import t, { type Test } from 'tap';
import { Kvm } from '@nats-io/kv';
import { jetstreamManager } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { ActorRuntime, type ActorKind } from '../../core/actor/runtime.js';
import { someServices } from '../../core/actor/services.js';
import { Scheduler } from '../../core/scheduler.js';
import { classify } from '../../core/cluster/commit-log.js';
import { decode, encode } from '../../core/cluster/codec.js';
import { ClusterNames } from '../../core/cluster/names.js';
import { ClusterNode } from '../../core/cluster/node.js';
import { LmdbStore } from '../../core/store/lmdb-store.js';
import type { TenantEnvs } from '../../core/cluster/tenant-envs.js';
import type { StoredRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { clusterTempDir, startClusterNode, thingRecord } from '../helpers/cluster-node.js';
import { startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Records with empty data, as these tests always wrote them. */
const rec = (tenant: string, sk: string, version: number, data: Record<string, unknown> = {}) => thingRecord(tenant, sk, version, data);

/** A counter per key: each `inc` writes the next value (with its version). */
const counter: ActorKind<{ n: number }, { inc: true }, { n: number; node: string }> = {
  kind: 'counter',
  activate: (ctx) => ({ n: ctx.store.getRecord(ctx.tenant, 'thing', ctx.key)?.version ?? 0 }),
  receive(state, _msg, ctx) {
    state.n++;
    ctx.batch.putRecord(rec(ctx.tenant, ctx.key, state.n, { n: state.n }), state.n - 1);
    return { n: state.n, node: (ctx.store as unknown as { nodeId?: string }).nodeId ?? '' };
  },
};

interface TestNode {
  node: ClusterNode;
  local: TenantEnvs;
  runtime: ActorRuntime;
  dir: string;
  close(): Promise<void>;
}

async function start(t: Test, id: string, prefix: string, dir?: string, ttl = 2000, more: { commitLingerMs?: number } = {}): Promise<TestNode> {
  let runtime: ActorRuntime | undefined;
  const base = await startClusterNode(t, { ...more, natsUrl: nats.url, nodeId: id, prefix, dir, leaseTtlMs: ttl, beforeClose: async () => runtime?.close() });
  runtime = new ActorRuntime({ store: base.node.store, services: someServices({ scheduler: new Scheduler({ store: base.node.store }) }), remote: base.node.remoteAsk });
  runtime.register(counter);
  base.node.attachRuntime(runtime);
  return { ...base, runtime };
}

let n = 0;
const prefix = () => `cl${++n}${Math.random().toString(36).slice(2, 6)}`;

t.test('classify - a tenant batch, a tenant batch with platform writes, and platform batches', async (t) => {
  t.same(classify(new WriteBatch().putRecord(rec('acme', 'a', 1)).putKv('acme', 'ns', 'k', 1)), { kind: 't', tenant: 'acme' });
  t.same(classify(new WriteBatch().putRecord(rec('acme', 'a', 1)).putKv('_global', 'dir', 'x', 1)), { kind: 'x', tenant: 'acme' });
  t.same(classify(new WriteBatch().putRecord(rec('acme', 'a', 1)).putOrg({ orgId: 'acme', displayName: 'A', createdate: '' })), { kind: 'x', tenant: 'acme' });
  t.same(classify(new WriteBatch().putOrg({ orgId: 'acme', displayName: 'A', createdate: '' })), { kind: 'g', tenant: '' });
  t.same(classify(new WriteBatch().putKv('_global', 'dir', 'x', 1)), { kind: 'g', tenant: '' });
  t.throws(() => classify(new WriteBatch().deleteKv('acme', 'ns', 'k').deleteKv('globex', 'ns', 'k')), /one organisation at most; this one writes acme and globex/, 'several organisations: refused');
});

t.test('ClusterNames - tenants become subject tokens that cannot collide', async (t) => {
  const names = new ClusterNames('bp');
  t.equal(names.tenantSubject('acme-1'), 'bp.log.t.acme-1');
  t.equal(names.parseLogSubject(names.mixedSubject('_global'))?.tenant, '_global');
  t.not(names.tenantSubject('_x'), names.tenantSubject('x'));
  t.throws(() => ClusterNames.assertNodeId('a.b'), /NODE_ID/);
  t.throws(() => new ClusterNames('a b'), /prefix/);
});

t.test('LmdbStore.commitApplied - a mark makes applying twice harmless; a failed condition still consumes its position', async (t) => {
  const store = new LmdbStore({ path: clusterTempDir(t, 'bp-cluster-core-'), mapSizeGiB: 1 });
  t.teardown(() => store.close());
  t.equal(await store.commitApplied(new WriteBatch().putRecord(rec('acme', 'a', 1), 0), { key: 'acme', seq: 5, n: 1 }), true);
  t.equal(await store.commitApplied(new WriteBatch().putRecord(rec('acme', 'a', 1), 0), { key: 'acme', seq: 5, n: 1 }), false, 'the same position again is skipped');
  t.equal(await store.commitApplied(new WriteBatch().putRecord(rec('acme', 'b', 1), 0), { key: 'acme', seq: 4, n: 9 }), false, 'an older position is skipped');
  await t.rejects(store.commitApplied(new WriteBatch().putRecord(rec('acme', 'a', 2), 0), { key: 'acme', seq: 6, n: 1 }), { code: 'ERR_VERSION_CONFLICT' });
  t.same(store.appliedMark('acme'), [6, 1], 'the conflicting batch moved the mark');
  t.equal(store.getRecord('acme', 'thing', 'a')?.version, 1, 'and wrote nothing else');
  t.same(store.appliedMark('globex'), [0, 0]);
});

t.test('ClusterNode - a tenant lives on one node; writes and asks from the other reach it and come back applied', async (t) => {
  const p = prefix();
  const a = await start(t, 'a', p);
  const b = await start(t, 'b', p);
  t.equal(await a.node.takeTenant('acme'), 'a');
  t.ok(a.node.owns('acme'));
  t.notOk(b.node.owns('acme'));
  t.equal(await b.node.ownerOf('acme'), 'a');

  // A commit on b is appended and applied by a; b, which does not hold acme, keeps none of it.
  await b.node.store.commit(new WriteBatch().putRecord(rec('acme', 'x', 1), 0));
  t.equal(a.local.getRecord('acme', 'thing', 'x')?.version, 1, 'the owner has the write when commit resolves');
  t.equal(b.local.getRecord('acme', 'thing', 'x'), undefined, 'b does not materialise a tenant it does not hold');
  await t.rejects(b.node.store.commit(new WriteBatch().putRecord(rec('acme', 'x', 1), 0)), { code: 'ERR_VERSION_CONFLICT', statusCode: 409 });

  // Asks from b's runtime run on a's actor: one mailbox for the key, whichever node asks.
  const replies = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).runtime.ask<{ n: number }>('acme', 'counter', 'c1', { inc: true })));
  t.same(replies.map((r) => r.n).sort((x, y) => x - y), Array.from({ length: 40 }, (_, i) => i + 1), 'forty increments, none lost or doubled');
  t.ok(a.runtime.isLive('acme', 'counter', 'c1'));
  t.notOk(b.runtime.isLive('acme', 'counter', 'c1'), 'the actor lives on the owner only');
  t.equal(a.local.getRecord('acme', 'thing', 'c1')?.version, 40);
  t.equal(b.local.getRecord('acme', 'thing', 'c1'), undefined);

  // Platform writes (an organisation) reach both, whoever writes them.
  await b.node.store.commit(new WriteBatch().putOrg({ orgId: 'globex', displayName: 'Globex', createdate: '' }));
  t.ok(b.local.getOrg('globex'), 'the writer has it when commit resolves');
  for (let i = 0; i < 50 && !a.local.getOrg('globex'); i++) await sleep(10);
  t.ok(a.local.getOrg('globex'), 'and the other node a moment later');
});

t.test('ClusterNode - a batch that writes two organisations is refused whole, on the owner and elsewhere', async (t) => {
  const p = prefix();
  const a = await start(t, 'a', p);
  const b = await start(t, 'b', p);
  t.equal(await a.node.takeTenant('acme'), 'a');
  const both = () => new WriteBatch().putRecord(rec('acme', 'two', 1), 0).putRecord(rec('globex', 'two', 1), 0);
  await t.rejects(a.node.store.commit(both()), /one organisation at most; this one writes acme and globex/, 'refused on the owner of one');
  await t.rejects(b.node.store.commit(both()), /one organisation at most/, 'and on a node that holds neither');
  await a.node.store.commit(new WriteBatch().putRecord(rec('acme', 'one', 1), 0));
  t.equal(a.local.getRecord('acme', 'thing', 'one')?.version, 1, 'a write of one organisation still commits');
  for (const [who, node] of [['a', a], ['b', b]] as const) {
    t.equal(node.local.getRecord('acme', 'thing', 'two'), undefined, `${who} has no part of it for acme`);
    t.equal(node.local.getRecord('globex', 'thing', 'two'), undefined, `${who} has no part of it for globex`);
  }
});

t.test('ClusterNode - a node that lost its lease without knowing cannot append behind the new owner', async (t) => {
  const p = prefix();
  const a = await start(t, 'a', p, undefined, 60_000);
  const b = await start(t, 'b', p, undefined, 60_000);
  t.equal(await a.node.takeTenant('acme'), 'a');
  await a.node.store.commit(new WriteBatch().putRecord(rec('acme', 'r', 1, { by: 'a' }), 0));

  // a stalls (say a long pause) and its lease vanishes; b claims the tenant and writes.
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const kv = await new Kvm(nc).open(new ClusterNames(p).leaseBucket);
  await kv.purge(new ClusterNames(p).leaseKey('acme'));
  t.equal(await b.node.takeTenant('acme'), 'b');
  t.equal(b.local.getRecord('acme', 'thing', 'r')?.version, 1, 'b replayed what a wrote');
  await b.node.store.commit(new WriteBatch().putRecord(rec('acme', 'r', 2, { by: 'b' }), 1));
  t.ok(a.node.owns('acme'), 'a still believes it owns acme');

  // a's next append expects the tenant's last sequence it knows: refused, and a lets go.
  await t.rejects(a.node.store.commit(new WriteBatch().putRecord(rec('acme', 's', 1, { by: 'a' }), 0)), { code: 'ERR_UNAVAILABLE', statusCode: 503 });
  t.notOk(a.node.owns('acme'), 'a dropped the tenant');
  // From then on a's writes go to b; a applies none of the tenant while it does not hold it.
  await a.node.store.commit(new WriteBatch().putRecord(rec('acme', 's', 1, { by: 'a-again' }), 0));
  t.equal(b.local.getRecord('acme', 'thing', 's')?.data.by, 'a-again');
  t.equal(a.local.getRecord('acme', 'thing', 's'), undefined, 'a does not apply the new owner\'s writes');
  // a takes the tenant back: it catches up from its own mark, then both agree.
  const onB = b.local.getRecord('acme', 'thing', 'r');
  await b.close();
  t.equal(await a.node.takeTenant('acme'), 'a');
  t.same(a.local.getRecord('acme', 'thing', 'r'), onB);
  t.equal(a.local.getRecord('acme', 'thing', 'r')?.data.by, 'b');
  t.equal(a.local.getRecord('acme', 'thing', 's')?.data.by, 'a-again');
});

t.test('ClusterNode - a node that was away catches up from its own position, then serves the tenant', async (t) => {
  const p = prefix();
  const dir = clusterTempDir(t, 'bp-cluster-core-');
  let a = await start(t, 'a', p, dir);
  const b = await start(t, 'b', p);
  t.equal(await a.node.takeTenant('acme'), 'a');
  for (let i = 0; i < 20; i++) await a.runtime.ask('acme', 'counter', 'k', { inc: true });
  await a.close(); // releases its leases

  // b takes over and writes while a is away.
  for (let i = 0; i < 15; i++) t.equal((await b.runtime.ask<{ n: number }>('acme', 'counter', 'k', { inc: true })).n, 21 + i);
  t.ok(b.node.owns('acme'));

  a = await start(t, 'a', p, dir);
  t.equal(a.local.getRecord('acme', 'thing', 'k')?.version, 20, 'a, back, leaves the tenant b holds as it was');
  await b.close();
  for (let i = 0; i < 100 && (await a.node.ownerOf('acme').catch(() => '')) !== 'a'; i++) await sleep(50);
  t.equal(a.local.getRecord('acme', 'thing', 'k')?.version, 35, 'a applied what it missed before serving anything');
  t.equal((await a.runtime.ask<{ n: number }>('acme', 'counter', 'k', { inc: true })).n, 36, 'and continues the count on the tenant');
});

t.test("ClusterNode - a burst of a tenant's writes folds into few stream messages; a lone write does not wait", async (t) => {
  const p = prefix();
  const a = await start(t, 'a', p, undefined, undefined, { commitLingerMs: 1000 });
  t.equal(await a.node.takeTenant('acme'), 'a');
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const names = new ClusterNames(p);
  const messages = async () => {
    const i = await jsm.streams.info(names.stream, { subjects_filter: names.tenantSubject('acme') });
    return Object.values(i.state.subjects ?? {}).reduce((x, y) => x + y, 0);
  };
  await sleep(100);
  const lone = performance.now();
  await a.node.store.commit(new WriteBatch().putRecord(rec('acme', 'lone', 1), 0));
  const loneMs = performance.now() - lone;
  t.ok(loneMs < 800, `a lone write is appended at once (${loneMs.toFixed(0)} ms, the linger is 1,000 ms)`);

  const before = await messages();
  // Thirty writes 3 ms apart (an append's round trip is shorter): they wait for the burst and
  // leave together, where each would otherwise go on its own.
  const writes: Promise<void>[] = [];
  for (let i = 0; i < 30; i++) {
    writes.push(a.node.store.commit(new WriteBatch().putRecord(rec('acme', `burst-${i}`, 1), 0)));
    await sleep(3);
  }
  await Promise.all(writes);
  const used = (await messages()) - before;
  t.ok(used <= 5, `thirty writes of a burst took ${used} stream messages`);
  for (let i = 0; i < 30; i++) t.equal(a.local.getRecord('acme', 'thing', `burst-${i}`)?.version, 1);
});

t.test('ClusterNode - the appends of tenants that linger at the same time leave in one socket write', async (t) => {
  const p = prefix();
  const a = await start(t, 'a', p, undefined, undefined, { commitLingerMs: 20 });
  t.equal(await a.node.takeTenant('acme'), 'a');
  t.equal(await a.node.takeTenant('beta'), 'a');
  // Every frame the node's connection writes to its socket that carries a second write's append.
  const transport = (a.node as unknown as { nc: { protocol: { transport: { send(frame: Uint8Array): unknown } } } }).nc.protocol.transport;
  const send = transport.send.bind(transport);
  const frames: string[] = [];
  transport.send = (frame: Uint8Array) => {
    const text = Buffer.from(frame).toString('latin1');
    if (text.includes('second-')) frames.push(text);
    return send(frame);
  };
  t.teardown(() => void (transport.send = send));
  await sleep(100);
  // A write of each tenant goes out at the end of the turn; the second writes, queued while those
  // appends are in flight, find their lanes in a burst and linger.
  const first = [
    a.node.store.commit(new WriteBatch().putRecord(rec('acme', 'first-acme', 1), 0)),
    a.node.store.commit(new WriteBatch().putRecord(rec('beta', 'first-beta', 1), 0)),
  ];
  await new Promise((r) => setImmediate(r));
  const second = [
    a.node.store.commit(new WriteBatch().putRecord(rec('acme', 'second-acme', 1), 0)),
    a.node.store.commit(new WriteBatch().putRecord(rec('beta', 'second-beta', 1), 0)),
  ];
  await Promise.all([...first, ...second]);
  t.equal(frames.length, 1, `the two lanes' lingering appends went in ${frames.length} socket write(s)`);
  t.ok(frames[0]?.includes('second-acme') && frames[0]?.includes('second-beta'), 'both in it');
  t.equal(a.local.getRecord('acme', 'thing', 'second-acme')?.version, 1);
  t.equal(a.local.getRecord('beta', 'thing', 'second-beta')?.version, 1);
});

t.test('ClusterNode - a commit stream message writes the keys of a repeated op shape once, and decodes to the same batches', async (t) => {
  const p = prefix();
  const a = await start(t, 'a', p);
  t.equal(await a.node.takeTenant('acme'), 'a');
  // Twenty writes of one turn: one message of twenty batches of the same shape.
  await Promise.all(Array.from({ length: 20 }, (_, i) => a.node.store.commit(new WriteBatch().putRecord(rec('acme', `shape-${i}`, 1, { n: i, at: new Date(0) }), 0))));
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const names = new ClusterNames(p);
  const m = await jsm.streams.getMessage(names.stream, { last_by_subj: names.tenantSubject('acme') });
  const msg = decode<{ b: Array<Array<{ op: string; record: StoredRecord }>> }>(m!.data);
  t.equal(msg.b.length, 20, 'one message of twenty batches');
  t.same(
    msg.b.map((b) => b[0].record.data),
    Array.from({ length: 20 }, (_, i) => ({ n: i, at: new Date(0) })),
  );
  const plain = encode(msg).length;
  t.ok(m!.data.length < plain * 0.8, `${m!.data.length} bytes, where each op writing its keys takes ${plain}`);
});
