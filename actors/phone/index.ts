// The phone area's public surface: devices, calls and the organisation's numbers.
export * from './call.js';
export * from './device.js';
export * from './numbers.js';
