// Media uploads (issue 11; spec: Events `/events/:id/media`, Limits → upload chunks, Errors → 413)
// against a real server: multipart upload and download, the size cap, chunked uploads of 64 KB
// chunks, the time-out of an unfinished upload, hostile file names and upload ids, malformed
// multipart bodies, and tenant isolation. After each hostile request the data directory is walked:
// every file there must be LMDB's, a stored file at media/<org>/<xx>/<32 hex>, or a temp file in
// media/.tmp, and nothing may appear next to the data directory.
import { createHash, randomBytes } from 'node:crypto';
import { connect } from 'node:net';
import { existsSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import t, { type Test } from 'tap';
import type { RunningApp } from '../../edge/app.js';
import { sweepOrphanFiles } from '../../edge/routes/events/media.js';
import { startTestApp } from '../helpers/app.js';
import { signupOrg } from '../helpers/auth.js';
import { client, request, type Reply } from '../helpers/http.js';

const CAP = 300_000;
const CHUNK = 64 * 1024;
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

type Client = ReturnType<typeof client>;

/**
 * One request with exact bytes and headers. (rawRequest half-closes its socket after the body,
 * which uWebSockets.js takes for the end of the connection before an async handler answers.)
 */
function send(baseUrl: string, method: string, path: string, headers: Record<string, string>, body?: Buffer | string): Promise<Reply> {
  return request(baseUrl, path, { method, headers, body: body ?? (method === 'GET' || method === 'DELETE' ? undefined : Buffer.alloc(0)) });
}

interface World {
  app: RunningApp;
  dataDir: string;
  mediaDir: string;
  tmpDir: string;
  a: { org: string; headers: Record<string, string>; c: Client; event: string };
  b: { org: string; headers: Record<string, string>; c: Client; event: string };
}

async function world(tt: Parameters<typeof startTestApp>[0], uploads: Record<string, unknown> = {}, config: Record<string, unknown> = {}): Promise<World> {
  const app = await startTestApp(tt, { modules: ['auth', 'events', 'records'], config: { ...config, uploads: { maxBytes: CAP, chunkBytes: CHUNK, ...uploads } } });
  const dataDir = app.deps.config.dataDir;
  const mediaDir = join(dataDir, 'media');
  const side = async (email: string, orgName: string) => {
    const s = await signupOrg(app, { email, orgName });
    const headers = { orgid: s.orgId, authorization: `Bearer ${s.token}` };
    const c = client(app.url, headers);
    const ev = await c.post('/events', { name: `${orgName} fest` });
    if (ev.status !== 201) throw new Error(`event: ${ev.status} ${ev.text}`);
    return { org: s.orgId, headers, c, event: ev.body.sk as string };
  };
  const a = await side('ada@a.example', 'Org A');
  const b = await side('bob@b.example', 'Org B');
  return { app, dataDir, mediaDir, tmpDir: join(mediaDir, '.tmp'), a, b };
}

/** A multipart body from raw parts; `head` is the part's header block as written (any bytes). */
function multipart(boundary: string, parts: Array<{ head: string | Buffer; data: Buffer | string }>, close = true): Buffer {
  const out: Buffer[] = [];
  for (const p of parts) {
    out.push(Buffer.from(`--${boundary}\r\n`), Buffer.isBuffer(p.head) ? p.head : Buffer.from(p.head, 'utf8'), Buffer.from('\r\n\r\n'));
    out.push(Buffer.isBuffer(p.data) ? p.data : Buffer.from(p.data, 'utf8'), Buffer.from('\r\n'));
  }
  if (close) out.push(Buffer.from(`--${boundary}--\r\n`));
  return Buffer.concat(out);
}

const fileHead = (filename: string, type = 'application/octet-stream') =>
  `Content-Disposition: form-data; name="file"; filename="${filename.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"\r\nContent-Type: ${type}`;

function upload(w: World, side: World['a'], data: Buffer, opts: { filename?: string; type?: string; fields?: Record<string, string>; event?: string } = {}): Promise<Reply> {
  const boundary = 'b0und-' + randomBytes(8).toString('hex');
  const parts: Array<{ head: string; data: Buffer | string }> = Object.entries(opts.fields ?? {}).map(([k, v]) => ({ head: `Content-Disposition: form-data; name="${k}"`, data: v }));
  parts.push({ head: fileHead(opts.filename ?? 'photo.png', opts.type ?? 'image/png'), data });
  return send(w.app.url, 'POST', `/events/${opts.event ?? side.event}/media`, { ...side.headers, 'content-type': `multipart/form-data; boundary=${boundary}` }, multipart(boundary, parts));
}

/** Every file under `dir`, relative to it. */
function walk(dir: string): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...walk(p).map((f) => join(e.name, f)));
    else out.push(e.name);
  }
  return out;
}

/** Stored files (media/<org>/<xx>/<id>) and temp files; throws on any other file under media/. */
function mediaFiles(w: World): { stored: string[]; temp: string[] } {
  const stored: string[] = [];
  const temp: string[] = [];
  for (const f of walk(w.mediaDir)) {
    const parts = f.split(sep);
    if (parts[0] === '.tmp' && parts.length === 2 && /^[0-9a-f]{32}$/.test(parts[1])) temp.push(f);
    else if (parts.length === 3 && (parts[0] === w.a.org || parts[0] === w.b.org) && /^[0-9a-f]{32}$/.test(parts[2]) && parts[2].startsWith(parts[1])) stored.push(f);
    else throw new Error(`unexpected file under the media directory: ${f}`);
  }
  return { stored, temp };
}

