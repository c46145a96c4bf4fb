// Webhook endpoints and deliveries: the area's surface (its API in api.ts, its actor, its messages).
export * from './api.js';
export { webhooksActor } from './actor.js';
export { WEBHOOKS, WEBHOOKS_KEY, type EndpointChange } from './messages.js';
