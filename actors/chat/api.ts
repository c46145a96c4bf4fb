// The chat area's API: support chat, presence, the community and AI streams over one node's
// runtime, store and ports.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { NodeServices } from '../../core/actor/services.js';
import type { Clock } from '../../core/clock.js';
import type { OwnerReads } from '../../core/cluster/owner-reads-actor.js';
import type { Logger } from '../../core/log.js';
import type { Store } from '../../core/store/store.js';
import { AiStreams, type StreamEvent } from './ai-streams.js';
import { ChatConnections } from './chat-connections.js';
import { ChatService } from './chat-service.js';
import { CommunityService } from './community-service.js';
import type { ChatServices, ChatSettings } from './ports.js';
import { PresenceService } from './presence-service.js';

export interface ChatApi {
  readonly chat: ChatService;
  /** A /chat connection's rules: its session and chat, replay, who may touch which chat. */
  readonly connections: ChatConnections;
  readonly presence: PresenceService;
  readonly community: CommunityService;
  /** The AI answers of this node (and in cluster mode copies of the others'), readable as they arrive (GET /ai/stream/:streamId). */
  readonly streams: AiStreams;
  /** Stops timers and AI answers in flight (node shutdown). */
  close(): void;
}

/** What the chat area runs over: a node's runtime, store and ports (`services.chatFanout`, `services.ai`; declared in ports.ts). */
export interface ChatParts {
  readonly runtime: ActorRuntime;
  readonly store: Store;
  readonly services: Pick<NodeServices, 'chatFanout' | 'ai'>;
  /** Where the area's reads of a tenant run: its owner (a socket may be on any node). */
  readonly ownerReads: OwnerReads;
}

/** The chat area over a node's parts. A test passes its own ports. */
export function createChatApi(
  { runtime, store, services: ports, ownerReads }: ChatParts,
  node: { settings: ChatSettings; clock: Clock; logger: Logger; relay?: (ev: StreamEvent) => void },
): ChatApi {
  const { settings } = node;
  const services: ChatServices = { fanout: ports.chatFanout, ai: ports.ai, clock: node.clock, logger: node.logger };
  // Cluster mode: this node's answers are told to the others (`relay`), which keep copies (AiStreams.mirror).
  const streams = new AiStreams(settings.aiStreamTtlMs, () => services.clock.now(), node.relay);
  const presence = new PresenceService(runtime, services, settings);
  const chat = new ChatService(runtime, store, services, streams, presence, ownerReads);
  const community = new CommunityService(runtime, store, services, settings, ownerReads);
  return {
    chat,
    connections: new ChatConnections(runtime, store, services.clock, chat, ownerReads),
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