/**
 * The data directory holds the store's files and media/ only, and nothing named with `token` (a
 * marker in the hostile names) appeared beside it, nor where a naive join of a name would land.
 */
function checkContained(tt: Tap, w: World, before: Set<string>, token: string, names: string[] = []): void {
  // The service's own files: the LMDB store, its write journal and the local voice provider's state.
  const outside = walk(w.dataDir).filter((f) => !f.startsWith('media' + sep) && !/\.mdb(-lock)?$|^voice-local\.json$|^journal[/\\]\d+\.journal$/.test(f));
  tt.same(outside, [], "no file in the data directory outside media/ but the service's own");
  tt.doesNotThrow(() => mediaFiles(w), 'every file under media/ is a stored file or a temp file');
  tt.same(walk(w.dataDir).filter((f) => f.includes(token)), [], 'no path in the data directory carries a client name');
  const added = readdirSync(dirname(w.dataDir)).filter((n) => !before.has(n) && n.includes(token));
  tt.same(added, [], 'nothing named by an upload appeared next to the data directory');
  const bases = [w.dataDir, w.mediaDir, w.tmpDir, join(w.mediaDir, w.a.org), join(w.mediaDir, w.a.org, '00')];
  const landed = names.flatMap((n) => [...bases.map((b) => resolve(b, n)), resolve(n)]).filter(isFile);
  tt.same(landed, [], 'no file where a naive join of a name would have written');
}

function isFile(p: string): boolean {
  try {
    return statSync(p).isFile();
  } catch {
    return false; // absent, or a name too long to exist
  }
}

type Tap = Test;

async function mediaCount(w: World, side: World['a']): Promise<number> {
  const r = await side.c.get(`/events/${side.event}/media?pageSize=200`);
  if (r.status !== 200) throw new Error(`list: ${r.status} ${r.text}`);
  return r.body.total;
}

function isEnvelope(tt: Tap, r: Reply, status: number, what: string): void {
  tt.equal(r.status, status, `${what}: ${status}`);
  tt.match(r.body, { statusCode: status, error: String }, `${what}: error envelope`);
  tt.ok(typeof r.body?.message === 'string' || Array.isArray(r.body?.message), `${what}: envelope message`);
}

async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 25));
  }
  return cond();
}

t.test('multipart upload - stored under the data dir, answered as a media record, downloadable byte for byte', async (t) => {
  const w = await world(t);
  const data = randomBytes(100_000);
  const r = await upload(w, w.a, data, { filename: 'Stage left.png', fields: { title: 'Stage', description: 'Night one' } });
  t.equal(r.status, 201, r.text);
  const rec = r.body;
  t.match(rec, {
    datatype: 'event_media',
    state: 'active',
    data: { event: w.a.event, title: 'Stage', kind: 'image', mimeType: 'image/png', sizeBytes: data.length, description: 'Night one', file: { name: 'Stage left.png', sha256: sha(data) } },
  });
  const id: string = rec.data.file.id;
  t.match(id, /^[0-9a-f]{32}$/);
  t.equal(rec.data.url, `/events/${w.a.event}/media/files/${id}`);

  const onDisk = join(w.mediaDir, w.a.org, id.slice(0, 2), id);
  t.ok(resolve(onDisk).startsWith(resolve(w.dataDir) + sep), 'the file lives under DATA_DIR');
  t.ok(readFileSync(onDisk).equals(data), 'the stored file has the uploaded bytes');
  t.same(mediaFiles(w), { stored: [join(w.a.org, id.slice(0, 2), id)], temp: [] }, 'one stored file, no temp file left');

  const dl = await new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>((res, rej) => {
    import('node:http').then(({ get }) =>
      get(new URL(rec.data.url, w.app.url), { headers: w.a.headers, agent: false }, (m) => {
        const chunks: Buffer[] = [];
        m.on('data', (c: Buffer) => chunks.push(c)).on('end', () => res({ status: m.statusCode ?? 0, headers: m.headers, body: Buffer.concat(chunks) }));
      }).on('error', rej),
    );
  });
  t.equal(dl.status, 200);
  t.ok(dl.body.equals(data), 'the download gives the same bytes');
  t.equal(dl.headers['content-type'], 'image/png');
  t.equal(dl.headers['etag'], `"${sha(data)}"`);
  t.match(dl.headers['content-disposition'], /^inline; filename="Stage left\.png"/);
  t.equal(dl.headers['x-content-type-options'], 'nosniff');
  const again = await request(w.app.url, rec.data.url, { headers: { ...w.a.headers, 'if-none-match': `"${sha(data)}"` } });
  t.equal(again.status, 304, 'If-None-Match with the ETag');

  // A type a browser would run is sent as an attachment.
  const html = await upload(w, w.a, Buffer.from('<script>alert(1)</script>'), { filename: 'x.html', type: 'text/html' });
  t.equal(html.status, 201);
  t.equal(html.body.data.kind, 'document');
  const hdl = await request(w.app.url, html.body.data.url, { headers: w.a.headers });
  t.match(hdl.headers['content-disposition'], /^attachment;/);
  t.match(hdl.headers['content-security-policy'], /sandbox/);

  t.equal(await mediaCount(w, w.a), 2, 'both records are listed');
  const list = await w.a.c.get(`/events/${w.a.event}/media?kind=image`);
  t.same(list.body.data.map((m: any) => m.sk), [rec.sk]);

  // Another organisation: its own orgid does not reach org A's event or file; org A's orgid is refused.
  t.equal((await request(w.app.url, rec.data.url, { headers: w.b.headers })).status, 404, "org B on its orgid: org A's event is unknown");
  t.equal((await request(w.app.url, `/events/${w.b.event}/media/files/${id}`, { headers: w.b.headers })).status, 404, "org B's event with org A's file id");
  t.equal((await request(w.app.url, rec.data.url, { headers: { ...w.b.headers, orgid: w.a.org } })).status, 403, "org B's token on org A's orgid");
  t.equal((await request(w.app.url, rec.data.url, { headers: { orgid: w.a.org } })).status, 401, 'no token');
  // A file id of this event that no record names.
  t.equal((await w.a.c.get(`/events/${w.a.event}/media/files/${'0'.repeat(32)}`)).status, 404);
  // A JSON media record still works next to uploads, and cannot claim a stored file.
  const json = await w.a.c.post(`/events/${w.a.event}/media`, { title: 'Link', kind: 'link', url: 'https://cdn.example.com/x.mp4' });
  t.equal(json.status, 201);
  const forged = await w.a.c.post(`/events/${w.a.event}/media`, { title: 'F', kind: 'image', url: 'https://x.example/', file: { id } });
  t.equal(forged.status, 400, 'a JSON record may not name a stored file');
});

