// Storage quota per organisation (issue 29 item 5) against a real server and a real LMDB: record
// bytes and media bytes counted in each write's transaction, writes past a plan's quota refused
// (413) with nothing stored, usage equal to the bytes stored after updates and deletes, kept across
// a restart, counted once for data stored before counting existed, and the free-disk floor (507).
import { randomBytes } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { open } from 'lmdb';
import t from 'tap';
import type { RunningApp } from '../../edge/app.js';
import type { LmdbStore } from '../../core/store/lmdb-store.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { signupOrg } from '../helpers/auth.js';
import { client, request, type Reply } from '../helpers/http.js';

const CAP = 300_000;

function quotas(recordBytes: number | null, mediaBytes: number | null, extra: Record<string, unknown> = {}) {
  return { quotas: { plans: { standard: { recordBytes, mediaBytes } }, ...extra }, uploads: { maxBytes: CAP } };
}

const lmdbOf = (app: RunningApp) => app.deps.store as LmdbStore;

async function side(app: RunningApp, email: string, orgName: string) {
  const s = await signupOrg(app, { email, orgName });
  const headers = { orgid: s.orgId, authorization: `Bearer ${s.token}` };
  return { org: s.orgId, headers, c: client(app.url, headers) };
}

function upload(app: RunningApp, headers: Record<string, string>, event: string, data: Buffer): Promise<Reply> {
  const boundary = 'b0und-' + randomBytes(8).toString('hex');
  const body = Buffer.concat([
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="clip.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`),
    data,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
  return request(app.url, `/events/${event}/media`, { method: 'POST', headers: { ...headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, body });
}

/** Bytes of the stored files under the tenant's media directory. */
function filesOf(app: RunningApp, org: string): string[] {
  const dir = join(app.deps.config.dataDir, 'media', org);
  const out: string[] = [];
  for (const shard of (() => { try { return readdirSync(dir); } catch { return []; } })()) for (const f of readdirSync(join(dir, shard))) out.push(f);
  return out;
}

t.test('storage quota - a record write past the quota is refused and stores nothing; usage counts creates, updates and deletes exactly', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'events', 'records'], config: quotas(40_000, null) });
  const a = await side(app, 'ada@a.example', 'Org A');
  const store = lmdbOf(app);
  const exact = (what: string) => t.equal(store.usage(a.org).recordBytes, store.measureRecordBytes(a.org), `${what}: usage equals the bytes stored`);
  exact('after sign-up');
  const before = store.usage(a.org).recordBytes;

  const made = await a.c.post('/repository/create', { datatype: 'note', data: { text: 'x'.repeat(5_000) }, isNew: true });
  t.equal(made.status, 201);
  t.ok(store.usage(a.org).recordBytes > before + 5_000, 'the record counts');
  exact('after a create');

  const grown = store.usage(a.org).recordBytes;
  const up = await a.c.post(`/repository/update/note/${made.body.sk}`, { data: { text: 'y'.repeat(9_000) }, version: 1 });
  t.equal(up.status, 200, up.text);
  t.equal(store.usage(a.org).recordBytes - grown, 4_000, 'an update counts its new size minus its old one');
  exact('after an update');

  // Fill up to the quota, then one more.
  let refused: Reply | undefined;
  for (let i = 0; i < 20 && !refused; i++) {
    const r = await a.c.post('/repository/create', { datatype: 'note', data: { text: 'z'.repeat(5_000) }, isNew: true });
    if (r.status !== 201) refused = r;
  }
  t.ok(refused, 'a create past the quota is refused');
  t.equal(refused!.status, 413);
  t.equal(refused!.body.error, 'Payload Too Large');
  t.match(refused!.body.message, /storage quota: .* record bytes .* quota of 40000 bytes \(\d+ bytes used now\)/, 'the answer names the quota and the usage');
  const used = store.usage(a.org).recordBytes;
  t.ok(used <= 40_000, 'usage stays within the quota');
  const digest = store.digest();
  const again = await a.c.post('/repository/create', { datatype: 'note', data: { text: 'z'.repeat(5_000) }, isNew: true });
  t.equal(again.status, 413);
  const bigger = await a.c.post(`/repository/update/note/${made.body.sk}`, { data: { text: 'w'.repeat(30_000) }, version: 2 });
  t.equal(bigger.status, 413, 'an update that grows past the quota is refused too');
  t.equal(store.digest(), digest, 'nothing was stored');
  t.equal(store.usage(a.org).recordBytes, used, 'usage is unchanged');

  // Shrinking and deleting always work, and take their bytes off.
  const shrunk = await a.c.post(`/repository/update/note/${made.body.sk}`, { data: { text: 'small' }, version: 2 });
  t.equal(shrunk.status, 200, 'an update that shrinks is taken over the quota');
  const list = await a.c.post('/repository/find/note', {});
  for (const r of (list.body.data ?? list.body) as Array<{ sk: string }>) {
    const d = await a.c.del(`/repository/delete/note/${r.sk}`);
    t.equal(d.status, 200, d.text);
  }
  exact('after the deletes');
  t.ok(store.usage(a.org).recordBytes < before + 200, 'the deleted records are off the usage');
  t.equal((await a.c.post('/repository/create', { datatype: 'note', data: { text: 'z'.repeat(5_000) }, isNew: true })).status, 201, 'room again after deletes');

  // The door's scan log, chat and the service's bookkeeping count but are not refused; another
  // organisation's quota is its own.
  const b = await side(app, 'bob@b.example', 'Org B');
  t.equal((await b.c.post('/repository/create', { datatype: 'note', data: { text: 'z'.repeat(5_000) }, isNew: true })).status, 201, 'B is not held by A');
  t.equal(store.usage(b.org).recordBytes, store.measureRecordBytes(b.org));
});

