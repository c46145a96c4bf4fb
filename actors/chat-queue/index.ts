// The chat-queue area's public surface: the tenant's queue of chats waiting for an agent.
export * from './actor.js';
export * from './messages.js';
