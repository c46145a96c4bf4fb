// The /community-chat channel: attendees' direct messages and groups (spec: Events →
// /community-chat). A user's every socket gets their direct messages and their groups' messages
// (group membership is stored, so a new socket rejoins every group on connect). On connect a
// socket is sent what its user has not seen in each of their conversations: after the last seq
// the client names per conversation (`lastSeqs`), else after the user's read marker, so a first
// connect gets the direct messages sent before the user ever had a socket. The replay is bounded
// (chat.communityReplayLimit); past it `replay-truncated` says where each conversation stopped.
import type { Socket } from 'socket.io';
import { presenceUser, type CommunityUser } from '../../actors/chat/index.js';
import type { ChannelHost } from './channel-host.js';
import { communityEvents, type CommunityConn } from './community-events.js';
import { bindEvents, compileEvents } from './events.js';
import { handshake, logDisconnect, type SocketData } from './handshake.js';
import { NS_COMMUNITY } from './realtime.js';
import { CommunityHandshake, compilePayload } from './schemas.js';
import { communityTopic } from './topics.js';

/** How many unfinished conversations `replay-truncated` names (the thread list has them all). */
const REPLAY_STOPS_LISTED = 100;

export function communityChannel(f: ChannelHost): void {
  const { deps, rt, api } = f;
  const { community: svc, presence } = api;
  const cfg = deps.config.chat;
  const events = compileEvents(communityEvents(cfg), deps.config.http.compileAtStart);
  const nsp = rt.io!.of(NS_COMMUNITY);
  nsp.use(handshake(deps, f.orgs, compilePayload(CommunityHandshake)));

  nsp.on('connection', (socket: Socket) => {
    const { user, auth } = socket.data as SocketData & { auth: CommunityHandshake };
    const tenant = user.tenant;
    const uid = user.userId;
    const userTopic = communityTopic.user(tenant, uid);
    const socketId = `${deps.config.nodeId}:${socket.id}`;
    const me: CommunityUser = { id: uid };
    if (user.name) me.name = user.name;
    if (user.email) me.email = user.email;
    const conn: CommunityConn = { socket, tenant, uid, me, api, rt };

    const connect = async () => {
      rt.addUserSocket(userTopic, socket);
      const groups = await svc.groups(tenant, uid);
      if (!socket.connected) return;
      for (const g of groups) rt.join(socket, communityTopic.group(tenant, g));
      // Subscribed first, then read: a message sent meanwhile may come twice (clients dedupe by
      // seq), never not at all.
      const { messages, stopped } = await svc.unseen(tenant, uid, auth.lastSeqs ?? {}, cfg.communityReplayLimit);
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

    bindEvents(socket, { user, events, conn, ready, logger: deps.logger, documentLimits: deps.config.documents, charge: () => f.chargeEvent(tenant, user.principal) });
  });
}
