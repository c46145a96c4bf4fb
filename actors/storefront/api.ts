// The storefront area's API for the edge: one call per request. Changes are asks to the tenant's
// storefront actor (order numbers, categories, settings, intent answers, receipts) or to the POS
// tabs actor of a location (`tabs`: tabs-api.ts); orders, locations and settings are read from
// the store; card intents are made with the node's gateway (payment-intents.ts).
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import type { IdempotentResult } from '../../core/idempotency.js';
import type { OutboxEntry, OutboxMessage } from '../../core/outbox.js';
import type { FindOptions, PageLimits } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { listRecords, type ListingDeps } from '../records/index.js';
import type { ReservationsApi } from '../reservations/index.js';
import { listPosCategories, type ProductQuery } from './catalog.js';
import { CATALOG_JOB, type CatalogRead } from './catalog-job.js';
import { askPos, POS_TABS_ACTOR, STOREFRONT_ACTOR, STOREFRONT_KEY, type StorefrontMessage } from './messages.js';
import { CLOSED, presentOrder, readOrder, SF_ORDER } from './order.js';
import { createPaymentIntent, type IntentRequest, type IntentView } from './payment-intents.js';
import { contactOf } from './privacy.js';
import { buildPayload, type Copy, type PayloadKind, type ReceiptPayload } from './receipt.js';
import { queueReceipt } from './receipt-outbox.js';
import type { StorefrontServices } from './services.js';
import { createTabsApi, type TabsApi } from './tabs-api.js';
import { storefrontSettingsOf, type StorefrontSettings } from '../org-settings/index.js';

export interface StorefrontParts extends ListingDeps {
  readonly runtime: Pick<ActorRuntime, 'ask' | 'isLive'>;
  readonly store: Store;
  readonly clock: Clock;
  readonly services: ListingDeps['services'] & { readonly storefront: StorefrontServices };
}

export interface StorefrontApi {
  /** The POS tabs: open, add lines, fire, settle, refund, split, move between service points. */
  readonly tabs: TabsApi;
  settings(tenant: string): StorefrontSettings;
  updateSettings(tenant: string, patch: Partial<StorefrontSettings>): Promise<StorefrontSettings>;
  /** True when the organisation keeps its POS for staff and applications (`posRequiresStaffToken`). */
  closed(tenant: string): boolean;
  /** Products with their availability at a location, by name: a read of every product, in a query worker. */
  products(tenant: string, query: ProductQuery, limits: PageLimits): Promise<ListResult>;
  categories(tenant: string, q: { businessLocationId?: string; page?: number; pageSize?: number }, limits: PageLimits): ListResult;
  createCategory(tenant: string, data: Record<string, unknown>): Promise<StoredRecord>;
  /** An order with every amount computed (404 when there is none). */
  order(tenant: string, id: string): StoredRecord;
  /** The customer's own order by its order number (another's, or none: 404). */
  ownOrder(tenant: string, customerId: string, orderNumber: string): StoredRecord;
  /** A location's closed tabs, most recently closed first, `closedAt` in [from, to) (ISO instants). */
  closedTabs(tenant: string, location: string, range: { from?: string; to?: string }, opts: FindOptions): Promise<ListResult>;
  /** The location of a stored order, if it names one. */
  orderLocation(tenant: string, id: string): string | undefined;
  location(tenant: string, slug: string): StoredRecord | undefined;
  /** The location a write names: it must exist by slug (404); its sk gets a 400 that says what to send. */
  requireLocation(tenant: string, slug: string): StoredRecord;
  /** The printer-ready receipt or check of order `id` (404). */
  receiptPayload(tenant: string, id: string, kind: PayloadKind, copy: Copy): { payload: ReceiptPayload; exponent: number };
  /** The email and phone on order `id` (404). */
  orderContact(tenant: string, id: string): { email?: string; phone?: string };
  /** Queues a receipt, check or print job in the outbox through the storefront actor. */
  queueReceipt(tenant: string, msg: OutboxMessage): Promise<OutboxEntry>;
  createIntent(tenant: string, processor: string, body: IntentRequest, methodTypes: string[], status: number): Promise<IdempotentResult<IntentView>>;
  /**
   * Tells the POS of order `orderId`'s location that the tab was written elsewhere (the record
   * store). Only a live POS actor needs telling, since it keeps its open tabs in memory: one that
   * activates later reads the store.
   */
  tabWritten(tenant: string, orderId: string): Promise<void>;
}

