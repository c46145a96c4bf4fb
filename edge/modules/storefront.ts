// The storefront feature area: products and POS categories, POS tabs (one tabs actor per location,
// money in integer minor units), kitchen firing through the workflow area, settling, refunds,
// splits, receipts and print jobs, and the payment gateways (`local` offline, `stripe` with keys).
import { posTabsActor } from '../../actors/storefront/pos-tabs.js';
import { storefrontActor } from '../../actors/storefront/tenant-actor.js';
import { BM_LOCATION_PRODUCT, SF_CATEGORY, SF_ORDER, SF_PRODUCT } from '../../actors/storefront/order.js';
import type { Module } from '../deps.js';
import { storefrontRoutes } from '../routes/storefront/index.js';

export const storefrontModule: Module = {
  name: 'storefront',
  actors: [posTabsActor, storefrontActor],
  indexes: [
    [SF_ORDER, 'data.businessLocationId'],
    [SF_ORDER, 'data.orderNumber'],
    [SF_ORDER, 'data.customerId'],
    [SF_PRODUCT, 'data.categoryId'],
    [BM_LOCATION_PRODUCT, 'data.businessLocationId'],
    [SF_CATEGORY, 'data.businessLocationId'],
  ],
  routes: storefrontRoutes,
};
