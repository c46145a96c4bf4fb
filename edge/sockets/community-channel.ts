// The /community-chat channel: attendees' direct messages and groups (spec: Events →
// /community-chat). A user's every socket gets their direct messages and their groups' messages
// (group membership is stored, so a new socket rejoins every group on connect). On connect a
// socket is sent what its user has not seen in each of their conversations: after the last seq
// the client names per conversation (`lastSeqs`), else after the user's read marker, so a first
// connect gets the direct messages sent before the user ever had a socket. The replay is bounded
// (chat.communityReplayLimit); past it `replay-truncated` says where each conversation stopped.
import type { Socket } from 'socket.io';
import { dmKey, groupKey, userGroupsNs, type CommunityUser } from '../../actors/community/community.js';
import { appError } from '../../core/errors.js';
import type { ChatFeature } from './chat-feature.js';
import { bindEvents, type EventSpec } from './events.js';
import { handshake, logDisconnect, type SocketData } from './handshake.js';
import { presenceUser } from './presence-service.js';
import { NS_COMMUNITY } from './realtime.js';
import { CommunityHandshake, communityEvents, compileAll, compilePayload } from './schemas.js';
import { communityTopic } from './topics.js';

/** How many unfinished conversations `replay-truncated` names (the thread list has them all). */
const REPLAY_STOPS_LISTED = 100;

/** What the event handlers read of a /community-chat socket. */
function who(socket: Socket): { tenant: string; uid: string; me: CommunityUser } {
  const { user } = socket.data as SocketData;
  const me: CommunityUser = { id: user.userId };
  if (user.name) me.name = user.name;
  if (user.email) me.email = user.email;
  return { tenant: user.tenant, uid: user.userId, me };
}

export function communityChannel(f: ChatFeature): void {
  const { deps, rt, community: svc, presence } = f;
  const cfg = deps.config.chat;
  const validators = compileAll(communityEvents(cfg.maxMessageLength));
  const nsp = rt.io!.of(NS_COMMUNITY);
  nsp.use(handshake(deps, compilePayload(CommunityHandshake)));
  const isMember = (tenant: string, uid: string, groupId: string) => deps.store.getKv(tenant, userGroupsNs(uid), groupId) !== undefined;

  // One table for every socket of the namespace (events.ts): handlers find the user on the socket.
  const events: Record<string, EventSpec> = {
    sendMessage: {
      handler: (p: { to: string; text: string; clientId?: string }, socket) => {
        const { tenant, me } = who(socket);
        return svc.sendDirect(tenant, me, p.to, p.text, p.clientId, socket);
      },
    },
    sendGroupMessage: {
      handler: (p: { groupId: string; text: string; clientId?: string }, socket) => {
        const { tenant, me } = who(socket);
        return svc.sendGroup(tenant, me, p.groupId, p.text, p.clientId, socket);
      },
    },
    typing: {
      handler: (p: { to: string; isTyping?: boolean }, socket) => {
        const { tenant, uid, me } = who(socket);
        if (p.to === uid) throw appError('ERR_BAD_REQUEST', 'typing to yourself');
        svc.setTyping(tenant, me, { to: p.to }, p.isTyping ?? true);
        return { ok: true };
      },
    },
    groupTyping: {
      handler: (p: { groupId: string; isTyping?: boolean }, socket) => {
        const { tenant, uid, me } = who(socket);
        if (!isMember(tenant, uid, p.groupId)) throw appError('ERR_FORBIDDEN', 'join the group first');
        svc.setTyping(tenant, me, { groupId: p.groupId }, p.isTyping ?? true);
        return { ok: true };
      },
    },
    markRead: {
      handler: (p: { with?: string; groupId?: string; threadId?: string; seq: number }, socket) => {
        const { tenant, uid } = who(socket);
        const threadId = p.with ? dmKey(uid, p.with) : p.groupId ? groupKey(p.groupId) : p.threadId;
        if (!threadId) throw appError('ERR_VALIDATION', 'payload needs one of with, groupId or threadId');
        return svc.markRead(tenant, uid, threadId, p.seq);
      },
    },
    getOnlineUsers: {
      handler: async (_p: unknown, socket) => {
        const { tenant } = who(socket);
        const r = await presence.ask(tenant, { type: 'list', onlineOnly: true });
        // From now on this socket hears onlineStatus whenever someone comes online or leaves.
        rt.join(socket, communityTopic.presence(tenant));
        return { users: (r.users ?? []).map((u) => ({ userId: u.userId, online: u.online, status: u.status, lastSeen: u.lastSeen })) };
      },
      // Without an ack the list arrives as an onlineStatus event.
      noAck: (result, socket) => socket.emit('onlineStatus', result),
    },
    joinGroup: {
      handler: (p: { groupId: string }, socket) => {
        const { tenant, uid } = who(socket);
        return svc.join(tenant, uid, p.groupId);
      },
    },
    leaveGroup: {
      handler: (p: { groupId: string }, socket) => {
        const { tenant, uid } = who(socket);
        if (!isMember(tenant, uid, p.groupId)) throw appError('ERR_NOT_FOUND', `group membership ${p.groupId}`);
        return svc.leave(tenant, uid, p.groupId);
      },
    },
  };

  nsp.on('connection', (socket: Socket) => {
    const { user, auth } = socket.data as SocketData & { auth: CommunityHandshake };
    const tenant = user.tenant;
    const uid = user.userId;
    const userTopic = communityTopic.user(tenant, uid);
    const socketId = `${deps.config.nodeId}:${socket.id}`;

    const connect = async () => {
      rt.addUserSocket(userTopic, socket);
      const groups = deps.store.listKv(tenant, userGroupsNs(uid)).map((e) => e.key);
      for (const g of groups) rt.join(socket, communityTopic.group(tenant, g));
      // Subscribed first, then read: a message sent meanwhile may come twice (clients dedupe by
      // seq), never not at all.
      const { messages, stopped } = svc.unseen(tenant, uid, auth.lastSeqs ?? {}, cfg.communityReplayLimit);
      for (const m of messages) socket.emit(m.groupId !== undefined ? 'groupMessage' : 'message', m);
      if (stopped.length > 0) {
        socket.emit('replay-truncated', {
          threads: stopped.slice(0, REPLAY_STOPS_LISTED),
          total: stopped.length,
          next: 'page each with GET /client/community/threads/:threadId/messages?afterSeq=<nextAfterSeq>; GET /client/community/threads?unread=true lists them all',
        });
      }
      await presence.connect(tenant, presenceUser(user), socketId);
    };
    const ready = connect();
    ready.catch((err: unknown) => {
      deps.logger.error({ err, tenant }, 'community connection set-up failed');
      socket.disconnect(true);
    });

    socket.on('disconnect', (reason: string) => {
      logDisconnect(socket, reason, deps.logger);
      rt.removeUserSocket(userTopic, socket);
      void ready.then(() => presence.disconnect(tenant, presenceUser(user), socketId)).catch(() => undefined);
    });

    bindEvents(socket, { user, validators, events, ready, logger: deps.logger, documentLimits: deps.config.documents, charge: () => f.chargeEvent(tenant, user.principal) });
  });
}
