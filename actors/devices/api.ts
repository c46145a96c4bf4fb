// Enrolled scanner devices (issue 31): an Admin enrolls a device and gets a single-use
// initialization token (24 h); the device trades it, once, for its long-lived token, sent as
// `Authorization: Device <token>` or `x-device-token`. Only digests of either token are stored.
// The token is resolved from the store (a digest and two kv reads, ~6 µs), like an API key, and the
// answer kept for a second: the door's hot path pays a map lookup, and a revocation (a store write
// like an API key's deletion) is refused on the node that made it at once (its entries are dropped)
// and on every other node within a second of the commit stream bringing the write there.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import { digestSecret, newSecret } from '../../core/auth/password.js';
import type { Principal } from '../../core/auth/tokens.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import type { Logger } from '../../core/log.js';
import type { Store } from '../../core/store/store.js';
import { DeviceActivity } from './activity.js';
import { DEVICES, DEVICES_KEY, type DevicesMsg } from './messages.js';
import {
  DEVICE_NS,
  DEVICE_TOKEN_NS,
  DEVICE_TOKEN_PREFIX,
  deviceView,
  INIT_TOKEN_PREFIX,
  type Device,
  type DeviceTokenEntry,
  type DeviceView,
} from './model.js';

export interface DevicesDeps {
  readonly store: Store;
  readonly runtime: ActorRuntime;
  readonly clock: Clock;
  readonly logger: Logger;
}

const DEVICE_AUTH = /^Device\s+(\S+)\s*$/i;

/** How long a resolved device token is trusted before the store is read again. */
const RECHECK_MS = 1000;
const VERIFIED_MAX = 10_000;

interface Verified {
  tenant: string;
  principal: Principal;
  /** When the store was read (clock ms). */
  at: number;
}

export interface Enrolment {
  name: string;
  /** Event ids (already resolved); absent: every event. */
  eventIds?: string[];
  listId?: string;
  checkpoint?: string;
}

export class ScannerDevices {
  readonly activity = new DeviceActivity();
  /** Device tokens resolved lately, by token. */
  private readonly verified = new Map<string, Verified>();

  constructor(readonly deps: DevicesDeps) {}

  private ask<R>(tenant: string, msg: DevicesMsg): Promise<R> {
    return this.deps.runtime.ask<R>(tenant, DEVICES, DEVICES_KEY, msg);
  }

  async enroll(tenant: string, by: string, e: Enrolment): Promise<{ sk: string; initToken: string; initExpiresAt: string }> {
    const initToken = newSecret(INIT_TOKEN_PREFIX);
    const device: Omit<Device, 'id' | 'createdAt' | 'scanCount' | 'initExpiresAt'> = { name: e.name, createdBy: by };
    if (e.eventIds) device.eventIds = e.eventIds;
    if (e.listId !== undefined) device.listId = e.listId;
    if (e.checkpoint !== undefined) device.checkpoint = e.checkpoint;
    const d = await this.ask<Device>(tenant, { type: 'enroll', device, initDigest: digestSecret(initToken) });
    return { sk: d.id, initToken, initExpiresAt: new Date(d.initExpiresAt!).toISOString() };
  }

  /** Trades an initialization token for the device token (401 when used, expired or unknown). */
  async initialize(tenant: string, initToken: string, hardwareId?: string): Promise<{ deviceId: string; token: string; device: DeviceView }> {
    const token = newSecret(DEVICE_TOKEN_PREFIX);
    const msg: DevicesMsg = { type: 'initialize', initDigest: digestSecret(initToken.trim()), tokenDigest: digestSecret(token) };
    if (hardwareId !== undefined) msg.hardwareId = hardwareId;
    const d = await this.ask<Device>(tenant, msg);
    return { deviceId: d.id, token, device: deviceView(d) };
  }