t.test('storage quota - an upload past the media quota is refused and keeps no file; removing files takes their bytes off', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'events', 'records'], config: quotas(null, 250_000) });
  const a = await side(app, 'ada@a.example', 'Org A');
  const store = lmdbOf(app);
  const ev = await a.c.post('/events', { name: 'Fest' });
  t.equal(ev.status, 201);

  const first = await upload(app, a.headers, ev.body.sk, randomBytes(200_000));
  t.equal(first.status, 201, first.text);
  t.equal(store.usage(a.org).mediaBytes, 200_000, 'the file counts');
  t.equal(filesOf(app, a.org).length, 1);
  const digest = store.digest();

  const over = await upload(app, a.headers, ev.body.sk, randomBytes(100_000));
  t.equal(over.status, 413);
  t.match(over.body.message, /media bytes .* quota of 250000 bytes \(200000 bytes used now\)/, 'the answer names the quota and the usage');
  t.equal(filesOf(app, a.org).length, 1, 'no file was kept');
  t.equal(store.usage(a.org).mediaBytes, 200_000);
  t.equal(store.digest(), digest, 'no media record was written');

  const chunked = await a.c.post(`/events/${ev.body.sk}/media/uploads`, { fileName: 'big.bin', sizeBytes: 60_000 });
  t.equal(chunked.status, 413, 'a chunked upload past the quota is refused at its start');
  const fits = await a.c.post(`/events/${ev.body.sk}/media/uploads`, { fileName: 'ok.bin', sizeBytes: 40_000 });
  t.equal(fits.status, 201, 'one that fits starts');
  const second = await a.c.post(`/events/${ev.body.sk}/media/uploads`, { fileName: 'ok2.bin', sizeBytes: 40_000 });
  t.equal(second.status, 413, 'an open upload counts against the quota');
  t.equal((await request(app.url, `/events/${ev.body.sk}/media/uploads/${fits.body.uploadId}/chunks/0`, { method: 'PUT', headers: { ...a.headers, 'content-type': 'application/octet-stream' }, body: randomBytes(40_000) })).status, 200);
  const done = await a.c.post(`/events/${ev.body.sk}/media/uploads/${fits.body.uploadId}/complete`, {});
  t.equal(done.status, 201, done.text);
  t.equal(store.usage(a.org).mediaBytes, 240_000);

  const del = await a.c.del(`/events/${ev.body.sk}`);
  t.equal(del.status, 204, del.text);
  t.equal(filesOf(app, a.org).length, 0, 'the files went with the event');
  t.equal(store.usage(a.org).mediaBytes, 0, 'and their bytes with them');
  t.equal(store.usage(a.org).recordBytes, store.measureRecordBytes(a.org));
});

