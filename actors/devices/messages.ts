// What the tenant's scanner-devices actor accepts, and its kind's name: callers address it with these.
import type { Device } from './model.js';

export const DEVICES = 'scanner-devices';
export const DEVICES_KEY = '_';

export type DevicesMsg =
  | { type: 'enroll'; device: Omit<Device, 'id' | 'createdAt' | 'scanCount' | 'initExpiresAt'>; initDigest: string }
  | { type: 'initialize'; initDigest: string; tokenDigest: string; hardwareId?: string }
  | { type: 'revoke'; id: string; by: string }
  /** Activity noted in memory on a node since its last flush. */
  | { type: 'seen'; devices: Array<{ id: string; lastSeenAt: number; scans: number }> };
