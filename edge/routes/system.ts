// Operational routes: liveness, readiness, metrics and the OpenAPI document. None needs a tenant.
import { Type } from '@sinclair/typebox';
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
        return cached ?? (cached = JSON.stringify(hooks.openapi()));
      },
    });
  let cached: string | undefined;
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
      summary: 'Readiness: the store is open and the node accepts traffic',
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
