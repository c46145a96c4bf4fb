// Every event of /chat, both directions, as data (see events.ts): what the server validates and
// answers, and what the AsyncAPI document says. Handlers make one call into the chat area.
import { Type } from '@sinclair/typebox';
import type { Socket } from 'socket.io';
import { presenceUser, type ChatApi, type ChatConnection } from '../../actors/chat/index.js';
import { appError } from '../../core/errors.js';
import type { EventDef } from './events.js';
import type { SocketUser } from './handshake.js';
import type { Realtime } from './realtime.js';
import {
  AnyAck,
  Chat,
  ChatMessage,
  ClientId,
  Department,
  Id,
  MessagePage,
  messageText,
  OneOf,
  Participant,
  Seq,
  Short,
  SocketError,
  Stream,
} from './schemas.js';
import { chatTopic } from './topics.js';

/** What a /chat handler is given: the socket, its place in support chat, the node's chat area. */
export interface ChatConn {
  readonly socket: Socket;
  readonly user: SocketUser;
  readonly chat: ChatConnection;
  readonly api: ChatApi;
  readonly rt: Realtime;
}

const Sent = Type.Object({ id: Type.String(), seq: Type.Integer(), chatId: Type.String(), at: Type.String({ format: 'date-time' }) });
const ChatAck = Type.Object({ chat: Chat });
const ChatRef = Type.Object({ chatId: Id });

