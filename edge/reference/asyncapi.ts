// The socket channels as an AsyncAPI 3.0 document (/asyncapi.json). Client-to-server events come
// from the same tables the server validates with (edge/sockets/schemas.ts: the handshake objects
// and one payload schema per event), so an event the server handles cannot be missing here. What
// the server sends has no schema table of its own; SERVER_EVENTS below is that table, and a test
// checks every event name emitted in edge/sockets/ against it.
import { Type, type TSchema } from '@sinclair/typebox';
import type { Config } from '../../core/config.js';
import { ChatHandshake, chatEvents, CommunityHandshake, communityEvents, CommunityMessage } from '../sockets/schemas.js';

type Json = Record<string, unknown>;
export type Namespace = 'chat' | 'community';

export const NAMESPACES: Record<Namespace, { address: string; title: string; description: string }> = {
  chat: {
    address: '/chat',
    title: 'Live chat',
    description:
      'Customers chat with agents (staff tokens, role User). A customer socket gets `authenticate` with its chat once set up; ' +
      'an agent socket joins the staff room (queue, presence, SMS) and the chats assigned to it.',
  },
  community: {
    address: '/community-chat',
    title: 'Community chat',
    description: 'Members of an organisation message each other directly or in groups, see who is online and who is typing.',
  },
};

const Envelope = Type.Object({
  statusCode: Type.Integer(),
  message: Type.Union([Type.String(), Type.Array(Type.String())]),
  error: Type.String(),
});
const Refusal = Type.Object({ error: Envelope }, { description: 'Every refused event acks `{error: {statusCode, message, error}}`' });
const Ok = Type.Object({ ok: Type.Literal(true) });
const Participant = Type.Object({
  id: Type.String(),
  role: Type.String({ enum: ['customer', 'agent', 'ai', 'system'] }),
  name: Type.Optional(Type.String()),
  email: Type.Optional(Type.String()),
});
const ChatMessage = Type.Object({
  id: Type.String(),
  seq: Type.Integer({ minimum: 1, description: 'Position in the chat, from 1' }),
  chatId: Type.String(),
  from: Participant,
  text: Type.String(),
  type: Type.String({ enum: ['text', 'system'] }),
  at: Type.String({ format: 'date-time' }),
  clientId: Type.Optional(Type.String()),
  metadata: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
});
const Chat = Type.Object({ chatId: Type.String(), status: Type.String(), customer: Participant, agent: Type.Optional(Type.Union([Participant, Type.Null()])) }, { additionalProperties: true });
const Stream = (final: string) =>
  Type.Object({
    chatId: Type.String(),
    streamId: Type.String({ description: 'Also readable as Server-Sent Events at `GET /ai/stream/{streamId}`' }),
    index: Type.Optional(Type.Integer()),
    chunk: Type.Optional(Type.String()),
    done: Type.Boolean(),
    error: Type.Optional(Type.String()),
    [final]: Type.Optional(Type.String()),
  });
const OnlineUser = Type.Object({ userId: Type.String(), online: Type.Boolean(), status: Type.String(), lastSeen: Type.Union([Type.String(), Type.Null()]) });
const SocketError = Type.Object({ event: Type.String({ description: 'The event refused, or `connect`' }), statusCode: Type.Integer(), message: Type.Union([Type.String(), Type.Array(Type.String())]), error: Type.String() });

interface ServerEvent {
  summary: string;
  payload: TSchema;
}