t.test('size cap - at the cap is stored, above it is a 413 envelope leaving no file and no record', async (t) => {
  // A global body cap below the upload cap: multipart may go up to the upload cap, JSON may not.
  const JSON_CAP = 100_000;
  const w = await world(t, {}, { http: { maxBodyBytes: JSON_CAP } });
  const token = 'zz' + randomBytes(6).toString('hex');
  const before = new Set(readdirSync(dirname(w.dataDir)));
  const atCap = await upload(w, w.a, randomBytes(CAP), { filename: `cap-${token}.bin` });
  t.equal(atCap.status, 201, 'exactly the cap');
  t.equal(atCap.body.data.sizeBytes, CAP);

  const over = await upload(w, w.a, randomBytes(CAP + 1), { filename: `over-${token}.bin` });
  isEnvelope(t, over, 413, 'one byte over the cap');
  t.match(over.body.message, String(CAP));

  // Far above: the edge refuses it from Content-Length, before reading the body.
  const big = randomBytes(CAP * 4);
  const farOver = await send(
    w.app.url,
    'POST',
    `/events/${w.a.event}/media`,
    { ...w.a.headers, 'content-type': 'multipart/form-data; boundary=xyz' },
    multipart('xyz', [{ head: fileHead('big.bin'), data: big }]),
  ).catch((err: Error) => ({ status: -1, text: err.message, body: undefined, headers: {} }) as Reply);
  isEnvelope(t, farOver, 413, 'four times the cap');

  // The JSON body keeps the global body cap, not the upload cap.
  const valid = JSON.stringify({ title: 'x', kind: 'link', url: 'https://x.example/' });
  const padded = valid.slice(0, -1) + ' '.repeat(JSON_CAP) + '}';
  const jsonBig = await send(w.app.url, 'POST', `/events/${w.a.event}/media`, { ...w.a.headers, 'content-type': 'application/json' }, padded);
  isEnvelope(t, jsonBig, 413, 'a valid JSON body over the global cap');
  const jsonOk = await send(w.app.url, 'POST', `/events/${w.a.event}/media`, { ...w.a.headers, 'content-type': 'application/json' }, valid);
  t.equal(jsonOk.status, 201, 'the same JSON within the cap');

  // Chunked: a declared size above the cap is refused up front.
  const begin = await w.a.c.post(`/events/${w.a.event}/media/uploads`, { fileName: 'big.mov', sizeBytes: CAP + 1 });
  isEnvelope(t, begin, 413, 'a chunked upload declared over the cap');

  t.equal(await mediaCount(w, w.a), 2, 'only the upload at the cap and the small JSON record exist');
  const files = mediaFiles(w);
  t.equal(files.stored.length, 1, 'only the upload at the cap has a file');
  t.same(files.temp, [], 'no temp file left');
  checkContained(t, w, before, token);
});

