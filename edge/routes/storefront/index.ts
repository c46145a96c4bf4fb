// Storefront routes (spec: Endpoints → Storefront: POS tabs and orders, and the payment rows).
import type { AppDeps } from '../../deps.js';
import type { RouteDef } from '../../route.js';
import { catalogRoutes } from './catalog.js';
import { orderRoutes } from './orders.js';
import { paymentRoutes } from './payments.js';
import { receiptRoutes } from './receipts.js';
import { tabRoutes } from './tabs.js';

export function storefrontRoutes(deps: AppDeps): RouteDef[] {
  return [...catalogRoutes(deps), ...tabRoutes(deps), ...orderRoutes(deps), ...receiptRoutes(deps), ...paymentRoutes(deps)];
}
