// The chat feature area (issue 8): support chat between customers, agents and the AI, the
// attendee community, presence, and AI answers over Server-Sent Events.
//
// - socket.io on the edge's uWS app, path /socket.io, websocket only: channels /chat and
//   /community-chat (edge/sockets/);
// - REST: /chat/* (sessions, history, queue, presence), POST /client/community/messages,
//   GET /ai/stream/:streamId (edge/routes/chat/);
// - the chat area (actors/chat: createChatApi over the actors chat-room and chat-session, per
//   chat and per session, chat-queue and presence, per tenant, community, per conversation).
import { CHAT_DATATYPE, chatActors, chatIndexes } from '../../actors/chat/index.js';
import { CUSTOMER_ACTIVITY } from '../../actors/crm/index.js';
import type { AppDeps } from '../deps.js';
import type { Module } from '../module.js';
import { aiStreamRoutes } from '../routes/chat/ai-stream.js';
import { chatRoutes } from '../routes/chat/chat.js';
import { communityRoutes } from '../routes/chat/community.js';
import { presenceRoutes } from '../routes/chat/presence.js';

/** This node's chat feature (built with the node's ports in edge/app.ts), bound to the node. */
const feature = (deps: AppDeps) => deps.services.sockets.use(deps);

export const chatModule: Module = {
  name: 'chat',
  actors: chatActors,
  indexes: [...chatIndexes, [CUSTOMER_ACTIVITY, 'data.email']],
  // Chats newest first (all, of a status, an agent or a customer) and a person's activity
  // timeline, page by index at any size.
  listings: [
    { datatype: CHAT_DATATYPE, equals: [], sort: 'createdate' },
    { datatype: CHAT_DATATYPE, equals: ['data.status'], sort: 'createdate' },
    { datatype: CHAT_DATATYPE, equals: ['data.agentId'], sort: 'createdate' },
    { datatype: CHAT_DATATYPE, equals: ['data.customerEmail'], sort: 'createdate' },
    { datatype: CUSTOMER_ACTIVITY, equals: ['data.email'], sort: 'data.at' },
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
