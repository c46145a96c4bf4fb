// Operational routes: liveness, readiness, metrics and the OpenAPI document. None needs a tenant.
import { Type } from '@sinclair/typebox';
import { requestOrigin } from '../request-origin.js';
import { route, type RouteDef } from '../route.js';

export interface SystemHooks {
  ready(): boolean;
  metrics(): Promise<{ contentType: string; body: string }>;
  openapi(): unknown;
}

export function systemRoutes(hooks: SystemHooks): RouteDef[] {
  const openapiRoute = (path: string) =>
    route({
      method: 'GET',
      path,
      auth: 'none',
      tenant: 'none',
      tag: 'Reference',
      summary: 'The complete OpenAPI 3 document, generated from the live route table',
      handler: (ctx) => {
        ctx.type = 'application/json';
        // `servers` names the address the request came in on; the rest is the same for every
        // caller, so the text is kept per origin (a few: Host is the client's to choose).
        const origin = requestOrigin(ctx.headers);
        let text = byOrigin.get(origin);
        if (text === undefined) {
          const doc = hooks.openapi() as Record<string, unknown>;
          text = JSON.stringify({ ...doc, servers: [{ url: origin, description: 'The server this document was fetched from' }] });
          if (byOrigin.size >= 16) byOrigin.clear();
          byOrigin.set(origin, text);
        }
        return text;
      },
    });
  const byOrigin = new Map<string, string>();
  return [
    route({
      method: 'GET',
      path: '/healthz',
      auth: 'none',
      tenant: 'none',
      tag: 'Operations',
      summary: 'Liveness: the process is up',
      response: Type.Object({ status: Type.Literal('ok') }),
      handler: () => ({ status: 'ok' as const }),
    }),
    route({
      method: 'GET',
      path: '/readyz',
      auth: 'none',
      tenant: 'none',
      tag: 'Operations',
      summary: 'Readiness: the store is open, the query workers are started and the node accepts traffic',
      description:
        'Answers 200 `{"status":"ready"}` once the node listens and every query worker has started with its job modules loaded, so the first query sent after it does not wait for a worker to start; 503 with `Retry-After` before then and while shutting down.',
      response: Type.Object({ status: Type.String() }),
      errors: [503],
      handler: (ctx) => {
        if (hooks.ready()) return { status: 'ready' };
        ctx.status = 503;
        ctx.responseHeaders['retry-after'] = '1';
        return { statusCode: 503, message: 'not ready', error: 'Service Unavailable' };
      },
    }),
    route({
      method: 'GET',
      path: '/metrics',
      auth: 'none',
      tenant: 'none',
      tag: 'Operations',
      summary: 'Prometheus metrics: requests and latency per route, live actors, mailbox depth, store size',
      handler: async (ctx) => {
        const m = await hooks.metrics();
        ctx.type = m.contentType;
        return m.body;
      },
    }),
    openapiRoute('/openapi.json'),
    openapiRoute('/documentation-json'),
  ];
}
