// Socket events as data, like routes: one entry per event of a namespace (chat-events.ts,
// community-events.ts) with its name, direction, payload schema, summary, and for what the client
// sends its ack schema, who may send it and its handler. From the same table come the payload
// validators and the ack serializers (compiled once per namespace, here) and the AsyncAPI
// document (edge/reference/asyncapi.ts), so an event cannot be handled without being described.
//
// Every payload is validated before its handler runs; the handler's result goes back through the
// event's ack shaped by the ack's schema (or the error envelope as `{error}`), and without an ack a
// refusal is an `error` event. A bad event never throws out of the socket, never disconnects it,
// and never touches other sockets.
//
// A socket gets one listener (socket.io's `onAny`) that looks the event up in the table, not a
// listener per event: an idle connection then holds one closure instead of one per event, and an
// event is handled as it is decoded instead of a `process.nextTick` later. Handlers receive the
// connection's context, so a channel compiles its table once per namespace rather than once per
// connection.
import type { TSchema } from '@sinclair/typebox';
import type { Socket } from 'socket.io';
import { assertDocument, type DocumentLimits } from '../../core/document-limits.js';
import { appError, toEnvelope } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { SocketUser } from './handshake.js';
import { compileAckShape } from './ack-shape.js';
import { compilePayload, type Validator } from './schemas.js';

/** An event the client sends; the server answers through its ack. */
export interface ClientEvent<C = any, P = any> {
  name: string;
  direction: 'in';
  summary: string;
  payload: TSchema;
  /** What the ack receives on success (a refusal acks `{error}`). */
  ack: TSchema;
  /** Who may send it (default: anyone connected): staff tokens (role User) or customers only. */
  access?: 'agents' | 'customers';
  handler(payload: P, conn: C): unknown | Promise<unknown>;
  /** Where the result goes when the client sent no ack (default: nowhere). */
  noAck?(result: unknown, conn: C): void;
}

/** An event the server sends. */
export interface ServerEvent {
  name: string;
  direction: 'out';
  summary: string;
  payload: TSchema;
}

export type EventDef<C = any> = ClientEvent<C> | ServerEvent;

export function clientEvents<C>(table: readonly EventDef<C>[]): ClientEvent<C>[] {
  return table.filter((e): e is ClientEvent<C> => e.direction === 'in');
}

interface CompiledEvent<C> {
  def: ClientEvent<C>;
  validate: Validator;
  /** The ack as its schema has it: undeclared fields never leave, types as declared. */
  shapeAck(result: unknown): unknown;
}

export type CompiledEvents<C> = ReadonlyMap<string, CompiledEvent<C>>;

/**
 * Compiles a namespace's client events: a payload validator and an ack shaper each (ack-shape.ts:
 * fast-json-stringify's shape, without its cost when the result already has it).
 * `atStart` false (the `http.compileAtStart` setting, as for routes) compiles each event on its
 * first use instead: a node that serves few events starts without compiling them all.
 */
export function compileEvents<C>(table: readonly EventDef<C>[], atStart = true): CompiledEvents<C> {
  const out = new Map<string, CompiledEvent<C>>();
  for (const def of clientEvents(table)) out.set(def.name, atStart ? compileEvent(def) : onFirstUse(def));
  return out;
}

function compileEvent<C>(def: ClientEvent<C>): CompiledEvent<C> {
  return { def, validate: compilePayload(def.payload), shapeAck: compileAckShape(def.ack) };
}

function onFirstUse<C>(def: ClientEvent<C>): CompiledEvent<C> {
  let compiled: CompiledEvent<C> | undefined;
  const get = () => (compiled ??= compileEvent(def));
  return { def, validate: (v) => get().validate(v), shapeAck: (r) => get().shapeAck(r) };
}

type Ack = (reply: unknown) => void;

export interface BindOptions<C> {
  user: SocketUser;
  events: CompiledEvents<C>;
  /** What the handlers receive: the connection's context. */
  conn: C;
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

function refuse<C>(socket: Socket, o: BindOptions<C>, event: string, err: unknown, ack: Ack | undefined): void {
  const env = errorReply(err);
  if (env.statusCode >= 500) o.logger.error({ err, event, tenant: o.user.tenant }, 'socket event failed');
  if (ack) ack({ error: env });
  else socket.emit('error', { event, ...env });
}

async function handle<C>(socket: Socket, o: BindOptions<C>, name: string, ev: CompiledEvent<C>, payload: unknown, ack: Ack | undefined): Promise<void> {
  try {
    await o.ready;
    const { access } = ev.def;
    if (access === 'agents' && o.user.role !== 'agent') throw appError('ERR_FORBIDDEN', `${name} needs a staff token`);
    if (access === 'customers' && o.user.role !== 'customer') throw appError('ERR_FORBIDDEN', `${name} is for customers`);
    assertDocument(payload, o.documentLimits, 'payload');
    ev.validate(payload);
    const result = await ev.def.handler(payload, o.conn);
    if (ack) ack(ev.shapeAck(result ?? { ok: true }));
    else ev.def.noAck?.(result, o.conn);
  } catch (err) {
    refuse(socket, o, name, err, ack);
  }
}

export function bindEvents<C>(socket: Socket, o: BindOptions<C>): void {
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
    const ev = o.events.get(event);
    if (!ev) {
      refuse(socket, o, event, appError('ERR_BAD_REQUEST', `unknown event "${event}"`), ack);
      return;
    }
    const payload = args.length === 0 || args[0] === undefined || args[0] === null ? {} : args[0];
    o.onActivity?.();
    void handle(socket, o, event, ev, payload, ack);
  });
}
