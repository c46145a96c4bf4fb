// The edge's streamed answers (`stream: true` routes), which the AI SSE route is built on:
// back-pressure, the client going away, and errors before the first write.
import { request as httpRequest } from 'node:http';
import { Type } from '@sinclair/typebox';
import t from 'tap';
import { appError } from '../../core/errors.js';
import type { Module } from '../../edge/module.js';
import { route, type ResponseStream } from '../../edge/route.js';
import { startTestApp } from '../helpers/app.js';
import { request } from '../helpers/http.js';

const CHUNK = 64 * 1024;

interface Probe {
  refused: number;
  drains: number;
  written: number;
  closed: boolean;
  writesAfterClose: boolean[];
  stream?: ResponseStream;
}

function streamModule(probe: Probe): Module {
  return {
    name: 'stream-test',
    routes: () => [
      route({
        method: 'GET',
        path: '/t/stream/:n',
        auth: 'none',
        tenant: 'none',
        stream: true,
        tag: 'Test',
        summary: 'n chunks of 64 KiB, written only while the socket takes them',
        params: Type.Object({ n: Type.Integer({ minimum: 0, maximum: 1000 }) }),
        handler: (ctx) => {
          if (ctx.params.n === 0) throw appError('ERR_NOT_FOUND', 'stream');
          const out = ctx.stream!;
          probe.stream = out;
          ctx.type = 'application/octet-stream';
          ctx.responseHeaders['x-chunks'] = String(ctx.params.n);
          out.onClose(() => {
            probe.closed = true;
          });
          let i = 0;
          const pump = () => {
            while (i < ctx.params.n) {
              const ok = out.write(String(i % 10).repeat(CHUNK));
              i++;
              probe.written = i;
              if (!ok) {
                probe.refused++;
                out.onDrain(() => {
                  probe.drains++;
                  pump();
                });
                return;
              }
            }
            out.end();
          };
          pump();
        },
      }),
    ],
  };
}

t.test('stream route - writes stop while the client is behind and resume on drain; every byte arrives in order', async (t) => {
  const probe: Probe = { refused: 0, drains: 0, written: 0, closed: false, writesAfterClose: [] };
  const app = await startTestApp(t, { modules: [streamModule(probe)] });
  const n = 160; // 10 MiB: more than the socket buffers hold while the client is paused
  const body = await new Promise<{ status: number; headers: Record<string, unknown>; data: Buffer }>((resolve, reject) => {
    const req = httpRequest(`${app.url}/t/stream/${n}`, { agent: false }, (res) => {
      res.pause();
      const chunks: Buffer[] = [];
      // Let the server fill the socket while nobody reads.
      setTimeout(() => {
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, data: Buffer.concat(chunks) }));
        res.resume();
      }, 300);
    });
    req.on('error', reject);
    req.end();
  });
  t.equal(body.status, 200);
  t.equal(body.headers['x-chunks'], String(n));
  t.equal(body.data.length, n * CHUNK);
  for (let i = 0; i < n; i++) {
    if (body.data[i * CHUNK] !== 48 + (i % 10) || body.data[(i + 1) * CHUNK - 1] !== 48 + (i % 10)) {
      t.fail(`chunk ${i} out of place`);
      break;
    }
  }
  t.ok(probe.refused > 0, `the writer was told to wait (${probe.refused} times)`);
  t.equal(probe.drains, probe.refused, 'and resumed on each drain');
  t.ok(probe.closed, 'onClose after end');
});

t.test('stream route - a client that goes away closes the stream; nothing is written after', async (t) => {
  const probe: Probe = { refused: 0, drains: 0, written: 0, closed: false, writesAfterClose: [] };
  const app = await startTestApp(t, { modules: [streamModule(probe)] });
  await new Promise<void>((resolve) => {
    const req = httpRequest(`${app.url}/t/stream/1000`, { agent: false }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.on('error', () => undefined);
    req.end();
  });
  for (let i = 0; i < 100 && !probe.closed; i++) await new Promise((r) => setTimeout(r, 10));
  t.ok(probe.closed, 'onClose when the client went away');
  t.ok(probe.written < 1000, 'the writer stopped');
  t.equal(probe.stream!.closed, true);
  t.equal(probe.stream!.write('late'), false, 'a write after the close is refused, not sent');
  probe.stream!.end();
  t.equal(app.edge.inflightCount, 0, 'the exchange is over');
});

t.test('stream route - an error before the first write is the usual envelope', async (t) => {
  const probe: Probe = { refused: 0, drains: 0, written: 0, closed: false, writesAfterClose: [] };
  const app = await startTestApp(t, { modules: [streamModule(probe)] });
  const r = await request(app.url, '/t/stream/0');
  t.equal(r.status, 404);
  t.same(r.body, { statusCode: 404, message: 'stream not found', error: 'Not Found' });
  t.equal((await request(app.url, '/t/stream/x')).status, 400);
});
