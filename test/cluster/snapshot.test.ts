// Issue 35, step 3: the owner snapshots each tenant it holds into JetStream and then purges the
// tenant's older commit stream messages, so the stream's bytes follow the live data, not its
// history. A node restarted with an empty DATA_DIR, and a node taking a tenant over after the
// purge, load the snapshot and replay the tail: everything acknowledged is there.
import t, { type Test } from 'tap';
import { jetstream, jetstreamManager, type JetStreamClient } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { decode, encode } from '../../core/cluster/codec.js';
import { ENV_FORMAT, type SnapshotManifest } from '../../core/cluster/snapshots.js';
import { ClusterNames } from '../../core/cluster/names.js';
import { CopyDb, CopyValue, encodeCopyValue } from '../../core/store/lmdb-copy-frame.js';
import { keyValueToBuffer } from '../../core/store/lmdb-tenant-copy.js';
import { tempDir } from '../helpers/app.js';
import { client } from '../helpers/http.js';
import { sleep, staffClient, TestCluster, token } from './helpers.js';

const BODY = 'x'.repeat(2000);

async function streamState(cluster: TestCluster): Promise<{ bytes: number; tenantMsgs: (org: string) => Promise<number>; close(): Promise<void> }> {
  const nc = await connect({ servers: cluster.nats.url });
  const jsm = await jetstreamManager(nc);
  const names = new ClusterNames(cluster.prefix);
  const info = await jsm.streams.info(names.stream);
  return {
    bytes: info.state.bytes,
    tenantMsgs: async (org) => {
      const i = await jsm.streams.info(names.stream, { subjects_filter: names.tenantSubject(org) });
      return Object.values(i.state.subjects ?? {}).reduce((a, b) => a + b, 0);
    },
    close: () => nc.close(),
  };
}

async function bytesNow(cluster: TestCluster): Promise<number> {
  const s = await streamState(cluster);
  await s.close();
  return s.bytes;
}

/** A find of every note, retried through a hand-over's 503s (with Retry-After, as failover.test.ts). */
async function allNotes(t: Test, c: ReturnType<typeof staffClient>): Promise<string[]> {
  for (let attempt = 0; ; attempt++) {
    const list = await c.post('/repository/find/note', { options: { pageSize: 200 } });
    if (list.status === 503 && attempt < 10) {
      await sleep(Number(list.headers['retry-after'] ?? 1) * 1000);
      continue;
    }
    t.equal(list.status, 200, `the notes answer (${list.status === 200 ? 'ok' : list.text})`);
    return ((list.body.data ?? []) as Array<{ sk: string }>).map((r) => r.sk).sort();
  }
}

async function writeNotes(t: Test, c: ReturnType<typeof staffClient>, n: number, acked: string[]): Promise<void> {
  for (let i = 0; i < n; i++) {
    const r = await c.post('/repository/create', { datatype: 'note', data: { i, text: BODY }, isNew: true });
    if (r.status !== 201) t.fail(`note ${i}: ${r.status} ${r.text}`);
    else acked.push(r.body.sk);
  }
}

/** Waits until the stream holds at most `max` messages of the tenant's `t` subject (a snapshot purged the rest). */
async function waitPurged(cluster: TestCluster, org: string, max: number): Promise<number> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const s = await streamState(cluster);
    const n = await s.tenantMsgs(org);
    await s.close();
    if (n <= max || Date.now() > deadline) return n;
    await sleep(100);
  }
}

