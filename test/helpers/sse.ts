// A Server-Sent Events reader for tests: node:http, the answer parsed as it arrives, so a test can
// wait for the next event that matches (the live door view; test/chat/ai.test.ts reads whole ones).
import { request as httpRequest, type ClientRequest, type IncomingMessage } from 'node:http';

export interface SseEvent {
  event: string;
  data: any;
  /** performance.now() when it arrived. */
  at: number;
}

export interface OpenSse {
  status: number;
  type: string;
  /** The error envelope of a refused stream. */
  body: any;
  events: SseEvent[];
  /** The first event from index `from` on that `pred` accepts, waiting up to `ms`. */
  next(pred: (e: SseEvent) => boolean, ms?: number, from?: number): Promise<SseEvent>;
  close(): void;
}

/** Opens a Server-Sent Events answer with node:http and reads it as it comes. */
export function openSse(base: string, path: string, headers: Record<string, string>): Promise<OpenSse> {
  return new Promise((resolve, reject) => {
    const events: SseEvent[] = [];
    const waiters = new Set<() => void>();
    const req: ClientRequest = httpRequest(new URL(path, base), { headers, agent: false }, (res: IncomingMessage) => {
      let buf = '';
      res.setEncoding('utf8');
      const sse: OpenSse = {
        status: res.statusCode!,
        type: String(res.headers['content-type']),
        body: undefined,
        events,
        next(pred, ms = 3000, from = 0) {
          return new Promise((ok, fail) => {
            const look = () => {
              const hit = events.slice(from).find(pred);
              if (!hit) return false;
              clearTimeout(timer);
              waiters.delete(check);
              ok(hit);
              return true;
            };
            const check = () => void look();
            const timer = setTimeout(() => {
              waiters.delete(check);
              fail(new Error(`no such event within ${ms} ms (${events.length} events)`));
            }, ms);
            if (!look()) waiters.add(check);
          });
        },
        close: () => req.destroy(),
      };
      if (res.statusCode !== 200) {
        res.on('data', (c: string) => (buf += c));
        res.on('end', () => {
          sse.body = buf ? JSON.parse(buf) : undefined;
          resolve(sse);
        });
        return;
      }
      res.on('data', (c: string) => {
        buf += c;
        let cut: number;
        while ((cut = buf.indexOf('\n\n')) >= 0) {
          const block = buf.slice(0, cut);
          buf = buf.slice(cut + 2);
          let event = 'message';
          const data: string[] = [];
          for (const line of block.split('\n')) {
            if (line.startsWith('event: ')) event = line.slice(7);
            else if (line.startsWith('data: ')) data.push(line.slice(6));
          }
          if (data.length) events.push({ event, data: JSON.parse(data.join('\n')), at: performance.now() });
        }
        for (const w of [...waiters]) w();
      });
      res.on('error', () => undefined);
      resolve(sse);
    });
    req.on('error', (err) => (events.length ? undefined : reject(err)));
    req.end();
  });
}
