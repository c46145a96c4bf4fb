// The storefront area's actor messages: the POS tabs actor's (kind `pos-tabs`, key: the location
// slug) with the typed call that sends them, and the storefront actor's (kind `storefront`, key
// `main`). Inputs carry money and quantities as they arrived (numbers or numeric strings); the
// actor parses them in the currency of the order. A refusal (400, 404, 409) is thrown as an
// AppError; the actor keeps its state through it (refusalKeepsState, core/actor/runtime.ts).
import type { IdempotentResult } from '../../core/idempotency.js';
import type { OutboxMessage } from '../../core/outbox.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { StorefrontSettings } from '../org-settings/index.js';
import type { TaskRecord } from '../workflow/index.js';

export const POS_TABS_ACTOR = 'pos-tabs';

export interface Customer {
  name?: string;
  email?: string;
  phone?: string;
  customerId?: string;
}

export interface OpenInput {
  tabLabel?: string;
  servicePointId?: string;
  customer?: Customer;
  /** The signed-in customer placing the order (from the token). */
  customerId?: string;
  by?: string;
}

export interface ModifierInput {
  name: string;
  price?: unknown;
}

export interface ItemInput {
  productId?: string;
  name?: string;
  quantity: unknown;
  unitPrice?: unknown;
  modifiers?: Array<string | ModifierInput>;
  notes?: string;
}

export interface SettleInput {
  amount: unknown;
  tip?: unknown;
  method?: string;
  gateway?: string;
  ref?: string;
  idempotencyKey?: string;
}

export interface RefundInput {
  amount?: unknown;
  transactionId?: string;
  reason?: string;
  idempotencyKey?: string;
}

export type PosMessage =
  | { type: 'open'; input: OpenInput }
  | { type: 'list-open' }
  | { type: 'add-items'; orderId: string; items: ItemInput[]; by?: string }
  | { type: 'fire'; orderId: string; by?: string }
  | { type: 'settle'; orderId: string; input: SettleInput; by?: string }
  | { type: 'refund'; orderId: string; input: RefundInput; by?: string }
  | { type: 'split'; orderId: string; itemIds?: string[]; parts?: number; by?: string }
  | { type: 'assign-point'; orderId: string; servicePointId: string; by?: string }
  | { type: 'release-point'; orderId: string; status?: string; by?: string }
  /** A tab of this location was written around this actor (through the record store). */
  | { type: 'tab-written'; orderId: string };

export interface OpenReply {
  order: StoredRecord;
  created: boolean;
}

export interface FireReply {
  order: StoredRecord;
  task: TaskRecord | null;
  fired: number;
}

export interface SettleReply {
  order: StoredRecord;
  transaction: Record<string, unknown>;
}

export interface SplitReply {
  order: StoredRecord;
  orders: StoredRecord[];
}

/** The storefront actor (one per tenant): order numbers, gateway references, categories, settings, intents, receipts. */
export const STOREFRONT_ACTOR = 'storefront';
export const STOREFRONT_KEY = 'main';

export type StorefrontMessage =
  | { type: 'next-order-numbers'; count: number }
  | { type: 'claim-ref'; gateway: string; ref: string; orderId: string }
  | { type: 'create-category'; data: Record<string, unknown> }
  | { type: 'update-settings'; patch: Partial<StorefrontSettings> }
  /** The answer to an intent made with idempotency key `key` (payment-intents.ts). */
  | { type: 'record-intent'; key: string; print: string; result: IdempotentResult }
  /** A receipt, check or print job for the outbox: stored with nothing else, sent after commit. */
  | { type: 'queue-receipt'; msg: OutboxMessage };

interface Asker {
  ask<R = unknown>(tenant: string, kind: string, key: string, msg: unknown): Promise<R>;
}

/** Sends a message to the tabs actor of `location`: answers its reply, or throws its refusal. */
export function askPos<T>(runtime: Asker, tenant: string, location: string, msg: PosMessage): Promise<T> {
  return runtime.ask<T>(tenant, POS_TABS_ACTOR, location, msg);
}