t.test('chunked upload - 64 KB chunks in any order, two at once, assemble the exact bytes', async (t) => {
  const w = await world(t);
  const data = randomBytes(4 * CHUNK + 1234);
  const base = `/events/${w.a.event}/media/uploads`;
  const b = await w.a.c.post(base, { fileName: '../../clip.mp4', sizeBytes: data.length, mimeType: 'video/mp4', title: 'Clip' });
  t.equal(b.status, 201, b.text);
  t.match(b.body, { uploadId: /^[0-9a-f]{32}$/, sizeBytes: data.length, chunkBytes: CHUNK, totalChunks: 5, chunksReceived: 0, missing: [0, 1, 2, 3, 4], complete: false });
  const expires = Date.parse(b.body.expiresAt);
  t.ok(expires > Date.now() + 100_000 && expires <= Date.now() + 120_000, 'the default time-out is 120 s');
  const up = `${base}/${b.body.uploadId}`;
  const chunk = (i: number) => data.subarray(i * CHUNK, Math.min((i + 1) * CHUNK, data.length));
  const put = (i: number, body: Buffer, type = 'application/octet-stream', side = w.a, path = up) =>
    send(w.app.url, 'PUT', `${path}/chunks/${i}`, { ...side.headers, 'content-type': type }, body);

  // Wrong sizes and indexes are refused and change nothing.
  isEnvelope(t, await put(0, chunk(0).subarray(0, 1000)), 400, 'a short chunk that is not the last');
  isEnvelope(t, await put(4, Buffer.concat([chunk(4), Buffer.from('x')])), 400, 'a last chunk one byte long');
  isEnvelope(t, await put(4, chunk(4).subarray(1)), 400, 'a last chunk one byte short');
  isEnvelope(t, await put(5, chunk(4)), 400, 'an index past the last chunk');
  isEnvelope(t, await put(-1, chunk(0)), 400, 'a negative index');
  isEnvelope(t, await put(0, Buffer.concat([chunk(0), Buffer.from('x')])), 413, 'a chunk over 64 KB');
  isEnvelope(t, await put(0, Buffer.alloc(0)), 400, 'an empty chunk');
  isEnvelope(t, await put(0, chunk(0), 'text/plain'), 415, 'a chunk that is not octets');
  const st0 = await w.a.c.get(up);
  t.match(st0.body, { chunksReceived: 0, missing: [0, 1, 2, 3, 4] }, 'no refused chunk counted');

  // Out of order, and two chunks of the same upload at the same time.
  t.equal((await put(3, chunk(3))).status, 200);
  const [r1, r4] = await Promise.all([put(1, chunk(1)), put(4, chunk(4))]);
  t.equal(r1.status, 200);
  t.equal(r4.status, 200);
  const st1 = await w.a.c.get(up);
  t.match(st1.body, { chunksReceived: 3, missing: [0, 2], complete: false });
  t.equal(mediaFiles(w).temp.length, 1, 'one temp file while the upload is open');
  t.equal(mediaFiles(w).stored.length, 0, 'nothing stored (visible) before complete');
  isEnvelope(t, await w.a.c.post(`${up}/complete`), 409, 'complete with chunks missing');

  // A resent chunk overwrites itself; wrong bytes sent first are overwritten by the retry.
  t.equal((await put(0, randomBytes(CHUNK))).status, 200);
  const [r0, r2] = await Promise.all([put(0, chunk(0)), put(2, chunk(2))]);
  t.equal(r0.status, 200);
  t.equal(r2.status, 200);
  t.match((await w.a.c.get(up)).body, { chunksReceived: 5, missing: [], complete: true });

  // Org B cannot see, feed, finish or drop org A's upload.
  const bOnA = { ...w.b.headers, orgid: w.a.org };
  t.equal((await request(w.app.url, up, { headers: w.b.headers })).status, 404, "org B's orgid, org A's event");
  const bPath = `/events/${w.b.event}/media/uploads/${b.body.uploadId}`;
  t.equal((await request(w.app.url, bPath, { headers: w.b.headers })).status, 404, "org B's event, org A's upload id");
  t.equal((await put(0, chunk(0), 'application/octet-stream', w.b, bPath)).status, 404, 'org B appends to org A upload');
  t.equal((await request(w.app.url, `${bPath}/complete`, { method: 'POST', headers: { ...w.b.headers, 'content-type': 'application/json' }, body: '{}' })).status, 404);
  t.equal((await request(w.app.url, bPath, { method: 'DELETE', headers: w.b.headers })).status, 404);
  t.equal((await request(w.app.url, up, { headers: bOnA })).status, 403, "org B's token on org A's orgid");
  t.equal((await send(w.app.url, 'PUT', `${up}/chunks/0`, { ...bOnA, 'content-type': 'application/octet-stream' }, chunk(0))).status, 403);
  // Another event of the same org does not reach the upload either.
  const ev2 = await w.a.c.post('/events', { name: 'Other' });
  t.equal((await w.a.c.get(`/events/${ev2.body.sk}/media/uploads/${b.body.uploadId}`)).status, 404, 'another event of org A');

  const done = await w.a.c.post(`${up}/complete`);
  t.equal(done.status, 201, done.text);
  t.match(done.body, { datatype: 'event_media', data: { event: w.a.event, title: 'Clip', kind: 'video', mimeType: 'video/mp4', sizeBytes: data.length, file: { name: 'clip.mp4', sha256: sha(data) } } });
  const id = done.body.data.file.id;
  t.equal(sha(readFileSync(join(w.mediaDir, w.a.org, id.slice(0, 2), id))), sha(data), 'the stored file is the exact bytes (sha256)');
  const dl = await request(w.app.url, done.body.data.url, { headers: w.a.headers });
  t.equal(dl.status, 200);
  t.same(mediaFiles(w), { stored: [join(w.a.org, id.slice(0, 2), id)], temp: [] }, 'the temp file became the stored file');
  const retry = await w.a.c.post(`${up}/complete`);
  t.equal(retry.body.sk, done.body.sk, 'a retried complete answers the same record');
  t.equal((await put(0, chunk(0))).status, 404, 'no chunk after complete');
  t.equal(await mediaCount(w, w.a), 1);

  // Abandoning an upload removes its chunks.
  const b2 = await w.a.c.post(base, { fileName: 'a.bin', sizeBytes: 3 * CHUNK });
  const up2 = `${base}/${b2.body.uploadId}`;
  t.equal((await put(1, randomBytes(CHUNK), 'application/octet-stream', w.a, up2)).status, 200);
  t.equal(mediaFiles(w).temp.length, 1);
  t.equal((await w.a.c.del(up2)).status, 204);
  t.same(mediaFiles(w).temp, [], 'an aborted upload leaves no temp file');
  t.equal((await w.a.c.get(up2)).status, 404);

  // The last chunk and complete at the same time: complete never stores a file missing bytes.
  for (let round = 0; round < 3; round++) {
    const bytes = randomBytes(2 * CHUNK + 7);
    const br = await w.a.c.post(base, { fileName: 'race.bin', sizeBytes: bytes.length });
    const upr = `${base}/${br.body.uploadId}`;
    for (const i of [0, 1]) await put(i, bytes.subarray(i * CHUNK, (i + 1) * CHUNK), 'application/octet-stream', w.a, upr);
    const [last, fin] = await Promise.all([put(2, bytes.subarray(2 * CHUNK), 'application/octet-stream', w.a, upr), w.a.c.post(`${upr}/complete`)]);
    t.equal(last.status, 200, 'the last chunk lands');
    t.ok(fin.status === 201 || fin.status === 409, `a racing complete is stored or refused (${fin.status})`);
    const final = fin.status === 201 ? fin : await w.a.c.post(`${upr}/complete`);
    t.equal(final.status, 201);
    t.equal(final.body.data.file.sha256, sha(bytes), 'the stored file has every byte');
  }
  t.same(mediaFiles(w).temp, [], 'no temp file left after the races');

  // A file of exactly n chunks: the last chunk is a whole one.
  const even = randomBytes(2 * CHUNK);
  const b3 = await w.a.c.post(base, { fileName: 'even.bin', sizeBytes: even.length });
  t.equal(b3.body.totalChunks, 2);
  const up3 = `${base}/${b3.body.uploadId}`;
  for (const i of [1, 0]) t.equal((await put(i, even.subarray(i * CHUNK, (i + 1) * CHUNK), 'application/octet-stream', w.a, up3)).status, 200);
  const d3 = await w.a.c.post(`${up3}/complete`);
  t.equal(d3.body.data.file.sha256, sha(even));
  t.equal(d3.body.data.kind, 'document', 'octets default to a document');

  // One organisation's unfinished uploads are bounded; another's are not affected.
  let opened = 0;
  let refused: Reply | undefined;
  while (opened < 100) {
    const r = await w.a.c.post(base, { fileName: 'many.bin', sizeBytes: 10 });
    if (r.status !== 201) {
      refused = r;
      break;
    }
    opened++;
  }
  t.equal(opened, 32, 'at most 32 unfinished uploads per organisation');
  if (refused) isEnvelope(t, refused, 409, 'one upload more');
  t.equal((await w.b.c.post(`/events/${w.b.event}/media/uploads`, { fileName: 'b.bin', sizeBytes: 10 })).status, 201, 'another organisation may still upload');
});

