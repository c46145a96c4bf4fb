// The phone area's reads: a softphone device as the API answers it (its online state at `now`),
// the device list, who has which phone, and the counts of the system summary.
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { voiceIdentity } from '../../core/voice.js';
import { HEARTBEAT_TTL_SECONDS, PHONE_DEVICE, isOnline } from './device-actor.js';
import { PHONE_NUMBER } from './numbers.js';

export interface DeviceView {
  id: string;
  deviceId: string;
  email: string;
  identity: string;
  platform: string;
  label: string;
  capabilities: string[];
  clientInfo: Record<string, unknown>;
  registeredAt: string;
  lastSeenAt: string;
  online: boolean;
  /** When the device goes offline without another heartbeat. */
  expiresAt: string;
}

export function deviceView(rec: StoredRecord, now: number): DeviceView {
  const d = rec.data as Record<string, unknown>;
  const last = String(d.lastSeenAt);
  return {
    id: rec.sk,
    deviceId: String(d.deviceId),
    email: String(d.email),
    identity: String(d.identity),
    platform: String(d.platform),
    label: String(d.label ?? d.platform),
    capabilities: (d.capabilities as string[]) ?? [],
    clientInfo: (d.clientInfo as Record<string, unknown>) ?? {},
    registeredAt: String(d.registeredAt),
    lastSeenAt: last,
    online: isOnline(rec, now),
    expiresAt: new Date(Date.parse(last) + HEARTBEAT_TTL_SECONDS * 1000).toISOString(),
  };
}

export interface DeviceFilter {
  email?: string;
  online?: boolean;
  platform?: string;
}

/** The organisation's devices, most recently seen first. */
export function listDevices(store: Store, tenant: string, f: DeviceFilter, now: number): DeviceView[] {
  return store
    .scan(tenant, PHONE_DEVICE, f.email ? { 'data.email': f.email } : undefined)
    .map((r) => deviceView(r, now))
    .filter((d) => (f.online === undefined || d.online === f.online) && (!f.platform || d.platform === f.platform.toLowerCase()))
    .sort((a, b) => (a.lastSeenAt !== b.lastSeenAt ? (a.lastSeenAt < b.lastSeenAt ? 1 : -1) : a.id < b.id ? -1 : 1));
}

export interface UserPhones {
  email: string;
  identity: string;
  numbers: string[];
  devices: { total: number; online: number };
}

/**
 * Each staff user with a device or an assigned number (or only `email`), by email; shared numbers
 * (assigned to nobody) apart, rather than repeated for every user.
 */
export function userPhones(store: Store, tenant: string, email: string | undefined, now: number): { rows: UserPhones[]; shared: string[] } {
  const users = new Map<string, { numbers: string[]; total: number; online: number }>();
  const user = (e: string) => {
    let u = users.get(e);
    if (!u) users.set(e, (u = { numbers: [], total: 0, online: 0 }));
    return u;
  };
  const shared: string[] = [];
  for (const n of store.scan(tenant, PHONE_NUMBER)) {
    const list = (n.data.assignedTo as string[]) ?? [];
    if (list.length === 0) shared.push(String(n.data.number));
    for (const e of list) user(e).numbers.push(String(n.data.number));
  }
  for (const d of store.scan(tenant, PHONE_DEVICE)) {
    const u = user(String(d.data.email));
    u.total++;
    if (isOnline(d, now)) u.online++;
  }
  const rows = [...users.entries()]
    .filter(([e]) => !email || e === email)
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([e, u]) => ({ email: e, identity: voiceIdentity(tenant, e), numbers: u.numbers.sort(), devices: { total: u.total, online: u.online } }));
  return { rows, shared: shared.sort() };
}

export interface PhoneCounts {
  numbers: number;
  devices: { total: number; online: number; offline: number; byPlatform: Record<string, number> };
}

export function phoneCounts(store: Store, tenant: string, now: number): PhoneCounts {
  const all = store.scan(tenant, PHONE_DEVICE);
  const byPlatform: Record<string, number> = {};
  let online = 0;
  for (const d of all) {
    if (isOnline(d, now)) online++;
    const p = String(d.data.platform);
    byPlatform[p] = (byPlatform[p] ?? 0) + 1;
  }
  return { numbers: store.count(tenant, PHONE_NUMBER), devices: { total: all.length, online, offline: all.length - online, byPlatform } };
}
