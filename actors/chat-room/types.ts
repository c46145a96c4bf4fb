// Shapes shared by the chat actors and the edge: a chat (support conversation), its receipts and
// the people in it (a chat's messages: messages.ts).

export const CHAT_DATATYPE = 'chat';
export const CHAT_SESSION_DATATYPE = 'chat_session';
export const CHAT_CONFIG_DATATYPE = 'chat_config';

/** The ordered log of one chat's messages; the sequence number is the message's `seq`. */
export const chatLog = (chatId: string) => `chat:${chatId}`;

/**
 * `ai`: the AI answers; `queued`: waiting for an agent; `assigned`: an agent has it; `closed`.
 * new → ai | queued → assigned → closed, with transfer (assigned → assigned | queued), takeover
 * (ai | queued → assigned) and resume-ai (assigned | queued → ai).
 */
export type ChatStatus = 'ai' | 'queued' | 'assigned' | 'closed';

export type Role = 'customer' | 'agent' | 'ai' | 'system';

export interface Participant {
  id: string;
  role: Role;
  name?: string;
  email?: string;
}

export interface Receipts {
  /** Highest seq delivered to / read by the customer side. */
  customer: { delivered: number; read: number };
  /** Highest seq delivered to / read by the agent side. */
  agent: { delivered: number; read: number };
}

export interface ChatData {
  [field: string]: unknown;
  chatId: string;
  status: ChatStatus;
  customer: Participant;
  /** Lower-cased customer email (indexed: /chat/messages/:email). */
  customerEmail: string | null;
  agent: Participant | null;
  /** The assigned agent's id (indexed: an agent's chats on connect). */
  agentId: string | null;
  department: string | null;
  subject: string | null;
  widgetId: string | null;
  sessionId: string | null;
  queuedAt: string | null;
  assignedAt: string | null;
  closedAt: string | null;
  closedBy: Participant | null;
  closeReason: string | null;
  receipts: Receipts;
  transfers: Array<{ from: Participant | null; to: Participant | null; department: string | null; note: string | null; at: string }>;
}

export function emptyReceipts(): Receipts {
  return { customer: { delivered: 0, read: 0 }, agent: { delivered: 0, read: 0 } };
}
