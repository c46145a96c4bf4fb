// The check-in queue area's public surface.
export { checkinQueueActor } from './actor.js';
export { CHECKIN_ACTOR, type AssignReply, type CheckinMessage, type ClearReply } from './messages.js';
export * from './queries.js';
export { createCheckinApi, type BookingCheckin, type CheckinApi, type CheckinParts, type WalkIn } from './api.js';