/** Everything the server sends, per namespace. */
export const SERVER_EVENTS: Record<Namespace, Record<string, ServerEvent>> = {
  chat: {
    authenticate: {
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
    message: { summary: 'A message in a chat this socket is in (also the replay after `lastSeq`)', payload: ChatMessage },
    messages: { summary: 'A page of messages, answering getMessages', payload: Type.Object({ chatId: Type.String(), messages: Type.Array(ChatMessage), hasMore: Type.Boolean(), lastSeq: Type.Integer() }) },
    update: {
      summary: 'Something changed in a chat: `type` is `status`, `participant-status`, `receipt` or `replay-truncated`',
      payload: Type.Object({ chatId: Type.String(), type: Type.String() }, { additionalProperties: true }),
    },
    status: { summary: 'Delivery or read receipts moved', payload: Type.Object({ chatId: Type.String() }, { additionalProperties: true }) },
    'queue-updated': { summary: 'To staff: the waiting queue changed', payload: Type.Object({ waiting: Type.Integer(), chats: Type.Array(Type.Record(Type.String(), Type.Unknown())) }) },
    'queue-notification': { summary: "To a waiting customer: their place in the queue", payload: Type.Object({ chatId: Type.String(), position: Type.Integer(), waiting: Type.Integer() }) },
    'chat-assigned': { summary: 'To an agent: a chat was given to them', payload: Type.Object({ chatId: Type.String(), chat: Chat }) },
    'agent-assigned': { summary: 'To a chat: an agent took it', payload: Type.Object({ chatId: Type.String(), agent: Participant }) },
    'chat-transferred': { summary: 'To the agents of a transfer: the chat moved', payload: Type.Object({ chatId: Type.String() }, { additionalProperties: true }) },
    'agent-changed': { summary: 'To a chat: another agent took over', payload: Type.Object({ chatId: Type.String(), agent: Type.Union([Participant, Type.Null()]), previousAgent: Type.Union([Participant, Type.Null()]), at: Type.String({ format: 'date-time' }) }) },
    'chat-ended': { summary: 'To a chat: it was closed', payload: Type.Object({ chatId: Type.String(), closedBy: Type.Unknown(), reason: Type.Union([Type.String(), Type.Null()]), at: Type.Union([Type.String(), Type.Null()]) }) },
    'chat-inactivity': { summary: 'To a chat: no message for a while (config `chat.chatInactivityMs`); sent once until the next message', payload: Type.Object({ chatId: Type.String(), idleSeconds: Type.Integer(), lastMessageAt: Type.String({ format: 'date-time' }) }) },
    'ai-stream': { summary: "To a chat: the AI assistant's answer, chunk by chunk, then `done: true`", payload: Stream('messageId') },
    'chat-stream': { summary: 'To an agent: an assist-ai suggestion, chunk by chunk, then `done: true` with the whole `text`', payload: Stream('text') },
    'presence-change': { summary: "To staff: an agent's status changed", payload: Type.Object({ userId: Type.String(), status: Type.String(), online: Type.Boolean(), at: Type.String({ format: 'date-time' }) }, { additionalProperties: true }) },
    'sms.received': { summary: 'To staff: an SMS arrived in the inbox', payload: Type.Object({}, { additionalProperties: true }) },
    token_expired: { summary: 'The handshake token ran out: reconnect with a fresh one within `disconnectInMs`', payload: Type.Object({ expiredAt: Type.String({ format: 'date-time' }), disconnectInMs: Type.Integer() }) },
    'session-expiring': { summary: 'To an idle customer: the session ends soon unless they act', payload: Type.Object({ chatSessionId: Type.Union([Type.String(), Type.Null()]), chatId: Type.Union([Type.String(), Type.Null()]), expiresAt: Type.String({ format: 'date-time' }), secondsLeft: Type.Integer() }) },
    'session-expired': { summary: 'To an idle customer: the session ended and the socket closes', payload: Type.Object({ chatSessionId: Type.Union([Type.String(), Type.Null()]), chatId: Type.Union([Type.String(), Type.Null()]), at: Type.String({ format: 'date-time' }) }) },
    error: { summary: 'An event sent without an ack was refused, or the connection could not be set up (`event: connect`)', payload: SocketError },
  },
  community: {
    message: { summary: 'A direct message to or from this user (also the replay after `lastSeqs`)', payload: CommunityMessage },
    groupMessage: { summary: 'A message in a group this user belongs to', payload: CommunityMessage },
    'replay-truncated': {
      summary: 'The replay on connect stopped at its bound: where each conversation stopped, and how to page the rest over REST',
      payload: Type.Object({
        threads: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Each conversation left unfinished, with its `nextAfterSeq`' }),
        total: Type.Integer(),
        next: Type.String(),
      }),
    },
    typing: { summary: 'Someone is typing to this user or in one of their groups', payload: Type.Object({ from: Type.String(), name: Type.Union([Type.String(), Type.Null()]), to: Type.Optional(Type.String()), groupId: Type.Optional(Type.String()), threadId: Type.String(), isTyping: Type.Boolean() }) },
    onlineStatus: { summary: 'After getOnlineUsers: someone came online or left (or the list itself, when it was sent without an ack)', payload: Type.Union([OnlineUser, Type.Object({ users: Type.Array(OnlineUser) })]) },
    error: { summary: 'An event sent without an ack was refused', payload: SocketError },
  },
};

interface ClientEvent {
  summary: string;
  ack: TSchema;
  /** Who may send it (default: anyone connected). */
  who?: 'agents' | 'customers';
}

const ChatAck = Type.Object({ chat: Chat });
/** What each client event answers through its ack; an event missing here still appears (generic ack). */
const CLIENT_EVENTS: Record<Namespace, Record<string, ClientEvent>> = {
  chat: {
    sendMessage: { summary: 'Send a message to a chat (customers: their own, by default)', ack: Type.Object({ id: Type.String(), seq: Type.Integer(), chatId: Type.String(), at: Type.String({ format: 'date-time' }) }) },
    'chat-message': { summary: 'Same as sendMessage (older clients)', ack: Type.Object({ id: Type.String(), seq: Type.Integer(), chatId: Type.String(), at: Type.String({ format: 'date-time' }) }) },
    chatRequest: { summary: 'Ask for an agent: the chat joins the queue', who: 'customers', ack: Type.Record(Type.String(), Type.Unknown()) },
    updateMessageStatus: { summary: 'Mark messages up to `seq` delivered or read', ack: Type.Record(Type.String(), Type.Unknown()) },
    shareStatus: { summary: 'Tell the chat you are typing, idle, away or viewing a page', ack: Type.Object({ chatId: Type.String(), type: Type.Literal('participant-status'), status: Type.String() }, { additionalProperties: true }) },
    getMessages: { summary: 'A page of messages (also sent as the `messages` event)', ack: Type.Object({ chatId: Type.String(), messages: Type.Array(ChatMessage), hasMore: Type.Boolean(), lastSeq: Type.Integer() }) },
    'set-status': { summary: "Set the agent's presence status", who: 'agents', ack: Type.Record(Type.String(), Type.Unknown()) },
    'pick-next': { summary: 'Take the next waiting chat', who: 'agents', ack: Type.Object({ chat: Type.Union([Chat, Type.Null()]) }) },
    'transfer-chat': { summary: 'Hand a chat to another agent, or back to the queue', who: 'agents', ack: ChatAck },
    'close-chat': { summary: 'Close a chat', ack: Type.Object({ chatId: Type.String(), status: Type.String(), closedAt: Type.Union([Type.String(), Type.Null()]) }) },
    'takeover-chat': { summary: 'Take a chat over from the AI assistant', who: 'agents', ack: ChatAck },
    'resume-ai': { summary: 'Give a chat back to the AI assistant', who: 'agents', ack: ChatAck },
    'assist-ai': { summary: 'Ask the AI for a suggested reply, streamed as `chat-stream`', who: 'agents', ack: Type.Object({ chatId: Type.String(), streamId: Type.String() }) },
    'join-chat': { summary: 'Watch a chat without taking it', who: 'agents', ack: Type.Object({ chatId: Type.String(), chat: Chat, lastSeq: Type.Integer() }) },
    'leave-chat': { summary: 'Stop watching a chat', who: 'agents', ack: Type.Object({ chatId: Type.String(), left: Type.Literal(true) }) },
  },
  community: {
    sendMessage: { summary: 'A direct message to another member', ack: CommunityMessage },
    sendGroupMessage: { summary: 'A message to a group you belong to', ack: CommunityMessage },
    typing: { summary: 'Tell a member you are typing (or stopped)', ack: Ok },
    groupTyping: { summary: 'Tell a group you are typing (or stopped)', ack: Ok },
    markRead: { summary: 'Mark a conversation read up to `seq`', ack: Type.Record(Type.String(), Type.Unknown()) },
    getOnlineUsers: { summary: 'Who is online; from then on `onlineStatus` tells every change', ack: Type.Object({ users: Type.Array(OnlineUser) }) },
    joinGroup: { summary: 'Join a group: its messages and typing reach you', ack: Type.Record(Type.String(), Type.Unknown()) },
    leaveGroup: { summary: 'Leave a group', ack: Type.Record(Type.String(), Type.Unknown()) },
  },
};

/** The client events the server handles: the keys of its validator tables. */
export function handledEvents(config: Config): Record<Namespace, Record<string, TSchema>> {
  const max = config.chat.maxMessageLength;
  return { chat: chatEvents(max, config.chat.maxMetadataBytes), community: communityEvents(max) };
}

const plain = (s: TSchema): Json => JSON.parse(JSON.stringify(s)) as Json;
const HANDSHAKE: Record<Namespace, TSchema> = { chat: ChatHandshake, community: CommunityHandshake };

export function buildAsyncApi(config: Config, host: string, secure: boolean): Json {
  const handled = handledEvents(config);
  const channels: Json = {};
  const operations: Json = {};
  const messages: Json = {};
  const schemas: Json = {};
  for (const ns of Object.keys(NAMESPACES) as Namespace[]) {
    const n = NAMESPACES[ns];
    const handshake = `${ns}Handshake`;
    schemas[handshake] = { ...plain(HANDSHAKE[ns]), description: 'The Socket.IO handshake `auth` object: an access token and the organisation it belongs to' };
    const channelMessages: Json = {};
    const add = (id: string, m: Json) => {
      messages[id] = m;
      channelMessages[id] = { $ref: `#/components/messages/${id}` };
    };
    for (const [event, schema] of Object.entries(handled[ns])) {
      const note = CLIENT_EVENTS[ns][event];
      const id = `${ns}.${event}`;
      const who = note?.who ? ` Only ${note.who} may send it.` : '';
      add(id, { name: event, title: event, summary: note?.summary ?? event, description: `Sent by the client; the server answers through the ack.${who}`, payload: plain(schema) });
      add(`${id}.ack`, {
        name: `${event} ack`,
        title: `${event} ack`,
        summary: `What the ack of ${event} receives`,
        payload: { anyOf: [plain(note?.ack ?? Type.Record(Type.String(), Type.Unknown())), plain(Refusal)] },
      });
      operations[`${ns}.receive.${event}`] = {
        action: 'receive',
        channel: { $ref: `#/channels/${ns}` },
        title: event,
        summary: note?.summary ?? event,
        messages: [{ $ref: `#/channels/${ns}/messages/${id}` }],
        reply: { channel: { $ref: `#/channels/${ns}` }, messages: [{ $ref: `#/channels/${ns}/messages/${id}.ack` }] },
        ...(note?.who ? { 'x-who': note.who } : {}),
      };
    }
    for (const [event, e] of Object.entries(SERVER_EVENTS[ns])) {
      const id = `${ns}.${event}.out`;
      add(id, { name: event, title: event, summary: e.summary, payload: plain(e.payload) });
      operations[`${ns}.send.${event}`] = {
        action: 'send',
        channel: { $ref: `#/channels/${ns}` },
        title: event,
        summary: e.summary,
        messages: [{ $ref: `#/channels/${ns}/messages/${id}` }],
      };
    }
    channels[ns] = {
      address: n.address,
      title: n.title,
      description:
        `${n.description}\n\nConnect with Socket.IO v4 to the namespace \`${n.address}\` with ` +
        '`auth: {token, orgId}` (see `x-handshake`). A refused handshake is a `connect_error` whose `data` is the error envelope. ' +
        'Every client event takes an ack: it receives the result, or `{error: {statusCode, message, error}}`; without an ack a refusal arrives as the `error` event. ' +
        "Every client event is charged to the organisation's rate limit, the same bucket as its HTTP requests: past it the event is refused with 429 and the connection stays.",
      messages: channelMessages,
      'x-handshake': { $ref: `#/components/schemas/${handshake}` },
    };
  }
  return {
    asyncapi: '3.0.0',
    info: {
      title: 'Business Platform API: socket channels',
      version: '0.1.0',
      description:
        'The realtime channels, over Socket.IO v4 (path `/socket.io`). Every event name, in both directions, with its payload and, for client events, its ack. ' +
        'The REST API is described in OpenAPI at [/openapi.json](/openapi.json); the reference is at [/documentation](/documentation#/channels).',
      externalDocs: { description: 'The REST API (OpenAPI 3.1)', url: `${secure ? 'https' : 'http'}://${host}/openapi.json` },
    },
    defaultContentType: 'application/json',
    servers: {
      origin: {
        host,
        protocol: secure ? 'wss' : 'ws',
        pathname: '/socket.io',
        description: 'This server (Socket.IO v4: the WebSocket transport, or long polling first)',
      },
    },
    channels,
    operations,
    components: { messages, schemas },
  };
}

/** The channels in Markdown (/documentation/channels.md), read from the AsyncAPI document. */
export function channelsMd(doc: Json): string {
  type Msg = { name: string; summary?: string; payload?: Json };
  const msgs = (doc.components as { messages: Record<string, Msg> }).messages;
  const ops = Object.values(doc.operations as Record<string, { action: string; channel: { $ref: string }; messages: Array<{ $ref: string }>; reply?: { messages: Array<{ $ref: string }> } }>);
  const fields = (p: Json | undefined) => Object.keys((p?.properties as Json | undefined) ?? {}).map((k) => `\`${k}\``).join(', ') || '—';
  const msgOf = (ref: string) => msgs[ref.split('/').pop()!];
  const out = ['# Socket channels', '', String((doc.info as Json).description), '', 'The same, machine-readable: [/asyncapi.json](/asyncapi.json) (AsyncAPI 3.0).', ''];
  for (const [key, ch] of Object.entries(doc.channels as Record<string, Json>)) {
    out.push(`## ${String(ch.address)}: ${String(ch.title)}`, '', String(ch.description), '');
    const hs = (doc.components as { schemas: Record<string, Json> }).schemas[`${key}Handshake`];
    out.push(`Handshake \`auth\`: ${fields(hs)} (required: ${((hs.required as string[]) ?? []).map((r) => `\`${r}\``).join(', ')}).`, '');
    out.push('### Client → server', '', '| Event | Payload fields | Ack | What it does |', '|---|---|---|---|');
    for (const op of ops.filter((o) => o.action === 'receive' && o.channel.$ref.endsWith(`/${key}`))) {
      const m = msgOf(op.messages[0].$ref);
      const ack = op.reply ? msgOf(op.reply.messages[0].$ref) : undefined;
      const ackFields = ack ? fields(((ack.payload?.anyOf as Json[] | undefined) ?? [])[0]) : '—';
      out.push(`| \`${m.name}\` | ${fields(m.payload)} | ${ackFields} or \`{error}\` | ${m.summary ?? ''} |`);
    }
    out.push('', '### Server → client', '', '| Event | Payload fields | When |', '|---|---|---|');
    for (const op of ops.filter((o) => o.action === 'send' && o.channel.$ref.endsWith(`/${key}`))) {
      const m = msgOf(op.messages[0].$ref);
      out.push(`| \`${m.name}\` | ${fields(m.payload)} | ${m.summary ?? ''} |`);
    }
    out.push('');
  }
  return out.join('\n');
}
