// Issue 35: a snapshot never claims more than it holds. An owner that lost its lease without
// knowing, and whose applier has not yet read a batch the new owner appended to the tenant's `x`
// subject, must not publish a snapshot whose mark is past that batch: a node restoring it would skip
// the batch for good (and the purge below the mark would drop the rest of the history around it).
import t, { type Test } from 'tap';
import { Kvm } from '@nats-io/kv';
import { connect } from '@nats-io/transport-node';
import { ClusterNames } from '../../core/cluster/names.js';
import type { CommitLog } from '../../core/cluster/commit-log.js';
import { WriteBatch } from '../../core/store/store.js';
import { startClusterNode, thingRecord } from '../helpers/cluster-node.js';
import { startNatsServer } from '../helpers/nats-server.js';

const nats = await startNatsServer();
t.teardown(() => nats.stop());

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Records with empty data, as these tests always wrote them. */
const rec = (tenant: string, sk: string, version: number, data: Record<string, unknown> = {}) => thingRecord(tenant, sk, version, data);

async function start(t: Test, id: string, prefix: string) {
  // No snapshots by schedule: the test asks for them.
  const { node, local } = await startClusterNode(t, { natsUrl: nats.url, nodeId: id, prefix, leaseTtlMs: 60_000, snapshotEveryCommits: 0, snapshotEveryMs: 0 });
  return { node, local, log: (node as unknown as { log: CommitLog }).log };
}

/** Holds back the messages a node's applier receives until `release` (a slow or paused applier). */
function pauseApplier(log: CommitLog): () => void {
  const inner = log as unknown as { applyMessage(seq: number, subject: string, data: Uint8Array): void };
  const original = inner.applyMessage.bind(inner);
  const held: Array<[number, string, Uint8Array]> = [];
  inner.applyMessage = (seq, subject, data) => void held.push([seq, subject, data]);
  return () => {
    inner.applyMessage = original;
    for (const m of held.splice(0)) original(...m);
  };
}

t.test('snapshot safety - an owner that lost its lease and has not read the new owner\'s x batch publishes no snapshot past it', async (t) => {
  const p = `ss${Math.random().toString(36).slice(2, 8)}`;
  const a = await start(t, 'a', p);
  const b = await start(t, 'b', p);
  t.equal(await a.node.takeTenant('acme'), 'a');
  await a.node.store.commit(new WriteBatch().putRecord(rec('acme', 'first', 1), 0));

  // a's lease vanishes without a knowing; b takes acme over and writes a batch that also writes
  // platform data (the tenant's `x` subject, appended without an expected sequence).
  const nc = await connect({ servers: nats.url });
  t.teardown(() => nc.close());
  const names = new ClusterNames(p);
  await (await new Kvm(nc).open(names.leaseBucket)).purge(names.leaseKey('acme'));
  t.equal(await b.node.takeTenant('acme'), 'b');
  const resume = pauseApplier(a.log);
  await b.node.store.commit(new WriteBatch().putRecord(rec('acme', 'mixed', 1, { by: 'b' }), 0).putKv('_global', 'dir', 'acme-note', 1));
  t.equal(b.local.getRecord('acme', 'thing', 'mixed')?.data.by, 'b', 'b applied its own write');

  // a, still believing it holds acme, writes on (its `t` append expects a sequence b never moved),
  // then snapshots acme while its applier has not read b's batch; the applier catches up meanwhile.
  t.ok(a.node.owns('acme'));
  await a.node.store.commit(new WriteBatch().putRecord(rec('acme', 'late', 1, { by: 'a' }), 0));
  setTimeout(resume, 300);
  await a.log.snapshotAll();

  // b's next append fails (a moved the tenant subject); b takes acme over again, from the snapshot
  // if one was published, and must still hold the write it acknowledged.
  await t.rejects(b.node.store.commit(new WriteBatch().putRecord(rec('acme', 'next', 1), 0)), { code: 'ERR_UNAVAILABLE', statusCode: 503 });
  for (let i = 0; i < 100 && a.node.owns('acme'); i++) await sleep(20);
  t.notOk(a.node.owns('acme'), 'a let acme go once its applier read the batch that landed behind its own');
  t.equal(await b.node.takeTenant('acme'), 'b');
  t.equal(b.local.getRecord('acme', 'thing', 'mixed')?.data.by, 'b', 'the acknowledged x batch survives the takeover');
  t.equal(b.local.getRecord('acme', 'thing', 'late')?.data.by, 'a', 'and so does what a appended');
  t.equal(b.local.getRecord('acme', 'thing', 'first')?.version, 1);
});
