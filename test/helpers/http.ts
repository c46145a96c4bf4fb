// A small HTTP client for tests on node:http with no keep-alive, so a closed server never waits on
// idle client sockets, and so a test can send anything (bad JSON, odd headers, raw bytes).
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';

export interface Reply<T = any> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The parsed JSON body, or undefined when the body is not JSON. */
  body: T;
  /** rawRequest only: the header lines as sent, repeats included. */
  headerLines?: string[];
}

export interface RequestOptions {
  method?: string;
  headers?: Record<string, string>;
  /** An object is sent as JSON; a string or Buffer is sent as is. */
  body?: unknown;
  timeoutMs?: number;
  /** The loopback address to send from (127.0.0.0/8): the server sees it as the caller's address. */
  localAddress?: string;
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
      { method: opts.method ?? (payload ? 'POST' : 'GET'), headers, agent: false, timeout: opts.timeoutMs ?? 30_000, ...(opts.localAddress ? { localAddress: opts.localAddress } : {}) },
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

/**
 * Sends one request as raw bytes over TCP (Connection: close) and parses the reply, for header
 * values node:http refuses to send (UTF-8 beyond latin1, control characters).
 */
export function rawRequest<T = any>(
  baseUrl: string,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: Buffer | string,
  timeoutMs = 10_000,
): Promise<Reply<T>> {
  const url = new URL(baseUrl);
  const payload = body === undefined ? undefined : Buffer.isBuffer(body) ? body : Buffer.from(body);
  const lines = [`${method} ${path} HTTP/1.1`, `host: ${url.host}`, 'connection: close'];
  for (const [k, v] of Object.entries(headers)) lines.push(`${k}: ${v}`);
  if (payload) lines.push(`content-length: ${payload.length}`);
  const head = Buffer.from(lines.join('\r\n') + '\r\n\r\n', 'utf8');
  return new Promise((resolve, reject) => {
    const socket = connect(Number(url.port), url.hostname);
    const chunks: Buffer[] = [];
    const timer = setTimeout(() => socket.destroy(new Error(`raw request to ${path} timed out`)), timeoutMs);
    socket.on('connect', () => socket.end(payload ? Buffer.concat([head, payload]) : head));
    socket.on('data', (c: Buffer) => chunks.push(c));
    socket.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    socket.on('close', () => {
      clearTimeout(timer);
      const all = Buffer.concat(chunks).toString('utf8');
      const split = all.indexOf('\r\n\r\n');
      const headLines = (split < 0 ? all : all.slice(0, split)).split('\r\n');
      const status = Number(headLines[0]?.split(' ')[1] ?? 0);
      const replyHeaders: Record<string, string> = {};
      for (const line of headLines.slice(1)) {
        const i = line.indexOf(':');
        if (i > 0) replyHeaders[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
      }
      let text = split < 0 ? '' : all.slice(split + 4);
      if (/chunked/i.test(replyHeaders['transfer-encoding'] ?? '')) text = dechunk(text);
      let parsed: any;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        parsed = undefined;
      }
      resolve({ status, headers: replyHeaders, text, body: parsed, headerLines: headLines.slice(1) });
    });
  });
}

function dechunk(s: string): string {
  let out = '';
  let rest = s;
  for (;;) {
    const nl = rest.indexOf('\r\n');
    if (nl < 0) break;
    const size = parseInt(rest.slice(0, nl), 16);
    if (!size) break;
    out += rest.slice(nl + 2, nl + 2 + size);
    rest = rest.slice(nl + 2 + size + 2);
  }
  return out;
}
