// An organisation's security settings (spec: Fields known per kind → security settings), kept on
// the Org object. One mailbox per organisation (key `settings`) so two admins' partial updates
// both land. The actor remembers what it wrote, because the store may not show its last write
// yet when the next message arrives.
import type { ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { DEFAULT_SECURITY_SETTINGS, type SecuritySettings } from './model.js';
import { ORG_SETTINGS_ACTOR, type OrgSettingsMsg } from './messages.js';

export function securitySettingsOf(org: Record<string, unknown> | undefined): SecuritySettings {
  const s = (org?.securitySettings ?? {}) as Partial<SecuritySettings>;
  return {
    enableTwoFactorForUsers: s.enableTwoFactorForUsers === true,
    enableTwoFactorForCustomers: s.enableTwoFactorForCustomers === true,
    enableNewDeviceAuthentication: s.enableNewDeviceAuthentication === true,
    requireTwoFactorForMagicCode: s.requireTwoFactorForMagicCode === true,
  };
}

export const orgSettingsActor: ActorKind<{ settings?: SecuritySettings }, OrgSettingsMsg, SecuritySettings> = {
  kind: ORG_SETTINGS_ACTOR,
  activate: () => ({}),
  receive(state, msg, ctx) {
    const org = ctx.store.getOrg(ctx.tenant);
    if (!org) throw appError('ERR_NOT_FOUND', `organisation ${ctx.tenant}`);
    const base = state.settings ?? securitySettingsOf(org);
    const next: SecuritySettings = { ...DEFAULT_SECURITY_SETTINGS, ...base };
    for (const [k, v] of Object.entries(msg.patch)) if (typeof v === 'boolean') next[k as keyof SecuritySettings] = v;
    ctx.batch.patchOrg(ctx.tenant, { securitySettings: next });
    state.settings = next;
    return next;
  },
};
