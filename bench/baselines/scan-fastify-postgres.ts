// The door a team would build instead of this service: Fastify and PostgreSQL, durable. Per scan,
// what pretix's check-in does: one transaction that finds and locks the ticket row (SELECT ... FOR
// UPDATE), checks it, updates it and inserts a check-in row (denied scans and unknown codes are
// logged too), committed with synchronous_commit on before the answer. Same body schema, same
// rules and reasons, same answer shape as the service (bench/baselines/scan-memory.ts), the
// staff JWT verified once per token as the edge does. PG_SOCKET_DIR and PG_PORT name the server
// (bench/fixtures/postgres.ts); PG_POOL its connections (20).
import Fastify from 'fastify';
import { checkinSchema } from './checkin-schema.js';
import pg from 'pg';
import { EVENT_ID, EVENT_SLUG, ZONE } from '../fixtures/scan-dataset.js';
import { MemoryScanner } from './scan-memory.js';

const auth = new MemoryScanner(0);
const pool = new pg.Pool({
  host: process.env.PG_SOCKET_DIR,
  port: Number(process.env.PG_PORT),
  database: 'postgres',
  user: 'bench',
  max: Number(process.env.PG_POOL ?? 20),
});
const app = Fastify({ logger: false });

app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/bench/stats', async () => {
  const r = await pool.query("SELECT count(*) FILTER (WHERE successful) AS ok, count(*) FILTER (WHERE NOT successful) AS denied FROM checkin WHERE kind = 'in'");
  return { successful: Number(r.rows[0].ok), denied: Number(r.rows[0].denied) };
});

const LOCK = { name: 'lock', text: 'SELECT id, event, status, record FROM ticket WHERE number = ANY($1::text[]) FOR UPDATE' };
const UPDATE = { name: 'update', text: "UPDATE ticket SET status = 'checked_in', version = version + 1, record = $2 WHERE id = $1" };
const LOG = { name: 'log', text: 'INSERT INTO checkin (event, ticket_id, kind, zone, successful, reason, code, by_user) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)' };

function variants(code: string): string[] {
  return [...new Set([code, code.toUpperCase(), code.toLowerCase()])];
}

async function checkIn(code: string, zone: string, by: string): Promise<Record<string, unknown>> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const rows = (await c.query({ ...LOCK, values: [variants(code)] })).rows;
    const row = rows.find((r) => r.record.data.number === code) ?? rows[0];
    let reason: string | undefined;
    let answer: Record<string, unknown>;
    if (!row) reason = 'invalid_code';
    else {
      const d = row.record.data;
      if (row.event !== EVENT_ID && row.event !== EVENT_SLUG) reason = 'wrong_event';
      else if (d.status === 'cancelled') reason = 'cancelled';
      else if (d.status === 'refunded') reason = 'refunded';
      else if (d.requiresActivation === true && !d.activatedAt) reason = 'not_active';
      else if (d.inside === true) reason = 'already_checked_in';
    }
    if (reason !== undefined) {
      answer = row ? { success: false, reason, ticket: row.record } : { success: false, reason };
    } else {
      const t = row.record;
      const when = new Date().toISOString();
      const next = {
        ...t,
        version: t.version + 1,
        state: 'checked_in',
        modifydate: when,
        data: { ...t.data, status: 'checked_in', inside: true, zone, checkedInAt: t.data.checkedInAt ?? when, lastCheckInAt: when },
      };
      await c.query({ ...UPDATE, values: [row.id, next] });
      answer = { success: true, ticket: next };
    }
    await c.query({ ...LOG, values: [EVENT_ID, row?.id ?? null, 'in', zone, reason === undefined, reason ?? null, row ? null : code.slice(0, 256), by] });
    await c.query('COMMIT');
    return answer;
  } catch (err) {
    await c.query('ROLLBACK').catch(() => undefined);
    throw err;
  } finally {
    c.release();
  }
}

app.post(
  '/events/checkin',
  { schema: checkinSchema },
  async (req, reply) => {
    const who = auth.authenticate(req.headers.authorization, req.headers.orgid as string | undefined);
    if (typeof who !== 'string') return reply.code(who.status as 200).type('application/json').send(who.body);
    const b = req.body as { code: string; zone?: string; eventId?: string };
    if (b.eventId !== undefined && b.eventId !== EVENT_ID && b.eventId !== EVENT_SLUG) {
      return reply.code(404 as 200).type('application/json').send(JSON.stringify({ statusCode: 404, message: `event ${b.eventId} not found`, error: 'Not Found' }));
    }
    const zone = b.zone ?? 'unknown';
    if (b.zone !== undefined && zone !== ZONE) {
      return reply.code(400 as 200).type('application/json').send(JSON.stringify({ statusCode: 400, message: `body/zone "${zone}" is not a zone of event ${EVENT_ID}`, error: 'Bad Request' }));
    }
    return checkIn(b.code, zone, who);
  },
);

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
app.listen({ port, host }).catch((err) => {
  process.stderr.write(`scan-fastify-postgres: ${String(err)}\n`);
  process.exit(1);
});
const stop = () => void app.close().then(() => pool.end()).then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
