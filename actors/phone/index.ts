// The phone area's public surface: its API, devices, calls and the organisation's numbers.
export { createPhoneApi, type PhoneApi, type PhoneParts } from './api.js';
export * from './messages.js';
export * from './call-actor.js';
export * from './device-actor.js';
export * from './number-actor.js';
export * from './numbers.js';
export * from './reads.js';
