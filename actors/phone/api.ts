// The phone area's API for the edge: one call per request. Device and number changes are asks to
// their actors (device-actor.ts, number-actor.ts); lists and counts read the store (reads.ts,
// numbers.ts) at the node's clock.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { callRecordId } from './call-actor.js';
import { deviceRecordId } from './device-actor.js';
import { PHONE_CALL_ACTOR, PHONE_DEVICE_ACTOR, PHONE_NUMBER_ACTOR, type CallEvent, type CallReply, type DeviceMsg, type NumberMsg, type SavedNumber } from './messages.js';
import { numberRecordId, numbersAdmin, numbersFor, type NumberAdminView, type NumberSettings, type NumberView } from './numbers.js';
import { deviceView, listDevices, phoneCounts, userPhones, type DeviceFilter, type DeviceView, type PhoneCounts, type UserPhones } from './reads.js';

/** What the area needs of its node. */
export interface PhoneParts {
  readonly runtime: ActorRuntime;
  readonly store: Store;
  readonly clock: Clock;
}

export interface PhoneApi {
  /** One message to a device's actor (register, heartbeat, unregister): the device as it now is. */
  device(tenant: string, deviceId: string, msg: DeviceMsg): Promise<DeviceView>;
  devices(tenant: string, f: DeviceFilter): DeviceView[];
  /** The numbers `email` may use, in number order. */
  numbersFor(tenant: string, email: string): NumberView[];
  numbers(tenant: string, email: string, mineOnly: boolean): NumberAdminView[];
  /** Adds a number or replaces the settings given for a known one (keyed by the number). */
  saveNumber(tenant: string, settings: NumberSettings): Promise<SavedNumber>;
  /** Removes a number (404 when unknown); answers the removed record. */
  removeNumber(tenant: string, id: string): Promise<StoredRecord>;
  userPhones(tenant: string, email: string | undefined): { rows: UserPhones[]; shared: string[] };
  counts(tenant: string): PhoneCounts;
  /** A provider's call callback: one record per call SID; a final status is never replaced by an earlier one arriving late. */
  callEvent(tenant: string, ev: CallEvent): Promise<CallReply>;
}

export function createPhoneApi(parts: PhoneParts): PhoneApi {
  const { runtime, store, clock } = parts;
  const number = <R>(tenant: string, id: string, msg: NumberMsg) => runtime.ask<R>(tenant, PHONE_NUMBER_ACTOR, id, msg);
  return {
    device: async (tenant, deviceId, msg) => deviceView(await runtime.ask<StoredRecord>(tenant, PHONE_DEVICE_ACTOR, deviceRecordId(deviceId), msg), clock.now()),
    devices: (tenant, f) => listDevices(store, tenant, f, clock.now()),
    numbersFor: (tenant, email) => numbersFor(store, tenant, email),
    numbers: (tenant, email, mineOnly) => numbersAdmin(store, tenant, email, mineOnly),
    saveNumber: (tenant, settings) => number<SavedNumber>(tenant, numberRecordId(settings.number), { type: 'save', settings }),
    removeNumber: (tenant, id) => number<StoredRecord>(tenant, id, { type: 'remove' }),
    userPhones: (tenant, email) => userPhones(store, tenant, email, clock.now()),
    counts: (tenant) => phoneCounts(store, tenant, clock.now()),
    callEvent: (tenant, ev) => runtime.ask<CallReply>(tenant, PHONE_CALL_ACTOR, callRecordId(ev.sid), ev),
  };
}
