// The scan logic of bench/baselines/scan-memory.ts served by Fastify the way a Fastify user would
// write it: a JSON schema for the body (ajv) and for the answer (fast-json-stringify), JSON parsed
// by Fastify. In memory, no durability.
import Fastify from 'fastify';
import { checkinSchema } from './checkin-schema.js';
import { MemoryScanner, TICKETS } from './scan-memory.js';

const scanner = new MemoryScanner(TICKETS);
const app = Fastify({ logger: false });


app.get('/healthz', async () => ({ status: 'ok' }));
app.get('/bench/stats', async (_req, reply) => reply.type('application/json').send(scanner.stats()));

app.post(
  '/events/checkin',
  { schema: checkinSchema },
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
