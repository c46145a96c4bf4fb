// The organisation's reservation settings, kept on the Org object under `reservationSettings` (a
// field of its own beside `securitySettings` and the storefront's `settings`, so no other writer
// of the Org can lose it).
//
// `servicePointsRequireStaffToken` (default false): the spec's Auth column gives service-point
// create, update and delete to `customer`, any authenticated customer or staff token, so by default
// a customer can add, rename or remove a venue's tables. Turning the setting on makes those three
// need a staff token (role User), as `posRequiresStaffToken` does for storefront writes.

export interface ReservationSettings {
  servicePointsRequireStaffToken: boolean;
}

export const RESERVATION_SETTINGS_FIELD = 'reservationSettings';

export function reservationSettingsOf(org: Record<string, unknown> | undefined): ReservationSettings {
  const s = (org?.[RESERVATION_SETTINGS_FIELD] ?? {}) as Record<string, unknown>;
  return { servicePointsRequireStaffToken: s.servicePointsRequireStaffToken === true };
}
