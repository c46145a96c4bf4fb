// One HTTP attempt of a webhook: a POST to the address the URL checks resolved to (url-safety.ts),
// with the host name kept for the Host header and TLS (SNI, certificate check), a deadline over the
// whole exchange, no redirect followed (a 3xx is a failure), and at most `responseCap` bytes of the
// answer read. The URL's credentials, if any, are sent as Basic authorization, never logged.
//
// Connections are kept alive per endpoint origin and checked address (Connections): a busy
// endpoint's events do not each pay a TCP (and TLS) handshake. A host's checked addresses are
// reused for RESOLVED_TTL_MS, then resolved and checked again.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveChecked, type Resolved, type UrlPolicy } from './url-safety.js';

const RESOLVED_TTL_MS = 10_000;
const MAX_POOLS = 1000;
const IDLE_SOCKET_MS = 30_000;

/** Kept-alive connections and checked resolutions, per node. */
export class Connections {
  private readonly pools = new Map<string, http.Agent>();
  private readonly resolved = new Map<string, { r: Resolved; at: number }>();

  agent(key: string, secure: boolean, max: number): http.Agent {
    let a = this.pools.get(key);
    if (!a) {
      if (this.pools.size >= MAX_POOLS) {
        const [oldest, pool] = this.pools.entries().next().value!;
        pool.destroy();
        this.pools.delete(oldest);
      }
      const o = { keepAlive: true, maxSockets: max, maxFreeSockets: max, timeout: IDLE_SOCKET_MS };
      a = secure ? new https.Agent(o) : new http.Agent(o);
      this.pools.set(key, a);
    }
    return a;
  }

  async resolve(url: URL, policy: UrlPolicy): Promise<Resolved> {
    const k = url.hostname;
    const hit = this.resolved.get(k);
    const now = Date.now();
    if (hit && now - hit.at < RESOLVED_TTL_MS) return hit.r;
    const r = await resolveChecked(url, policy);
    if (this.resolved.size >= MAX_POOLS) this.resolved.clear();
    this.resolved.set(k, { r, at: now });
    return r;
  }

  /** Set once the node stops: no new connection is opened. */
  closed = false;

  close(): void {
    this.closed = true;
    for (const a of this.pools.values()) a.destroy();
    this.pools.clear();
  }
}

export interface SendSettings extends UrlPolicy {
  timeoutMs: number;
  responseCap: number;
}

export interface Attempt {
  /** The answer's status; null when none came (refused address, connection error, timeout). */
  status: number | null;
  ok: boolean;
  durationMs: number;
  error?: string;
  /** An address refused by the URL rules: not worth retrying soon, but the endpoint may move. */
  refused?: boolean;
}

export async function send(rawUrl: string, headers: Record<string, string>, body: string, s: SendSettings, conns: Connections, perEndpoint: number): Promise<Attempt> {
  const started = performance.now();
  const done = (a: Omit<Attempt, 'durationMs'>): Attempt => ({ ...a, durationMs: Math.round(performance.now() - started) });
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return done({ status: null, ok: false, error: 'the endpoint URL is not valid', refused: true });
  }
  let target;
  try {
    target = await conns.resolve(url, s);
  } catch (err) {
    return done({ status: null, ok: false, error: err instanceof Error ? err.message : String(err), refused: true });
  }
  if (conns.closed) return done({ status: null, ok: false, error: 'the node is stopping' });
  const pinned: LookupFunction = (_host, opts, cb) => {
    if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
    else cb(null, target.address, target.family);
  };
  const h: Record<string, string> = { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), 'user-agent': 'business-platform-webhooks/1' };
  if (url.username || url.password) h.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  const lib = url.protocol === 'https:' ? https : http;
  return new Promise<Attempt>((resolve) => {
    let settled = false;
    const finish = (a: Omit<Attempt, 'durationMs'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(done(a));
    };
    const req = lib.request(
      {
        protocol: url.protocol,
        hostname: url.hostname.replace(/^\[|\]$/g, ''),
        port: url.port || undefined,
        path: url.pathname + url.search,
        method: 'POST',
        headers: h,
        lookup: pinned,
        agent: conns.agent(`${url.protocol}//${url.host}|${target.address}`, url.protocol === 'https:', perEndpoint),
      },
      (res) => {
        const status = res.statusCode ?? 0;
        let read = 0;
        res.on('data', (chunk: Buffer) => {
          read += chunk.length;
          // The answer is not used: past the cap the connection is dropped, the status stands.
          if (read > s.responseCap) {
            res.destroy();
            finish({ status, ok: status >= 200 && status < 300 });
          }
        });
        res.on('end', () => finish({ status, ok: status >= 200 && status < 300, ...(status >= 200 && status < 300 ? {} : { error: `answered ${status}` }) }));
        res.on('error', () => finish({ status, ok: status >= 200 && status < 300 }));
      },
    );
    const timer = setTimeout(() => {
      finish({ status: null, ok: false, error: `no answer within ${s.timeoutMs} ms` });
      req.destroy();
    }, s.timeoutMs);
    req.on('error', (err) => finish({ status: null, ok: false, error: err.message }));
    req.end(body);
  });
}