t.test('cluster snapshots - the stream stops growing once snapshots cover the tenant; a takeover after the purge serves everything acknowledged', async (t) => {
  const cluster = await TestCluster.start(t, {
    nodes: 2,
    orgs: ['acme'],
    leaseTtlMs: 2000,
    env: { CLUSTER_SNAPSHOT_EVERY_COMMITS: '20', CLUSTER_SNAPSHOT_EVERY_MS: '0' },
  });
  const acked: string[] = [];
  // A tenant is taken on its first request: the first note places acme, the rest go to its owner.
  await writeNotes(t, staffClient(cluster.nodes[0].url, 'acme'), 1, acked);
  const owner = await cluster.waitOwner('acme');
  const other = 1 - owner;
  const c = staffClient(cluster.nodes[owner].url, 'acme');
  await writeNotes(t, c, 39, acked);
  const left = await waitPurged(cluster, 'acme', 25);
  t.ok(left <= 25, `after 40 commits the stream holds ${left} of acme's messages (at most a snapshot's worth)`);
  const before = await bytesNow(cluster);

  await writeNotes(t, c, 140, acked);
  const leftAfter = await waitPurged(cluster, 'acme', 25);
  const after = await bytesNow(cluster);
  t.ok(leftAfter <= 25, `after 180 commits still ${leftAfter} of acme's messages`);
  // 140 more notes of 2 KB would add ~280 KB to a stream that keeps its history.
  t.ok(after < before + 100_000, `the stream's bytes stay bounded: ${before} then ${after} after 140 more notes`);

  // A tail after the last snapshot: the takeover loads the snapshot, then replays these.
  await writeNotes(t, c, 5, acked);
  await cluster.kill9(owner);
  const c2 = staffClient(cluster.nodes[other].url, 'acme');
  const got = await allNotes(t, c2);
  t.equal(got.length, acked.length, `all ${acked.length} acknowledged notes answer through the node that took acme over`);
  t.same(got, [...acked].sort(), 'and they are the acknowledged ones');
  const more = await c2.post('/repository/create', { datatype: 'note', data: { after: true }, isNew: true });
  t.equal(more.status, 201, 'and it takes writes for acme');
});

t.test('cluster snapshots - a node restarted with an empty DATA_DIR serves its tenants with everything acknowledged', async (t) => {
  const cluster = await TestCluster.start(t, {
    nodes: 1,
    orgs: ['acme', 'globex'],
    leaseTtlMs: 2000,
    env: { CLUSTER_SNAPSHOT_EVERY_COMMITS: '10', CLUSTER_SNAPSHOT_EVERY_MS: '0' },
  });
  const acked = { acme: [] as string[], globex: [] as string[] };
  // 25 each (snapshots every 10 commits), then 3 more of acme: a tail after its last snapshot.
  await writeNotes(t, staffClient(cluster.nodes[0].url, 'acme'), 25, acked.acme);
  await writeNotes(t, staffClient(cluster.nodes[0].url, 'globex'), 25, acked.globex);
  const left = await waitPurged(cluster, 'acme', 15);
  t.ok(left <= 15, `acme's older messages are purged (${left} left): only its snapshot has them`);

  await writeNotes(t, staffClient(cluster.nodes[0].url, 'acme'), 3, acked.acme);
  await cluster.restart(0, tempDir(t, 'bp-cluster-empty-'));
  for (const org of ['acme', 'globex'] as const) {
    const got = await allNotes(t, staffClient(cluster.nodes[0].url, org));
    t.same(got, [...acked[org]].sort(), `all ${acked[org].length} acknowledged notes of ${org} answer after the restart over an empty DATA_DIR`);
  }
  const more = await staffClient(cluster.nodes[0].url, 'acme').post('/repository/create', { datatype: 'note', data: { after: true }, isNew: true });
  t.equal(more.status, 201, 'and the node takes writes again');
});

/** Every answer the tenant gives that reads its records, listings, finds, declared index and counts. */
async function answers(c: ReturnType<typeof staffClient>, ids: string[]): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const q = async (name: string, ask: () => Promise<{ status: number; body: any; headers: Record<string, unknown> }>) => {
    for (let attempt = 0; ; attempt++) {
      const r = await ask();
      // A hand-over answers 503 with Retry-After until the new owner serves (failover.test.ts).
      if (r.status === 503 && attempt < 20) {
        await sleep(Number(r.headers['retry-after'] ?? 1) * 1000);
        continue;
      }
      out[name] = { status: r.status, body: r.body };
      return;
    }
  };
  for (const id of ids) await q(`get ${id}`, () => c.get(`/repository/get/lead/${id}`));
  for (let page = 1; page <= 4; page++) {
    await q(`all p${page}`, () => c.post('/repository/find/lead', { query: {}, options: { page, pageSize: 7, sort: 'createdate', sortType: 'desc' } }));
    await q(`open p${page}`, () => c.post('/repository/find/lead', { query: { 'data.status': 'open' }, options: { page, pageSize: 5, sort: 'createdate', sortType: 'desc' } }));
  }
  await q('owner+status', () => c.post('/repository/find/lead', { query: { 'data.owner': 'u1', 'data.status': 'won' }, options: { pageSize: 50 } }));
  await q('declared index', () => c.post('/repository/find/lead', { query: { 'data.code': 'C7' }, options: { pageSize: 50 } }));
  await q('page data', () => c.get('/repository/find-page-data/lead?p=2&ps=6&s=createdate&st=asc'));
  return out;
}

