// Writing the organisation's reservation settings (their shape and defaults: actors/org-settings/).
import type { ActorContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { RESERVATION_SETTINGS_FIELD, reservationSettingsOf, type ReservationSettings } from '../org-settings/index.js';

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
