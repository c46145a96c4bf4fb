import t from 'tap';
import { newRecord } from '../../core/store/record.js';
import { WriteBatch } from '../../core/store/store.js';
import { readOutbox } from '../../core/outbox.js';
import { startTestApp, tempDir } from '../helpers/app.js';
import { receiver, sleep, testWebhookConfig, verify } from './receiver.js';
import { endpoint, venue, webhooksWorld } from './world.js';

const scan = (c: any, ticket: any, ev: any, kind = 'checkin') => c.post(`/events/${kind}`, { code: ticket.data.number, eventId: ev.id });

t.test('webhooks - a checked-in ticket arrives once, signed; its check-out too', async (t) => {
  const w = await webhooksWorld(t);
  const rx = await receiver(t);
  const ep = await endpoint(w.admin, rx.url, ['ticket.checked_in', 'ticket.checked_out']);
  t.match(ep.secret, /^whsec_/);
  const { ev, tickets } = await venue(w.admin);
  const r = await scan(w.admin, tickets[0], ev);
  t.equal(r.body.success, true);
  const [got] = await rx.waitFor(1);
  const payload = verify(ep.secret, got) as any;
  t.equal(payload.type, 'ticket.checked_in');
  t.equal(payload.orgId, 'acme');
  t.equal(payload.id, got.headers['webhook-id'], 'the payload id is the webhook-id');
  t.equal(payload.data.ticket.sk, tickets[0].sk, 'data is the scan result');
  t.equal(payload.data.success, true);
  t.equal(payload.data.direction, 'checkin', 'the direction as the catalogue documents it');
  t.ok(Date.parse(payload.createdAt) > 0);
  t.throws(() => verify('whsec_' + Buffer.alloc(32, 1).toString('base64'), got), 'another secret does not verify');

  await scan(w.admin, tickets[0], ev, 'checkout');
  const [, out] = await rx.waitFor(2);
  t.equal((verify(ep.secret, out) as any).type, 'ticket.checked_out');
  await sleep(300);
  t.equal(rx.got.length, 2, 'each event once');

  const denied = await scan(w.admin, { data: { number: 'NOPE' } }, ev);
  t.equal(denied.body.success, false);
  await sleep(200);
  t.equal(rx.got.length, 2, 'a refused scan queues nothing');
});

t.test('webhooks - an offline admission arrives as ticket.checked_in when uploaded, once, with its original time', async (t) => {
  const w = await webhooksWorld(t);
  const rx = await receiver(t);
  const ep = await endpoint(w.admin, rx.url, ['ticket.checked_in']);
  const { ev, tickets } = await venue(w.admin, 2);
  const scannedAt = new Date(Date.now() - 10 * 60_000).toISOString();
  const item = (tk: any, nonce: string) => ({ code: tk.data.number, eventId: ev.id, offline: true, scannedAt, nonce, decision: 'admitted' });
  const body = { scans: [item(tickets[0], 'n-1'), { ...item(tickets[1], 'n-2'), decision: 'denied', reason: 'product' }] };
  const up = await w.admin.post('/events/checkin/batch', body);
  t.equal(up.status, 200);
  t.match(up.body.results, [{ success: true, offline: true }, { success: false, offline: true }]);
  const [got] = await rx.waitFor(1);
  const payload = verify(ep.secret, got) as any;
  t.equal(payload.type, 'ticket.checked_in');
  t.equal(payload.data.ticket.sk, tickets[0].sk);
  t.equal(payload.data.offline, true, 'marked offline');
  t.equal(payload.data.scannedAt, scannedAt, 'at the time the device let it in');
  // A retried upload (same nonces) answers the original results and queues nothing again; the denial never did.
  t.equal((await w.admin.post('/events/checkin/batch', body)).status, 200);
  await sleep(400);
  t.equal(rx.got.length, 1, 'one event for one admission');
});

t.test('webhooks - no endpoint, or one subscribed to other events: a scan queues nothing', async (t) => {
  const w = await webhooksWorld(t);
  const rx = await receiver(t);
  await endpoint(w.admin, rx.url, ['ticket.checked_out']);
  const { ev, tickets } = await venue(w.admin);
  t.equal(w.app.deps.services.webhooks.wants('acme', 'ticket.checked_in'), false);
  t.equal(w.app.deps.services.webhooks.wants('acme', 'ticket.checked_out'), true);
  t.equal(w.app.deps.services.webhooks.wants('globex', 'ticket.checked_out'), false);
  await scan(w.admin, tickets[0], ev);
  await sleep(200);
  t.equal(rx.got.length, 0);
  t.same(w.app.deps.store.listKv('acme', 'webhook_lane'), [], 'nothing queued');
  t.same(w.app.deps.store.listKv('acme', 'webhook_event'), [], 'no event stored');
});

