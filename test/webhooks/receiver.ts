// A webhook receiver for the tests: a real node:http server on a loopback port 0 that records
// every request and answers as the test says (a status, or never: a hanging endpoint).
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

type Teardown = { teardown(fn: () => unknown): void };

export interface Received {
  headers: Record<string, string>;
  body: string;
  json: any;
  at: number;
}

export interface Receiver {
  url: string;
  got: Received[];
  /** The answer to the next request: a status, or 'hang' (no answer until the server closes). */
  answer: (r: Received) => number | 'hang';
  /** Where a 3xx answer points. */
  location?: string;
  /** Resolves once `n` requests arrived (fails after `ms`). */
  waitFor(n: number, ms?: number): Promise<Received[]>;
  /** Answers every request left hanging so far with `status`. */
  release(status?: number): void;
}

export async function receiver(t: Teardown, answer: Receiver['answer'] = () => 200): Promise<Receiver> {
  const hanging = new Set<ServerResponse>();
  const waiters: Array<() => void> = [];
  const rec: Receiver = {
    url: '',
    got: [],
    answer,
    waitFor(n, ms = 10_000) {
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`${rec.got.length} webhook requests of ${n} arrived in ${ms} ms`)), ms);
        const check = () => {
          if (rec.got.length >= n) {
            clearTimeout(timer);
            resolve(rec.got.slice(0, n));
          } else waiters.push(check);
        };
        check();
      });
    },
    release(status = 200) {
      for (const res of hanging) res.writeHead(status).end('ok');
      hanging.clear();
    },
  };
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString();
      const r: Received = { headers: req.headers as Record<string, string>, body, json: JSON.parse(body), at: Date.now() };
      rec.got.push(r);
      for (const w of waiters.splice(0)) w();
      const a = rec.answer(r);
      if (a === 'hang') hanging.add(res);
      else res.writeHead(a, a >= 300 && a < 400 && rec.location ? { location: rec.location } : {}).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  rec.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  t.teardown(
    () =>
      new Promise<void>((r) => {
        for (const res of hanging) res.destroy();
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return rec;
}

/** Verifies a received webhook as a receiver would; throws when the signature does not match. */
export function verify(secret: string, r: Received): unknown {
  return new Webhook(secret).verify(r.body, { 'webhook-id': r.headers['webhook-id'], 'webhook-timestamp': r.headers['webhook-timestamp'], 'webhook-signature': r.headers['webhook-signature'] });
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Webhook settings for a test node: loopback allowed, quick retries. */
export function testWebhookConfig(over: Record<string, unknown> = {}): Record<string, unknown> {
  // busyPercent 100: deliveries never yield to a busy loop (a test server shares the machine with
  // others); the test of yielding sets its own.
  return { webhooks: { allowHosts: ['127.0.0.1'], retryBaseMs: 50, retryMaxMs: 200, pollMs: 50, busyPercent: 100, ...over } };
}