t.test('storage quota - usage survives a restart, and data stored before usage was counted is counted once', async (t) => {
  const dataDir = tempDir(t);
  let app = await startTestApp(t, { modules: ['auth', 'events', 'records'], dataDir, config: quotas(null, null) });
  const a = await side(app, 'ada@a.example', 'Org A');
  const ev = await a.c.post('/events', { name: 'Fest' });
  t.equal((await upload(app, a.headers, ev.body.sk, randomBytes(50_000))).status, 201);
  t.equal((await a.c.post('/repository/create', { datatype: 'note', data: { text: 'x'.repeat(3_000) }, isNew: true })).status, 201);
  const was = lmdbOf(app).usage(a.org);
  await app.close();

  app = await startTestApp(t, { modules: ['auth', 'events', 'records'], dataDir, config: quotas(null, null) });
  t.same(lmdbOf(app).usage(a.org), was, 'the counters are in LMDB');
  await app.close();

  // A data directory from before usage was counted: no counters, no mark.
  const env = open({ path: dataDir, maxDbs: 16, noSubdir: false, compression: false });
  const meta = env.openDB({ name: 'meta' });
  await env.transaction(() => {
    for (const key of meta.getKeys({ start: ['usage'], end: ['usage-counted', '\uffff'] })) void meta.remove(key);
    void meta.remove(['usage-counted']);
  });
  await env.close();

  app = await startTestApp(t, { modules: ['auth', 'events', 'records'], dataDir, config: quotas(null, null) });
  const store = lmdbOf(app);
  t.equal(store.usage(a.org).recordBytes, was.recordBytes, 'record bytes counted at start-up');
  t.equal(store.usage(a.org).recordBytes, store.measureRecordBytes(a.org));
  // Media files are counted from the tenant's directory in the background after the start.
  for (let i = 0; i < 100 && !store.usage(a.org).mediaCounted; i++) await new Promise((r) => setTimeout(r, 20));
  t.equal(store.usage(a.org).mediaBytes, 50_000, 'media bytes counted from the files');
});

t.test('storage quota - below the free-disk floor writes answer 507 and deletes still work', async (t) => {
  const dataDir = tempDir(t);
  let app = await startTestApp(t, { modules: ['auth', 'events', 'records'], dataDir });
  const a = await side(app, 'ada@a.example', 'Org A');
  const ev = await a.c.post('/events', { name: 'Fest' });
  const made = await a.c.post('/repository/create', { datatype: 'note', data: { text: 'hello' }, isNew: true });
  t.equal(made.status, 201);
  await app.close();

  app = await startTestApp(t, { modules: ['auth', 'events', 'records'], dataDir, config: { quotas: { minFreeDiskBytes: Number.MAX_SAFE_INTEGER }, uploads: { maxBytes: CAP } } });
  const store = lmdbOf(app);
  const digest = store.digest();
  // A new server: a new address.
  const c = client(app.url, a.headers);
  const create = await c.post('/repository/create', { datatype: 'note', data: { text: 'more' }, isNew: true });
  t.equal(create.status, 507, create.text);
  t.equal(create.body.error, 'Insufficient Storage');
  t.match(create.body.message, /low on disk space .* below the floor/);
  const up = await upload(app, a.headers, ev.body.sk, randomBytes(1_000));
  t.equal(up.status, 507, 'an upload too');
  t.equal(filesOf(app, a.org).length, 0);
  t.equal(store.digest(), digest, 'nothing was stored');
  const del = await c.del(`/repository/delete/note/${made.body.sk}`);
  t.equal(del.status, 200, 'a delete still works');
});

