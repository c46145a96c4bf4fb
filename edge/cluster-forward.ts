// Cluster mode on the HTTP edge: a request for a tenant this node does not own is sent to the
// owner over NATS (core/cluster/node.ts) and the owner's answer is relayed unchanged: status,
// headers and body. The owner replays the request on its own loopback port, through the very same
// edge (validation, auth, rate limits, handler), with a hop header that proves it came from a node
// of this cluster, so it is served there and never forwarded again. Requests that need no tenant
// are always answered where they arrive.
import { createHash } from 'node:crypto';
import { Agent, request as httpRequest } from 'node:http';
import type { ClusterNode, ForwardedRequest, ForwardedResponse } from '../core/cluster/node.js';

export type { ForwardedResponse } from '../core/cluster/node.js';

/** Marks a request replayed by the owner; its value proves the sender knows the JWT secret. */
export const HOP_HEADER = 'x-cluster-hop';
/** The caller's address as the first node saw it (rate limits per address). */
export const CLIENT_IP_HEADER = 'x-cluster-client-ip';

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
  HOP_HEADER,
  CLIENT_IP_HEADER,
]);
/** Answer headers the relaying edge writes itself (uWS adds its own Date and length). */
const ANSWER_SKIP = new Set(['connection', 'keep-alive', 'transfer-encoding', 'content-length', 'date', 'uwebsockets']);

/** The hop header's value: derived from the JWT secret every node of a cluster shares. */
export function hopToken(jwtSecret: string): string {
  return createHash('sha256').update('cluster-hop\u0000').update(jwtSecret).digest('base64url');
}

/** What the edge consults after it resolved a request's tenant (edge/http-server.ts). */
export interface EdgeForwarder {
  /** This node serves the tenant now. */
  owns(tenant: string): boolean;
  /** The request was forwarded here by another node of the cluster. */
  isForwarded(headers: Readonly<Record<string, string>>): boolean;
  /** The original caller's address of a forwarded request. */
  clientIp(headers: Readonly<Record<string, string>>, ip: string): string;
  /** The owner's answer; undefined when this node turned out to be the owner (serve it here). */
  forward(
    tenant: string,
    method: string,
    url: string,
    query: string,
    headers: Readonly<Record<string, string>>,
    ip: string,
    body: Buffer | undefined,
  ): Promise<ForwardedResponse | undefined>;
}

export class ClusterForwarder implements EdgeForwarder {
  private readonly token: string;

  constructor(
    private readonly node: ClusterNode,
    jwtSecret: string,
  ) {
    this.token = hopToken(jwtSecret);
  }

  owns(tenant: string): boolean {
    return this.node.owns(tenant);
  }

  isForwarded(headers: Readonly<Record<string, string>>): boolean {
    return headers[HOP_HEADER] === this.token;
  }

  clientIp(headers: Readonly<Record<string, string>>, ip: string): string {
    return headers[CLIENT_IP_HEADER] || ip;
  }

  forward(
    tenant: string,
    method: string,
    url: string,
    query: string,
    headers: Readonly<Record<string, string>>,
    ip: string,
    body: Buffer | undefined,
  ): Promise<ForwardedResponse | undefined> {
    const out: Record<string, string> = {};
    for (const k in headers) if (!HOP_BY_HOP.has(k)) out[k] = headers[k];
    out[CLIENT_IP_HEADER] = ip;
    return this.node.forwardHttp(tenant, { method, url, query, headers: out, body });
  }

  /** The owner's side: replays forwarded requests on this node's own port. */
  serve(port: number): void {
    this.node.serveHttp(loopback(port, this.token));
  }
}

/** Sends a forwarded request to 127.0.0.1:`port` with the hop header and collects the answer. */
export function loopback(port: number, token: string): (req: ForwardedRequest) => Promise<ForwardedResponse> {
  const agent = new Agent({ keepAlive: true, maxSockets: 256 });
  return (fr) =>
    new Promise<ForwardedResponse>((resolve, reject) => {
      const headers: Record<string, string> = { ...fr.headers, [HOP_HEADER]: token };
      const body = fr.body && fr.body.length > 0 ? fr.body : undefined;
      if (body) headers['content-length'] = String(body.length);
      const req = httpRequest(
        { host: '127.0.0.1', port, method: fr.method, path: fr.query ? `${fr.url}?${fr.query}` : fr.url, headers, agent },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const pairs: Array<[string, string]> = [];
            const raw = res.rawHeaders;
            for (let i = 0; i + 1 < raw.length; i += 2) {
              const k = raw[i].toLowerCase();
              if (!ANSWER_SKIP.has(k)) pairs.push([k, raw[i + 1]]);
            }
            resolve({ status: res.statusCode ?? 502, headers: pairs, body: Buffer.concat(chunks) });
          });
        },
      );
      req.on('error', reject);
      req.end(body);
    });
}