t.test('time-out - an unfinished chunked upload is dropped and its temp file removed', async (t) => {
  const TIMEOUT = 800;
  const w = await world(t, { chunkTimeoutMs: TIMEOUT });
  const base = `/events/${w.a.event}/media/uploads`;
  const b = await w.a.c.post(base, { fileName: 'slow.bin', sizeBytes: 3 * CHUNK });
  t.equal(b.status, 201);
  const up = `${base}/${b.body.uploadId}`;
  const put = (i: number) => send(w.app.url, 'PUT', `${up}/chunks/${i}`, { ...w.a.headers, 'content-type': 'application/octet-stream' }, randomBytes(CHUNK));

  // Chunks arriving more often than the time-out keep it alive well past one time-out.
  const started = Date.now();
  let expiresAt = Date.parse(b.body.expiresAt);
  let lastChunk = 0;
  for (let i = 0; i < 6; i++) {
    if (i > 0) await new Promise((r) => setTimeout(r, TIMEOUT / 4));
    lastChunk = Date.now();
    const r = await put(i % 2);
    t.equal(r.status, 200, `chunk ${i} keeps the upload alive`);
    t.ok(Date.parse(r.body.expiresAt) > expiresAt, 'each chunk moves expiresAt');
    expiresAt = Date.parse(r.body.expiresAt);
  }
  t.ok(Date.now() - started > TIMEOUT, 'alive for longer than one time-out');
  t.equal(mediaFiles(w).temp.length, 1, 'its temp file exists');

  t.ok(await waitFor(() => mediaFiles(w).temp.length === 0, TIMEOUT + 10_000), 'the temp file is removed');
  t.ok(Date.now() - lastChunk >= TIMEOUT - 20, `not before the time-out (${Date.now() - lastChunk} ms after the last chunk)`);
  isEnvelope(t, await w.a.c.get(up), 404, 'the upload is gone');
  isEnvelope(t, await put(2), 404, 'a late chunk');
  isEnvelope(t, await w.a.c.post(`${up}/complete`), 404, 'a late complete');
  t.same(mediaFiles(w), { stored: [], temp: [] });
  t.equal(await mediaCount(w, w.a), 0);

  // An upload that never got a chunk expires too.
  const b2 = await w.a.c.post(base, { fileName: 'idle.bin', sizeBytes: 10 });
  const idle = `${base}/${b2.body.uploadId}`;
  t.equal((await w.a.c.get(idle)).status, 200);
  await new Promise((r) => setTimeout(r, TIMEOUT + 200));
  t.equal((await w.a.c.get(idle)).status, 404, 'an upload with no chunk expires');
});

