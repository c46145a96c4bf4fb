// Client-to-server events as data: a schema and a handler per event name. Every payload is
// validated before its handler runs; the handler's result (or the error envelope as `{error}`)
// goes back through the event's ack, and without an ack a refusal is an `error` event. A bad
// event never throws out of the socket, never disconnects it, and never touches other sockets.
import type { Socket } from 'socket.io';
import { assertDocument, type DocumentLimits } from '../../core/document-limits.js';
import { appError, toEnvelope } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { SocketUser } from './handshake.js';
import type { Validator } from './schemas.js';

export interface EventSpec<P = any> {
  /** Only staff tokens (role User) may send it. */
  agentOnly?: boolean;
  customerOnly?: boolean;
  handler(payload: P): unknown | Promise<unknown>;
  /** Where the result goes when the client sent no ack (default: nowhere). */
  noAck?(result: unknown): void;
}

type Ack = (reply: unknown) => void;

export interface BindOptions {
  user: SocketUser;
  validators: Record<string, Validator>;
  events: Record<string, EventSpec>;
  /** Handlers wait for it (the connection's set-up: session, subscriptions). */
  ready: Promise<unknown>;
  logger: Logger;
  /** Told about every event the client sends (idle tracking). */
  onActivity?(): void;
  /** Bounds every payload is checked against before its schema (JSON_MAX_DEPTH and the rest). */
  documentLimits: DocumentLimits;
}

export function errorReply(err: unknown): { statusCode: number; message: string | string[]; error: string } {
  return toEnvelope(err);
}

export function bindEvents(socket: Socket, o: BindOptions): void {
  const refuse = (event: string, err: unknown, ack: Ack | undefined) => {
    const env = errorReply(err);
    if (env.statusCode >= 500) o.logger.error({ err, event, tenant: o.user.tenant }, 'socket event failed');
    if (ack) ack({ error: env });
    else socket.emit('error', { event, ...env });
  };

  for (const [name, spec] of Object.entries(o.events)) {
    const validate = o.validators[name];
    socket.on(name, (...args: unknown[]) => {
      const ack = typeof args[args.length - 1] === 'function' ? (args.pop() as Ack) : undefined;
      const payload = args.length === 0 || args[0] === undefined || args[0] === null ? {} : args[0];
      o.onActivity?.();
      void (async () => {
        try {
          await o.ready;
          if (spec.agentOnly && o.user.role !== 'agent') throw appError('ERR_FORBIDDEN', `${name} needs a staff token`);
          if (spec.customerOnly && o.user.role !== 'customer') throw appError('ERR_FORBIDDEN', `${name} is for customers`);
          assertDocument(payload, o.documentLimits, 'payload');
          validate(payload);
          const result = await spec.handler(payload);
          if (ack) ack(result ?? { ok: true });
          else spec.noAck?.(result);
        } catch (err) {
          refuse(name, err, ack);
        }
      })();
    });
  }

  socket.onAny((event: string, ...args: unknown[]) => {
    if (Object.hasOwn(o.events, event)) return;
    const ack = typeof args[args.length - 1] === 'function' ? (args[args.length - 1] as Ack) : undefined;
    refuse(event, appError('ERR_BAD_REQUEST', `unknown event "${event}"`), ack);
  });
}
