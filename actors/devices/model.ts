// Enrolled scanner devices: what is stored of one, and where. Everything lives in tenant kv
// namespaces, out of the generic record store's reach (a device's scope must change only through
// its routes, and its credentials' digests are never readable). Every write goes through the
// tenant's devices actor and reaches every node's store through the commit stream, as the
// revocation records do (core/auth/revocations.ts).

/** device id → Device. */
export const DEVICE_NS = 'scanner_device';
/** SHA-256 of a device token → DeviceTokenEntry: the credential read on every device request. */
export const DEVICE_TOKEN_NS = 'scanner_device_token';
/** SHA-256 of an initialization token → DeviceInitEntry; deleted when used. */
export const DEVICE_INIT_NS = 'scanner_device_init';

/** How long an initialization token may wait to be used. */
export const INIT_TOKEN_TTL_MS = 24 * 60 * 60 * 1000;

/** Devices not revoked an organisation may have (each enrolment is a kv entry kept until revoked). */
export const MAX_LIVE_DEVICES = 1000;

export const DEVICE_TOKEN_PREFIX = 'bpd_';
export const INIT_TOKEN_PREFIX = 'bpdi_';

export interface Device {
  id: string;
  name: string;
  /** Event ids; absent: every event of the organisation. */
  eventIds?: string[];
  listId?: string;
  checkpoint?: string;
  /** Epoch ms. */
  createdAt: number;
  createdBy: string;
  /** Until the device is initialized. */
  initExpiresAt?: number;
  initializedAt?: number;
  hardwareId?: string;
  revokedAt?: number;
  revokedBy?: string;
  /** Written behind (activity.ts), so at most a few seconds old in the store. */
  lastSeenAt?: number;
  scanCount: number;
}

export interface DeviceTokenEntry {
  deviceId: string;
}

export interface DeviceInitEntry {
  deviceId: string;
  expiresAt: number;
}

/** A device as its routes answer it: never a token or a digest. */
export interface DeviceView {
  sk: string;
  name: string;
  status: 'pending' | 'active' | 'revoked';
  eventIds: string[] | null;
  listId: string | null;
  checkpoint: string | null;
  hardwareId: string | null;
  createdAt: string;
  createdBy: string;
  initExpiresAt: string | null;
  initializedAt: string | null;
  lastSeenAt: string | null;
  scanCount: number;
  revokedAt: string | null;
}

const iso = (ms: number | undefined): string | null => (ms === undefined ? null : new Date(ms).toISOString());

export function deviceView(d: Device): DeviceView {
  return {
    sk: d.id,
    name: d.name,
    status: d.revokedAt !== undefined ? 'revoked' : d.initializedAt !== undefined ? 'active' : 'pending',
    eventIds: d.eventIds ?? null,
    listId: d.listId ?? null,
    checkpoint: d.checkpoint ?? null,
    hardwareId: d.hardwareId ?? null,
    createdAt: iso(d.createdAt)!,
    createdBy: d.createdBy,
    initExpiresAt: d.initializedAt === undefined ? iso(d.initExpiresAt) : null,
    initializedAt: iso(d.initializedAt),
    lastSeenAt: iso(d.lastSeenAt),
    scanCount: d.scanCount,
    revokedAt: iso(d.revokedAt),
  };
}
