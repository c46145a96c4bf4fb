// The presence area's public surface: who of a tenant's agents and customers is online.
export * from './actor.js';
export * from './messages.js';
