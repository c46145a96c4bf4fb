// Refresh-token families (actor key: the family id). Every refresh token rotated from one sign-in
// shares a family; the family remembers which token id is current. Presenting the current one
// rotates it; presenting any other token of the family (it can only be an already rotated one,
// since tokens are signed) is reuse: the family is revoked, so the thief's and the owner's
// descendants all stop working (OAuth 2.0 Security BCP, refresh token rotation). The state is in
// the tenant's kv, so it survives restarts.
import type { ActorKind } from '../../core/actor/runtime.js';
import { dropRevocation, REVOKED_SESSIONS_NS, revokeSession, type Revocation } from '../../core/auth/revocations.js';
import { NS } from './model.js';
import { type Family, REFRESH_ACTOR, type RefreshMsg, type RefreshReply } from './messages.js';

export const refreshActor: ActorKind<{ v?: Family }, RefreshMsg, RefreshReply> = {
  kind: REFRESH_ACTOR,
  activate: (ctx) => ({ v: ctx.store.getKv<Family>(ctx.tenant, NS.family, ctx.key) }),
  receive(state, msg, ctx) {
    const now = ctx.clock.now();
    const save = (f: Family) => {
      state.v = f;
      ctx.batch.putKv(ctx.tenant, NS.family, ctx.key, f);
    };
    if (msg.type === 'start') {
      const f: Family = { sub: msg.sub, kind: msg.kind, current: msg.jti, revoked: false, rotations: 0, createdAt: now, rotatedAt: now, expiresAt: msg.expiresAt };
      save(f);
      return { status: 'ok', family: f };
    }
    const f = state.v;
    if (msg.type === 'expire') {
      if (f && f.expiresAt + 60_000 < now) {
        ctx.batch.deleteKv(ctx.tenant, NS.family, ctx.key);
        state.v = undefined;
      }
      const r = ctx.store.getKv<Revocation>(ctx.tenant, REVOKED_SESSIONS_NS, ctx.key);
      if (r && r.at + msg.revocationLifeMs < now) dropRevocation(ctx.batch, ctx.tenant, REVOKED_SESSIONS_NS, ctx.key);
      return { status: 'unknown' };
    }
    // Ending the family ends its access tokens too, in the same batch (revocations.ts), so on
    // every node of a cluster the session's refresh and access tokens stop together.
    if (msg.type === 'revoke') {
      if (!f?.revoked) revokeSession(ctx.batch, ctx.tenant, ctx.key, now, msg.reason);
      if (f && !f.revoked) save({ ...f, revoked: true, revokedReason: msg.reason });
      return f ? { status: 'revoked' } : { status: 'unknown' };
    }
    if (!f) return { status: 'unknown' };
    if (f.revoked) return { status: 'revoked' };
    if (msg.jti !== f.current) {
      save({ ...f, revoked: true, revokedReason: 'reuse' });
      revokeSession(ctx.batch, ctx.tenant, ctx.key, now, 'reuse');
      return { status: 'reuse' };
    }
    const next: Family = { ...f, current: msg.newJti, rotations: f.rotations + 1, rotatedAt: now, expiresAt: Math.max(f.expiresAt, msg.expiresAt) };
    save(next);
    return { status: 'ok', family: next };
  },
};
