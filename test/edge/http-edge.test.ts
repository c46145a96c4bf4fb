import { Type } from '@sinclair/typebox';
import jwt from 'jsonwebtoken';
import t, { type Test } from 'tap';
import SwaggerParser from '@apidevtools/swagger-parser';
import { appError } from '../../core/errors.js';
import type { Module } from '../../edge/module.js';
import { route } from '../../edge/route.js';
import { createOrg, startTestApp, staffHeaders, tokenFor, TEST_JWT_SECRET } from '../helpers/app.js';
import { rawRequest, request } from '../helpers/http.js';

const testModule: Module = {
  name: 'edge-test',
  routes: () => [
    route({
      method: 'POST',
      path: '/t/items',
      auth: 'staff',
      tag: 'Test',
      summary: 'create an item',
      status: 201,
      body: Type.Object({ name: Type.String({ minLength: 1 }), qty: Type.Integer({ minimum: 0 }) }),
      response: Type.Object({ name: Type.String(), qty: Type.Integer(), tenant: Type.String() }),
      handler: (ctx) => ({ ...ctx.body, tenant: ctx.tenant, secret: 'never serialized' }),
    }),
    route({
      method: 'GET',
      path: '/t/items/:id',
      auth: 'customer',
      tag: 'Test',
      summary: 'get an item',
      params: Type.Object({ id: Type.String({ pattern: '^[0-9a-f]{24}$' }) }),
      query: Type.Object({ n: Type.Optional(Type.Integer()) }),
      handler: (ctx) => ({ id: ctx.params.id, n: ctx.query.n ?? null, kind: ctx.principal?.kind }),
    }),
    route({
      method: 'GET',
      path: '/t/public',
      auth: 'none',
      tenant: 'optional',
      tag: 'Test',
      summary: 'public',
      handler: (ctx) => ({ tenant: ctx.tenant, who: ctx.principal?.sub ?? null }),
    }),
    route({
      method: 'POST',
      path: '/t/admin',
      auth: 'staff',
      roles: ['Admin'],
      tag: 'Test',
      summary: 'admin only',
      handler: () => ({ ok: true }),
    }),
    route({
      method: 'GET',
      path: '/t/own-cache',
      auth: 'none',
      tenant: 'none',
      tag: 'Test',
      summary: 'sets its own cache-control',
      handler: (ctx) => {
        ctx.responseHeaders['cache-control'] = 'max-age=60';
        return { ok: true };
      },
    }),
    route({
      method: 'GET',
      path: '/t/stream',
      auth: 'none',
      tenant: 'none',
      stream: true,
      tag: 'Test',
      summary: 'a streamed JSON answer',
      handler: (ctx) => {
        ctx.stream!.end('{"streamed":true}');
      },
    }),
    route({
      method: 'GET',
      path: '/t/ip',
      auth: 'none',
      tenant: 'none',
      tag: 'Test',
      summary: 'the caller address',
      handler: async (ctx) => {
        await new Promise((r) => setTimeout(r, 1));
        return { ip: ctx.ip };
      },
    }),
    route({
      method: 'GET',
      path: '/t/boom',
      auth: 'none',
      tag: 'Test',
      summary: 'throws',
      handler: () => {
        throw new Error('secret internals at /srv/app.ts:12');
      },
    }),
    route({
      method: 'GET',
      path: '/t/conflict',
      auth: 'none',
      tag: 'Test',
      summary: 'conflict',
      handler: async () => {
        await new Promise((r) => setTimeout(r, 1));
        throw appError('ERR_CONFLICT', 'already there');
      },
    }),
  ],
};

function isEnvelope(t: Test, body: any, status: number, error: string) {
  t.equal(body?.statusCode, status, `statusCode ${status}`);
  t.equal(body?.error, error);
  t.ok(typeof body?.message === 'string' || Array.isArray(body?.message), 'message is a string or list');
  t.same(Object.keys(body ?? {}).sort(), ['error', 'message', 'statusCode'], 'nothing but the envelope');
}

