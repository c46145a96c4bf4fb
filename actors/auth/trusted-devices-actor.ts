// The devices trusted for one address (actor key: the email, tenant-scoped), which spare a
// new-device check at sign-in (challenges.ts). Trusting one (after a redeemed challenge) and
// forgetting one or all (two-factor.ts) are made here, one at a time.
import type { ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { NS } from './model.js';
import { TRUSTED_DEVICES_ACTOR, type TrustedDevicesMsg } from './messages.js';

export interface TrustedEntry {
  addedAt: number;
  label?: string;
}

export const trustedDevicesActor: ActorKind<Record<string, never>, TrustedDevicesMsg, { removed: number } | { trusted: true }> = {
  kind: TRUSTED_DEVICES_ACTOR,
  // Forgetting lists the store, so it must see the trusts written before it.
  readsOwnWrites: true,
  activate: () => ({}),
  receive(_state, msg, ctx) {
    const ns = NS.trusted(ctx.key);
    if (msg.type === 'trust') {
      const entry: TrustedEntry = { addedAt: ctx.clock.now(), ...(msg.label ? { label: msg.label } : {}) };
      ctx.batch.putKv(ctx.tenant, ns, msg.device, entry);
      return { trusted: true };
    }
    let removed = 0;
    for (const { key } of ctx.store.listKv(ctx.tenant, ns)) {
      if (!msg.id || key.startsWith(msg.id)) {
        ctx.batch.deleteKv(ctx.tenant, ns, key);
        removed++;
      }
    }
    if (msg.id && removed === 0) throw appError('ERR_NOT_FOUND', `trusted device ${msg.id}`);
    return { removed };
  },
};
