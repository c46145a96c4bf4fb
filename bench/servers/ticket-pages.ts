// The server under test of the `repository` scenario's ticket-pages side: the real startApp with
// the events module, configured from the environment like production. The scenario creates an
// event over HTTP, then POST /bench/tickets/:event stores BENCH_TICKETS tickets of it straight into
// the store in large batches (not through HTTP; every write keeps the indexes and listings, as a
// sale's does), and GET /bench/tickets answers how far that got (200 once the organisation is stored).
import { WriteBatch } from '../../core/store/store.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Module } from '../../edge/module.js';
import { route } from '../../edge/route.js';
import { serve } from './serve.js';

const TENANT = 'bench-org';
const BATCH = 10_000;
const EPOCH = Date.UTC(2026, 0, 1);
const STATUSES = ['valid', 'valid', 'valid', 'checked_in'];
const progress = { ready: false, tickets: 0, stored: 0, ms: 0, done: false, error: '' };

function ticketOf(event: string, ticketTypeId: string, i: number): StoredRecord {
  // Sold over time, a few in the same second: runs of equal `createdate`, ordered by id.
  const iso = new Date(EPOCH + Math.floor(i / 3) * 1000).toISOString();
  const status = STATUSES[i % STATUSES.length];
  return {
    pk: TENANT,
    sk: 't0' + i.toString(16).padStart(22, '0'),
    datatype: 'ticket',
    version: 1,
    state: status,
    createdate: iso,
    modifydate: iso,
    data: { event, ticketTypeId, number: `B${i.toString(36).toUpperCase().padStart(9, '0')}`, status, holderEmail: `holder${i}@example.com`, price: 25 },
  };
}

const benchModule: Module = {
  name: 'bench-tickets',
  routes: () => [
    route({
      method: 'POST',
      path: '/bench/tickets/:event/:type/:count',
      auth: 'none',
      tenant: 'none',
      tag: 'Bench',
      summary: 'Stores :count tickets of an event straight into the store (benchmark only)',
      handler: (ctx) => {
        const { event, type } = ctx.params as Record<string, string>;
        const count = Number((ctx.params as Record<string, string>).count);
        progress.tickets = count;
        void seed(event, type, count).catch((err: unknown) => {
          progress.error = String(err);
        });
        return { started: true };
      },
    }),
    route({
      method: 'GET',
      path: '/bench/tickets',
      auth: 'none',
      tenant: 'none',
      tag: 'Bench',
      summary: 'How far the seeding got; 503 until the organisation is stored (benchmark only)',
      handler: (ctx) => {
        if (!progress.ready) ctx.status = 503;
        return progress;
      },
    }),
  ],
};

const app = await serve('ticket pages bench server', { modules: ['events', benchModule] });
const store = app.deps.store;
await store.commit(new WriteBatch().putOrg({ orgId: TENANT, displayName: 'Bench', createdate: new Date().toISOString() }));
progress.ready = true;

async function seed(event: string, type: string, count: number): Promise<void> {
  const started = performance.now();
  for (let from = 0; from < count; from += BATCH) {
    const batch = new WriteBatch();
    for (let i = from; i < Math.min(count, from + BATCH); i++) batch.putRecord(ticketOf(event, type, i));
    await store.commit(batch);
    progress.stored = Math.min(count, from + BATCH);
    progress.ms = Math.round(performance.now() - started);
  }
  progress.done = true;
  process.stdout.write(`seeded ${count} tickets in ${progress.ms} ms\n`);
}
