// The chat-room area's public surface: a conversation's actor, a connection's session actor, and
// the chat record's shape (the chat area's API drives them).
export * from './messages.js';
export * from './room-actor.js';
export * from './session-actor.js';
export * from './types.js';