export function createStorefrontApi(parts: StorefrontParts, reservations: ReservationsApi): StorefrontApi {
  const { runtime, store, clock } = parts;
  const currency = () => parts.services.storefront.defaultCurrency;
  const ask = <R>(tenant: string, msg: StorefrontMessage) => runtime.ask<R>(tenant, STOREFRONT_ACTOR, STOREFRONT_KEY, msg);
  const stored = (tenant: string, id: string): StoredRecord => {
    const rec = store.getRecord(tenant, SF_ORDER, id);
    if (!rec) throw appError('ERR_NOT_FOUND', `order ${id}`);
    return rec;
  };
  return {
    tabs: createTabsApi(parts, reservations),
    settings: (tenant) => storefrontSettingsOf(store.getOrg(tenant)),
    updateSettings: (tenant, patch) => ask(tenant, { type: 'update-settings', patch }),
    closed: (tenant) => storefrontSettingsOf(store.getOrg(tenant)).posRequiresStaffToken,
    products: (tenant, query, limits) => parts.queries.run(tenant, CATALOG_JOB, { tenant, query, limits } satisfies CatalogRead),
    categories: (tenant, q, limits) => listPosCategories(store, tenant, q, limits),
    createCategory: (tenant, data) => ask(tenant, { type: 'create-category', data }),
    order: (tenant, id) => presentOrder(stored(tenant, id), currency()),
    ownOrder(tenant, customerId, orderNumber) {
      const n = Number(orderNumber);
      const rec = store.scan(tenant, SF_ORDER, { 'data.orderNumber': { $in: [n, orderNumber] } }).find((r) => r.data.customerId === customerId);
      if (!rec) throw appError('ERR_NOT_FOUND', `order ${orderNumber}`);
      return presentOrder(rec, currency());
    },
    async closedTabs(tenant, location, { from, to }, opts) {
      const filter: Record<string, unknown> = { 'data.businessLocationId': location, 'data.status': CLOSED };
      if (from || to) filter['data.closedAt'] = { ...(from ? { $gte: from } : {}), ...(to ? { $lt: to } : {}) };
      const result = await listRecords(parts, tenant, SF_ORDER, filter, { ...opts, sort: 'data.closedAt', sortType: 'desc' });
      return { ...result, data: result.data.map((r) => presentOrder(r, currency())) };
    },
    orderLocation(tenant, id) {
      const location = store.getRecord(tenant, SF_ORDER, id)?.data.businessLocationId;
      return typeof location === 'string' ? location : undefined;
    },
    location: (tenant, slug) => reservations.location(tenant, slug),
    requireLocation: (tenant, slug) => reservations.requireLocation(tenant, slug),
    receiptPayload(tenant, id, kind, copy) {
      const rec = stored(tenant, id);
      const order = readOrder(rec, currency());
      const slug = typeof rec.data.businessLocationId === 'string' ? rec.data.businessLocationId : '';
      const location = slug ? reservations.location(tenant, slug) : undefined;
      const printedAt = new Date(clock.now()).toISOString();
      return { payload: buildPayload(kind, copy, order, store.getOrg(tenant), location, printedAt), exponent: order.exponent };
    },
    orderContact: (tenant, id) => contactOf(stored(tenant, id)),
    queueReceipt: (tenant, msg) => queueReceipt(runtime, tenant, msg),
    createIntent: (tenant, processor, body, methodTypes, status) =>
      createPaymentIntent({ store, clock, runtime, storefront: parts.services.storefront }, tenant, processor, body, methodTypes, status),
    async tabWritten(tenant, orderId) {
      const location = store.getRecord(tenant, SF_ORDER, orderId)?.data.businessLocationId;
      if (typeof location !== 'string' || !runtime.isLive(tenant, POS_TABS_ACTOR, location)) return;
      await askPos(runtime, tenant, location, { type: 'tab-written', orderId });
    },
  };
}
