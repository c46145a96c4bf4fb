// The chat feature area (issue 8): support chat between customers, agents and the AI, the
// attendee community, presence, and AI answers over Server-Sent Events.
//
// - socket.io on the edge's uWS app, path /socket.io, websocket only: channels /chat and
//   /community-chat (edge/sockets/);
// - REST: /chat/* (sessions, history, queue, presence), POST /client/community/messages,
//   GET /ai/stream/:streamId (edge/routes/chat/);
// - actors: chat-room and chat-session (per chat, per session), chat-queue and presence (per
//   tenant), community (per conversation) (actors/).
import { chatQueueActor } from '../../actors/chat-queue/chat-queue.js';
import { chatRoomActor } from '../../actors/chat-room/chat-room.js';
import { chatSessionActor } from '../../actors/chat-room/session.js';
import { CHAT_CONFIG_DATATYPE, CHAT_DATATYPE } from '../../actors/chat-room/types.js';
import { communityActor } from '../../actors/community/community.js';
import { CUSTOMER_ACTIVITY } from '../../actors/crm/customer-activity.js';
import { presenceActor } from '../../actors/presence/presence.js';
import type { AppDeps, Module } from '../deps.js';
import { aiStreamRoutes } from '../routes/chat/ai-stream.js';
import { chatRoutes } from '../routes/chat/chat.js';
import { communityRoutes } from '../routes/chat/community.js';
import { presenceRoutes } from '../routes/chat/presence.js';

/** This node's chat feature (built with the node's ports in edge/app.ts), bound to the node. */
const feature = (deps: AppDeps) => deps.services.sockets.use(deps);

export const chatModule: Module = {
  name: 'chat',
  actors: [chatRoomActor, chatSessionActor, chatQueueActor, presenceActor, communityActor],
  indexes: [
    [CHAT_DATATYPE, 'data.status'],
    [CHAT_DATATYPE, 'data.agentId'],
    [CHAT_DATATYPE, 'data.customerEmail'],
    [CHAT_CONFIG_DATATYPE, 'data.chatId'],
    [CUSTOMER_ACTIVITY, 'data.email'],
  ],
  routes(deps) {
    const f = feature(deps);
    return [...chatRoutes(f, deps), ...presenceRoutes(f, deps), ...communityRoutes(f, deps), ...aiStreamRoutes(f, deps)];
  },
  attach(edge, deps) {
    feature(deps).attach(edge.app, edge.limiter);
  },
  start(deps) {
    feature(deps).start();
  },
  async stop(deps) {
    await feature(deps).stop();
  },
};
