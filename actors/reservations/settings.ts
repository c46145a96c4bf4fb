// Saving the organisation's reservation settings (their shape and defaults: actors/org-settings/).
import { appError } from '../../core/errors.js';
import { WriteBatch, type Store } from '../../core/store/store.js';
import { RESERVATION_SETTINGS_FIELD, reservationSettingsOf, type ReservationSettings } from '../org-settings/index.js';

/**
 * Writes the organisation's reservation settings: the whole object under its own field, so the
 * write needs no read of the stored one and has nothing to race (no actor serializes it).
 */
export async function saveReservationSettings(store: Store, tenant: string, patch: Partial<ReservationSettings>): Promise<ReservationSettings> {
  const org = store.getOrg(tenant);
  if (!org) throw appError('ERR_NOT_FOUND', `organisation ${tenant}`);
  const next = { ...reservationSettingsOf(org), ...patch };
  await store.commit(new WriteBatch().patchOrg(tenant, { [RESERVATION_SETTINGS_FIELD]: next }));
  return next;
}
