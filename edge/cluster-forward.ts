// Cluster mode on the HTTP edge: a request for a tenant this node does not own is sent to the
// owner over NATS (core/cluster/node.ts) and the owner's answer is relayed unchanged: status,
// headers and body. The request travels with the route it matched here and the caller's address;
// the owner serves it through the very same pipeline as a request of its own (validation, auth,
// rate limits, budgets, handler: edge/http-server.ts serveForwarded), never through HTTP again, so
// it is never forwarded twice and no header a client sends can pass for a forwarded request.
// Requests that need no tenant are always answered where they arrive.
import type { ClusterNode, ForwardedRequest, ForwardedResponse } from '../core/cluster/node.js';
import type { RouteDef } from './route.js';

export type { ForwardedRequest, ForwardedResponse } from '../core/cluster/node.js';

/** Request headers that belong to one connection, not to the request. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'transfer-encoding',
  'content-length',
  'host',
  'upgrade',
  'te',
  'trailer',
  'expect',
  'proxy-authorization',
  'proxy-connection',
]);

/** The route key a forwarded request names: the owner looks its route up by it. */
export function routeKey(def: Pick<RouteDef, 'method' | 'path'>): string {
  return `${def.method} ${def.path}`;
}

/** What the edge consults after it resolved a request's tenant (edge/http-server.ts). */
export interface EdgeForwarder {
  /** This node serves the tenant now. */
  owns(tenant: string): boolean;
  /** The owner's answer; undefined when this node turned out to be the owner (serve it here). */
  forward(
    tenant: string,
    def: RouteDef,
    url: string,
    query: string,
    params: Record<string, string>,
    headers: Readonly<Record<string, string>>,
    ip: string,
    body: Buffer | undefined,
  ): Promise<ForwardedResponse | undefined>;
}

export class ClusterForwarder implements EdgeForwarder {
  constructor(private readonly node: ClusterNode) {}

  owns(tenant: string): boolean {
    return this.node.owns(tenant);
  }

  forward(
    tenant: string,
    def: RouteDef,
    url: string,
    query: string,
    params: Record<string, string>,
    headers: Readonly<Record<string, string>>,
    ip: string,
    body: Buffer | undefined,
  ): Promise<ForwardedResponse | undefined> {
    const out: Record<string, string> = {};
    for (const k in headers) if (!HOP_BY_HOP.has(k)) out[k] = headers[k];
    const req: ForwardedRequest = { route: routeKey(def), method: def.method, url, query, params, headers: out, ip };
    if (body && body.length > 0) req.body = body;
    return this.node.forwardHttp(tenant, req);
  }

  /** The owner's side: serves requests forwarded here with `serve` (the edge's pipeline). */
  serve(serve: (req: ForwardedRequest) => Promise<ForwardedResponse>): void {
    this.node.serveHttp(serve);
  }
}
