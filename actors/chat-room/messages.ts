// What the chat-room and chat-session actors accept and answer (a chat's messages among it), and
// their kinds' names.
import type { ChatData, ChatStatus, Participant, Receipts } from './types.js';

export const CHAT_ROOM_ACTOR = 'chat-room';

export interface OpenSpec {
  customer: Participant;
  widgetId: string | null;
  sessionId: string | null;
  /** The widget has AI on: a first message opens the chat with the AI, else in the queue. */
  ai: boolean;
}

export type ChatRoomMsg =
  | { type: 'get' }
  | { type: 'request'; customer: Participant; department?: string | null; subject?: string | null; widgetId?: string | null; sessionId?: string | null }
  | { type: 'send'; from: Participant; text: string; clientId?: string; metadata?: Record<string, unknown>; open?: OpenSpec; msgType?: 'text' | 'system' }
  | { type: 'assign'; agent: Participant; from: ChatStatus[] }
  | { type: 'transfer'; by: Participant; to: Participant | null; department?: string | null; note?: string | null; supervisor?: boolean }
  | { type: 'resume-ai'; by: Participant }
  | { type: 'requeue'; by: Participant; department?: string | null }
  | { type: 'close'; by: Participant; reason?: string | null }
  | { type: 'receipt'; by: Participant; seq: number; status: 'delivered' | 'read' };

export interface ChatRoomReply {
  chat: ChatData | null;
  /** Status before this message. */
  previous: ChatStatus | null;
  changed: boolean;
  lastSeq: number;
  message?: ChatMessage;
  duplicate?: boolean;
}

export const CHAT_SESSION_ACTOR = 'chat-session';

export interface ChatSessionData {
  [field: string]: unknown;
  sessionId: string;
  userId: string;
  kind: 'customer' | 'staff';
  email: string | null;
  chatId: string | null;
  widgetId: string | null;
  status: 'active' | 'expired';
  lastSeenAt: string;
  expiredAt: string | null;
}

export type SessionMsg =
  | {
      type: 'open';
      userId: string;
      kind: 'customer' | 'staff';
      email: string | null;
      /** The chat to use when the session is new (or to switch to on resume). */
      chatId: string | null;
      widgetId: string | null;
    }
  | { type: 'set-chat'; userId: string; chatId: string }
  | { type: 'expire'; userId: string };

export interface SessionReply {
  /** False when the session id was unknown, someone else's or expired: the caller opens a new one. */
  ok: boolean;
  resumed: boolean;
  session: ChatSessionData | null;
}

/** One message of a chat, as the room actor logs it (chatLog) and answers it. */
export interface ChatMessage {
  id: string;
  seq: number;
  chatId: string;
  from: Participant;
  text: string;
  type: 'text' | 'system';
  at: string;
  clientId?: string;
  metadata?: Record<string, unknown>;
}

/** A message as listed: with its delivery state from the other side's receipts. */
export interface ListedMessage extends ChatMessage {
  status: 'sent' | 'delivered' | 'read';
}

export function messageStatus(m: ChatMessage, r: Receipts): ListedMessage['status'] {
  const other = m.from.role === 'customer' ? r.agent : r.customer;
  if (other.read >= m.seq) return 'read';
  if (other.delivered >= m.seq) return 'delivered';
  return 'sent';
}