t.test('webhooks - a receiver answering 500 three times then 200 gets the same webhook-id four times', async (t) => {
  const w = await webhooksWorld(t);
  let n = 0;
  const rx = await receiver(t, () => (++n <= 3 ? 500 : 200));
  const ep = await endpoint(w.admin, rx.url);
  const { ev, tickets } = await venue(w.admin);
  await scan(w.admin, tickets[0], ev);
  const got = await rx.waitFor(4);
  t.same(new Set(got.map((g) => g.headers['webhook-id'])).size, 1, 'one webhook-id');
  for (const g of got) verify(ep.secret, g);
  // WEBHOOK_RETRY_BASE_MS 50 doubling, up to WEBHOOK_RETRY_MAX_MS 200: no retry comes before its time.
  const gaps = [1, 2, 3].map((i) => got[i].at - got[i - 1].at);
  t.ok(gaps[0] >= 45 && gaps[1] >= 95 && gaps[2] >= 195, `the back-off grows: ${gaps.join(', ')} ms`);
  await sleep(500);
  t.equal(rx.got.length, 4, 'delivered, then not again');
  const page = (await w.admin.get(`/webhooks/endpoints/${ep.id}/deliveries`)).body;
  t.equal(page.data.length, 1);
  t.match(page.data[0], { type: 'ticket.checked_in', state: 'delivered', attempts: 4, lastStatus: 200, nextAttemptAt: null, eventId: got[0].headers['webhook-id'] });
  t.type(page.data[0].durationMs, 'number');
  const metrics = (await w.admin.get('/metrics')).text;
  t.match(metrics, /webhook_attempts_total\{org="acme",outcome="delivered"\} 1/);
  t.match(metrics, /webhook_attempts_total\{org="acme",outcome="retried"\} 3/);
});

t.test('webhooks - a hanging endpoint of organisation A does not delay organisation B', async (t) => {
  const w = await webhooksWorld(t, { timeoutMs: 20_000, endpointConcurrency: 2 });
  const hang = await receiver(t, () => 'hang');
  const ok = await receiver(t);
  await endpoint(w.admin, hang.url);
  await endpoint(w.otherAdmin, ok.url);
  const a = await venue(w.admin, 6);
  const b = await venue(w.otherAdmin, 1);
  for (const tk of a.tickets) await scan(w.admin, tk, a.ev);
  await hang.waitFor(2);
  const scanned = Date.now();
  const r = await scan(w.otherAdmin, b.tickets[0], b.ev);
  const answered = Date.now();
  t.equal(r.body.success, true);
  t.ok(answered - scanned < 1000, 'the scan did not wait for any webhook');
  const [got] = await ok.waitFor(1);
  t.ok(got.at - answered < 100, `B's event arrived ${got.at - answered} ms after its scan was answered`);
  t.equal(hang.got.length, 2, 'A holds only its lane: two attempts in flight');
});

t.test('webhooks - rotate-secret: the old and the new secret both sign for 24 hours', async (t) => {
  const w = await webhooksWorld(t);
  const rx = await receiver(t);
  const ep = await endpoint(w.admin, rx.url);
  const rot = await w.admin.post(`/webhooks/endpoints/${ep.id}/rotate-secret`, {});
  t.equal(rot.status, 200);
  t.not(rot.body.secret, ep.secret);
  t.ok(Date.parse(rot.body.previousSecretExpiresAt) - Date.now() > 23.9 * 3600_000);
  const { ev, tickets } = await venue(w.admin);
  await scan(w.admin, tickets[0], ev);
  const [got] = await rx.waitFor(1);
  t.equal(got.headers['webhook-signature'].split(' ').length, 2, 'two signatures');
  t.ok(verify(ep.secret, got), 'the old secret verifies');
  t.ok(verify(rot.body.secret, got), 'the new one too');
});

