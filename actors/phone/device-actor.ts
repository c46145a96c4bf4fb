// Softphone devices (datatype `phone_device`, id derived from the client's deviceId). One actor per
// device serializes register, heartbeat and unregister. A device is online while its last
// heartbeat (or registration) is younger than the TTL (spec: Limits → Phone device heartbeat:
// the client beats every 60 s, the server keeps a device 90 s); "online" is computed when read,
// from the stored `lastSeenAt` and the clock, so it needs no timer and survives a restart.
import type { ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { stableId } from '../../core/stable-id.js';
import { type DeviceMsg, PHONE_DEVICE_ACTOR } from './messages.js';

export const PHONE_DEVICE = 'phone_device';
export const HEARTBEAT_INTERVAL_SECONDS = 60;
export const HEARTBEAT_TTL_SECONDS = 90;
export const DEVICE_CAPABILITIES = ['voice', 'sms'] as const;

export function deviceRecordId(deviceId: string): string {
  return stableId('phone-device', deviceId);
}

export function isOnline(device: StoredRecord, now: number): boolean {
  const seen = Date.parse(String(device.data.lastSeenAt));
  return Number.isFinite(seen) && now - seen < HEARTBEAT_TTL_SECONDS * 1000;
}

type State = { device: StoredRecord | undefined };

export const phoneDeviceActor: ActorKind<State, DeviceMsg, StoredRecord> = {
  kind: PHONE_DEVICE_ACTOR,
  activate(ctx: ActivationContext): State {
    return { device: ctx.store.getRecord(ctx.tenant, PHONE_DEVICE, ctx.key) };
  },
  receive(state, msg, ctx) {
    const now = ctx.clock.now();
    const iso = new Date(now).toISOString();
    const cur = state.device;
    switch (msg.type) {
      case 'register': {
        const data = {
          deviceId: msg.deviceId,
          email: msg.owner.email,
          identity: msg.owner.identity,
          userId: msg.owner.userId,
          platform: msg.platform,
          label: msg.label ?? msg.platform,
          capabilities: msg.capabilities,
          clientInfo: msg.clientInfo ?? {},
          // A device moving to another user (a shared handset) is registered afresh.
          registeredAt: cur && cur.data.email === msg.owner.email ? cur.data.registeredAt : iso,
          lastSeenAt: iso,
        };
        const next = cur
          ? nextVersion(cur, { data: data, state: 'registered' }, now)
          : newRecord(ctx.tenant, PHONE_DEVICE, data, { sk: ctx.key, state: 'registered', now });
        ctx.batch.putRecord(next, cur ? cur.version : 0);
        state.device = next;
        return next;
      }
      case 'heartbeat': {
        // Another user's device answers as unknown: ids are not a way to probe who has what.
        if (!cur || cur.data.email !== msg.email) throw appError('ERR_NOT_FOUND', 'device (register it first)');
        const next = nextVersion(cur, { data: { ...cur.data, lastSeenAt: iso } }, now);
        ctx.batch.putRecord(next, cur.version);
        state.device = next;
        return next;
      }
      case 'unregister': {
        if (!cur || (!msg.admin && cur.data.email !== msg.email)) throw appError('ERR_NOT_FOUND', 'device');
        ctx.batch.deleteRecord(ctx.tenant, PHONE_DEVICE, cur.sk, cur.version);
        state.device = undefined;
        return cur;
      }
    }
  },
};
