// Bounded documents and bodies (issue: no tenant can hurt another). One server with small limits,
// so each bound is reached with little data:
//   - a body nested past JSON_MAX_DEPTH is refused before it is parsed, and the server stays up;
//   - a record over MAX_RECORD_BYTES fails alone among 39 concurrent creates that all succeed;
//   - a record stored before the limits (raw bytes the decoder cannot read) fails only its own GET,
//     finds answer the other records, and DELETE removes it;
//   - `__proto__`, `constructor` and `prototype` keys are refused, not renamed;
//   - no body byte is kept for a caller who is not authenticated, anonymous routes have a small cap,
//     and bodies in flight share a node-wide budget past which a new body answers 503.
import { connect, type Socket } from 'node:net';
import t from 'tap';
import { newId } from '../../core/ids.js';
import type { LmdbStore } from '../../core/store/lmdb-store.js';
import { createOrg, staffHeaders, startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const MAX_RECORD_BYTES = 16 * 1024;
const MAX_INFLIGHT = 160 * 1024;

const app = await startTestApp(t, {
  modules: ['auth', 'records', 'reference'],
  config: {
    documents: { maxDepth: 32, maxKeys: 1000, maxItems: 10_000, maxStringLength: 100_000, maxRecordBytes: MAX_RECORD_BYTES },
    http: { maxBodyBytes: 1024 * 1024, corsOrigins: ['*'], shutdownGraceMs: 1000, anonymousMaxBodyBytes: 8 * 1024, maxInflightBodyBytes: MAX_INFLIGHT },
  },
});
await createOrg(app, 'org-a');
await createOrg(app, 'org-b');
const A = staffHeaders(app, 'org-a');
const B = staffHeaders(app, 'org-b');

async function create(headers: Record<string, string>, data: unknown) {
  return request(app.url, '/repository/create', { headers, body: { datatype: 'product', isNew: true, data } });
}

const bRecord = await create(B, { name: 'b-product' });

function nested(levels: number): string {
  return '{"a":'.repeat(levels) + '1' + '}'.repeat(levels);
}

t.test('documents - a body nested 3,000 levels is refused with the limit named, and others are served', async (t) => {
  const body = `{"datatype":"product","isNew":true,"data":${nested(3000)}}`;
  const [attack, other] = await Promise.all([
    request(app.url, '/repository/create', { headers: { ...A, 'content-type': 'application/json' }, body }),
    request(app.url, `/repository/get/product/${bRecord.body.sk}`, { headers: B }),
  ]);
  t.equal(attack.status, 400);
  t.match(attack.body.message, /nested more than 32 levels \(JSON_MAX_DEPTH\)/);
  t.equal(other.status, 200, "another organisation's read is answered");
  // 32 levels in all is the bound, the body itself counting as one.
  t.equal((await create(A, JSON.parse(nested(31)))).status, 201, 'a document at the limit is stored');
  t.equal((await create(A, JSON.parse(nested(32)))).status, 400, 'one level more is not');
});

t.test('documents - keys, items and string lengths are bounded', async (t) => {
  const wide = Object.fromEntries(Array.from({ length: 1001 }, (_, i) => [`k${i}`, i]));
  const res = await create(A, wide);
  t.equal(res.status, 400);
  t.match(res.body.message, /more than 1000 keys \(JSON_MAX_KEYS\)/);
  const long = await create(A, { name: 'x'.repeat(100_001) });
  t.equal(long.status, 400);
  t.match(long.body.message, /JSON_MAX_STRING_LENGTH/);
});

t.test('documents - __proto__, constructor and prototype keys are refused, never renamed', async (t) => {
  for (const key of ['__proto__', 'constructor', 'prototype']) {
    const res = await request(app.url, '/repository/create', {
      headers: { ...A, 'content-type': 'application/json' },
      body: `{"datatype":"product","isNew":true,"data":{"name":"p","${key}":{"x":1}}}`,
    });
    t.equal(res.status, 400, key);
    t.match(res.body.message, new RegExp(`the key "${key}" is not allowed`), key);
  }
  const rec = await create(A, { name: 'safe' });
  const partial = await request(app.url, `/repository/update-partial/product/${rec.body.sk}`, {
    headers: A,
    body: { 'data.__proto__.polluted': 1 },
  });
  t.equal(partial.status, 400, 'a dotted path through __proto__ is refused');
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});

t.test('documents - a record over MAX_RECORD_BYTES fails alone among 40 concurrent creates', async (t) => {
  const big = { name: 'big', blob: 'y'.repeat(MAX_RECORD_BYTES) };
  const replies = await Promise.all(
    Array.from({ length: 40 }, (_, i) => create(A, i === 17 ? big : { name: `batch-${i}`, batch: 'concurrent' })),
  );
  const failed = replies.flatMap((r, i) => (r.status >= 400 ? [i] : []));
  t.same(failed, [17], 'only the oversized create failed');
  t.equal(replies[17].status, 413);
  t.match(replies[17].body.message, /MAX_RECORD_BYTES/);
  t.ok(replies.every((r, i) => i === 17 || r.status === 201), 'the 39 others answered 201');
  const found = await request(app.url, '/repository/find/product', {
    headers: A,
    body: { query: { 'data.batch': 'concurrent' }, options: { pageSize: 100 } },
  });
  t.equal(found.body.total, 39, 'and all 39 are stored, once each');
  const grown = await request(app.url, `/repository/update-partial/product/${replies[0].body.sk}`, {
    headers: A,
    body: { 'data.blob': 'z'.repeat(MAX_RECORD_BYTES) },
  });
  t.equal(grown.status, 413, 'an update cannot grow a record past the limit either');
});

t.test('documents - a stored record that cannot be decoded fails only its own read and can be deleted', async (t) => {
  const store = app.deps.store as unknown as LmdbStore;
  const keep1 = await create(A, { name: 'before', kind: 'undecodable-case' });
  // msgpack of a map nested 100,000 levels: more than the decoder can recurse through. Its id
  // falls between the two good records, so a listing meets it in the middle.
  const levels = 100_000;
  const bytes = Buffer.alloc(levels * 3 + 1);
  for (let i = 0; i < levels; i++) bytes.set([0x81, 0xa1, 0x61], i * 3);
  bytes[levels * 3] = 0xc0;
  const sk = newId();
  await store.putRawRecord('org-a', 'product', sk, bytes);
  const keep2 = await create(A, { name: 'after', kind: 'undecodable-case' });
  t.ok(keep1.body.sk < sk && sk < keep2.body.sk);

  const got = await request(app.url, `/repository/get/product/${sk}`, { headers: A });
  t.equal(got.status, 409);
  t.match(got.body.message, new RegExp(`product ${sk}`));

  const before = store.unreadableRecords();
  const found = await request(app.url, '/repository/find/product', {
    headers: A,
    body: { query: { 'data.kind': 'undecodable-case' } },
  });
  t.equal(found.status, 200, 'a find over the datatype answers');
  t.same(found.body.data.map((r: { sk: string }) => r.sk).sort(), [keep1.body.sk, keep2.body.sk].sort(), 'with the other records');
  t.ok(store.unreadableRecords() > before, 'and counts the undecodable one');
  const metrics = await request(app.url, '/metrics');
  t.match(metrics.text, /store_unreadable_records [1-9]/);

  const del = await request(app.url, `/repository/delete/product/${sk}`, { method: 'DELETE', headers: A });
  t.equal(del.status, 200, 'DELETE removes it without decoding it');
  t.equal((await request(app.url, `/repository/get/product/${sk}`, { headers: A })).status, 404);
});

/** Opens a raw connection and sends a request head (and optionally part of a body). */
function rawRequest(head: string, partialBody = ''): Promise<{ socket: Socket; answer: Promise<string> }> {
  return new Promise((resolve, reject) => {
    const socket = connect(app.port, '127.0.0.1', () => {
      let text = '';
      const answer = new Promise<string>((done) => {
        socket.on('data', (d) => {
          text += d.toString('latin1');
          if (text.includes('\r\n\r\n')) done(text);
        });
        socket.on('close', () => done(text));
      });
      socket.write(head + partialBody);
      resolve({ socket, answer });
    });
    socket.on('error', reject);
  });
}

function head(path: string, headers: Record<string, string>, length: number): string {
  const lines = [`POST ${path} HTTP/1.1`, 'host: 127.0.0.1', 'content-type: application/json', `content-length: ${length}`];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  return lines.join('\r\n') + '\r\n\r\n';
}

t.test('documents - no body byte is kept for a caller who is not authenticated', async (t) => {
  const conns = await Promise.all(
    Array.from({ length: 10 }, () => rawRequest(head('/repository/create', { orgid: 'org-a' }, 1_000_000), '{"datatype":"product",')),
  );
  const answers = await Promise.all(conns.map((c) => c.answer));
  for (const a of answers) t.match(a, /^HTTP\/1\.1 401 /, 'answered 401 from the headers, before the body');
  t.equal(app.edge.bodyBytesBuffered, 0, 'nothing buffered');
  for (const c of conns) c.socket.destroy();

  const signup = await request(app.url, '/profile/user/signup', { body: { email: 'a@example.com', pad: 'p'.repeat(9000) } });
  t.equal(signup.status, 413, 'a route that takes no credentials has the small anonymous cap');
});

t.test('documents - bodies in flight share a node-wide budget; past it a new body answers 503 with Retry-After', async (t) => {
  const part = 60 * 1024;
  const held = await Promise.all([rawRequest(head('/repository/create', A, part), '{'), rawRequest(head('/repository/create', B, part), '{')]);
  await new Promise((r) => setTimeout(r, 50));
  t.equal(app.edge.bodyBytesBuffered, 2 * part, 'two declared bodies are held');
  const refused = await request(app.url, '/repository/create', {
    headers: A,
    body: { datatype: 'product', isNew: true, data: { pad: 'q'.repeat(part) } },
  });
  t.equal(refused.status, 503);
  t.equal(refused.headers['retry-after'], '1');
  t.match(refused.body.message, /MAX_INFLIGHT_BODY_BYTES/);
  for (const h of held) h.socket.destroy();
  await new Promise((r) => setTimeout(r, 50));
  t.equal(app.edge.bodyBytesBuffered, 0, 'an abandoned body gives its bytes back');
  const ok = await create(A, { pad: 'q'.repeat(8 * 1024) });
  t.equal(ok.status, 201, 'and the next body is taken');
});

t.test('documents - the reference lists every limit with the value in force', async (t) => {
  const md = (await request(app.url, '/documentation.md')).text;
  t.match(md, /## Limits/);
  t.match(md, /\| `JSON_MAX_DEPTH` \| 32 \|/);
  t.match(md, /\| `MAX_RECORD_BYTES` \| 16,384 bytes \|/, 'the value this server runs with');
  t.match(md, /\| `MAX_INFLIGHT_BODY_BYTES` \| 163,840 bytes \|/);
  t.match(md, /\| `QUERY_TIMEOUT_MS` \| 2,000 ms \|/);
});

t.test('documents - a field path through an object internal is refused, not answered 500', async (t) => {
  for (const field of ['__proto__', 'data.constructor', 'data.x.prototype']) {
    const r = await request(app.url, '/dynamic-query/distinct', { headers: A, body: { datatype: 'product', field } });
    t.equal(r.status, 400, field);
    t.match(r.body.message, /is not allowed \(it names a JavaScript object internal\)/, field);
  }
  t.equal((await request(app.url, '/healthz')).status, 200, 'the server is up');
});

t.test('documents - a sort path through an object internal is refused', async (t) => {
  const r = await request(app.url, '/repository/find/product', { headers: A, body: { query: {}, options: { sort: 'constructor' } } });
  t.equal(r.status, 400);
  t.match(r.body.message, /sort: the key "constructor" is not allowed/);
});
