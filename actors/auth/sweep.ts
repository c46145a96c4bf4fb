// Housekeeping: forgets what has expired (challenges, codes, refresh families, revocations,
// device tokens) in every organisation.
//
// The sweep only finds candidates: each entry is forgotten by the actor that owns its key (the
// challenge's, the code's, the family's, the account's credentials, the organisation's staff
// accounts), which checks again on what it holds, so an entry renewed meanwhile is kept and every
// key keeps one writer. Only expired entries wake an actor. The visit of every organisation gives
// the event loop back every few milliseconds (time-slice.ts): 10,000 organisations are ~80,000
// ranged reads.
import { REVOKED_NS, REVOKED_SESSIONS_NS, type Revocation } from '../../core/auth/revocations.js';
import { timeSlicer } from '../../core/time-slice.js';
import { ACCOUNTS, type AccountsMsg, type Challenge, CHALLENGE_ACTOR, type ChallengeMsg, type CodeMsg, type Family, type ForgetDeviceOrgsMsg, MAGIC_ACTOR, ORGS, REFRESH_ACTOR, type RefreshMsg, RESET_ACTOR, SECURITY_ACTOR, type SecurityMsg, VERIFY_ACTOR } from './messages.js';
import { CODE_TTL_MS } from './codes-actor.js';
import type { AuthDeps } from './deps.js';
import { DEVICE_TOKEN_NS, deviceEntryLive, type DeviceEntry } from './device-token.js';
import { GLOBAL_TENANT, NS } from './model.js';

const CODE_ACTORS: ReadonlyArray<readonly [string, string]> = [
  [NS.magic, MAGIC_ACTOR],
  [NS.reset, RESET_ACTOR],
  [NS.verify, VERIFY_ACTOR],
];

/** Forgets expired challenges, codes, refresh families, revocations and device tokens (every org). Answers how many candidates it found. */
export async function sweepExpired(deps: Pick<AuthDeps, 'store' | 'clock' | 'tokens' | 'config' | 'runtime'>): Promise<number> {
  const { store, runtime } = deps;
  const now = deps.clock.now();
  const revocationLifeMs = (Math.max(deps.tokens.maxLifetimeSeconds, deps.config.auth.refreshTokenTtlSeconds) + 60) * 1000;
  let found = 0;
  const slice = timeSlicer();
  for (const tenant of store.listOrgIds()) {
    await slice();
    const asks: Promise<unknown>[] = [];
    const ask = (kind: string, key: string, msg: unknown) => {
      found++;
      asks.push(runtime.ask(tenant, kind, key, msg));
    };
    for (const { key, value } of store.listKv<Challenge>(tenant, NS.challenge)) {
      if (value.expiresAt < now) ask(CHALLENGE_ACTOR, key, { type: 'expire' } satisfies ChallengeMsg);
    }
    for (const [ns, kind] of CODE_ACTORS) {
      for (const { key, value } of store.listKv<{ expiresAt: number; issued: number[] }>(tenant, ns)) {
        if (value.expiresAt < now && value.issued.every((t) => t < now - CODE_TTL_MS)) ask(kind, key, { type: 'expire' } satisfies CodeMsg);
      }
    }
    // A family and its session's revocation share the key, and one actor owns both.
    const families = new Set<string>();
    for (const { key, value } of store.listKv<Family>(tenant, NS.family)) {
      if (value.expiresAt + 60_000 < now) families.add(key);
    }
    // Once every access and refresh token issued before a revocation has expired, the record
    // has nothing left to stop.
    for (const { key, value } of store.listKv<Revocation>(tenant, REVOKED_SESSIONS_NS)) {
      if (value.at + revocationLifeMs < now) families.add(key);
    }
    for (const fam of families) ask(REFRESH_ACTOR, fam, { type: 'expire', revocationLifeMs } satisfies RefreshMsg);
    for (const { key, value } of store.listKv<Revocation>(tenant, REVOKED_NS)) {
      if (value.at + revocationLifeMs < now) ask(SECURITY_ACTOR, key, { type: 'expireRevocation', lifeMs: revocationLifeMs } satisfies SecurityMsg);
    }
    const deviceKeys = store.listKv<DeviceEntry>(tenant, DEVICE_TOKEN_NS).filter(({ value }) => !deviceEntryLive(value, now)).map(({ key }) => key);
    if (deviceKeys.length > 0) {
      asks.push(runtime.ask(tenant, ACCOUNTS, 'staff', { type: 'expireDeviceTokens', keys: deviceKeys } satisfies AccountsMsg));
      found += deviceKeys.length;
    }
    await Promise.all(asks);
  }
  const legacy = store.listKv(GLOBAL_TENANT, NS.deviceOrg).length;
  if (legacy > 0) {
    await runtime.ask(GLOBAL_TENANT, ORGS, 'orgs', { type: 'forgetDeviceOrgs' } satisfies ForgetDeviceOrgsMsg);
    found += legacy;
  }
  return found;
}
