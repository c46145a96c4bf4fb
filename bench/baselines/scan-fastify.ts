// The scan logic of bench/baselines/scan-memory.ts served by Fastify the way a Fastify user would
// write it: a JSON schema for the body (ajv) and for the answer (fast-json-stringify), JSON parsed
// by Fastify. In memory, no durability.
import Fastify from 'fastify';
import { MemoryScanner, TICKETS } from './scan-memory.js';

const scanner = new MemoryScanner(TICKETS);
const app = Fastify({ logger: false });

const record = { type: 'object', additionalProperties: true, properties: { data: { type: 'object', additionalProperties: true } } };

app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/bench/stats', async (_req, reply) => reply.type('application/json').send(scanner.stats()));

app.post(
  '/events/checkin',
  {
    schema: {
      body: {
        type: 'object',
        required: ['code'],
        additionalProperties: false,
        properties: {
          code: { type: 'string', minLength: 1, maxLength: 512 },
          zone: { type: 'string', pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$' },
          eventId: { type: 'string', minLength: 1, maxLength: 80 },
          checkpoint: { type: 'string', maxLength: 64 },
          nonce: { type: 'string', maxLength: 128 },
          scannedAt: { type: 'string' },
          deviceId: { type: 'string', maxLength: 128 },
        },
      },
      response: {
        200: { type: 'object', properties: { success: { type: 'boolean' }, reason: { type: 'string' }, ticket: record } },
      },
    },
  },
  async (req, reply) => {
    const who = scanner.authenticate(req.headers.authorization, req.headers.orgid as string | undefined);
    if (typeof who !== 'string') return reply.code(who.status as 200).type('application/json').send(who.body);
    const a = scanner.checkIn(req.body as Record<string, unknown>, who);
    if (a.status !== 200) return reply.code(a.status as 200).type('application/json').send(a.body);
    // The service's answer object goes through the response schema like any Fastify route.
    return JSON.parse(a.body);
  },
);

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
app.listen({ port, host }).catch((err) => {
  process.stderr.write(`scan-fastify: ${String(err)}\n`);
  process.exit(1);
});
const stop = () => void app.close().then(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
