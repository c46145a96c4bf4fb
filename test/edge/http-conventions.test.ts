// HTTP as clients expect it: HEAD on every GET route, `GET /` to the reference, 405 with `Allow`
// for a known path asked with another method, `WWW-Authenticate` on 401, and an access log line
// that names the method, path, route, status, duration, orgid and request id (404s included).
import t from 'tap';
import { createOrg, startTestApp, staffHeaders } from '../helpers/app.js';
import { request } from '../helpers/http.js';
import { captureLog } from '../helpers/log-capture.js';

const log = captureLog('info');
const app = await startTestApp(t, { logger: log.logger });
await createOrg(app, 'conv-org');

t.test('http - HEAD answers every GET route with its headers and no body', async (t) => {
  const get = await request(app.url, '/healthz');
  const head = await request(app.url, '/healthz', { method: 'HEAD' });
  t.equal(head.status, 200);
  t.equal(head.text, '', 'no body');
  t.equal(head.headers['content-length'], String(Buffer.byteLength(get.text)), 'the length GET would send');
  t.equal(head.headers['content-type'], get.headers['content-type']);
  const needsAuth = await request(app.url, '/events', { method: 'HEAD', headers: { orgid: 'conv-org' } });
  t.equal(needsAuth.status, 401, 'HEAD passes the same checks as GET');
});

t.test('http - GET / redirects to the reference', async (t) => {
  const r = await request(app.url, '/');
  t.equal(r.status, 302);
  t.equal(r.headers.location, '/documentation');
});

t.test('http - a known path asked with another method answers 405 with Allow', async (t) => {
  const patch = await request(app.url, '/events/0123456789abcdef01234567', { method: 'PATCH', headers: staffHeaders(app, 'conv-org'), body: {} });
  t.equal(patch.status, 405);
  t.match(patch.headers.allow, /\bGET\b/);
  t.match(patch.headers.allow, /\bPUT\b/);
  t.match(patch.body.message, /PATCH is not served on \/events\/:id/);
  const checkin = await request(app.url, '/events/checkin', { headers: staffHeaders(app, 'conv-org') });
  t.equal(checkin.status, 405, 'GET /events/checkin is not taken for an event id');
  t.match(checkin.headers.allow, /^POST\b/);
  const unknown = await request(app.url, '/no/such/path');
  t.equal(unknown.status, 404, 'an unknown path is still a 404');
});

t.test('http - 401 carries WWW-Authenticate, naming a bad token', async (t) => {
  const none = await request(app.url, '/events', { headers: { orgid: 'conv-org' } });
  t.equal(none.status, 401);
  t.equal(none.headers['www-authenticate'], 'Bearer');
  const bad = await request(app.url, '/events', { headers: { orgid: 'conv-org', authorization: 'Bearer not.a.token' } });
  t.equal(bad.status, 401);
  t.equal(bad.headers['www-authenticate'], 'Bearer error="invalid_token"');
  const expired = app.deps.tokens.signAccess({ sub: 'user-1', org: 'conv-org', roles: ['User'], kind: 'staff', email: 'staff@example.com' }, -10);
  const late = await request(app.url, '/events', { headers: { orgid: 'conv-org', authorization: `Bearer ${expired}` } });
  t.equal(late.status, 401);
  t.equal(late.headers['www-authenticate'], 'Bearer error="invalid_token"');
  t.match(late.body.message, /this access token expired at .*POST \/profile\/user\/refresh/, 'an expired token says so and names the refresh route');
});

t.test('http - the access log line has method, path, route, status, duration, orgid and request id', async (t) => {
  await request(app.url, '/no/such/thing?x=1', { headers: { 'x-request-id': 'req-404-check', orgid: 'conv-org' } });
  await request(app.url, '/events', { headers: { ...staffHeaders(app, 'conv-org'), 'x-request-id': 'req-200-check' } });
  await new Promise((r) => setTimeout(r, 50));
  const entry = (id: string) => log.entries().find((l) => l.reqId === id && l.msg === 'request');
  const miss = entry('req-404-check');
  t.ok(miss, 'the 404 is logged');
  t.match(miss, { method: 'GET', path: '/no/such/thing', route: '404', status: 404, orgid: 'conv-org' });
  t.type(miss?.ms, 'number');
  t.match(entry('req-200-check'), { method: 'GET', path: '/events', route: '/events', status: 200, orgid: 'conv-org' });
});
