// What the phone actors (call, device, number) accept and answer, and their kinds' names.
import type { StoredRecord } from '../../core/store/record.js';
import type { NumberSettings } from './numbers.js';

export const PHONE_CALL_ACTOR = 'phone-call';

export interface CallEvent {
  sid: string;
  direction: 'inbound' | 'outbound';
  from: string;
  to: string;
  status: string;
  durationSeconds?: number;
  startedAt?: string;
  endedAt?: string;
  recording?: { sid: string; url: string; durationSeconds?: number };
}

export interface CallReply {
  call: StoredRecord;
  recording?: StoredRecord;
}

export const PHONE_DEVICE_ACTOR = 'phone-device';

export interface DeviceOwner {
  email: string;
  identity: string;
  userId: string;
}

export type DeviceMsg =
  | {
      type: 'register';
      owner: DeviceOwner;
      deviceId: string;
      platform: string;
      label?: string;
      capabilities: string[];
      clientInfo?: Record<string, unknown>;
    }
  | { type: 'heartbeat'; email: string }
  | { type: 'unregister'; email: string; admin: boolean };

export const PHONE_NUMBER_ACTOR = 'phone-number';

export type NumberMsg = { type: 'save'; settings: NumberSettings } | { type: 'remove' };

export interface SavedNumber {
  rec: StoredRecord;
  created: boolean;
  assignedTo: string[];
}