  async revoke(tenant: string, id: string, by: string): Promise<DeviceView> {
    const d = await this.ask<Device>(tenant, { type: 'revoke', id, by });
    for (const [token, v] of this.verified) if (v.tenant === tenant && v.principal.sub === id) this.verified.delete(token);
    return deviceView(this.withPending(tenant, d));
  }

  /** Every device of the organisation, oldest first, with this node's activity not yet written. */
  list(tenant: string): DeviceView[] {
    return this.deps.store
      .listKv<Device>(tenant, DEVICE_NS)
      .map(({ value }) => this.withPending(tenant, value))
      .sort((a, b) => a.createdAt - b.createdAt || (a.id < b.id ? -1 : 1))
      .map(deviceView);
  }

  private withPending(tenant: string, d: Device): Device {
    const p = this.activity.pending(tenant, d.id);
    return p ? { ...d, lastSeenAt: Math.max(d.lastSeenAt ?? 0, p.lastSeenAt), scanCount: d.scanCount + p.scans } : d;
  }

  /**
   * The device credential (a CredentialResolver): `Authorization: Device <token>` or
   * `x-device-token`, with `orgid`. Undefined when the request carries neither; 401 when the token
   * is unknown to the organisation or its device was revoked.
   */
  resolve(headers: Readonly<Record<string, string>>, tenant: string | undefined): Principal | undefined {
    const authz = headers['authorization'];
    const m = authz !== undefined ? DEVICE_AUTH.exec(authz) : null;
    const token = m ? m[1] : headers['x-device-token']?.trim();
    if (!token) return undefined;
    if (!tenant) throw appError('ERR_UNAUTHENTICATED', 'a device token must be sent with the orgid header');
    const now = this.deps.clock.now();
    const hit = this.verified.get(token);
    if (hit && hit.tenant === tenant && now - hit.at < RECHECK_MS && now >= hit.at) {
      this.activity.seen(tenant, hit.principal.sub, now);
      return hit.principal;
    }
    this.verified.delete(token);
    const entry = this.deps.store.getKv<DeviceTokenEntry>(tenant, DEVICE_TOKEN_NS, digestSecret(token));
    const d = entry && this.deps.store.getKv<Device>(tenant, DEVICE_NS, entry.deviceId);
    if (!d) throw appError('ERR_UNAUTHENTICATED', 'the device token is not valid for this organisation');
    if (d.revokedAt !== undefined) throw appError('ERR_UNAUTHENTICATED', 'this scanner device was revoked; enroll it again');
    this.activity.seen(tenant, d.id, now);
    const device: NonNullable<Principal['device']> = { id: d.id, eventIds: d.eventIds ? Object.freeze(d.eventIds) : null };
    if (d.listId !== undefined) device.listId = d.listId;
    if (d.checkpoint !== undefined) device.checkpoint = d.checkpoint;
    // Shared by the requests of the next second: frozen, as the token service's cached principals are.
    const principal: Principal = Object.freeze({ sub: d.id, org: tenant, roles: Object.freeze([]) as unknown as string[], kind: 'device', via: 'device-token', device: Object.freeze(device) });
    if (this.verified.size >= VERIFIED_MAX) this.verified.clear();
    this.verified.set(token, { tenant, principal, at: now });
    return principal;
  }

  /** The door counts a device's scans here (EventsApi's DoorDevices port). */
  scanned(tenant: string, deviceId: string, scans: number): void {
    this.activity.scanned(tenant, deviceId, scans, this.deps.clock.now());
  }

  /** Writes the activity noted since the last flush, one message per organisation; kept for the next on failure. */
  async flush(): Promise<void> {
    await Promise.all(
      this.activity.drain().map(async ([tenant, devices]) => {
        try {
          await this.ask(tenant, { type: 'seen', devices });
        } catch (err) {
          for (const a of devices) {
            this.activity.seen(tenant, a.id, a.lastSeenAt);
            this.activity.scanned(tenant, a.id, a.scans, a.lastSeenAt);
          }
          throw err;
        }
      }),
    );
  }
}
