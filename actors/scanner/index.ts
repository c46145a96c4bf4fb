// The door scanner area's public surface: the per-event scanner actor and its messages, ticket
// lookup by code, the signed codes and the event's door keys, the door's read barrier and backlog, and the ticket
// operations the scanner runs as the single writer of an event's tickets.
export * from './messages.js';
export * from './scanner-actor.js';
export * from './state.js';
export * from './locate.js';
export * from './ticket-code.js';
export * from './door-keys.js';
export * from './ticket-ops.js';
export * from './door-tally.js';
export * from './door-state.js';
export * from './local-day.js';
export * from './checkin-list.js';
export * from './scan-entry.js';
export * from './scan-log.js';
export * from './door-fields.js';
export * from './door-backlog.js';
export * from './record-overlay.js';
export * from './door-feed.js';
export * from './unmatched-scans-actor.js';
export * from './door-view.js';
export * from './scan-rate.js';