t.test('webhooks - an endpoint failing for WEBHOOK_DISABLE_AFTER_MS is disabled and the Admins are emailed', async (t) => {
  const w = await webhooksWorld(t, { disableAfterMs: 300 });
  const store = w.app.deps.store;
  await store.commit(
    new WriteBatch()
      .putRecord(newRecord('acme', 'user', { email: 'boss@acme.test', roles: ['Admin'], status: 'active' }, { now: Date.now() }), 0)
      .putRecord(newRecord('acme', 'user', { email: 'clerk@acme.test', roles: ['User'], status: 'active' }, { now: Date.now() }), 0),
  );
  const rx = await receiver(t, () => 500);
  const ep = await endpoint(w.admin, rx.url);
  const { ev, tickets } = await venue(w.admin);
  await scan(w.admin, tickets[0], ev);
  const deadline = Date.now() + 5000;
  let now: any;
  while (Date.now() < deadline) {
    now = (await w.admin.get(`/webhooks/endpoints/${ep.id}`)).body;
    if (!now.enabled) break;
    await sleep(50);
  }
  t.equal(now.enabled, false, 'disabled');
  t.match(now.disabledReason, /failing since/);
  // The dispatcher applies the change once the actor answers, a moment after the GET can read it.
  for (let i = 0; i < 20 && w.app.deps.services.webhooks.wants('acme', 'ticket.checked_in'); i++) await sleep(10);
  t.equal(w.app.deps.services.webhooks.wants('acme', 'ticket.checked_in'), false, 'no longer wanted');
  const mail = readOutbox(store, 'acme').filter((m) => m.kind === 'webhook-disabled');
  t.same(mail.map((m) => m.to), ['boss@acme.test'], 'the Admins, not the Users');
  t.notMatch(mail[0].body, /127\.0\.0\.1:\d+\/hook\?/);
  const seen = rx.got.length;
  await scan(w.admin, tickets[0], ev, 'checkout');
  await sleep(300);
  t.ok(rx.got.length <= seen + 1, 'nothing new is sent');
});

t.test('webhooks - deliveries are listed newest first with a cursor; a failed one is retried on request', async (t) => {
  const w = await webhooksWorld(t, { maxAgeMs: 1 });
  let fail = true;
  const rx = await receiver(t, () => (fail ? 500 : 200));
  const ep = await endpoint(w.admin, rx.url);
  const { ev, tickets } = await venue(w.admin, 3);
  for (const tk of tickets) await scan(w.admin, tk, ev);
  await rx.waitFor(3);
  await sleep(200);
  const p1 = (await w.admin.get(`/webhooks/endpoints/${ep.id}/deliveries?limit=2`)).body;
  t.equal(p1.data.length, 2);
  t.ok(p1.next);
  const p2 = (await w.admin.get(`/webhooks/endpoints/${ep.id}/deliveries?limit=2&after=${p1.next}`)).body;
  t.equal(p2.data.length, 1);
  t.equal(p2.next, null);
  const all = [...p1.data, ...p2.data];
  t.same(all.map((d: any) => d.eventId), all.map((d: any) => d.eventId).sort().reverse(), 'newest first');
  t.ok(all.every((d: any) => d.state === 'failed' && d.attempts === 1 && d.lastStatus === 500), 'failed for good after one attempt (maxAgeMs 1)');

  fail = false;
  const retried = await w.admin.post(`/webhooks/deliveries/${all[2].id}/retry`, {});
  t.equal(retried.status, 202);
  t.equal(retried.body.state, 'pending');
  const got = await rx.waitFor(4);
  t.equal(got[3].headers['webhook-id'], all[2].eventId, 'the same webhook-id');
  await sleep(100);
  const after = (await w.admin.get(`/webhooks/endpoints/${ep.id}/deliveries`)).body.data.find((d: any) => d.id === all[2].id);
  t.match(after, { state: 'delivered', attempts: 2, lastStatus: 200 });
  t.equal((await w.admin.post(`/webhooks/deliveries/${'0'.repeat(48)}/retry`, {})).status, 404);
  t.equal((await w.otherAdmin.post(`/webhooks/deliveries/${all[2].id}/retry`, {})).status, 404, "another organisation's delivery is not found");
});

