// A small HTTP client for tests on node:http with no keep-alive, so a closed server never waits on
// idle client sockets, and so a test can send anything (bad JSON, odd headers, raw bytes).
import { request as httpRequest } from 'node:http';

export interface Reply<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: T;
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or Buffer is sent as is. */
  body?: unknown;
  timeoutMs?: number;
}

export function request<T = any>(baseUrl: string, path: string, opts: RequestOptions = {}): Promise<Reply<T>> {
  const url = new URL(path, baseUrl);
  const headers: Record<string, string> = { ...opts.headers };
  let payload: Buffer | undefined;
  if (opts.body !== undefined) {
    if (Buffer.isBuffer(opts.body)) payload = opts.body;
    else if (typeof opts.body === 'string') payload = Buffer.from(opts.body);
    else {
      payload = Buffer.from(JSON.stringify(opts.body));
      headers['content-type'] ??= 'application/json';
    }
    headers['content-length'] = String(payload.length);
  }
  return new Promise((resolve, reject) => {
    const req = httpRequest(
      url,
      { method: opts.method ?? (payload ? 'POST' : 'GET'), headers, agent: false, timeout: opts.timeoutMs ?? 30_000 },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let body: any;
          try {
            body = text ? JSON.parse(text) : undefined;
          } catch {
            body = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`request to ${path} timed out`)));
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}

/** A client bound to one server, with default headers (orgid, authorization). */
export function client(baseUrl: string, defaults: Record<string, string> = {}) {
  const call = <T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) =>
    request<T>(baseUrl, path, { method, body, headers: { ...defaults, ...headers } });
  return {
    get: <T = any>(path: string, headers?: Record<string, string>) => call<T>('GET', path, undefined, headers),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>('POST', path, body ?? {}, headers),
    put: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => call<T>('PUT', path, body ?? {}, headers),
    del: <T = any>(path: string, headers?: Record<string, string>) => call<T>('DELETE', path, undefined, headers),
  };
}
