// The phone area's public surface: devices, calls and the organisation's numbers.
export * from './call-actor.js';
export * from './device-actor.js';
export * from './numbers.js';
