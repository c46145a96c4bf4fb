// The scan logic of bench/baselines/scan-memory.ts served by Express 5 the usual way:
// express.json() for the body, res.json-style answers. In memory, no durability.
import express from 'express';
import { MemoryScanner, TICKETS } from './scan-memory.js';

const scanner = new MemoryScanner(TICKETS);
const app = express();
app.disable('x-powered-by');
app.disable('etag');

app.get('/healthz', (_req, res) => {
  res.json({ status: 'ok' });
});
app.get('/bench/stats', (_req, res) => {
  res.type('application/json').send(scanner.stats());
});

app.post('/events/checkin', express.json({ limit: '1mb' }), (req, res) => {
  const who = scanner.authenticate(req.headers.authorization, req.headers.orgid as string | undefined);
  const a = typeof who === 'string' ? scanner.checkIn((req.body ?? {}) as Record<string, unknown>, who) : who;
  res.status(a.status).type('application/json').send(a.body);
});

const port = Number(process.env.PORT ?? 0);
const host = process.env.HOST ?? '127.0.0.1';
const server = app.listen(port, host);
const stop = () => server.close(() => process.exit(0));
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
