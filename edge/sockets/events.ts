// Client-to-server events as data: a schema and a handler per event name. Every payload is
// validated before its handler runs; the handler's result (or the error envelope as `{error}`)
// goes back through the event's ack, and without an ack a refusal is an `error` event. A bad
// event never throws out of the socket, never disconnects it, and never touches other sockets.
//
// A socket gets one listener (socket.io's `onAny`) that looks the event up in the table, not a
// listener per event: an idle connection then holds one closure instead of one per event, and an
// event is handled as it is decoded instead of a `process.nextTick` later. Handlers receive the
// socket, so a channel can build its table once per namespace rather than once per connection.
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
  handler(payload: P, socket: Socket): unknown | Promise<unknown>;
  /** Where the result goes when the client sent no ack (default: nowhere). */
  noAck?(result: unknown, socket: Socket): void;
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
  /** Charges one event to the organisation's rate limit; throws (429) when it is spent. */
  charge?(): void;
}

export function errorReply(err: unknown): { statusCode: number; message: string | string[]; error: string } {
  return toEnvelope(err);
}

function refuse(socket: Socket, o: BindOptions, event: string, err: unknown, ack: Ack | undefined): void {
  const env = errorReply(err);
  if (env.statusCode >= 500) o.logger.error({ err, event, tenant: o.user.tenant }, 'socket event failed');
  if (ack) ack({ error: env });
  else socket.emit('error', { event, ...env });
}

async function handle(socket: Socket, o: BindOptions, name: string, spec: EventSpec, payload: unknown, ack: Ack | undefined): Promise<void> {
  try {
    await o.ready;
    if (spec.agentOnly && o.user.role !== 'agent') throw appError('ERR_FORBIDDEN', `${name} needs a staff token`);
    if (spec.customerOnly && o.user.role !== 'customer') throw appError('ERR_FORBIDDEN', `${name} is for customers`);
    assertDocument(payload, o.documentLimits, 'payload');
    o.validators[name](payload);
    const result = await spec.handler(payload, socket);
    if (ack) ack(result ?? { ok: true });
    else spec.noAck?.(result, socket);
  } catch (err) {
    refuse(socket, o, name, err, ack);
  }
}

export function bindEvents(socket: Socket, o: BindOptions): void {
  socket.onAny((event: string, ...args: unknown[]) => {
    // Events decoded after the disconnect (socket.io's own dispatch drops them too).
    if (!socket.connected) return;
    const ack = typeof args[args.length - 1] === 'function' ? (args.pop() as Ack) : undefined;
    // Every event the client sends costs the organisation, unknown ones too, before any work.
    try {
      o.charge?.();
    } catch (err) {
      refuse(socket, o, event, err, ack);
      return;
    }
    const spec = Object.hasOwn(o.events, event) ? o.events[event] : undefined;
    if (!spec) {
      refuse(socket, o, event, appError('ERR_BAD_REQUEST', `unknown event "${event}"`), ack);
      return;
    }
    const payload = args.length === 0 || args[0] === undefined || args[0] === null ? {} : args[0];
    o.onActivity?.();
    void handle(socket, o, event, spec, payload, ack);
  });
}
