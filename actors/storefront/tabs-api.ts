// The POS tabs part of the storefront API: one call per operation on a tab, each one message to
// the tabs actor of the location (messages.ts: askPos). A tab's operations find that location on
// the stored order, so a caller names only the order; the messages stay inside the area.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import type { ReservationsApi } from '../reservations/index.js';
import {
  askPos,
  type FireReply,
  type ItemInput,
  type OpenInput,
  type OpenReply,
  type PosMessage,
  type RefundInput,
  type SettleInput,
  type SettleReply,
  type SplitReply,
} from './messages.js';
import { SF_ORDER } from './order.js';

/** Every answer is the actor's: orders as stored (the caller presents them, order.ts: presentOrder). */
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

export interface TabsParts {
  readonly runtime: Pick<ActorRuntime, 'ask'>;
  readonly store: Store;
}

export function createTabsApi(parts: TabsParts, reservations: ReservationsApi): TabsApi {
  const { runtime, store } = parts;
  /** A message about order `orderId` goes to its location's actor: 404 without the order, 409 without a location. */
  const askTab = <R>(tenant: string, msg: Extract<PosMessage, { orderId: string }>): Promise<R> => {
    const rec = store.getRecord(tenant, SF_ORDER, msg.orderId);
    if (!rec) throw appError('ERR_NOT_FOUND', `order ${msg.orderId}`);
    const location = rec.data.businessLocationId;
    if (typeof location !== 'string' || !location) {
      throw appError('ERR_CONFLICT', `order ${msg.orderId} has no data.businessLocationId; POS operations need the location slug`);
    }
    return askPos<R>(runtime, tenant, location, msg);
  };
  return {
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
  };
}