t.test('hostile file names never make a path outside the media directory', async (t) => {
  const w = await world(t);
  const token = 'zz' + randomBytes(6).toString('hex');
  const before = new Set(readdirSync(dirname(w.dataDir)));
  const names = [
    `../../etc/passwd-${token}`,
    `..\\..\\x-${token}`,
    `/tmp/abs-${token}`,
    `C:\\Windows\\abs-${token}`,
    `../../../../../../../../../../${token}`,
    `..`,
    `.`,
    `...${token}`,
    `.tmp`,
    `..\u2215..\u2215u-${token}`, // division slash
    `..\uFF0F..\uFF0Ffw-${token}`, // full-width solidus
    `\u202Egnp.${token}.exe`, // right-to-left override
    `cafe\u0301-${token}.png`, // NFD
    `${'ä'.repeat(300)}`,
    `a\r\nb-${token}`,
  ];
  const seen = new Set<string>();
  for (const name of names) {
    const data = Buffer.from(`content of ${JSON.stringify(name)}`);
    const r = await upload(w, w.a, data, { filename: name, type: 'text/plain' });
    if (name.includes('\r')) {
      isEnvelope(t, r, 400, `a CR LF in the raw header: ${JSON.stringify(name)}`);
      continue;
    }
    t.equal(r.status, 201, `${JSON.stringify(name)} is accepted as metadata`);
    const stored: string = r.body.data.file.name;
    t.notMatch(stored, /[\\/\u0000-\u001f\u202e]/u, `stored name ${JSON.stringify(stored)} has no separator or control character`);
    t.notOk(stored.startsWith('.'), 'no leading dot');
    t.ok([...stored].length <= 200, 'at most 200 characters');
    const id = r.body.data.file.id;
    t.notOk(seen.has(id));
    seen.add(id);
    t.ok(readFileSync(join(w.mediaDir, w.a.org, id.slice(0, 2), id)).equals(data), 'stored under its id');
    const dl = await request(w.app.url, r.body.data.url, { headers: w.a.headers });
    t.equal(dl.text, data.toString(), 'downloads');
    t.match(dl.headers['content-disposition'], /^inline; filename="[\x20-\x7e]*"; filename\*=UTF-8''[A-Za-z0-9%!#$&+\-.^_`|~]*$/, 'a header-safe disposition');
    checkContained(t, w, before, token, [name]);
  }
  // NUL bytes: raw in the header is refused; percent-encoded in filename* it is stripped.
  const boundary = 'nul-bound';
  const nul = await send(
    w.app.url,
    'POST',
    `/events/${w.a.event}/media`,
    { ...w.a.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    multipart(boundary, [{ head: Buffer.from(`Content-Disposition: form-data; name="file"; filename="a\u0000../../${token}"`, 'utf8'), data: 'x' }]),
  );
  isEnvelope(t, nul, 400, 'a raw NUL in the file name');
  const star = await send(
    w.app.url,
    'POST',
    `/events/${w.a.event}/media`,
    { ...w.a.headers, 'content-type': `multipart/form-data; boundary=${boundary}` },
    multipart(boundary, [{ head: `Content-Disposition: form-data; name="file"; filename*=UTF-8''..%2F..%2Fn%00ul-${token}%C3%A9.txt`, data: 'y' }]),
  );
  t.equal(star.status, 201, star.text);
  t.equal(star.body.data.file.name, `nul-${token}é.txt`, 'the last segment, NUL removed');

  // Chunked uploads: the name is metadata there too.
  const b = await w.a.c.post(`/events/${w.a.event}/media/uploads`, { fileName: `../../..\\..\\/etc/${token}\u0000`, sizeBytes: 5 });
  t.equal(b.status, 201);
  t.equal((await send(w.app.url, 'PUT', `/events/${w.a.event}/media/uploads/${b.body.uploadId}/chunks/0`, { ...w.a.headers, 'content-type': 'application/octet-stream' }, 'hello')).status, 200);
  const c = await w.a.c.post(`/events/${w.a.event}/media/uploads/${b.body.uploadId}/complete`);
  t.equal(c.status, 201);
  t.equal(c.body.data.file.name, token);
  checkContained(t, w, before, token, names);

  // Hostile upload and file ids are refused by their pattern before anything touches the disk.
  for (const bad of ['..%2F..%2Fetc', '..', '%2e%2e', `${'a'.repeat(31)}/`, '0'.repeat(31) + '%00', 'A'.repeat(32)]) {
    const p = await send(w.app.url, 'PUT', `/events/${w.a.event}/media/uploads/${bad}/chunks/0`, { ...w.a.headers, 'content-type': 'application/octet-stream' }, 'x');
    t.ok(p.status === 400 || p.status === 404, `upload id ${bad}: ${p.status}`);
    const g = await request(w.app.url, `/events/${w.a.event}/media/files/${bad}`, { headers: w.a.headers });
    t.ok(g.status === 400 || g.status === 404, `file id ${bad}: ${g.status}`);
  }
  checkContained(t, w, before, token);
  t.same(mediaFiles(w).temp, [], 'no temp file left');
  // Every upload above is one file under org A; none under org B.
  t.equal(mediaFiles(w).stored.filter((f) => f.startsWith(w.b.org + sep)).length, 0);
  t.equal(relative(w.mediaDir, w.app.deps.config.uploads.dir ?? ''), '', 'the configured media dir is <dataDir>/media');
});

t.test('malformed multipart bodies are 400 envelopes and store nothing', async (t) => {
  const w = await world(t);
  const path = `/events/${w.a.event}/media`;
  const post = (type: string, body: Buffer | string) => send(w.app.url, 'POST', path, { ...w.a.headers, 'content-type': type }, body);
  const good = multipart('abc', [{ head: fileHead('f.bin'), data: 'data' }]);
  const cases: Array<[string, string, Buffer | string]> = [
    ['no boundary', 'multipart/form-data', good],
    ['an empty boundary', 'multipart/form-data; boundary=', good],
    ['a boundary over 70 characters', `multipart/form-data; boundary=${'a'.repeat(71)}`, multipart('a'.repeat(71), [{ head: fileHead('f.bin'), data: 'data' }])],
    ['an unterminated quoted boundary', 'multipart/form-data; boundary="abc', good],
    ['another boundary than the body', 'multipart/form-data; boundary=zzz', good],
    ['a truncated body', 'multipart/form-data; boundary=abc', good.subarray(0, good.length - 12)],
    ['no closing delimiter', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: fileHead('f.bin'), data: 'data' }], false)],
    ['headers without their empty line', 'multipart/form-data; boundary=abc', '--abc\r\nContent-Disposition: form-data; name="file"; filename="a"'],
    ['LF line endings', 'multipart/form-data; boundary=abc', good.toString('latin1').replace(/\r\n/g, '\n')],
    ['a part without Content-Disposition', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: 'Content-Type: text/plain', data: 'x' }])],
    ['a part that is not form-data', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: 'Content-Disposition: attachment; name="file"; filename="a"', data: 'x' }])],
    ['two files', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: fileHead('a'), data: 'x' }, { head: fileHead('b').replace('name="file"', 'name="file2"'), data: 'y' }])],
    ['the file part twice', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: 'Content-Disposition: form-data; name="file"', data: 'x' }, { head: fileHead('b'), data: 'y' }])],
    ['no file part', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: 'Content-Disposition: form-data; name="title"', data: 'x' }])],
    ['an unknown field', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: 'Content-Disposition: form-data; name="path"', data: '/etc' }, { head: fileHead('a'), data: 'x' }])],
    ['an empty file', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: fileHead('a'), data: '' }])],
    ['a bad kind', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: 'Content-Disposition: form-data; name="kind"', data: 'hologram' }, { head: fileHead('a'), data: 'x' }])],
    ['a field that is not UTF-8', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: 'Content-Disposition: form-data; name="title"', data: Buffer.from([0xff, 0xfe]) }, { head: fileHead('a'), data: 'x' }])],
    ['a bad Content-Transfer-Encoding', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: fileHead('a') + '\r\nContent-Transfer-Encoding: base64', data: 'eA==' }])],
    ['bad filename* encoding', 'multipart/form-data; boundary=abc', multipart('abc', [{ head: `Content-Disposition: form-data; name="file"; filename*=UTF-8''%E0%A4%A`, data: 'x' }])],
  ];
  for (const [what, type, body] of cases) {
    const r = await post(type, body);
    isEnvelope(t, r, 400, what);
  }
  // An empty body with the multipart type.
  isEnvelope(t, await post('multipart/form-data; boundary=abc', Buffer.alloc(0)), 400, 'an empty body');
  // Another multipart subtype is not accepted.
  isEnvelope(t, await post('multipart/mixed; boundary=abc', good), 415, 'multipart/mixed');
  t.equal(await mediaCount(w, w.a), 0, 'no record');
  t.same(mediaFiles(w), { stored: [], temp: [] }, 'no file');

  // The same body framed correctly is accepted: a quoted boundary, a preamble, an epilogue.
  const ok = await post('multipart/form-data; boundary="a b:c"', Buffer.concat([Buffer.from('preamble\r\n'), multipart('a b:c', [{ head: fileHead('f.bin'), data: 'data' }]), Buffer.from('epilogue')]));
  t.equal(ok.status, 201, ok.text);
  t.equal(ok.body.data.sizeBytes, 4);
});

