// Enrolled scanner devices: the area's surface (its API in api.ts, its actor, its messages).
export * from './api.js';
export { devicesActor } from './actor.js';
export { DEVICES } from './messages.js';
export { DEVICE_NS, DEVICE_TOKEN_NS, DEVICE_INIT_NS, INIT_TOKEN_TTL_MS, deviceView, type Device, type DeviceView } from './model.js';
