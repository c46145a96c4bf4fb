// The organisation's storefront settings, kept on the Org object under `settings` (beside
// `securitySettings`), written through the storefront tenant actor.
//
// `posRequiresStaffToken` (default false): the spec makes the whole storefront public, so by
// default anyone who knows an orgid can open tabs, add lines, settle, refund and print. Turning the
// setting on makes every storefront write (every POST under /storefront) need a staff token.

export interface StorefrontSettings {
  posRequiresStaffToken: boolean;
}

export const DEFAULT_STOREFRONT_SETTINGS: StorefrontSettings = { posRequiresStaffToken: false };

export function storefrontSettingsOf(org: Record<string, unknown> | undefined): StorefrontSettings {
  const s = (org?.settings ?? {}) as Record<string, unknown>;
  return { posRequiresStaffToken: s.posRequiresStaffToken === true };
}
