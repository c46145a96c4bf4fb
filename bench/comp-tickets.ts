// How long a large comp takes to answer, and (with the transactional outbox) how long until every
// ticket email is marked sent. One node in this process on a fresh DATA_DIR, a real HTTP request:
//   npx tsx bench/comp-tickets.ts [tickets=25000]
// Prints one JSON line. Tickets are issued as 50 items (the comp's item cap) of tickets/50 each.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { OUTBOX_DATATYPE } from '../core/outbox.js';
import { WriteBatch } from '../core/store/store.js';
import { startApp } from '../edge/app.js';
import { request } from '../test/helpers/http.js';

const total = Number(process.argv[2] ?? 25_000);
const ITEMS = 50;
const dataDir = mkdtempSync(join(tmpdir(), 'bp-comp-bench-'));
const app = await startApp({
  env: {},
  config: { port: 0, host: '127.0.0.1', dataDir, logLevel: 'warn', jwtSecret: 'bench-secret-0123456789-0123456789-012345', rateLimits: { enabled: false } },
});
try {
  await app.deps.store.commit(new WriteBatch().putOrg({ orgId: 'acme', displayName: 'Acme', createdate: new Date().toISOString() }));
  const token = app.deps.tokens.signAccess({ sub: 'staff-1', org: 'acme', roles: ['User'], kind: 'staff', email: 'staff@example.com' });
  const headers = { orgid: 'acme', authorization: `Bearer ${token}` };
  const ev = await request(app.url, '/events', { method: 'POST', headers, body: { name: 'Big Fest', ticketTypes: [{ title: 'GA', quantity: total }] } });
  if (ev.status !== 201) throw new Error(`event: ${ev.status} ${ev.text}`);
  const typeId = ev.body.ticketTypes[0].sk;
  const per = Math.ceil(total / ITEMS);
  const items = Array.from({ length: ITEMS }, (_, i) => ({ ticketTypeId: typeId, quantity: Math.min(per, total - i * per), holderEmail: `holder${i}@example.com` })).filter((i) => i.quantity > 0);
  const t0 = performance.now();
  const comp = await request(app.url, '/events/tickets/comp', { method: 'POST', headers, body: { items, idempotencyKey: randomUUID() } });
  const answerMs = performance.now() - t0;
  if (comp.status !== 201) throw new Error(`comp: ${comp.status} ${comp.text.slice(0, 500)}`);
  // Every message recorded, and (when a dispatcher marks them) every one sent.
  const counts = () => {
    let all = 0;
    let sent = 0;
    for (const r of app.deps.store.scan('acme', OUTBOX_DATATYPE)) {
      all++;
      if (r.state === 'sent') sent++;
    }
    return { all, sent };
  };
  let c = counts();
  // Stops waiting when nothing more is marked sent for 5 s (before the outbox, nothing ever was).
  let lastProgress = Date.now();
  while (c.sent < total && Date.now() - lastProgress < 5_000) {
    await new Promise((r) => setTimeout(r, 250));
    const n = counts();
    if (n.sent > c.sent) lastProgress = Date.now();
    c = n;
  }
  const sentMs = performance.now() - t0;
  console.log(JSON.stringify({ tickets: comp.body.tickets.length, answerMs: Math.round(answerMs), messages: c.all, sent: c.sent, allSentMs: c.sent >= total ? Math.round(sentMs) : null }));
} finally {
  await app.close();
  rmSync(dataDir, { recursive: true, force: true });
}
