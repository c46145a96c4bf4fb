// GET /ai/stream/:streamId: an AI answer as Server-Sent Events (spec: Events → Streaming).
//
// Wire format: `retry:` first, then one event per chunk (`id: <index>` and one `data:` line with
// `{"index","chunk"}` as JSON, so a chunk's own newlines never break the framing), and
// `event: done` with `{streamId, chatId, messageId?, seq?, handover?}` at the end (`event: error`
// if the answer failed). A `: heartbeat` comment goes out every `chat.sseHeartbeatMs` (15 s) so
// proxies keep the connection. Chunks are written only while the socket takes them (back-pressure:
// the rest waits for the drain). A reader that comes late gets the whole answer from the start, or
// from after `Last-Event-ID`.
//
// Auth: a bearer token, or `?token=` for EventSource clients that cannot set headers; the org is
// the token's (an `orgid` header, if sent, must match). A customer reads only the answers in
// their own chats; staff read any of their tenant. Anything else is 404, like an unknown stream.
import { Type } from '@sinclair/typebox';
import type { Principal } from '../../../core/auth/tokens.js';
import { AppError, appError } from '../../../core/errors.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import type { AiStream } from '../../../actors/chat/index.js';
import type { ChatFeature } from '../../sockets/chat-feature.js';
import { TAG_AI } from './common.js';

function canRead(s: AiStream, p: Principal): boolean {
  if (s.audience.tenant !== p.org) return false;
  if (p.kind === 'staff' && p.roles.includes('User')) return true;
  return !s.audience.staffOnly && p.kind === 'customer' && s.audience.customerId === p.sub;
}

export function aiStreamRoutes(f: ChatFeature, deps: AppDeps): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/ai/stream/:streamId',
      auth: 'none',
      tenant: 'optional',
      stream: true,
      tag: TAG_AI,
      summary: 'An AI answer as Server-Sent Events, word by word, to its `done` event',
      description:
        'The `streamId` comes with the `ai-stream` / `chat-stream` socket events (and the ack of `assist-ai`). Authenticate with a bearer token or `?token=<access token>`. Events: one `data:` line per chunk `{"index","chunk"}`, then `event: done`; a `: heartbeat` comment every 15 s. Send `Last-Event-ID` to resume after a chunk. In a cluster any node serves the stream, whichever node made the answer.',
      params: Type.Object({ streamId: Type.String({ pattern: '^[0-9a-f]{24}$' }) }),
      query: Type.Object({ token: Type.Optional(Type.String({ minLength: 1, maxLength: 8192 })) }),
      errors: [401, 404],
      handler: (ctx) => {
        // The route is public to the edge (EventSource sends no headers), so the token is checked here.
        let principal = ctx.principal;
        if (!principal) {
          const token = /^Bearer\s+(\S+)\s*$/i.exec(ctx.headers.authorization ?? '')?.[1] ?? ctx.query.token;
          if (token) principal = deps.tokens.verifyAccess(token);
        }
        if (!principal) throw new AppError('ERR_UNAUTHENTICATED', ['send a bearer token or ?token=']);
        if (ctx.tenant && principal.org !== ctx.tenant) throw new AppError('ERR_WRONG_ORG', [ctx.tenant]);
        const s = f.api.streams.get(ctx.params.streamId);
        if (!s || !canRead(s, principal)) throw appError('ERR_NOT_FOUND', 'stream');

        const out = ctx.stream!;
        ctx.type = 'text/event-stream; charset=utf-8';
        ctx.responseHeaders['cache-control'] = 'no-cache, no-transform';
        ctx.responseHeaders['x-accel-buffering'] = 'no';
        const lastId = Number(ctx.headers['last-event-id']);
        let next = Number.isInteger(lastId) && lastId >= 0 ? lastId + 1 : 0;
        let waiting = false;

        const pump = () => {
          waiting = false;
          while (next < s.chunks.length) {
            const ok = out.write(`id: ${next}\ndata: ${JSON.stringify({ index: next, chunk: s.chunks[next] })}\n\n`);
            next++;
            if (!ok) {
              // The socket is full: continue once it drained.
              waiting = true;
              out.onDrain(pump);
              return;
            }
          }
          if (s.done) {
            const end = s.end ?? {};
            const ev = end.error ? 'error' : 'done';
            out.end(`event: ${ev}\ndata: ${JSON.stringify({ streamId: s.id, chatId: s.chatId, ...end })}\n\n`);
          }
        };
        const onChange = () => {
          if (!waiting && !out.closed) pump();
        };
        const heartbeat = setInterval(() => {
          if (!out.closed && !waiting) out.write(': heartbeat\n\n');
        }, deps.config.chat.sseHeartbeatMs);
        heartbeat.unref();
        s.listeners.add(onChange);
        out.onClose(() => {
          clearInterval(heartbeat);
          s.listeners.delete(onChange);
        });
        out.write('retry: 2000\n\n');
        pump();
      },
    }),
  ];
}