t.test('an upload from a caller without a valid token is refused before its body is read', async (t) => {
  const w = await world(t);
  const port = new URL(w.app.url).port;
  // Headers that promise almost the whole cap, then only the first bytes of the body: the answer
  // must come without waiting for (or buffering) the rest.
  const attempt = (headers: string) =>
    new Promise<string>((resolve, reject) => {
      const sock = connect(Number(port), '127.0.0.1');
      let got = '';
      const timer = setTimeout(() => {
        sock.destroy();
        reject(new Error(`no answer while the body was incomplete; got ${JSON.stringify(got)}`));
      }, 5_000);
      sock.on('data', (c) => {
        got += c.toString();
        if (got.includes('\r\n\r\n') && got.includes('"statusCode"')) {
          clearTimeout(timer);
          sock.destroy();
          resolve(got);
        }
      });
      sock.on('error', () => undefined);
      sock.write(
        `POST /events/${w.a.event}/media HTTP/1.1\r\nhost: x\r\ncontent-type: multipart/form-data; boundary=zz\r\n` +
          `content-length: ${CAP - 10}\r\n${headers}\r\n--zz\r\n`,
      );
    });
  t.match(await attempt(`orgid: ${w.a.org}\r\n`), /^HTTP\/1\.1 401 /, 'no token: 401 at once');
  t.match(await attempt(`orgid: ${w.a.org}\r\nauthorization: Bearer not.a.token\r\n`), /^HTTP\/1\.1 401 /, 'a bad token: 401 at once');
  t.match(await attempt(`orgid: ${w.a.org}\r\nauthorization: ${w.b.headers.authorization}\r\n`), /^HTTP\/1\.1 403 /, "another org's token: 403 at once");
  t.match(await attempt(`orgid: nosuchorg\r\nauthorization: ${w.a.headers.authorization}\r\n`), /^HTTP\/1\.1 400 /, 'an unknown org: 400 at once');
  t.equal(await mediaCount(w, w.a), 0, 'nothing stored');
});

