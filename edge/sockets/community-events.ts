// Every event of /community-chat, both directions, as data (see events.ts): what the server
// validates and answers, and what the AsyncAPI document says.
import { Type } from '@sinclair/typebox';
import type { ChatApi, CommunityUser } from '../../actors/chat/index.js';
import type { Socket } from 'socket.io';
import type { EventDef } from './events.js';
import type { Realtime } from './realtime.js';
import { AnyAck, ClientId, CommunityMessage, GroupId, messageText, Ok, OnlineUser, SocketError, ThreadId, UserId } from './schemas.js';
import { communityTopic } from './topics.js';

/** What a /community-chat handler is given: the connection and the node's chat area. */
export interface CommunityConn {
  readonly socket: Socket;
  readonly tenant: string;
  readonly uid: string;
  readonly me: CommunityUser;
  readonly api: ChatApi;
  readonly rt: Realtime;
}

export function communityEvents(settings: { maxMessageLength: number }): EventDef<CommunityConn>[] {
  const text = messageText(settings.maxMessageLength);
  return [
    {
      name: 'sendMessage',
      direction: 'in',
      summary: 'A direct message to another member',
      payload: Type.Object({ to: UserId, text, clientId: Type.Optional(ClientId) }),
      ack: CommunityMessage,
      handler: (p: { to: string; text: string; clientId?: string }, c) => c.api.community.sendDirect(c.tenant, c.me, p.to, p.text, p.clientId, c.socket),
    },
    {
      name: 'sendGroupMessage',
      direction: 'in',
      summary: 'A message to a group you belong to',
      payload: Type.Object({ groupId: GroupId, text, clientId: Type.Optional(ClientId) }),
      ack: CommunityMessage,
      handler: (p: { groupId: string; text: string; clientId?: string }, c) => c.api.community.sendGroup(c.tenant, c.me, p.groupId, p.text, p.clientId, c.socket),
    },
    {
      name: 'typing',
      direction: 'in',
      summary: 'Tell a member you are typing (or stopped)',
      payload: Type.Object({ to: UserId, isTyping: Type.Optional(Type.Boolean()) }),
      ack: Ok,
      handler: (p: { to: string; isTyping?: boolean }, c) => c.api.community.typing(c.tenant, c.me, { to: p.to }, p.isTyping ?? true),
    },
    {
      name: 'groupTyping',
      direction: 'in',
      summary: 'Tell a group you are typing (or stopped)',
      payload: Type.Object({ groupId: GroupId, isTyping: Type.Optional(Type.Boolean()) }),
      ack: Ok,
      handler: (p: { groupId: string; isTyping?: boolean }, c) => c.api.community.typing(c.tenant, c.me, { groupId: p.groupId }, p.isTyping ?? true),
    },
    {
      name: 'markRead',
      direction: 'in',
      summary: 'Mark a conversation read up to `seq`',
      payload: Type.Object({
        /** The other user of a direct-message thread, or `groupId`, or the `threadId` itself. */
        with: Type.Optional(UserId),
        groupId: Type.Optional(GroupId),
        threadId: Type.Optional(ThreadId),
        seq: Type.Integer({ minimum: 1 }),
      }),
      ack: AnyAck,
      handler: (p: { with?: string; groupId?: string; threadId?: string; seq: number }, c) => c.api.community.markRead(c.tenant, c.uid, c.api.community.threadOf(c.uid, p), p.seq),
    },
    {
      name: 'getOnlineUsers',
      direction: 'in',
      summary: 'Who is online; from then on `onlineStatus` tells every change',
      payload: Type.Object({}),
      ack: Type.Object({ users: Type.Array(OnlineUser) }),
      handler: async (_p: unknown, c) => {
        const users = await c.api.presence.online(c.tenant);
        // From now on this socket hears onlineStatus whenever someone comes online or leaves.
        c.rt.join(c.socket, communityTopic.presence(c.tenant));
        return { users: users.map((u) => ({ userId: u.userId, online: u.online, status: u.status, lastSeen: u.lastSeen })) };
      },
      // Without an ack the list arrives as an onlineStatus event.
      noAck: (result, c) => c.socket.emit('onlineStatus', result),
    },
    {
      name: 'joinGroup',
      direction: 'in',
      summary: 'Join a group: its messages and typing reach you',
      payload: Type.Object({ groupId: GroupId }),
      ack: AnyAck,
      handler: (p: { groupId: string }, c) => c.api.community.join(c.tenant, c.uid, p.groupId),
    },
    {
      name: 'leaveGroup',
      direction: 'in',
      summary: 'Leave a group',
      payload: Type.Object({ groupId: GroupId }),
      ack: AnyAck,
      handler: (p: { groupId: string }, c) => c.api.community.leave(c.tenant, c.uid, p.groupId),
    },

    { name: 'message', direction: 'out', summary: 'A direct message to or from this user (also the replay after `lastSeqs`)', payload: CommunityMessage },
    { name: 'groupMessage', direction: 'out', summary: 'A message in a group this user belongs to', payload: CommunityMessage },
    {
      name: 'replay-truncated',
      direction: 'out',
      summary: 'The replay on connect stopped at its bound: where each conversation stopped, and how to page the rest over REST',
      payload: Type.Object({
        threads: Type.Array(Type.Record(Type.String(), Type.Unknown()), { description: 'Each conversation left unfinished, with its `nextAfterSeq`' }),
        total: Type.Integer(),
        next: Type.String(),
      }),
    },
    {
      name: 'typing',
      direction: 'out',
      summary: 'Someone is typing to this user or in one of their groups',
      payload: Type.Object({ from: Type.String(), name: Type.Union([Type.String(), Type.Null()]), to: Type.Optional(Type.String()), groupId: Type.Optional(Type.String()), threadId: Type.String(), isTyping: Type.Boolean() }),
    },
    {
      name: 'onlineStatus',
      direction: 'out',
      summary: 'After getOnlineUsers: someone came online or left (or the list itself, when it was sent without an ack)',
      payload: Type.Union([OnlineUser, Type.Object({ users: Type.Array(OnlineUser) })]),
    },
    { name: 'error', direction: 'out', summary: 'An event sent without an ack was refused', payload: SocketError },
  ];
}