t.test('cluster snapshots - a tenant restored from its snapshot on another node answers every record, listing page, find and count exactly as its owner did', async (t) => {
  const cluster = await TestCluster.start(t, {
    nodes: 2,
    orgs: ['acme'],
    leaseTtlMs: 2000,
    // By time only: one snapshot once the writes stop, covering every one of them.
    env: { CLUSTER_SNAPSHOT_EVERY_COMMITS: '100000', CLUSTER_SNAPSHOT_EVERY_MS: '300' },
  });
  const first = staffClient(cluster.nodes[0].url, 'acme');
  const made = await first.post('/repository/create', { datatype: 'lead', data: { status: 'open', owner: 'u2', code: 'C0', n: 0 }, isNew: true });
  t.equal(made.status, 201, made.text);
  const owner = await cluster.waitOwner('acme');
  const c = staffClient(cluster.nodes[owner].url, 'acme');
  const ids = [made.body.sk as string];
  const admin = client(cluster.nodes[owner].url, { orgid: 'acme', authorization: `Bearer ${token({ org: 'acme', roles: ['User', 'Admin'] })}` });
  const declared = await admin.post('/repository/indexes', { datatype: 'lead', path: 'data.code' });
  t.equal(declared.status, 202, declared.text);
  for (let i = 1; i < 24; i++) {
    const r = await c.post('/repository/create', { datatype: 'lead', data: { status: i % 3 ? 'open' : 'won', owner: i % 2 ? 'u1' : 'u2', code: `C${i}`, n: i }, isNew: true });
    if (r.status !== 201) t.fail(`lead ${i}: ${r.status} ${r.text}`);
    ids.push(r.body.sk);
  }
  for (const [i, id] of ids.entries()) if (i % 5 === 0) t.equal((await c.post(`/repository/update-partial/lead/${id}`, { 'data.status': 'won' })).status, 200);
  t.equal((await c.del(`/repository/delete/lead/${ids[3]}`)).status, 200);
  const deadline = Date.now() + 30_000;
  while ((await admin.get(`/repository/indexes/${declared.body.id}`)).body.state !== 'ready' && Date.now() < deadline) await sleep(50);

  const before = await answers(c, ids);
  t.equal((before['declared index'] as any).body.data?.length, 1, 'the owner finds a lead by its declared index');
  t.ok((before['open p1'] as any).body.data?.length > 0, 'and lists open leads');
  // The snapshot covers every write: the stream keeps only the message the next append expects.
  let left = await waitPurged(cluster, 'acme', 1);
  for (let i = 0; i < 2 && left > 1; i++) left = await waitPurged(cluster, 'acme', 1);
  t.ok(left <= 1, `a snapshot covers every write (${left} of acme's messages left in the stream)`);
  // It is a copy of acme's own environment: one file, sent as it is.
  const nc = await connect({ servers: cluster.nats.url });
  const names = new ClusterNames(cluster.prefix);
  const manifest = decode<SnapshotManifest>((await (await jetstreamManager(nc)).streams.getMessage(names.snapshotStream, { last_by_subj: names.snapshotManifest('acme') }))!.data);
  await nc.close();
  t.equal(manifest.f, ENV_FORMAT, 'the snapshot is the tenant environment\'s file');
  t.ok(manifest.bytes >= 8192 && manifest.bytes % 4096 === 0, `of whole pages (${manifest.bytes} bytes)`);

  await cluster.kill9(owner);
  const after = await answers(staffClient(cluster.nodes[1 - owner].url, 'acme'), ids);
  t.equal(await cluster.waitOwner('acme', 5000, owner), 1 - owner, 'the other node took acme over');
  for (const name of Object.keys(before)) t.same(after[name], before[name], `${name}: the same answer after the restore`);
});

