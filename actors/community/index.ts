// The community area's public surface: direct messages and groups between a tenant's users.
export * from './actor.js';
export * from './messages.js';
