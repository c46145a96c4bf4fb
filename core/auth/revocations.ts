// Revocation records: "every access token of this subject issued at or before this moment is
// refused", and "every access token of this session is refused". Written in the same batch as the change that causes it (a user deleted or disabled, an
// application revoked), so in a cluster they reach every node's store with that change through the
// commit stream. Kept by subject id, not looked up on the user record, because a token may name a
// subject the store never held (service and test tokens). A record is only needed while a token
// issued before it can still be alive: the access token lifetime cap makes that bounded, so the
// sweep drops records older than the cap.
import type { Store, WriteBatch } from '../store/store.js';

/** tenant kv namespace: subject id → Revocation. */
export const REVOKED_NS = 'auth_revoked';

export interface Revocation {
  /** Milliseconds since the epoch: tokens issued at or before this second are refused. */
  at: number;
  reason: string;
}

/**
 * tenant kv namespace: session id → Revocation. A session is one sign-in's refresh family (the
 * access token's `sid`); once it ends (sign-out, refresh-token reuse) none of its access tokens is
 * honoured, whenever issued, and the account's other sessions run on. Written by the refresh
 * family's actor in the batch that revokes the family.
 */
export const REVOKED_SESSIONS_NS = 'auth_revoked_session';

/** What the token service asks on every verification (a kv read each: an LMDB get, no decode of anything large). */
export interface RevocationCheck {
  revokedAt(org: string, sub: string): number | undefined;
  /** When session `sid` ended; undefined while it runs. */
  sessionEndedAt(org: string, sid: string): number | undefined;
}

/**
 * A copy of every revocation in platform data, keyed `<org>/<id>`: a cluster node holds only the
 * tenants it serves but all platform data, and verifies tokens of any tenant (a socket's handshake,
 * a stream, a request before it is forwarded). Written in the revocation's own batch.
 */
export const REVOCATIONS_TENANT = '_revocations';

const platformKey = (org: string, id: string) => `${org}/${id}`;

/** The later of two moments (a copy may land a moment before the other on a cluster node). */
function later(a: Revocation | undefined, b: Revocation | undefined): number | undefined {
  if (!a || !b) return (a ?? b)?.at;
  return Math.max(a.at, b.at);
}

export class StoreRevocations implements RevocationCheck {
  constructor(private readonly store: Pick<Store, 'getKv'>) {}

  revokedAt(org: string, sub: string): number | undefined {
    return later(this.store.getKv<Revocation>(REVOCATIONS_TENANT, REVOKED_NS, platformKey(org, sub)), this.store.getKv<Revocation>(org, REVOKED_NS, sub));
  }

  sessionEndedAt(org: string, sid: string): number | undefined {
    return later(
      this.store.getKv<Revocation>(REVOCATIONS_TENANT, REVOKED_SESSIONS_NS, platformKey(org, sid)),
      this.store.getKv<Revocation>(org, REVOKED_SESSIONS_NS, sid),
    );
  }
}

/** Adds the revocation of `sub` to `batch` (later revocations win). */
export function revoke(batch: WriteBatch, tenant: string, sub: string, at: number, reason: string): WriteBatch {
  const r = { at, reason } satisfies Revocation;
  return batch.putKv(tenant, REVOKED_NS, sub, r).putKv(REVOCATIONS_TENANT, REVOKED_NS, platformKey(tenant, sub), r);
}

/** Adds the end of session `sid` to `batch`: every access token carrying that sid is refused. */
export function revokeSession(batch: WriteBatch, tenant: string, sid: string, at: number, reason: string): WriteBatch {
  const r = { at, reason } satisfies Revocation;
  return batch.putKv(tenant, REVOKED_SESSIONS_NS, sid, r).putKv(REVOCATIONS_TENANT, REVOKED_SESSIONS_NS, platformKey(tenant, sid), r);
}

/** Removes a revocation that has nothing left to stop, with its platform copy (the sweeps). */
export function dropRevocation(batch: WriteBatch, tenant: string, ns: typeof REVOKED_NS | typeof REVOKED_SESSIONS_NS, id: string): WriteBatch {
  return batch.deleteKv(tenant, ns, id).deleteKv(REVOCATIONS_TENANT, ns, platformKey(tenant, id));
}

/**
 * A token issued in second `iat` was possibly issued at or before `revokedAt` (ms): the token
 * carries whole seconds only, so a token from the same second as the revocation is refused too.
 */
export function issuedBefore(iatSeconds: number, revokedAt: number): boolean {
  return iatSeconds * 1000 <= revokedAt;
}
