// The storefront feature area: products and POS categories, POS tabs (one tabs actor per location,
// money in integer minor units), kitchen firing through the workflow area, settling, refunds,
// splits, receipts and print jobs, and the payment gateways (`local` offline, `stripe` with keys).
import { posTabsActor } from '../../actors/storefront/index.js';
import { storefrontActor } from '../../actors/storefront/index.js';
import { BM_LOCATION_PRODUCT, SF_CATEGORY, SF_ORDER, SF_PRODUCT } from '../../actors/storefront/index.js';
import { createStorefrontApi } from '../../actors/storefront/index.js';
import { createReservationsApi } from '../../actors/reservations/index.js';
import { RECORD_WRITTEN } from '../../actors/records/index.js';
import type { AppDeps } from '../deps.js';
import type { Module, ModuleNode } from '../module.js';
import { storefrontRoutes } from '../routes/storefront/index.js';

export const storefrontModule: Module = {
  name: 'storefront',
  // A tab occupies a service point (reservations) and fires to the kitchen as a workflow task.
  requires: ['reservations', 'workflow'],
  actors: [posTabsActor, storefrontActor],
  indexes: [
    [SF_ORDER, 'data.businessLocationId'],
    [SF_ORDER, 'data.orderNumber'],
    [SF_ORDER, 'data.customerId'],
    [SF_PRODUCT, 'data.categoryId'],
    [BM_LOCATION_PRODUCT, 'data.businessLocationId'],
    [SF_CATEGORY, 'data.businessLocationId'],
  ],
  // A location's closed tabs, newest first, page by index at any size (without a date range).
  listings: [{ datatype: SF_ORDER, equals: ['data.businessLocationId', 'data.status'], sort: 'data.closedAt' }],
  routes: storefrontRoutes,
  perNode: (deps) => tabsHearWrites(deps),
};

/**
 * A tab written through the record store (created, reopened, relabelled) reaches its location's
 * POS actor, which keeps its open tabs in memory. Only a live actor needs telling: one that
 * activates later reads the store. Every node hears it; only the owner's is live.
 */
function tabsHearWrites(deps: AppDeps): ModuleNode {
  const sf = createStorefrontApi(deps, createReservationsApi(deps));
  let off: (() => void) | undefined;
  return {
    start() {
      const prefix = `${RECORD_WRITTEN}.`;
      off = deps.bus.subscribe(`${prefix}*`, (event, subject) => {
        const e = event as { datatype?: unknown; sk?: unknown };
        if (e.datatype !== SF_ORDER || typeof e.sk !== 'string') return;
        const tenant = subject.slice(prefix.length);
        sf.tabWritten(tenant, e.sk).catch((err: unknown) => deps.logger.warn({ err, tenant }, 'could not tell the POS of a tab written elsewhere'));
      });
    },
    stop() {
      off?.();
      off = undefined;
    },
  };
}