t.test('deleting an event removes the files uploaded to it', async (t) => {
  const w = await world(t);
  const one = await upload(w, w.a, randomBytes(5_000), { filename: 'one.png' });
  const two = await upload(w, w.a, randomBytes(6_000), { filename: 'two.png' });
  const theirs = await upload(w, w.b, randomBytes(4_000), { filename: 'b.png' });
  for (const r of [one, two, theirs]) t.equal(r.status, 201, r.text);
  const path = (org: string, rec: any) => join(org, rec.data.file.id.slice(0, 2), rec.data.file.id);
  t.same(mediaFiles(w).stored.sort(), [path(w.a.org, one.body), path(w.a.org, two.body), path(w.b.org, theirs.body)].sort());

  // Another event's record, written through the record store, names one of the files too.
  const ev2 = await w.a.c.post('/events', { name: 'Second night' });
  const shared = await w.a.c.post('/repository/create', { datatype: 'event_media', isNew: true, data: { ...two.body.data, event: ev2.body.sk } });
  t.equal(shared.status, 201, shared.text);

  const del = await w.a.c.del(`/events/${w.a.event}`);
  t.equal(del.status, 204, del.text);
  t.same(mediaFiles(w).stored.sort(), [path(w.a.org, two.body), path(w.b.org, theirs.body)].sort(), "the event's files are gone, but one another record names; another organisation's stay");
  t.equal((await w.b.c.get(theirs.body.data.url)).status, 200);
});

t.test('the orphan sweep removes stored files no media record names, once they are old enough', async (t) => {
  const w = await world(t);
  const kept = await upload(w, w.a, randomBytes(3_000), { filename: 'kept.png' });
  const dropped = await upload(w, w.a, randomBytes(3_000), { filename: 'dropped.png' });
  const theirs = await upload(w, w.b, randomBytes(3_000), { filename: 'b.png' });
  // The record goes through the record store, which knows nothing of files: the file stays behind.
  const del = await w.a.c.del(`/repository/delete/event_media/${dropped.body.sk}`);
  t.equal(del.status, 200, del.text);
  const path = (org: string, rec: any) => join(org, rec.data.file.id.slice(0, 2), rec.data.file.id);
  t.equal(mediaFiles(w).stored.length, 3);

  t.equal(await sweepOrphanFiles(w.app.deps), 0, 'younger than an hour: left alone');
  t.equal(await sweepOrphanFiles(w.app.deps, 0), 1, 'at any age: the orphan goes');
  t.same(mediaFiles(w).stored.sort(), [path(w.a.org, kept.body), path(w.b.org, theirs.body)].sort(), 'files that records name stay');
  t.equal((await w.a.c.get(kept.body.data.url)).status, 200);
  t.equal(await sweepOrphanFiles(w.app.deps, 0), 0, 'nothing more to do');

  // Temp files: one nobody wrote to for longer than twice the chunk time-out (a dead process's
  // unfinished upload) goes; a fresh one (maybe another node's upload in progress) stays.
  const stale = join(w.tmpDir, 'a'.repeat(32));
  const fresh = join(w.tmpDir, 'b'.repeat(32));
  writeFileSync(stale, 'x');
  writeFileSync(fresh, 'y');
  const old = (Date.now() - 2 * w.app.deps.config.uploads.chunkTimeoutMs - 60_000) / 1000;
  utimesSync(stale, old, old);
  t.equal(await sweepOrphanFiles(w.app.deps), 1);
  t.same(mediaFiles(w).temp, [join('.tmp', 'b'.repeat(32))]);
});
