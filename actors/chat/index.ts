// The chat area's public surface: support chat (routing, the queue, AI hand-over, transfer),
// presence, the attendee community and AI answers as streams. The edge calls these; the actors
// behind them (chat-room, chat-session, chat-queue, presence, community) are reached only here.
import { chatQueueActor } from '../chat-queue/index.js';
import { CHAT_CONFIG_DATATYPE, CHAT_DATATYPE, chatRoomActor, chatSessionActor } from '../chat-room/index.js';
import { communityActor } from '../community/index.js';
import { presenceActor } from '../presence/index.js';

/** The actor kinds behind this area: chat-room and chat-session (per chat, per session), chat-queue and presence (per tenant), community (per conversation). */
export const chatActors = [chatRoomActor, chatSessionActor, chatQueueActor, presenceActor, communityActor];

/** The indexes its reads rely on. */
export const chatIndexes: ReadonlyArray<readonly [string, string]> = [
  [CHAT_DATATYPE, 'data.status'],
  [CHAT_DATATYPE, 'data.agentId'],
  [CHAT_DATATYPE, 'data.customerEmail'],
  [CHAT_CONFIG_DATATYPE, 'data.chatId'],
];

export { createChatApi, type ChatApi, type ChatParts } from './api.js';
export type { MessagePage, WidgetConfig } from './chat-service.js';
export { isSupervisor, SUPERVISOR_ROLES } from './roles.js';
export { CHAT_CONFIG_DATATYPE, CHAT_DATATYPE, type ChatData, type ChatMessage, type Participant } from '../chat-room/index.js';
export type { ChatService } from './chat-service.js';
export type { AgentSession, ChatConnection, ChatConnections, ChatUser, CustomerWelcome, Replay } from './chat-connections.js';
export type { CommunityService, ReplayStop, ThreadSummary } from './community-service.js';
export { presenceUser, type PresenceService } from './presence-service.js';
export type { AiStream, AiStreams, StreamAudience, StreamEnd, StreamEvent } from './ai-streams.js';
export type { CommunityMessage, CommunityUser } from '../community/index.js';
export type { ChatFanout, ChatServices, ChatSettings, CommunityFanout, Origin, PresenceFanout, SupportFanout } from './ports.js';