t.test('HttpEdge', async (t) => {
  const app = await startTestApp(t, { modules: [testModule], config: { http: { maxBodyBytes: 2048, corsOrigins: ['https://app.example'], shutdownGraceMs: 1000 } } });
  await createOrg(app, 'acme');
  await createOrg(app, 'globex');
  const url = app.url;
  const staff = staffHeaders(app, 'acme');

  t.test('valid request: validated, handled, serialized through the response schema', async (t) => {
    const r = await request(url, '/t/items', { body: { name: 'tea', qty: 2 }, headers: staff });
    t.equal(r.status, 201);
    t.same(r.body, { name: 'tea', qty: 2, tenant: 'acme' }, 'fields outside the response schema are never sent');
    t.match(r.headers['content-type'], /application\/json/);
    t.match(r.headers['x-request-id'], /^[0-9a-f]{16}$/);
  });

  t.test('standard headers: each sent once, with its value; a handler\'s own replaces the default', async (t) => {
    const count = (lines: string[] | undefined, name: string) => (lines ?? []).filter((l) => l.toLowerCase().startsWith(name + ':')).length;
    const STANDARD: Record<string, string> = {
      'content-type': 'application/json',
      'x-content-type-options': 'nosniff',
      'x-frame-options': 'DENY',
      'referrer-policy': 'no-referrer',
      'cross-origin-opener-policy': 'same-origin',
      'content-security-policy': "default-src 'none'; frame-ancestors 'none'",
      'cache-control': 'no-store',
    };
    for (const [path, status] of [['/t/public', 200], ['/t/nope', 404]] as const) {
      const r = await rawRequest(url, 'GET', path, {});
      t.equal(r.status, status, path);
      for (const [name, value] of Object.entries(STANDARD)) {
        t.equal(count(r.headerLines, name), 1, `${path}: ${name} once`);
        t.equal(r.headers[name], value, `${path}: ${name}`);
      }
      t.equal(count(r.headerLines, 'x-request-id'), 1, `${path}: x-request-id once`);
    }
    const own = await rawRequest(url, 'GET', '/t/own-cache', {});
    t.same(own.body, { ok: true });
    t.equal(count(own.headerLines, 'cache-control'), 1, 'own cache-control once');
    t.equal(own.headers['cache-control'], 'max-age=60');
    for (const name of ['content-type', 'x-content-type-options', 'content-security-policy']) t.equal(count(own.headerLines, name), 1, `own: ${name} once`);
    const streamed = await rawRequest(url, 'GET', '/t/stream', {});
    t.same(streamed.body, { streamed: true });
    t.equal(count(streamed.headerLines, 'content-type'), 1, 'stream: content-type once');
    t.equal(streamed.headers['content-type'], 'application/json');
    t.equal(count(streamed.headerLines, 'x-frame-options'), 1, 'stream: security headers once');
  });

  t.test('ctx.ip is the caller\'s address, read when the handler asks for it', async (t) => {
    const r = await request(url, '/t/ip');
    t.equal(r.status, 200);
    t.equal(r.body.ip, '127.0.0.1');
  });

  t.test('x-request-id is echoed', async (t) => {
    const r = await request(url, '/healthz', { headers: { 'x-request-id': 'abc-123' } });
    t.equal(r.headers['x-request-id'], 'abc-123');
  });

  t.test('400: invalid JSON', async (t) => {
    const r = await request(url, '/t/items', { body: '{"name": "tea",', headers: { ...staff, 'content-type': 'application/json' } });
    t.equal(r.status, 400);
    isEnvelope(t, r.body, 400, 'Bad Request');
    t.match(r.body.message, /not valid JSON/);
  });

  t.test('400: schema failure names every field', async (t) => {
    const r = await request(url, '/t/items', { body: { qty: 'two' }, headers: staff });
    t.equal(r.status, 400);
    isEnvelope(t, r.body, 400, 'Bad Request');
    t.ok(Array.isArray(r.body.message));
    t.ok(r.body.message.some((m: string) => m.includes('body/name') && m.includes('required')), 'names the missing field');
    t.ok(r.body.message.some((m: string) => m.includes('body/qty')), 'names the mistyped field');
  });

  t.test('400: path and query parameters are validated', async (t) => {
    const h = { orgid: 'acme', authorization: `Bearer ${tokenFor(app, { org: 'acme', kind: 'customer' })}` };
    const bad = await request(url, '/t/items/not-an-id', { headers: h });
    t.equal(bad.status, 400);
    t.match(bad.body.message.join(' '), /params\/id/);
    const badQ = await request(url, '/t/items/0123456789abcdef01234567?n=abc', { headers: h });
    t.equal(badQ.status, 400);
    const ok = await request(url, '/t/items/0123456789abcdef01234567?n=5', { headers: h });
    t.equal(ok.status, 200);
    t.same(ok.body, { id: '0123456789abcdef01234567', n: 5, kind: 'customer' }, 'query coerced to its declared type');
  });

  t.test('400: orgid missing, malformed or unknown', async (t) => {
    const token = staff.authorization;
    const missing = await request(url, '/t/items', { body: { name: 'a', qty: 1 }, headers: { authorization: token } });
    t.equal(missing.status, 400);
    isEnvelope(t, missing.body, 400, 'Bad Request');
    t.match(missing.body.message, /orgid/);
    const unknown = await request(url, '/t/items', { body: { name: 'a', qty: 1 }, headers: { authorization: token, orgid: 'nosuch' } });
    t.equal(unknown.status, 400);
    t.match(unknown.body.message, /nosuch/);
    const weird = await request(url, '/t/items', { body: { name: 'a', qty: 1 }, headers: { authorization: token, orgid: '../../etc' } });
    t.equal(weird.status, 400);
  });

  t.test('401: missing, malformed, tampered, expired and alg:none tokens', async (t) => {
    const body = { name: 'a', qty: 1 };
    const none = await request(url, '/t/items', { body, headers: { orgid: 'acme' } });
    t.equal(none.status, 401);
    isEnvelope(t, none.body, 401, 'Unauthorized');
    const malformed = await request(url, '/t/items', { body, headers: { orgid: 'acme', authorization: 'Token abc' } });
    t.equal(malformed.status, 401);
    const good = tokenFor(app, { org: 'acme' });
    const [h, p, s] = good.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    payload.roles = ['User', 'Admin'];
    const tampered = `${h}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${s}`;
    t.equal((await request(url, '/t/items', { body, headers: { orgid: 'acme', authorization: `Bearer ${tampered}` } })).status, 401);
    const expired = jwt.sign({ org: 'acme', roles: ['User'], kind: 'staff', typ: 'access', exp: Math.floor(Date.now() / 1000) - 10 }, TEST_JWT_SECRET, { subject: 'u', issuer: 'business-platform' });
    t.equal((await request(url, '/t/items', { body, headers: { orgid: 'acme', authorization: `Bearer ${expired}` } })).status, 401);
    const algNone = jwt.sign({ org: 'acme', roles: ['User'], kind: 'staff', typ: 'access' }, null as unknown as string, { algorithm: 'none', subject: 'u', issuer: 'business-platform' });
    t.equal((await request(url, '/t/items', { body, headers: { orgid: 'acme', authorization: `Bearer ${algNone}` } })).status, 401);
    const otherSecret = jwt.sign({ org: 'acme', roles: ['User'], kind: 'staff', typ: 'access' }, 'another-secret-another-secret-another', { subject: 'u', issuer: 'business-platform' });
    t.equal((await request(url, '/t/items', { body, headers: { orgid: 'acme', authorization: `Bearer ${otherSecret}` } })).status, 401);
    const refreshAsAccess = app.deps.tokens.signRefresh({ sub: 'u', org: 'acme', kind: 'staff', fam: 'f' }).token;
    t.equal((await request(url, '/t/items', { body, headers: { orgid: 'acme', authorization: `Bearer ${refreshAsAccess}` } })).status, 401, 'a refresh token is not an access token');
  });

  t.test('403: wrong role, wrong organisation, customer on a staff route', async (t) => {
    const noAdmin = await request(url, '/t/admin', { body: {}, headers: staff });
    t.equal(noAdmin.status, 403);
    isEnvelope(t, noAdmin.body, 403, 'Forbidden');
    t.match(noAdmin.body.message, /Admin/);
    const admin = await request(url, '/t/admin', { body: {}, headers: staffHeaders(app, 'acme', ['User', 'Admin']) });
    t.equal(admin.status, 200);
    const crossOrg = await request(url, '/t/items', { body: { name: 'a', qty: 1 }, headers: { ...staff, orgid: 'globex' } });
    t.equal(crossOrg.status, 403, "a token of acme used with globex's orgid");
    const customer = await request(url, '/t/items', {
      body: { name: 'a', qty: 1 },
      headers: { orgid: 'acme', authorization: `Bearer ${tokenFor(app, { org: 'acme', kind: 'customer' })}` },
    });
    t.equal(customer.status, 403);
  });

  t.test('public routes answer anonymously, and attach a valid identity', async (t) => {
    t.same((await request(url, '/t/public')).body, { tenant: '', who: null });
    t.same((await request(url, '/t/public', { headers: staff })).body, { tenant: 'acme', who: 'user-1' });
    const bad = await request(url, '/t/public', { headers: { orgid: 'acme', authorization: 'Bearer nonsense' } });
    t.same(bad.body, { tenant: 'acme', who: null });
  });

  t.test('404 for an unknown route, 405 with Allow for a known one asked with another method, in the envelope', async (t) => {
    const r = await request(url, '/no/such/route');
    t.equal(r.status, 404);
    isEnvelope(t, r.body, 404, 'Not Found');
    const wrongMethod = await request(url, '/t/items', { method: 'DELETE', headers: staff });
    t.equal(wrongMethod.status, 405);
    isEnvelope(t, wrongMethod.body, 405, 'Method Not Allowed');
    t.match(wrongMethod.headers.allow, /\bOPTIONS\b/);
  });

  t.test('413: body over the cap, by content-length and by streamed size', async (t) => {
    const big = { name: 'x'.repeat(5000), qty: 1 };
    const r = await request(url, '/t/items', { body: big, headers: staff });
    t.equal(r.status, 413);
    isEnvelope(t, r.body, 413, 'Payload Too Large');
    const after = await request(url, '/t/items', { body: { name: 'ok', qty: 1 }, headers: staff });
    t.equal(after.status, 201, 'the server keeps serving');
  });

  t.test('415: a body that is not JSON', async (t) => {
    const r = await request(url, '/t/items', { body: 'name=a', headers: { ...staff, 'content-type': 'application/x-www-form-urlencoded' } });
    t.equal(r.status, 415);
    isEnvelope(t, r.body, 415, 'Unsupported Media Type');
  });

  t.test('409 from a handler, 500 without internals', async (t) => {
    const c = await request(url, '/t/conflict', { headers: { orgid: 'acme' } });
    t.equal(c.status, 409);
    isEnvelope(t, c.body, 409, 'Conflict');
    t.equal(c.body.message, 'already there');
    const b = await request(url, '/t/boom', { headers: { orgid: 'acme' } });
    t.equal(b.status, 500);
    isEnvelope(t, b.body, 500, 'Internal Server Error');
    t.notMatch(b.text, /secret internals|\.ts:|at /, 'no stack or message on the wire');
  });

  t.test('CORS: preflight and allowed origins', async (t) => {
    const pre = await request(url, '/t/items', {
      method: 'OPTIONS',
      headers: { origin: 'https://app.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, orgid, content-type' },
    });
    t.equal(pre.status, 204);
    t.equal(pre.headers['access-control-allow-origin'], 'https://app.example');
    t.match(pre.headers['access-control-allow-methods'], /POST/);
    t.match(pre.headers['access-control-allow-headers'], /orgid/);
    const other = await request(url, '/t/items', { method: 'OPTIONS', headers: { origin: 'https://evil.example' } });
    t.equal(other.headers['access-control-allow-origin'], undefined, 'other origins get no CORS grant');
    const simple = await request(url, '/healthz', { headers: { origin: 'https://app.example' } });
    t.equal(simple.headers['access-control-allow-origin'], 'https://app.example');
  });

  t.test('health, readiness, metrics', async (t) => {
    t.same((await request(url, '/healthz')).body, { status: 'ok' });
    t.same((await request(url, '/readyz')).body, { status: 'ready' });
    const m = await request(url, '/metrics');
    t.equal(m.status, 200);
    t.match(m.text, /http_requests_total\{method="POST",route="\/t\/items",status="201"\} \d+/);
    t.match(m.text, /http_request_duration_seconds_bucket/);
    t.match(m.text, /actors_live \d+/);
    t.match(m.text, /actor_mailbox_depth \d+/);
    t.match(m.text, /store_size_bytes \d+/);
    t.match(m.text, /store_free_pages \d+/);
  });

  t.test('/openapi.json is valid OpenAPI 3 and lists every registered route', async (t) => {
    const doc = (await request(url, '/openapi.json')).body;
    const same = (await request(url, '/documentation-json')).body;
    t.same(same, doc, '/documentation-json is the same document');
    await SwaggerParser.validate(structuredClone(doc));
    t.pass('validated by swagger-parser');
    const listed = new Set<string>();
    for (const [p, ops] of Object.entries<Record<string, unknown>>(doc.paths)) {
      for (const m of Object.keys(ops)) listed.add(`${m.toUpperCase()} ${p}`);
    }
    const registered = app.deps.routes.map((r) => `${r.method} ${r.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}')}`);
    t.same([...listed].sort(), [...registered].sort(), 'exactly the route table');
    const op = doc.paths['/t/items'].post;
    t.same(op.tags, ['Test']);
    t.ok(op.requestBody.content['application/json'].schema.properties.name);
    t.ok(op.responses['401'] && op.responses['413'], 'documents the errors it can give');
    t.same(doc.paths['/healthz'].get.security, [{}], 'public routes need no credentials');
  });
});
