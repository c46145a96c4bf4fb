// The edge under test: the real startApp with one module whose route echoes a small JSON body.
// It goes through everything a public route does (request id, header copy, content-type check,
// JSON parse, ajv body validation, fast-json-stringify, metrics, access log when enabled), and
// touches no actor or store, so the bench measures the edge alone. Configured like production,
// from the environment (the harness sets PORT, HOST, DATA_DIR and LOG_LEVEL).
import { Type } from '@sinclair/typebox';
import type { Module } from '../../edge/module.js';
import { route } from '../../edge/route.js';
import { serve } from './serve.js';

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

await serve('edge-echo', { modules: [benchModule] });
