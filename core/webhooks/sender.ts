// One HTTP attempt of a webhook: a POST to the address the URL checks resolved to (url-safety.ts),
// with the host name kept for the Host header and TLS (SNI, certificate check), a deadline over the
// whole exchange, no redirect followed (a 3xx is a failure), and at most `responseCap` bytes of the
// answer read. The URL's credentials, if any, are sent as Basic authorization, never logged.
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { resolveChecked, type UrlPolicy } from './url-safety.js';

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

export async function send(rawUrl: string, headers: Record<string, string>, body: string, s: SendSettings): Promise<Attempt> {
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
    target = await resolveChecked(url, s);
  } catch (err) {
    return done({ status: null, ok: false, error: err instanceof Error ? err.message : String(err), refused: true });
  }
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
        agent: false,
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
