// Schemas of the socket channels: the handshake auth objects, the pieces the event tables
// (chat-events.ts, community-events.ts) build their payloads and acks from, and the payload
// compiler: the edge's ajv settings (the same validator the routes use), so a bad payload is
// refused with the list of bad fields before any handler runs.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { compileRoute } from '../compile.js';
import type { RouteDef } from '../route.js';

export const Id = Type.String({ pattern: '^[0-9a-f]{24}$', description: '24-character hexadecimal id' });
const OrgId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$', description: 'The organisation (required: this or `orgid`)' });
/** The same, spelled as the HTTP header: clients that reuse their headers' spelling are taken too. */
const OrgIdHeaderSpelling = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$', description: '`orgId` spelled as the HTTP header; send one of the two' });
const Token = Type.String({ minLength: 1, maxLength: 8192 });
export const Seq = Type.Integer({ minimum: 0 });
export const Short = (max = 200) => Type.String({ minLength: 1, maxLength: max });
/** Group ids are chosen by clients (event slugs, topics): safe characters only. */
export const GroupId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$' });
/** A community conversation: `d:<userA>:<userB>` (direct) or `g:<groupId>`. */
export const ThreadId = Type.String({ pattern: '^(d:[^\\s:]{1,128}:[^\\s:]{1,128}|g:[A-Za-z0-9][A-Za-z0-9_.:-]{0,63})$' });
/** A user id as tokens carry it (record sk). */
export const UserId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\s:]+$' });
export const ClientId = Type.String({ minLength: 1, maxLength: 64, description: 'client-chosen message id: a resend with the same one is acked again, not stored twice' });
export const Department = Type.String({ minLength: 1, maxLength: 100 });

/** One of a few strings; refused with "must be one of: ..." (a union of literals would list anyOf noise). */
export function OneOf<const T extends readonly string[]>(values: T, opts: { description?: string } = {}) {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...opts });
}

export function messageText(maxLength: number) {
  return Type.String({ minLength: 1, maxLength });
}

/** Conversations one handshake may name in `lastSeqs`: each costs store reads on connect. */
export const MAX_LAST_SEQS = 500;

