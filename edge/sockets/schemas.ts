// Schemas of the socket channels: the handshake auth objects and every client-to-server event
// payload, compiled once with the edge's ajv settings (the same validator the routes use), so a
// bad payload is refused with the list of bad fields before any handler runs.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { AppError } from '../../core/errors.js';
import { compileRoute } from '../compile.js';
import type { RouteDef } from '../route.js';

export const Id = Type.String({ pattern: '^[0-9a-f]{24}$', description: '24-character hexadecimal id' });
const OrgId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$', description: 'The organisation (required: this or `orgid`)' });
/** The same, spelled as the HTTP header: clients that reuse their headers' spelling are taken too. */
const OrgIdHeaderSpelling = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$', description: '`orgId` spelled as the HTTP header; send one of the two' });
const Token = Type.String({ minLength: 1, maxLength: 8192 });
const Seq = Type.Integer({ minimum: 0 });
const Short = (max = 200) => Type.String({ minLength: 1, maxLength: max });
/** Group ids are chosen by clients (event slugs, topics): safe characters only. */
export const GroupId = Type.String({ pattern: '^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$' });
/** A community conversation: `d:<userA>:<userB>` (direct) or `g:<groupId>`. */
export const ThreadId = Type.String({ pattern: '^(d:[^\\s:]{1,128}:[^\\s:]{1,128}|g:[A-Za-z0-9][A-Za-z0-9_.:-]{0,63})$' });
/** A user id as tokens carry it (record sk). */
export const UserId = Type.String({ minLength: 1, maxLength: 128, pattern: '^[^\\s:]+$' });
const ClientId = Type.String({ minLength: 1, maxLength: 64, description: 'client-chosen message id: a resend with the same one is acked again, not stored twice' });
const Department = Type.String({ minLength: 1, maxLength: 100 });

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

export function chatEvents(maxText: number, maxMetadataBytes: number) {
  const Send = Type.Object({
    chatId: Type.Optional(Id),
    text: messageText(maxText),
    clientId: Type.Optional(ClientId),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: `Free-form, stored and sent with the message: at most ${maxMetadataBytes} bytes of JSON (CHAT_MAX_METADATA_BYTES; larger is a 400)` })),
  });
  const ChatRef = Type.Object({ chatId: Id });
  return {
    sendMessage: Send,
    'chat-message': Send,
    chatRequest: Type.Object({
      chatId: Type.Optional(Id),
      department: Type.Optional(Department),
      subject: Type.Optional(Short(300)),
      message: Type.Optional(messageText(maxText)),
      name: Type.Optional(Short(200)),
    }),
    updateMessageStatus: Type.Object({
      chatId: Id,
      seq: Type.Integer({ minimum: 1 }),
      status: OneOf(['delivered', 'read']),
      messageId: Type.Optional(Id),
    }),
    shareStatus: Type.Object({
      chatId: Type.Optional(Id),
      status: OneOf(['typing', 'idle', 'active', 'away', 'viewing']),
      page: Type.Optional(Type.String({ maxLength: 2000 })),
    }),
    getMessages: Type.Object({
      chatId: Type.Optional(Id),
      afterSeq: Type.Optional(Seq),
      beforeSeq: Type.Optional(Type.Integer({ minimum: 1 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
    }),
    'set-status': Type.Object({
      status: OneOf(['online', 'away', 'busy', 'offline']),
    }),
    'pick-next': Type.Object({ department: Type.Optional(Department) }),
    'transfer-chat': Type.Object({
      chatId: Id,
      /** The agent (user id or email) who takes the chat; without it the chat goes back to the queue. */
      toAgent: Type.Optional(Short(320)),
      department: Type.Optional(Department),
      note: Type.Optional(Type.String({ maxLength: 1000 })),
    }),
    'close-chat': Type.Object({ chatId: Type.Optional(Id), reason: Type.Optional(Type.String({ maxLength: 500 })) }),
    'takeover-chat': ChatRef,
    'resume-ai': ChatRef,
    'assist-ai': Type.Object({ chatId: Id, prompt: Type.Optional(Type.String({ maxLength: maxText })) }),
    'join-chat': ChatRef,
    'leave-chat': ChatRef,
  } satisfies Record<string, TSchema>;
}

export function communityEvents(maxText: number) {
  return {
    sendMessage: Type.Object({ to: UserId, text: messageText(maxText), clientId: Type.Optional(ClientId) }),
    sendGroupMessage: Type.Object({ groupId: GroupId, text: messageText(maxText), clientId: Type.Optional(ClientId) }),
    typing: Type.Object({ to: UserId, isTyping: Type.Optional(Type.Boolean()) }),
    groupTyping: Type.Object({ groupId: GroupId, isTyping: Type.Optional(Type.Boolean()) }),
    markRead: Type.Object({
      /** The other user of a direct-message thread, or `groupId`, or the `threadId` itself. */
      with: Type.Optional(UserId),
      groupId: Type.Optional(GroupId),
      threadId: Type.Optional(ThreadId),
      seq: Type.Integer({ minimum: 1 }),
    }),
    getOnlineUsers: Type.Object({}),
    joinGroup: Type.Object({ groupId: GroupId }),
    leaveGroup: Type.Object({ groupId: GroupId }),
  } satisfies Record<string, TSchema>;
}

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

export function compileAll<T extends Record<string, TSchema>>(schemas: T): Record<keyof T, Validator> {
  const out = {} as Record<keyof T, Validator>;
  for (const k of Object.keys(schemas) as Array<keyof T>) out[k] = compilePayload(schemas[k]);
  return out;
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
