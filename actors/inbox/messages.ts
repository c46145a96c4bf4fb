// What an inbox conversation's actor accepts and answers, and its kind's name.
import type { StoredRecord } from '../../core/store/record.js';
import type { Channel } from './contact.js';

export const INBOX_ACTOR = 'inbox-conversation';

export const CONVERSATION_STATUSES = ['open', 'pending', 'closed'] as const;

export type ConversationStatus = (typeof CONVERSATION_STATUSES)[number];

export interface InboundMessage {
  channel: Channel;
  /** Normalized (see contact.ts). */
  contact: string;
  contactName?: string;
  /** Our side: the number or address the message was sent to. */
  address?: string;
  body: string;
  subject?: string;
  /** Provider id (message SID, social message id): a repeat with the same one is ignored. */
  externalId?: string;
  at?: string;
  meta?: Record<string, unknown>;
}

export interface OutboundMessage {
  body: string;
  subject?: string;
  /** Our side (an SMS number, a sender address); defaults to the address the contact last wrote to. */
  from?: string;
}

export interface Sender {
  email?: string;
  id: string;
}

export type InboxMsg =
  | { type: 'receive'; message: InboundMessage }
  | ({ type: 'update'; channel?: Channel; contact?: string } & ConversationChange);

export interface InboxReply {
  conversation: StoredRecord;
  message?: StoredRecord;
  duplicate?: boolean;
}

/** What an update of a conversation may change, and who changes it. */
export interface ConversationChange {
  status?: ConversationStatus;
  read?: boolean;
  messageIds?: string[];
  assignedTo?: string | null;
  /** A message to send through the channel's outbox, in the same write. */
  send?: OutboundMessage;
  by: Sender;
}
