// One HTTP attempt of a webhook: a POST to the address the URL checks resolved to (url-safety.ts),
// with the host name kept for the Host header and TLS (SNI, certificate check), a deadline over the
// whole exchange, no redirect followed (a 3xx is a failure), and at most `responseCap` bytes of the
// answer read. The URL's credentials, if any, are sent as Basic authorization, never logged.
//
// Connections are kept alive per endpoint origin and checked address (Connections): a busy
// endpoint's events do not each pay a TCP (and TLS) handshake. A host's checked addresses are
// reused for RESOLVED_TTL_MS, then resolved and checked again. Requests go through undici's pools:
// node:http's client cost about three times the CPU per request (90 against 30 µs on loopback),
// and a node draining a backlog spends most of a delivery there.
import type { LookupFunction } from 'node:net';
import { Pool } from 'undici';
import { resolveChecked, type Resolved, type UrlPolicy } from './url-safety.js';

const RESOLVED_TTL_MS = 10_000;
const MAX_POOLS = 1000;
const IDLE_SOCKET_MS = 30_000;

/** Kept-alive connections and checked resolutions, per node. */
export class Connections {
  private readonly pools = new Map<string, Pool>();
  private readonly resolved = new Map<string, { r: Resolved; at: number }>();

  /** The pool of `url`'s origin at the checked address `target`: at most `max` connections. */
  pool(url: URL, target: Resolved, max: number): Pool {
    const key = `${url.protocol}//${url.host}|${target.address}`;
    let p = this.pools.get(key);
    if (!p) {
      if (this.pools.size >= MAX_POOLS) {
        const [oldest, pool] = this.pools.entries().next().value!;
        void pool.destroy().catch(() => undefined);
        this.pools.delete(oldest);
      }
      // Every connection of the pool goes to the checked address, whatever DNS answers meanwhile.
      const pinned: LookupFunction = (_host, opts, cb) => {
        if ((opts as { all?: boolean }).all) (cb as unknown as (e: null, a: Array<{ address: string; family: number }>) => void)(null, [{ address: target.address, family: target.family }]);
        else cb(null, target.address, target.family);
      };
      p = new Pool(url.origin, { connections: max, pipelining: 1, keepAliveTimeout: IDLE_SOCKET_MS, keepAliveMaxTimeout: IDLE_SOCKET_MS, connect: { lookup: pinned } });
      this.pools.set(key, p);
    }
    return p;
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
    for (const p of this.pools.values()) void p.destroy().catch(() => undefined);
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
  const h: Record<string, string> = { ...headers, 'content-type': 'application/json', 'user-agent': 'business-platform-webhooks/1' };
  if (url.username || url.password) h.authorization = 'Basic ' + Buffer.from(`${decodeURIComponent(url.username)}:${decodeURIComponent(url.password)}`).toString('base64');
  const deadline = new AbortController();
  const timer = setTimeout(() => deadline.abort(), s.timeoutMs);
  try {
    const res = await conns.pool(url, target, perEndpoint).request({
      path: url.pathname + url.search,
      method: 'POST',
      headers: h,
      body,
      signal: deadline.signal,
      headersTimeout: s.timeoutMs,
      bodyTimeout: s.timeoutMs,
    });
    const status = res.statusCode;
    const ok = status >= 200 && status < 300;
    // The answer is not used: past the cap the connection is dropped and the status stands; an
    // answer still coming at the deadline is no answer.
    try {
      await res.body.dump({ limit: s.responseCap, signal: deadline.signal });
    } catch (err) {
      if (deadline.signal.aborted) throw err;
    }
    return done({ status, ok, ...(ok ? {} : { error: `answered ${status}` }) });
  } catch (err) {
    const cause = err instanceof Error && err.cause instanceof Error ? err.cause.message : undefined;
    const error = deadline.signal.aborted ? `no answer within ${s.timeoutMs} ms` : (cause ?? (err instanceof Error ? err.message : String(err)));
    return done({ status: null, ok: false, error });
  } finally {
    clearTimeout(timer);
  }
}
