// The inbox area's public surface: conversations per contact and channel, their actor, and the
// contact rules other areas match on (the CRM's customer view reads conversations by contact).
export { CHANNELS, conversationId, normalizeContact, normalizePhone, parseParties, type Channel } from './contact.js';
export { COMM_MESSAGE, INBOX_CONVERSATION, inboxActor, messageIdFor } from './actor.js';
export { CONVERSATION_STATUSES, INBOX_ACTOR, type ConversationChange, type ConversationStatus, type InboundMessage, type InboxMsg, type InboxReply, type OutboundMessage, type Sender } from './messages.js';
export { createInboxApi, type ConversationRef, type InboxApi, type InboxParts } from './api.js';