t.test('GET /profile/org/usage - Admins see usage against their plan; other staff are refused; /metrics has it per organisation', async (t) => {
  const app = await startTestApp(t, { modules: ['auth', 'events', 'records'], config: quotas(1_000_000, 2_000_000) });
  const a = await side(app, 'ada@a.example', 'Org A');
  const r = await a.c.get('/profile/org/usage');
  t.equal(r.status, 200, r.text);
  const used = lmdbOf(app).usage(a.org);
  t.same(r.body, { plan: 'standard', records: { usedBytes: used.recordBytes, quotaBytes: 1_000_000 }, media: { usedBytes: 0, quotaBytes: 2_000_000 } });
  t.ok(used.recordBytes > 0);
  const plain = await request(app.url, '/profile/org/usage', { headers: { orgid: a.org, authorization: `Bearer ${app.deps.tokens.signAccess({ sub: 'u-2', org: a.org, roles: ['User'], kind: 'staff', email: 'u2@a.example' })}` } });
  t.equal(plain.status, 403, 'a plain staff user is refused');
  const m = await request(app.url, '/metrics');
  t.match(m.text, new RegExp(`org_storage_record_bytes\\{org="${a.org}"\\} ${used.recordBytes}`));
  t.match(m.text, new RegExp(`org_storage_media_bytes\\{org="${a.org}"\\} 0`));
});

t.test('LmdbStore - log appends and key-value entries count as record bytes but the quota never refuses them; a refused batch rolls back whole', async (t) => {
  const { LmdbStore } = await import('../../core/store/lmdb-store.js');
  const { WriteBatch } = await import('../../core/store/store.js');
  const store = new LmdbStore({
    path: tempDir(t),
    quota: { limitsOf: () => ({ plan: 'tiny', recordBytes: 1_000, mediaBytes: 1_000 }), exemptDatatypes: new Set(['bookkeeping']) },
  });
  t.teardown(() => store.close());
  for (let seq = 1; seq <= 20; seq++) await store.commit(new WriteBatch().append('org1', 'scan:ev', seq, { ticket: 'T'.repeat(100), seq }));
  await store.commit(new WriteBatch().putKv('org1', 'sessions', 'k', { token: 's'.repeat(200) }));
  t.ok(store.usage('org1').recordBytes > 2_000, 'scans and kv count past the quota');
  t.equal(store.usage('org1').recordBytes, store.measureRecordBytes('org1'));
  const rec = (datatype: string, sk: string) => ({ pk: 'org1', sk, datatype, version: 1, state: 'new', createdate: '', modifydate: '', data: { x: 'y'.repeat(50) } });
  await t.rejects(store.commit(new WriteBatch().deleteKv('org1', 'sessions', 'k').putRecord(rec('note', 'a'.repeat(24)), 0)), { code: 'ERR_STORAGE_QUOTA' });
  t.ok(store.getKv('org1', 'sessions', 'k'), 'the refused batch wrote nothing, its delete included');
  await store.commit(new WriteBatch().putRecord(rec('bookkeeping', 'b'.repeat(24)), 0));
  t.equal(store.usage('org1').recordBytes, store.measureRecordBytes('org1'), 'an exempt datatype is written and counted');
  await store.commit(new WriteBatch().deleteKv('org1', 'sessions', 'k'));
  t.equal(store.usage('org1').recordBytes, store.measureRecordBytes('org1'), 'a kv delete takes its bytes off');
  await t.rejects(store.commit(new WriteBatch().addMediaBytes('org1', 1_001)), { code: 'ERR_STORAGE_QUOTA' });
  t.equal(store.usage('org1').mediaBytes, 0);
});
