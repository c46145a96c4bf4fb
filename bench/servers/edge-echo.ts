// The edge under test: the real startApp with one module whose route echoes a small JSON body.
// It goes through everything a public route does (request id, header copy, content-type check,
// JSON parse, ajv body validation, fast-json-stringify, metrics, access log when enabled), and
// touches no actor or store, so the bench measures the edge alone. Configured like production,
// from the environment (the harness sets PORT, HOST, DATA_DIR and LOG_LEVEL).
import { Type } from '@sinclair/typebox';
import { startApp } from '../../edge/app.js';
import type { Module } from '../../edge/deps.js';
import { route } from '../../edge/route.js';

const EchoBody = Type.Object({
  name: Type.String({ maxLength: 200 }),
  qty: Type.Integer({ minimum: 0 }),
  tags: Type.Array(Type.String({ maxLength: 50 }), { maxItems: 20 }),
});

const EchoAnswer = Type.Object({
  ok: Type.Boolean(),
  name: Type.String(),
  qty: Type.Integer(),
  tags: Type.Array(Type.String()),
});

const benchModule: Module = {
  name: 'bench-echo',
  routes: () => [
    route({
      method: 'POST',
      path: '/bench/echo',
      auth: 'none',
      tenant: 'none',
      tag: 'Bench',
      summary: 'Echoes a small JSON body (benchmark only)',
      body: EchoBody,
      response: EchoAnswer,
      handler: ({ body }) => ({ ok: true, name: body.name, qty: body.qty, tags: body.tags }),
    }),
  ],
};

const app = await startApp({ modules: [benchModule] }).catch((err: unknown) => {
  process.stderr.write(`edge-echo: start-up failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});

let stopping = false;
const stop = () => {
  if (stopping) return;
  stopping = true;
  app.close().then(
    () => process.exit(0),
    (err: unknown) => {
      process.stderr.write(`edge-echo: shutdown failed: ${String(err)}\n`);
      process.exit(1);
    },
  );
};
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
