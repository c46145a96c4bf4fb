// The inbox area's public surface: conversations per contact and channel, their actor, and the
// contact rules other areas match on (the CRM's customer view reads conversations by contact).
export { CHANNELS, conversationId, normalizeContact, normalizePhone, parseParties, type Channel } from './contact.js';
export {
  COMM_MESSAGE,
  CONVERSATION_STATUSES,
  INBOX_ACTOR,
  INBOX_CONVERSATION,
  inboxActor,
  messageIdFor,
  type ConversationStatus,
  type InboundMessage,
  type InboxMsg,
  type InboxReply,
  type OutboundMessage,
  type Sender,
} from './actor.js';
export { createInboxApi, type ConversationChange, type ConversationRef, type InboxApi, type InboxParts } from './api.js';
