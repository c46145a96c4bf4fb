// The organisation's reservation settings, kept on the Org object under `reservationSettings` (a
// field of its own beside `securitySettings` and the storefront's `settings`, so no other writer
// of the Org can lose it).
//
// `servicePointsRequireStaffToken`: the spec's Auth column gives service-point create, update and
// delete to `customer`, any authenticated customer or staff token, so a customer could add, rename
// or remove a venue's tables. When on, those three need a staff token (role User). An organisation
// created by sign-up starts with it on unless it signs up with `openStorefront: true` (the spec's
// open mode); one whose Org has no such field (created before this default) keeps it off.
import type { ActorContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';

export interface ReservationSettings {
  servicePointsRequireStaffToken: boolean;
}

export const RESERVATION_SETTINGS_FIELD = 'reservationSettings';

export function reservationSettingsOf(org: Record<string, unknown> | undefined): ReservationSettings {
  const s = (org?.[RESERVATION_SETTINGS_FIELD] ?? {}) as Record<string, unknown>;
  return { servicePointsRequireStaffToken: s.servicePointsRequireStaffToken === true };
}

/** The `reservationSettings` field of an organisation created now: staff-only unless it asked for the open storefront. */
export function newOrgReservationSettings(openStorefront: boolean): ReservationSettings {
  return { servicePointsRequireStaffToken: !openStorefront };
}

/** The key of the reservations actor that writes the settings (a definition's key is an sk, never this). */
export const RESERVATION_SETTINGS_KEY = 'settings';

/**
 * Writes the organisation's reservation settings, in the reservations actor keyed
 * RESERVATION_SETTINGS_KEY (the one writer of the field): the whole object under its own field,
 * merged over the last one this actor wrote, so an update sent right after another builds on it
 * even before that one's write has landed.
 */
export function updateReservationSettings(
  ctx: ActorContext,
  last: ReservationSettings | undefined,
  patch: Partial<ReservationSettings>,
): ReservationSettings {
  const org = ctx.store.getOrg(ctx.tenant);
  if (!org) throw appError('ERR_NOT_FOUND', `organisation ${ctx.tenant}`);
  const next = { ...(last ?? reservationSettingsOf(org)), ...patch };
  ctx.batch.patchOrg(ctx.tenant, { [RESERVATION_SETTINGS_FIELD]: next });
  return next;
}