/** A note of globex, as an older node's snapshot holds it. */
type OlderNote = { pk: string; sk: string; datatype: string; version: number; state: string; createdate: string; modifydate: string; data: { written: string } };

/**
 * A node restarted over an empty DATA_DIR takes globex over from the snapshot `write` publishes
 * (chunks and a manifest as an older node wrote them, at the tenant subject's last sequence `seq`)
 * and serves the note it holds.
 */
async function olderSnapshotServes(t: Test, sk: string, written: string, write: (js: JetStreamClient, names: ClusterNames, seq: number, record: OlderNote) => Promise<void>): Promise<void> {
  const cluster = await TestCluster.start(t, { nodes: 1, orgs: ['acme', 'globex'], leaseTtlMs: 2000 });
  await writeNotes(t, staffClient(cluster.nodes[0].url, 'globex'), 1, []);
  const nc = await connect({ servers: cluster.nats.url });
  t.teardown(() => nc.close());
  const jsm = await jetstreamManager(nc);
  const names = new ClusterNames(cluster.prefix);
  const last = await jsm.streams.getMessage(names.stream, { last_by_subj: names.tenantSubject('globex') });
  const at = '2026-11-01T00:00:00.000Z';
  const record: OlderNote = { pk: 'globex', sk, datatype: 'note', version: 1, state: 'new', createdate: at, modifydate: at, data: { written } };
  await write(jetstream(nc), names, last!.seq, record);

  await cluster.restart(0, tempDir(t, 'bp-cluster-older-'));
  const got = await staffClient(cluster.nodes[0].url, 'globex').get(`/repository/get/note/${sk}`);
  t.equal(got.status, 200, `the record of the older snapshot answers (${got.status === 200 ? 'ok' : got.text})`);
  t.same(got.body.data, record.data);
}

t.test('cluster snapshots - a snapshot in the first chunk format (an older node wrote it) still loads on a takeover', async (t) => {
  // What a node before chunk format 2 wrote: msgpack chunks of [db, key, decoded value], a manifest without `f`.
  await olderSnapshotServes(t, '6b0b00000000000000000001', 'by an older node', async (js, names, seq, record) => {
    const chunk = await js.publish(names.snapshotChunks('globex'), encode({ i: 'a1', k: 0, e: [[0, ['globex', 'note', record.sk], record]] }));
    await js.publish(names.snapshotManifest('globex'), encode({ id: 'a1', seq, n: 0, first: chunk.seq, chunks: 1, entries: 1, bytes: 1, at: record.createdate, o: 'older-node' }));
  });
});

t.test('cluster snapshots - a snapshot in chunk format 2 (keys whole: an older node wrote it) still loads on a takeover', async (t) => {
  // Chunk format 2: format u8, id (8 bytes), index u32, entries u32, then entries of
  // tag u8, key length u16, value length u32, key, value; its manifest says f: 2.
  await olderSnapshotServes(t, '6b0b00000000000000000002', 'by a format 2 node', async (js, names, seq, record) => {
    const key = keyValueToBuffer(['globex', 'note', record.sk]);
    const value = Buffer.from(encodeCopyValue(record));
    const head = Buffer.alloc(17 + 7);
    head[0] = 2;
    Buffer.from('00112233aabbccdd', 'hex').copy(head, 1);
    head.writeUInt32LE(0, 9);
    head.writeUInt32LE(1, 13);
    head[17] = CopyDb.Records | (CopyValue.Decoded << 4);
    head.writeUInt16LE(key.length, 18);
    head.writeUInt32LE(value.length, 20);
    const chunk = await js.publish(names.snapshotChunks('globex'), Buffer.concat([head, key, value]));
    await js.publish(names.snapshotManifest('globex'), encode({ id: '00112233aabbccdd', seq, n: 0, first: chunk.seq, chunks: 1, entries: 1, bytes: 1, at: record.createdate, o: 'older-node', f: 2 }));
  });
});