t.test('webhooks - the test route sends a ping', async (t) => {
  const w = await webhooksWorld(t);
  const rx = await receiver(t);
  const ep = await endpoint(w.admin, rx.url);
  const r = await w.admin.post(`/webhooks/endpoints/${ep.id}/test`, {});
  t.equal(r.status, 202);
  const [got] = await rx.waitFor(1);
  const p = verify(ep.secret, got) as any;
  t.equal(p.type, 'ping');
  t.equal(p.id, r.body.eventId);
});

t.test('webhooks - an event queued in a batch the store refuses is never delivered; one committed is', async (t) => {
  const w = await webhooksWorld(t);
  const rx = await receiver(t);
  await endpoint(w.admin, rx.url, ['customer.created']);
  const { store, services, clock } = w.app.deps;
  const rec = newRecord('acme', 'note', { text: 'x' }, { now: clock.now() });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  // Expects version 0 (a create) of a record that exists: refused, with its event.
  const refused = new WriteBatch().putRecord({ ...rec, version: 2 }, 0);
  services.webhooks.queue(refused, 'acme', 'customer.created', { refused: true }, clock.now());
  await t.rejects(store.commit(refused));
  const ok = new WriteBatch().putRecord({ ...rec, version: 2 }, 1);
  services.webhooks.queue(ok, 'acme', 'customer.created', { refused: false }, clock.now());
  await store.commit(ok);
  const [got] = await rx.waitFor(1);
  t.same(got.json.data, { refused: false });
  await sleep(300);
  t.equal(rx.got.length, 1, 'only the committed one');
});

t.test('webhooks - a redirect is not followed: it counts as a failure', async (t) => {
  const w = await webhooksWorld(t, { maxAgeMs: 1 });
  const target = await receiver(t);
  const rx = await receiver(t, () => 302);
  rx.location = target.url;
  const ep = await endpoint(w.admin, rx.url);
  const { ev, tickets } = await venue(w.admin);
  await scan(w.admin, tickets[0], ev);
  await rx.waitFor(1);
  await sleep(200);
  t.equal(target.got.length, 0);
  const d = (await w.admin.get(`/webhooks/endpoints/${ep.id}/deliveries`)).body.data[0];
  t.match(d, { state: 'failed', lastStatus: 302, lastError: 'answered 302' });
});

t.test('webhooks - a node stopping does not wait for a hanging endpoint; the attempt stays queued for the next start', async (t) => {
  const dataDir = tempDir(t);
  const w = await webhooksWorld(t, { timeoutMs: 30_000 }, { dataDir });
  const rx = await receiver(t, () => 'hang');
  await endpoint(w.admin, rx.url);
  const { ev, tickets } = await venue(w.admin);
  await scan(w.admin, tickets[0], ev);
  const [first] = await rx.waitFor(1);
  const started = Date.now();
  await w.app.close();
  t.ok(Date.now() - started < 3000, `closed in ${Date.now() - started} ms`);
  rx.answer = () => 200;
  await startTestApp(t, { modules: ['events', 'webhooks'], dataDir, config: testWebhookConfig() });
  const [, again] = await rx.waitFor(2);
  t.equal(again.headers['webhook-id'], first.headers['webhook-id'], 'sent again after the restart, under the same webhook-id');
});

t.test('webhooks - ticket.issued, ticket.transferred and ticket.refunded carry the ticket record', async (t) => {
  const w = await webhooksWorld(t);
  const rx = await receiver(t);
  const ep = await endpoint(w.admin, rx.url, ['ticket.issued', 'ticket.transferred', 'ticket.refunded']);
  const { tickets } = await venue(w.admin);
  const tk = tickets[0];
  t.equal((await w.admin.post(`/events/tickets/${tk.sk}/transfer`, { holderEmail: 'new@example.com' })).status, 200);
  t.equal((await w.admin.post(`/events/tickets/${tk.sk}/refund`, {})).status, 200);
  const got = (await rx.waitFor(3)).map((g) => verify(ep.secret, g) as any);
  // An endpoint's events may arrive out of order (several attempts in flight): by type.
  const by = Object.fromEntries(got.map((p) => [p.type, p]));
  t.same(Object.keys(by).sort(), ['ticket.issued', 'ticket.refunded', 'ticket.transferred']);
  t.ok(got.every((p) => p.data.sk === tk.sk));
  t.equal(by['ticket.transferred'].data.data.holderEmail, 'new@example.com');
  t.equal(by['ticket.refunded'].data.data.status, 'refunded');
});
