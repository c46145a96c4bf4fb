// Housekeeping: forgets what has expired (challenges, codes, refresh families, revocations,
// device tokens) in every organisation.
//
// It deletes keys that actors own (codes-actor.ts, refresh-actor.ts) without asking them, on purpose: it
// deletes only entries every reader already treats as absent (a challenge or family past its
// expiry, a code whose sends have all left the limit's window, a revocation no live token
// predates, a device token unused past its life), so no answer of an owning actor changes, and an
// actor still holding one in memory writes it back with the same meaning. Asking each owner would
// activate an actor per expired key every hour for nothing.
import { REVOKED_NS, REVOKED_SESSIONS_NS, type Revocation } from '../../core/auth/revocations.js';
import { WriteBatch } from '../../core/store/store.js';
import { CODE_TTL_MS, type Challenge } from './codes-actor.js';
import type { AuthDeps } from './deps.js';
import { DEVICE_TOKEN_NS, deviceEntryLive, type DeviceEntry } from './device-token.js';
import { GLOBAL_TENANT, NS } from './model.js';
import type { Family } from './refresh-actor.js';

/** Forgets expired challenges, magic codes and refresh families (every org). Answers how many entries went. */
export async function sweepExpired(deps: Pick<AuthDeps, 'store' | 'clock' | 'tokens' | 'config'>): Promise<number> {
  const { store } = deps;
  const now = deps.clock.now();
  const revocationLifeMs = (Math.max(deps.tokens.maxLifetimeSeconds, deps.config.auth.refreshTokenTtlSeconds) + 60) * 1000;
  const batch = new WriteBatch();
  for (const org of store.listOrgs()) {
    for (const { key, value } of store.listKv<Challenge>(org.orgId, NS.challenge)) {
      if (value.expiresAt < now) batch.deleteKv(org.orgId, NS.challenge, key);
    }
    for (const ns of [NS.magic, NS.reset, NS.verify]) {
      for (const { key, value } of store.listKv<{ expiresAt: number; issued: number[] }>(org.orgId, ns)) {
        if (value.expiresAt < now && value.issued.every((t) => t < now - CODE_TTL_MS)) batch.deleteKv(org.orgId, ns, key);
      }
    }
    for (const { key, value } of store.listKv<Family>(org.orgId, NS.family)) {
      if (value.expiresAt + 60_000 < now) batch.deleteKv(org.orgId, NS.family, key);
    }
    // Once every access and refresh token issued before a revocation has expired, the record
    // has nothing left to stop.
    for (const ns of [REVOKED_NS, REVOKED_SESSIONS_NS]) {
      for (const { key, value } of store.listKv<Revocation>(org.orgId, ns)) {
        if (value.at + revocationLifeMs < now) batch.deleteKv(org.orgId, ns, key);
      }
    }
    for (const { key, value } of store.listKv<DeviceEntry>(org.orgId, DEVICE_TOKEN_NS)) {
      if (!deviceEntryLive(value, now)) batch.deleteKv(org.orgId, DEVICE_TOKEN_NS, key);
    }
  }
  // Before device tokens, a client-chosen x-device-id selected the org: those entries mean nothing now.
  for (const { key } of store.listKv(GLOBAL_TENANT, NS.deviceOrg)) batch.deleteKv(GLOBAL_TENANT, NS.deviceOrg, key);
  const n = batch.size;
  if (n > 0) await store.commit(batch);
  return n;
}