export const ChatHandshake = Type.Object({
  token: Token,
  orgId: Type.Optional(OrgId),
  orgid: Type.Optional(OrgIdHeaderSpelling),
  /**
   * A conversation of this customer (a 24-hex id the server issued) to resume, or the widget
   * whose configuration applies (any other id, as `GET /chat/config/:chatId` takes it).
   */
  chatId: Type.Optional(Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' })),
  chatSessionId: Type.Optional(Id),
  /** The last seq the client saw of `chatId`: every later message is replayed. */
  lastSeq: Type.Optional(Type.Integer({ minimum: 0, description: 'The last seq the client saw of `chatId`: every later message is replayed after `authenticate` (at most the replay limit; past it an `update` of type `replay-truncated` says where to page on with getMessages)' })),
  /** Last seq seen per chat (agents in several chats). */
  lastSeqs: Type.Optional(
    Type.Record(Type.String({ pattern: '^[0-9a-f]{24}$' }), Seq, {
      additionalProperties: false,
      maxProperties: MAX_LAST_SEQS,
      description: `Last seq seen per chat id (agents in several chats, at most ${MAX_LAST_SEQS}): later messages are replayed, chat by chat in the order named, at most the replay limit over all of them; an \`update\` of type \`replay-truncated\` names each chat that stopped early and where to page on with getMessages`,
    }),
  ),
  widgetId: Type.Optional(Short(100)),
});
export type ChatHandshake = Static<typeof ChatHandshake>;

export const CommunityHandshake = Type.Object({
  token: Token,
  orgId: Type.Optional(OrgId),
  orgid: Type.Optional(OrgIdHeaderSpelling),
  /**
   * Last seq seen per conversation (`d:<a>:<b>` or `g:<group>`): later messages are replayed.
   * Without it (or for conversations it does not name) the replay starts after the user's read
   * marker (markRead), so a first connect gets what was sent while the user had no socket.
   */
  lastSeqs: Type.Optional(
    Type.Record(ThreadId, Seq, {
      additionalProperties: false,
      maxProperties: MAX_LAST_SEQS,
      description:
        `Last seq seen per conversation (\`d:<lower user id>:<higher user id>\` or \`g:<groupId>\`, as \`threadId\` in messages; at most ${MAX_LAST_SEQS}): every later message is replayed on connect. Conversations not named here replay from the read marker (markRead); GET /client/community/threads lists them with unread counts.`,
    }),
  ),
});
export type CommunityHandshake = Static<typeof CommunityHandshake>;

export type Validator = (value: unknown) => unknown;

/**
 * A validator that throws ERR_VALIDATION naming every bad field (`payload/text ...`). It is the
 * route compiler's body validator, so sockets and REST refuse the same way.
 */
export function compilePayload(schema: TSchema): Validator {
  const body = compileRoute({ body: schema } as unknown as RouteDef).body!;
  return (value) => {
    try {
      return body(value);
    } catch (err) {
      if (!(err instanceof AppError) || !err.messages) throw err;
      const messages = err.messages.map((m) => m.replace(/^body/, 'payload'));
      throw new AppError('ERR_VALIDATION', [messages.join('; ')], { messages });
    }
  };
}

/** A message of /community-chat, as the socket delivers it and the REST routes answer it. */
export const CommunityMessage = Type.Object(
  {
    id: Type.String(),
    seq: Type.Integer({ minimum: 1, description: 'Position in its conversation, from 1' }),
    threadId: Type.String({ description: '`d:<a>:<b>` (direct) or `g:<groupId>`' }),
    groupId: Type.Optional(Type.String()),
    to: Type.Optional(Type.String()),
    from: Type.Object({ id: Type.String(), name: Type.Optional(Type.String()), email: Type.Optional(Type.String()) }),
    text: Type.String(),
    at: Type.String({ format: 'date-time' }),
    clientId: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

/** The error envelope (spec: Errors), as an ack's `error` and in the `error` event. */
const Envelope = Type.Object({
  statusCode: Type.Integer(),
  message: Type.Union([Type.String(), Type.Array(Type.String())]),
  error: Type.String(),
});
export const Refusal = Type.Object({ error: Envelope }, { description: 'Every refused event acks `{error: {statusCode, message, error}}`' });
export const Ok = Type.Object({ ok: Type.Literal(true) });
/** An ack the table does not describe field by field. */
export const AnyAck = Type.Record(Type.String(), Type.Unknown());
export const Participant = Type.Object({
  id: Type.String(),
  role: Type.String({ enum: ['customer', 'agent', 'ai', 'system'] }),
  name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
});
const messageFields = {
  id: Type.String(),
  seq: Type.Integer({ minimum: 1, description: 'Position in the chat, from 1' }),
  chatId: Type.String(),
  from: Participant,
  text: Type.String(),
  type: Type.String({ enum: ['text', 'system'] }),
  at: Type.String({ format: 'date-time' }),
  clientId: Type.Optional(Type.String()),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
};
/** A /chat message as it is broadcast and replayed. */
export const ChatMessage = Type.Object(messageFields);
/** A /chat message in a page (getMessages, `messages`): with its delivery state from the other side's receipts. */
export const ListedChatMessage = Type.Object({ ...messageFields, status: Type.Optional(Type.String({ enum: ['sent', 'delivered', 'read'] })) });
export const MessagePage = Type.Object({ chatId: Type.String(), messages: Type.Array(ListedChatMessage), hasMore: Type.Boolean(), lastSeq: Type.Integer() });
export const Chat = Type.Object({ chatId: Type.String(), status: Type.String(), customer: Participant, agent: Type.Optional(Type.Union([Participant, Type.Null()])) }, { additionalProperties: true });
export const Stream = (final: string) =>
  Type.Object({
    chatId: Type.String(),
    streamId: Type.String({ description: 'Also readable as Server-Sent Events at `GET /ai/stream/{streamId}`' }),
    index: Type.Optional(Type.Integer()),
    chunk: Type.Optional(Type.String()),
    done: Type.Boolean(),
    error: Type.Optional(Type.String()),
    [final]: Type.Optional(Type.String()),
  });
export const OnlineUser = Type.Object({ userId: Type.String(), online: Type.Boolean(), status: Type.String(), lastSeen: Type.Union([Type.String(), Type.Null()]) });
export const SocketError = Type.Object({ event: Type.String({ description: 'The event refused, or `connect`' }), statusCode: Type.Integer(), message: Type.Union([Type.String(), Type.Array(Type.String())]), error: Type.String() });