export function chatEvents(settings: { maxMessageLength: number; maxMetadataBytes: number }): EventDef<ChatConn>[] {
  const maxText = settings.maxMessageLength;
  const maxMetadataBytes = settings.maxMetadataBytes;
  const Send = Type.Object({
    chatId: Type.Optional(Id),
    text: messageText(maxText),
    clientId: Type.Optional(ClientId),
    metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown(), { description: `Free-form, stored and sent with the message: at most ${maxMetadataBytes} bytes of JSON (CHAT_MAX_METADATA_BYTES; larger is a 400)` })),
  });
  const send = async (p: { chatId?: string; text: string; clientId?: string; metadata?: Record<string, unknown> }, c: ChatConn) => {
    // Stored with the message and sent with it on every replay and page: bounded like its text.
    if (p.metadata !== undefined) {
      const bytes = Buffer.byteLength(JSON.stringify(p.metadata));
      if (bytes > maxMetadataBytes) throw appError('ERR_VALIDATION', `payload/metadata is ${bytes} bytes of JSON; at most ${maxMetadataBytes} (CHAT_MAX_METADATA_BYTES)`);
    }
    const m = await c.api.connections.send(c.chat, p, c.socket);
    return { id: m.id, seq: m.seq, chatId: m.chatId, at: m.at };
  };
  const me = (c: ChatConn) => c.api.connections.me(c.chat);

  return [
    { name: 'sendMessage', direction: 'in', summary: 'Send a message to a chat (customers: their own, by default)', payload: Send, ack: Sent, handler: send },
    { name: 'chat-message', direction: 'in', summary: 'Same as sendMessage (older clients)', payload: Send, ack: Sent, handler: send },
    {
      name: 'chatRequest',
      direction: 'in',
      summary: 'Ask for an agent: the chat joins the queue',
      access: 'customers',
      payload: Type.Object({
        chatId: Type.Optional(Id),
        department: Type.Optional(Department),
        subject: Type.Optional(Short(300)),
        message: Type.Optional(messageText(maxText)),
        name: Type.Optional(Short(200)),
      }),
      ack: AnyAck,
      handler: (p: { chatId?: string; department?: string; subject?: string; message?: string; name?: string }, c) => c.api.connections.request(c.chat, p),
    },
    {
      name: 'updateMessageStatus',
      direction: 'in',
      summary: 'Mark messages up to `seq` delivered or read',
      payload: Type.Object({
        chatId: Id,
        seq: Type.Integer({ minimum: 1 }),
        status: OneOf(['delivered', 'read']),
        messageId: Type.Optional(Id),
      }),
      ack: AnyAck,
      handler: (p: { chatId: string; seq: number; status: 'delivered' | 'read'; messageId?: string }, c) => c.api.connections.receipt(c.chat, p),
    },
    {
      name: 'shareStatus',
      direction: 'in',
      summary: 'Tell the chat you are typing, idle, away or viewing a page',
      payload: Type.Object({
        chatId: Type.Optional(Id),
        status: OneOf(['typing', 'idle', 'active', 'away', 'viewing']),
        page: Type.Optional(Type.String({ maxLength: 2000 })),
      }),
      ack: Type.Object({ chatId: Type.String(), type: Type.Literal('participant-status'), status: Type.String() }, { additionalProperties: true }),
      handler: (p: { chatId?: string; status: string; page?: string }, c) => c.api.connections.shareStatus(c.chat, p),
    },
    {
      name: 'getMessages',
      direction: 'in',
      summary: 'A page of messages (also sent as the `messages` event)',
      payload: Type.Object({
        chatId: Type.Optional(Id),
        afterSeq: Type.Optional(Seq),
        beforeSeq: Type.Optional(Type.Integer({ minimum: 1 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      }),
      ack: MessagePage,
      handler: async (p: { chatId?: string; afterSeq?: number; beforeSeq?: number; limit?: number }, c) => {
        const page = await c.api.connections.messages(c.chat, p);
        c.socket.emit('messages', page);
        return page;
      },
    },
    {
      name: 'set-status',
      direction: 'in',
      summary: "Set the agent's presence status",
      access: 'agents',
      payload: Type.Object({ status: OneOf(['online', 'away', 'busy', 'offline']) }),
      ack: AnyAck,
      handler: async (p: { status: 'online' | 'away' | 'busy' | 'offline' }, c) => (await c.api.presence.setStatus(c.chat.tenant, presenceUser(c.user), p.status, false)).user,
    },
    {
      name: 'pick-next',
      direction: 'in',
      summary: 'Take the next waiting chat',
      access: 'agents',
      payload: Type.Object({ department: Type.Optional(Department) }),
      ack: Type.Object({ chat: Type.Union([Chat, Type.Null()]) }),
      handler: async (p: { department?: string }, c) => ({ chat: await c.api.chat.pickNext(c.chat.tenant, me(c), p.department ?? null) }),
    },
    {
      name: 'transfer-chat',
      direction: 'in',
      summary: 'Hand a chat to another agent, or back to the queue',
      access: 'agents',
      payload: Type.Object({
        chatId: Id,
        /** The agent (user id or email) who takes the chat; without it the chat goes back to the queue. */
        toAgent: Type.Optional(Short(320)),
        department: Type.Optional(Department),
        note: Type.Optional(Type.String({ maxLength: 1000 })),
      }),
      ack: ChatAck,
      handler: (p: { chatId: string; toAgent?: string; department?: string; note?: string }, c) => c.api.connections.transfer(c.chat, c.user.principal.roles, p),
    },
    {
      name: 'close-chat',
      direction: 'in',
      summary: 'Close a chat',
      payload: Type.Object({ chatId: Type.Optional(Id), reason: Type.Optional(Type.String({ maxLength: 500 })) }),
      ack: Type.Object({ chatId: Type.String(), status: Type.String(), closedAt: Type.Union([Type.String(), Type.Null()]) }),
      handler: (p: { chatId?: string; reason?: string }, c) => c.api.connections.close(c.chat, p),
    },
    {
      name: 'takeover-chat',
      direction: 'in',
      summary: 'Take a chat over from the AI assistant',
      access: 'agents',
      payload: ChatRef,
      ack: ChatAck,
      handler: async (p: { chatId: string }, c) => ({ chat: await c.api.chat.takeover(c.chat.tenant, me(c), p.chatId) }),
    },
    {
      name: 'resume-ai',
      direction: 'in',
      summary: 'Give a chat back to the AI assistant',
      access: 'agents',
      payload: ChatRef,
      ack: ChatAck,
      handler: async (p: { chatId: string }, c) => ({ chat: await c.api.chat.resumeAi(c.chat.tenant, me(c), p.chatId) }),
    },
    {
      name: 'assist-ai',
      direction: 'in',
      summary: 'Ask the AI for a suggested reply, streamed as `chat-stream`',
      access: 'agents',
      payload: Type.Object({ chatId: Id, prompt: Type.Optional(Type.String({ maxLength: maxText })) }),
      ack: Type.Object({ chatId: Type.String(), streamId: Type.String() }),
      handler: async (p: { chatId: string; prompt?: string }, c) => ({ chatId: p.chatId, streamId: (await c.api.chat.assist(c.chat.tenant, me(c), p.chatId, p.prompt)).id }),
    },
    {
      name: 'join-chat',
      direction: 'in',
      summary: 'Watch a chat without taking it',
      access: 'agents',
      payload: ChatRef,
      ack: Type.Object({ chatId: Type.String(), chat: Chat, lastSeq: Type.Integer() }),
      handler: async (p: { chatId: string }, c) => {
        const chat = await c.api.connections.watch(c.chat, p.chatId);
        // Subscribed first, then read: a message sent meanwhile may come twice, never not at all.
        c.rt.join(c.socket, chatTopic.chat(c.chat.tenant, p.chatId));
        return { chatId: p.chatId, chat, lastSeq: await c.api.connections.lastSeq(c.chat.tenant, p.chatId) };
      },
    },
    {
      name: 'leave-chat',
      direction: 'in',
      summary: 'Stop watching a chat',
      access: 'agents',
      payload: ChatRef,
      ack: Type.Object({ chatId: Type.String(), left: Type.Literal(true) }),
      handler: (p: { chatId: string }, c) => {
        c.rt.leave(c.socket, chatTopic.chat(c.chat.tenant, p.chatId));
        return { chatId: p.chatId, left: true };
      },
    },

    {
      name: 'authenticate',
      direction: 'out',
      summary: 'The connection is set up: the session, and the chat (customer) or the assigned chats and queue size (agent)',
      payload: Type.Object({
        chatSessionId: Type.String(),
        chatId: Type.Union([Type.String(), Type.Null()]),
        userId: Type.String(),
        role: Type.String({ enum: ['customer', 'agent'] }),
        resumed: Type.Boolean(),
        chat: Type.Optional(Type.Union([Chat, Type.Null()])),
        lastSeq: Type.Optional(Type.Integer()),
        config: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
        chats: Type.Optional(Type.Array(Type.String())),
        queue: Type.Optional(Type.Object({ waiting: Type.Integer() })),
      }),
    },
    { name: 'message', direction: 'out', summary: 'A message in a chat this socket is in (also the replay after `lastSeq`)', payload: ChatMessage },
    { name: 'messages', direction: 'out', summary: 'A page of messages, answering getMessages', payload: MessagePage },
    {
      name: 'update',
      direction: 'out',
      summary: 'Something changed in a chat: `type` is `status`, `participant-status`, `receipt` or `replay-truncated`',
      payload: Type.Object({ chatId: Type.String(), type: Type.String() }, { additionalProperties: true }),
    },
    { name: 'status', direction: 'out', summary: 'Delivery or read receipts moved', payload: Type.Object({ chatId: Type.String() }, { additionalProperties: true }) },
    { name: 'queue-updated', direction: 'out', summary: 'To staff: the waiting queue changed', payload: Type.Object({ waiting: Type.Integer(), chats: Type.Array(Type.Record(Type.String(), Type.Unknown())) }) },
    { name: 'queue-notification', direction: 'out', summary: 'To a waiting customer: their place in the queue', payload: Type.Object({ chatId: Type.String(), position: Type.Integer(), waiting: Type.Integer() }) },
    { name: 'chat-assigned', direction: 'out', summary: 'To an agent: a chat was given to them', payload: Type.Object({ chatId: Type.String(), chat: Chat }) },
    { name: 'agent-assigned', direction: 'out', summary: 'To a chat: an agent took it', payload: Type.Object({ chatId: Type.String(), agent: Participant }) },
    { name: 'chat-transferred', direction: 'out', summary: 'To the agents of a transfer: the chat moved', payload: Type.Object({ chatId: Type.String() }, { additionalProperties: true }) },
    {
      name: 'agent-changed',
      direction: 'out',
      summary: 'To a chat: another agent took over',
      payload: Type.Object({ chatId: Type.String(), agent: Type.Union([Participant, Type.Null()]), previousAgent: Type.Union([Participant, Type.Null()]), at: Type.String({ format: 'date-time' }) }),
    },
    {
      name: 'chat-ended',
      direction: 'out',
      summary: 'To a chat: it was closed',
      payload: Type.Object({ chatId: Type.String(), closedBy: Type.Unknown(), reason: Type.Union([Type.String(), Type.Null()]), at: Type.Union([Type.String(), Type.Null()]) }),
    },
    {
      name: 'chat-inactivity',
      direction: 'out',
      summary: 'To a chat: no message for a while (config `chat.chatInactivityMs`); sent once until the next message',
      payload: Type.Object({ chatId: Type.String(), idleSeconds: Type.Integer(), lastMessageAt: Type.String({ format: 'date-time' }) }),
    },
    { name: 'ai-stream', direction: 'out', summary: "To a chat: the AI assistant's answer, chunk by chunk, then `done: true`", payload: Stream('messageId') },
    { name: 'chat-stream', direction: 'out', summary: 'To an agent: an assist-ai suggestion, chunk by chunk, then `done: true` with the whole `text`', payload: Stream('text') },
    {
      name: 'presence-change',
      direction: 'out',
      summary: "To staff: an agent's status changed",
      payload: Type.Object({ userId: Type.String(), status: Type.String(), online: Type.Boolean(), at: Type.String({ format: 'date-time' }) }, { additionalProperties: true }),
    },
    { name: 'sms.received', direction: 'out', summary: 'To staff: an SMS arrived in the inbox', payload: Type.Object({}, { additionalProperties: true }) },
    {
      name: 'token_expired',
      direction: 'out',
      summary: 'The handshake token ran out: reconnect with a fresh one within `disconnectInMs`',
      payload: Type.Object({ expiredAt: Type.String({ format: 'date-time' }), disconnectInMs: Type.Integer() }),
    },
    {
      name: 'session-expiring',
      direction: 'out',
      summary: 'To an idle customer: the session ends soon unless they act',
      payload: Type.Object({ chatSessionId: Type.Union([Type.String(), Type.Null()]), chatId: Type.Union([Type.String(), Type.Null()]), expiresAt: Type.String({ format: 'date-time' }), secondsLeft: Type.Integer() }),
    },
    {
      name: 'session-expired',
      direction: 'out',
      summary: 'To an idle customer: the session ended and the socket closes',
      payload: Type.Object({ chatSessionId: Type.Union([Type.String(), Type.Null()]), chatId: Type.Union([Type.String(), Type.Null()]), at: Type.String({ format: 'date-time' }) }),
    },
    { name: 'error', direction: 'out', summary: 'An event sent without an ack was refused, or the connection could not be set up (`event: connect`)', payload: SocketError },
  ];
}
