// Storefront routes (spec: Endpoints → Storefront: POS tabs and orders, and the payment rows).
import { createReservationsApi } from '../../../actors/reservations/index.js';
import { createServicePointsApi } from '../../../actors/service-points/index.js';
import { createStorefrontApi } from '../../../actors/storefront/index.js';
import type { AppDeps } from '../../deps.js';
import type { RouteDef } from '../../route.js';
import { catalogRoutes } from './catalog.js';
import { orderRoutes } from './orders.js';
import { paymentRoutes } from './payments.js';
import { receiptRoutes } from './receipts.js';
import { tabRoutes } from './tabs.js';

export function storefrontRoutes(deps: AppDeps): RouteDef[] {
  const sf = createStorefrontApi(deps, createReservationsApi(deps));
  const points = createServicePointsApi(deps);
  return [...catalogRoutes(sf), ...tabRoutes(deps, sf, points), ...orderRoutes(deps, sf), ...receiptRoutes(sf), ...paymentRoutes(sf)];
}
