// The storefront area's API for the edge: one call per request. Changes are asks to the tenant's
// storefront actor (order numbers, categories, settings, intent answers, receipts) or to the POS
// tabs actor of a location (`tabs`, which finds the location on the stored order); orders, locations and settings are read from
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
import {
  askPos,
  type FireReply,
  type ItemInput,
  type OpenInput,
  type OpenReply,
  type PosMessage,
  POS_TABS_ACTOR,
  type RefundInput,
  type SettleInput,
  type SettleReply,
  type SplitReply,
  STOREFRONT_ACTOR,
  STOREFRONT_KEY,
  type StorefrontMessage,
} from './messages.js';
import { CLOSED, presentOrder, readOrder, SF_ORDER } from './order.js';
import { createPaymentIntent, type IntentRequest, type IntentView } from './payment-intents.js';
import { contactOf } from './privacy.js';
import { buildPayload, type Copy, type PayloadKind, type ReceiptPayload } from './receipt.js';
import { queueReceipt } from './receipt-outbox.js';
import type { StorefrontServices } from './services.js';
import { storefrontSettingsOf, type StorefrontSettings } from '../org-settings/index.js';

export interface StorefrontParts extends ListingDeps {
  readonly runtime: Pick<ActorRuntime, 'ask' | 'isLive'>;
  readonly store: Store;
  readonly clock: Clock;
  readonly services: ListingDeps['services'] & { readonly storefront: StorefrontServices };
}

/**
 * The POS tab operations, each one message to the tabs actor of the location; the messages stay
 * in the area. Every answer is the actor's: orders as stored (the caller presents them, order.ts:
 * presentOrder).
 */
export interface TabsApi {
  /** Opens a tab at `location` (404 when it is no location), or answers the open one at that point or label (`created: false`). */
  open(tenant: string, location: string, input: OpenInput): Promise<OpenReply>;
  /** The open tabs of `location`, oldest first; none for a location that does not exist (its sk, say). */
  listOpen(tenant: string, location: string): Promise<StoredRecord[]>;
  addItems(tenant: string, orderId: string, items: ItemInput[], by: string | undefined): Promise<StoredRecord>;
  /** Sends the lines not yet fired to the kitchen (idempotent). */
  fire(tenant: string, orderId: string, by: string | undefined): Promise<FireReply>;
  settle(tenant: string, orderId: string, payment: SettleInput, by: string | undefined): Promise<SettleReply>;
  refund(tenant: string, orderId: string, refund: RefundInput, by: string | undefined): Promise<SettleReply>;
  /** Moves `itemIds` to a new tab, or divides the tab into `parts` equal ones (one of the two). */
  split(tenant: string, orderId: string, how: { itemIds?: string[]; parts?: number }, by: string | undefined): Promise<SplitReply>;
  /** Moves the tab to a service point (id or name at the tab's location). */
  assignPoint(tenant: string, orderId: string, servicePointId: string, by: string | undefined): Promise<StoredRecord>;
  /** Detaches the tab from its point, which gets `status` (default `dirty`). */
  releasePoint(tenant: string, orderId: string, status: string | undefined, by: string | undefined): Promise<StoredRecord>;
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
  /** A message about order `orderId` goes to its location's actor: 404 without the order, 409 without a location. */
  const askTab = <R>(tenant: string, msg: Extract<PosMessage, { orderId: string }>): Promise<R> => {
    const location = stored(tenant, msg.orderId).data.businessLocationId;
    if (typeof location !== 'string' || !location) {
      throw appError('ERR_CONFLICT', `order ${msg.orderId} has no data.businessLocationId; POS operations need the location slug`);
    }
    return askPos<R>(runtime, tenant, location, msg);
  };
  return {
    tabs: {
      open(tenant, location, input) {
        reservations.requireLocation(tenant, location);
        return askPos(runtime, tenant, location, { type: 'open', input });
      },
      async listOpen(tenant, location) {
        if (!reservations.location(tenant, location)) return [];
        return askPos(runtime, tenant, location, { type: 'list-open' });
      },
      addItems: (tenant, orderId, items, by) => askTab(tenant, { type: 'add-items', orderId, items, by }),
      fire: (tenant, orderId, by) => askTab(tenant, { type: 'fire', orderId, by }),
      settle: (tenant, orderId, input, by) => askTab(tenant, { type: 'settle', orderId, input, by }),
      refund: (tenant, orderId, input, by) => askTab(tenant, { type: 'refund', orderId, input, by }),
      split: (tenant, orderId, { itemIds, parts }, by) => askTab(tenant, { type: 'split', orderId, itemIds, parts, by }),
      assignPoint: (tenant, orderId, servicePointId, by) => askTab(tenant, { type: 'assign-point', orderId, servicePointId, by }),
      releasePoint: (tenant, orderId, status, by) => askTab(tenant, { type: 'release-point', orderId, status, by }),
    },
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
