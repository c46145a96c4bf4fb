// The check-in queue area's public surface.
export { checkinQueueActor, CHECKIN_ACTOR, type AssignReply, type CheckinMessage, type ClearReply } from './actor.js';
export * from './queries.js';
export { createCheckinApi, type CheckinApi, type CheckinParts } from './api.js';
