// The tenant's one writer of its scanner devices: enrolment, the single use of an initialization
// token, revocation, and the activity the nodes note in memory (activity.ts). It reads its own
// writes (a low-rate actor), so two initializations racing for one token see each other: one wins.
import type { ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { DEVICES, type DevicesMsg } from './messages.js';
import {
  DEVICE_INIT_NS,
  DEVICE_NS,
  DEVICE_TOKEN_NS,
  INIT_TOKEN_TTL_MS,
  MAX_LIVE_DEVICES,
  type Device,
  type DeviceInitEntry,
  type DeviceTokenEntry,
} from './model.js';

/** Every refusal is checked before anything is written. */
export const devicesActor: ActorKind<null, DevicesMsg, unknown> = {
  kind: DEVICES,
  readsOwnWrites: true,
  refusalKeepsState: true,
  activate: () => null,
  receive(_state, msg, ctx) {
    const now = ctx.clock.now();
    const get = (id: string) => ctx.store.getKv<Device>(ctx.tenant, DEVICE_NS, id);
    switch (msg.type) {
      case 'enroll': {
        const live = ctx.store.listKv<Device>(ctx.tenant, DEVICE_NS).filter((e) => e.value.revokedAt === undefined).length;
        if (live >= MAX_LIVE_DEVICES) throw appError('ERR_CONFLICT', `the organisation has ${live} scanner devices not revoked, the most it may have; revoke some first`);
        const d: Device = { ...msg.device, id: newId(now), createdAt: now, initExpiresAt: now + INIT_TOKEN_TTL_MS, scanCount: 0 };
        ctx.batch.putKv(ctx.tenant, DEVICE_NS, d.id, d);
        ctx.batch.putKv(ctx.tenant, DEVICE_INIT_NS, msg.initDigest, { deviceId: d.id, expiresAt: d.initExpiresAt! } satisfies DeviceInitEntry);
        return d;
      }
      case 'initialize': {
        const init = ctx.store.getKv<DeviceInitEntry>(ctx.tenant, DEVICE_INIT_NS, msg.initDigest);
        const d = init && get(init.deviceId);
        if (!init || !d || d.revokedAt !== undefined || d.initializedAt !== undefined) {
          throw appError('ERR_UNAUTHENTICATED', 'the initialization token is not valid (unknown, already used, or its device was revoked)');
        }
        if (init.expiresAt <= now) throw appError('ERR_UNAUTHENTICATED', 'the initialization token has expired (it lives 24 hours); enroll the device again');
        const next: Device = { ...d, initializedAt: now };
        delete next.initExpiresAt;
        if (msg.hardwareId !== undefined) next.hardwareId = msg.hardwareId;
        ctx.batch.deleteKv(ctx.tenant, DEVICE_INIT_NS, msg.initDigest);
        ctx.batch.putKv(ctx.tenant, DEVICE_TOKEN_NS, msg.tokenDigest, { deviceId: d.id } satisfies DeviceTokenEntry);
        ctx.batch.putKv(ctx.tenant, DEVICE_NS, d.id, next);
        return next;
      }
      case 'revoke': {
        const d = get(msg.id);
        if (!d) throw appError('ERR_NOT_FOUND', `scanner device ${msg.id}`);
        if (d.revokedAt !== undefined) return d;
        const next: Device = { ...d, revokedAt: now, revokedBy: msg.by };
        ctx.batch.putKv(ctx.tenant, DEVICE_NS, d.id, next);
        return next;
      }
      case 'seen': {
        for (const a of msg.devices) {
          const d = get(a.id);
          // A revoked device's last requests still count; one deleted meanwhile is gone.
          if (!d) continue;
          ctx.batch.putKv(ctx.tenant, DEVICE_NS, d.id, { ...d, lastSeenAt: Math.max(d.lastSeenAt ?? 0, a.lastSeenAt), scanCount: d.scanCount + a.scans });
        }
        return null;
      }
    }
  },
};
