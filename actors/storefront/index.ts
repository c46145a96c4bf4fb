// The storefront area's public surface.
export * from './messages.js';
export { posTabsActor } from './pos-tabs-actor.js';
export { MAX_LINES } from './tabs.js';
export { MAX_PAYMENTS } from './tab-payments.js';
export { storefrontActor, ORDER_NUMBER_BASE } from './storefront-actor.js';
export { createStorefrontServices, type StorefrontServices } from './services.js';
export { storefrontSettingsOf, DEFAULT_STOREFRONT_SETTINGS, type StorefrontSettings } from '../org-settings/index.js';
export * from './order.js';
export { buildPayload, receiptText, type Copy, type PayloadKind, type ReceiptPayload } from './receipt.js';
export { listProducts, listPosCategories } from './catalog.js';
export { gatewayCall, gatewayOf, intentView, type IntentRequest, type IntentView } from './payment-intents.js';
export { createStorefrontApi, type StorefrontApi, type StorefrontParts, type TabsApi } from './api.js';
export { CATALOG_JOB, type CatalogRead } from './catalog-job.js';
export { formatMinor, toMajor } from '../../core/money.js';
export { contactOf, isOrderRecord, withoutPersonalData } from './privacy.js';
