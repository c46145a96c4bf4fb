// The organisation's storefront settings, kept on the Org object under `settings` (beside
// `securitySettings`), written through the storefront tenant actor.
//
// `posRequiresStaffToken`: the spec makes the whole storefront public, so anyone who knows an
// orgid could open tabs, settle, refund, read closed tabs and print. An organisation created by
// sign-up starts with it on (closed: every tab, order, payment, receipt, service-point status and
// terminal route needs a staff or an application token; the catalogue and customer payment
// intents stay open), unless it signs up with `openStorefront: true`, the spec's open mode. An
// organisation whose Org has no such field (created before this default) keeps the open mode it
// always had, so reading a missing field answers false.

export interface StorefrontSettings {
  posRequiresStaffToken: boolean;
}

export const DEFAULT_STOREFRONT_SETTINGS: StorefrontSettings = { posRequiresStaffToken: false };

export function storefrontSettingsOf(org: Record<string, unknown> | undefined): StorefrontSettings {
  const s = (org?.settings ?? {}) as Record<string, unknown>;
  return { posRequiresStaffToken: s.posRequiresStaffToken === true };
}

/** The `settings` field of an organisation created now: closed unless it asked for the open storefront. */
export function newOrgStorefrontSettings(openStorefront: boolean): StorefrontSettings {
  return { posRequiresStaffToken: !openStorefront };
}
