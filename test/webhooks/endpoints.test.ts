import t from 'tap';
import { isPrivateAddress } from '../../core/webhooks/url-safety.js';
import { receiver } from './receiver.js';
import { endpoint, webhooksWorld } from './world.js';

const w = await webhooksWorld(t, { maxEndpoints: 3 });

t.test('webhook endpoints - Admin only: 403 for a User on every route', async (t) => {
  const rx = await receiver(t);
  const ep = await endpoint(w.admin, rx.url);
  const id = ep.id;
  const calls: Array<[string, string, unknown?]> = [
    ['post', '/webhooks/endpoints', { url: rx.url, events: ['*'] }],
    ['get', '/webhooks/endpoints'],
    ['get', `/webhooks/endpoints/${id}`],
    ['put', `/webhooks/endpoints/${id}`, { description: 'x' }],
    ['del', `/webhooks/endpoints/${id}`],
    ['post', `/webhooks/endpoints/${id}/rotate-secret`, {}],
    ['post', `/webhooks/endpoints/${id}/test`, {}],
    ['get', `/webhooks/endpoints/${id}/deliveries`],
    ['post', `/webhooks/deliveries/${'a'.repeat(48)}/retry`, {}],
  ];
  for (const [m, path, body] of calls) {
    const r = await (w.user as any)[m](path, body);
    t.equal(r.status, 403, `${m.toUpperCase()} ${path}`);
  }
  t.equal((await w.admin.get(`/webhooks/endpoints/${id}`)).status, 200, 'still there');
  await w.admin.del(`/webhooks/endpoints/${id}`);
});

t.test('webhook endpoints - create answers the secret once; read, list, change, delete; other organisations see none', async (t) => {
  const rx = await receiver(t);
  const c = await w.admin.post('/webhooks/endpoints', { url: rx.url, events: ['ticket.checked_in', 'ticket.checked_in'], description: 'door' });
  t.equal(c.status, 201);
  t.match(c.body, { url: rx.url, events: ['ticket.checked_in'], description: 'door', enabled: true, disabledReason: null });
  t.match(c.body.secret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  const id = c.body.id;
  const got = (await w.admin.get(`/webhooks/endpoints/${id}`)).body;
  t.equal(got.secret, undefined, 'never shown again');
  t.same((await w.admin.get('/webhooks/endpoints')).body.data.map((e: any) => e.id), [id]);
  t.same((await w.otherAdmin.get('/webhooks/endpoints')).body.data, []);
  t.equal((await w.otherAdmin.get(`/webhooks/endpoints/${id}`)).status, 404);
  const u = await w.admin.put(`/webhooks/endpoints/${id}`, { events: ['*'], enabled: false });
  t.match(u.body, { events: ['*'], enabled: false, description: 'door' });
  t.equal(w.app.deps.services.webhooks.wants('acme', 'ticket.issued'), false, 'a disabled endpoint wants nothing');
  await w.admin.put(`/webhooks/endpoints/${id}`, { enabled: true });
  t.equal(w.app.deps.services.webhooks.wants('acme', 'ticket.issued'), true, '`*` wants every event');
  t.equal((await w.admin.del(`/webhooks/endpoints/${id}`)).status, 200);
  t.equal((await w.admin.get(`/webhooks/endpoints/${id}`)).status, 404);
  t.equal(w.app.deps.services.webhooks.wants('acme', 'ticket.issued'), false, 'gone from memory');
});

t.test('webhook endpoints - a private-address URL is refused at create time, http:// too, unless the host is allowed', async (t) => {
  for (const url of ['https://10.0.0.7/hook', 'https://192.168.1.1/', 'https://169.254.169.254/latest', 'https://[::1]/x', 'https://[fd00::1]/x', 'https://localhost/x', 'https://127.1.2.3/x', 'https://[::ffff:10.0.0.1]/x']) {
    const r = await w.admin.post('/webhooks/endpoints', { url, events: ['*'] });
    t.equal(r.status, 400, url);
    t.match(r.body.message, /private|resolve/, url);
  }
  const http = await w.admin.post('/webhooks/endpoints', { url: 'http://example.com/hook', events: ['*'] });
  t.equal(http.status, 400);
  t.match(http.body.message, /https/);
  const bad = await w.admin.post('/webhooks/endpoints', { url: 'https://example.com/hook', events: ['ticket.nope'] });
  t.equal(bad.status, 400);
  t.match(bad.body.message, /unknown event ticket\.nope/);
  const mixed = await w.admin.post('/webhooks/endpoints', { url: 'https://example.com/hook', events: ['*', 'ticket.issued'] });
  t.equal(mixed.status, 400);
  t.ok(isPrivateAddress('100.64.0.1') && isPrivateAddress('fe80::1') && !isPrivateAddress('93.184.216.34') && !isPrivateAddress('2606:4700::1'));
});

t.test('webhook endpoints - at most WEBHOOK_MAX_ENDPOINTS per organisation; a URL password is never answered', async (t) => {
  const rx = await receiver(t);
  const made = [];
  for (let i = 0; i < 3; i++) made.push(await endpoint(w.admin, rx.url.replace('//', `//user:s3cret${i}@`)));
  t.notMatch(JSON.stringify(made.map(({ secret: _s, ...e }) => e)), /s3cret/);
  t.match(made[0].url, /user:\*\*\*@127/);
  const r = await w.admin.post('/webhooks/endpoints', { url: rx.url, events: ['*'] });
  t.equal(r.status, 409);
  for (const e of made) await w.admin.del(`/webhooks/endpoints/${e.id}`);
});
