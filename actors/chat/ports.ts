// What the chat area needs from its node: the fan-out of what happened to the sockets that follow
// it, the AI provider, the clock and the logger. The area says *what* happened and to whom; the
// edge decides the wire event, its topic and its framing (edge/sockets/*-fanout.ts), so no
// socket.io or uWS notion reaches this area and a test can pass its own fan-out.
import type { AiProvider } from '../../core/ai.js';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config.js';
import type { Logger } from '../../core/log.js';
import type { QueueView } from '../chat-queue/index.js';
import type { CommunityMessage } from '../community/index.js';
import type { ChatData, ChatMessage, Participant } from '../chat-room/index.js';

/**
 * The connection that caused an announcement (its ack already carries the result, so it is left
 * out). Opaque to the area: only the edge that handed it in reads it.
 */
export type Origin = unknown;

/** Support chat: a chat's followers (customer, agent, watchers), an agent's sockets, the staff. */
export interface SupportFanout {
  /** The waiting queue changed: the first waiting chats, to every staff socket. */
  queueUpdated(tenant: string, view: { waiting: number; chats: QueueView[] }): void;
  /** A waiting chat's place in the queue, to that chat. */
  queuePosition(tenant: string, chatId: string, place: { chatId: string; position: number; waiting: number }): void;
  message(tenant: string, m: ChatMessage, origin?: Origin): void;
  /** Something about a chat changed (its status, a participant's typing or page). */
  chatUpdate(tenant: string, chatId: string, update: Record<string, unknown>): void;
  /** Delivery or read receipts of a chat moved. */
  receipts(tenant: string, chatId: string, event: Record<string, unknown>): void;
  /** From now on every socket of `userId` follows the chat (and stops, below). */
  follow(tenant: string, userId: string, chatId: string): void;
  unfollow(tenant: string, userId: string, chatId: string): void;
  /** To the agent's sockets: a chat was given to them. */
  chatAssigned(tenant: string, agentId: string, event: { chatId: string; chat: ChatData }): void;
  /** To the chat: an agent took it. */
  agentAssigned(tenant: string, chatId: string, event: { chatId: string; agent: Participant }): void;
  /** To one agent of a transfer (the one it left, the one it reached). */
  chatTransferred(tenant: string, agentId: string, event: Record<string, unknown>): void;
  agentChanged(tenant: string, chatId: string, event: Record<string, unknown>): void;
  chatEnded(tenant: string, chatId: string, event: Record<string, unknown>): void;
  /** A part of the AI's answer in a chat, to the chat. */
  aiStream(tenant: string, chatId: string, part: Record<string, unknown>): void;
  /** A part of an assist draft, to the asking agent's sockets only. */
  assistStream(tenant: string, agentId: string, part: Record<string, unknown>): void;
}

export interface PresenceFanout {
  /** An agent's presence changed: to every staff socket. */
  agentPresence(tenant: string, view: Record<string, unknown>): void;
  /** Someone came online or left: to the sockets watching who is online. */
  onlineStatus(tenant: string, status: { userId: string | null; online: boolean; status: string; lastSeen: string | null }): void;
}

export interface CommunityFanout {
  /** A direct message, to every socket of both users. */
  directMessage(tenant: string, users: [to: string, from: string], m: CommunityMessage, origin?: Origin): void;
  groupMessage(tenant: string, groupId: string, m: CommunityMessage, origin?: Origin): void;
  typingToUser(tenant: string, to: string, event: Record<string, unknown>): void;
  typingInGroup(tenant: string, groupId: string, event: Record<string, unknown>): void;
  /** Every socket of `userId` follows the group from now on (and stops, below). */
  followGroup(tenant: string, userId: string, groupId: string): void;
  unfollowGroup(tenant: string, userId: string, groupId: string): void;
}

export interface ChatFanout extends SupportFanout, PresenceFanout, CommunityFanout {}

declare module '../../core/actor/services.js' {
  interface NodeServices {
    /** Support chat, presence and the community announce what happened (to sockets, on the edge). */
    readonly chatFanout: ChatFanout;
    /** Answers for the chat's AI assistant. */
    readonly ai: AiProvider;
  }
}

/** The node's parts this area uses: its two ports, the clock and the logger. */
export interface ChatServices {
  readonly fanout: ChatFanout;
  readonly ai: AiProvider;
  readonly clock: Clock;
  readonly logger: Logger;
}

/** The chat settings (config `chat`). */
export type ChatSettings = Config['chat'];
