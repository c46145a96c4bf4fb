// The areas' settings kept on the Org object, each under a field of its own, with the values a new
// organisation starts with. Auth creates the Org and the owning area reads its field, so the shapes
// live here, below both (security settings belong to auth alone and stay there).
export {
  newOrgReservationSettings,
  RESERVATION_SETTINGS_FIELD,
  reservationSettingsOf,
  type ReservationSettings,
} from './reservation-settings.js';
export {
  DEFAULT_STOREFRONT_SETTINGS,
  newOrgStorefrontSettings,
  storefrontSettingsOf,
  type StorefrontSettings,
} from './storefront-settings.js';
