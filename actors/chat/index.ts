// The chat area's public surface: support chat (routing, the queue, AI hand-over, transfer),
// presence, the attendee community and AI answers as streams. The edge calls these; the actors
// behind them (chat-room, chat-session, chat-queue, presence, community) are reached only here.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { NodeServices } from '../../core/actor/services.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/log.js';
import type { Store } from '../../core/store/store.js';
import { chatQueueActor } from '../chat-queue/index.js';
import { CHAT_CONFIG_DATATYPE, CHAT_DATATYPE, chatRoomActor, chatSessionActor } from '../chat-room/index.js';
import { communityActor } from '../community/index.js';
import { presenceActor } from '../presence/index.js';
import { AiStreams } from './ai-streams.js';
import { ChatConnections } from './chat-connections.js';
import { ChatService } from './chat-service.js';
import { CommunityService } from './community-service.js';
import type { ChatServices, ChatSettings } from './ports.js';
import { PresenceService } from './presence-service.js';

/** The actor kinds behind this area: chat-room and chat-session (per chat, per session), chat-queue and presence (per tenant), community (per conversation). */
export const chatActors = [chatRoomActor, chatSessionActor, chatQueueActor, presenceActor, communityActor];

/** The indexes its reads rely on. */
export const chatIndexes: ReadonlyArray<readonly [string, string]> = [
  [CHAT_DATATYPE, 'data.status'],
  [CHAT_DATATYPE, 'data.agentId'],
  [CHAT_DATATYPE, 'data.customerEmail'],
  [CHAT_CONFIG_DATATYPE, 'data.chatId'],
];

export interface ChatApi {
  readonly chat: ChatService;
  /** A /chat connection's rules: its session and chat, replay, who may touch which chat. */
  readonly connections: ChatConnections;
  readonly presence: PresenceService;
  readonly community: CommunityService;
  /** The AI answers of this node, readable as they arrive (GET /ai/stream/:streamId). */
  readonly streams: AiStreams;
  /** Stops timers and AI answers in flight (node shutdown). */
  close(): void;
}

/**
 * The chat area over a node's runtime, store and ports (`services.chatFanout`, `services.ai`;
 * declared in ports.ts). A test passes its own ports.
 */
export function createChatApi(
  runtime: ActorRuntime,
  store: Store,
  ports: Pick<NodeServices, 'chatFanout' | 'ai'>,
  node: { settings: ChatSettings; clock: Clock; logger: Logger },
): ChatApi {
  const { settings } = node;
  const services: ChatServices = { fanout: ports.chatFanout, ai: ports.ai, clock: node.clock, logger: node.logger };
  const streams = new AiStreams(settings.aiStreamTtlMs, () => services.clock.now());
  const presence = new PresenceService(runtime, services, settings);
  const chat = new ChatService(runtime, store, services, streams, presence);
  const community = new CommunityService(runtime, store, services, settings);
  return {
    chat,
    connections: new ChatConnections(runtime, store, services.clock, chat),
    presence,
    community,
    streams,
    close() {
      presence.close();
      community.close();
      chat.shutdown();
    },
  };
}

export type { MessagePage, WidgetConfig } from './chat-service.js';
export { isSupervisor, SUPERVISOR_ROLES } from './roles.js';
export { CHAT_CONFIG_DATATYPE, CHAT_DATATYPE, type ChatData, type ChatMessage, type Participant } from '../chat-room/index.js';
export type { ChatService } from './chat-service.js';
export type { AgentSession, ChatConnection, ChatConnections, ChatUser, CustomerWelcome, Replay } from './chat-connections.js';
export type { CommunityService, ReplayStop, ThreadSummary } from './community-service.js';
export { presenceUser, type PresenceService } from './presence-service.js';
export type { AiStream, AiStreams, StreamAudience, StreamEnd } from './ai-streams.js';
export type { CommunityMessage, CommunityUser } from '../community/index.js';
export type { ChatFanout, ChatServices, ChatSettings, CommunityFanout, Origin, PresenceFanout, SupportFanout } from './ports.js';
