// The storefront's tenant-wide actor (kind `storefront`, key `main`): what several locations share
// and so must be serialised once per tenant. It hands out order numbers (per tenant, never twice),
// records which order a card payment intent was applied to (one intent pays one order, even when
// two locations try at once), creates POS categories (names unique), writes the organisation's
// storefront settings, records the first answer to a payment intent made with an idempotency key,
// and queues receipts and print jobs in the outbox. The POS tabs actors ask it; it never asks them.
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { recordIdempotent } from '../../core/idempotency.js';
import { newRecord, type StoredRecord } from '../../core/store/record.js';
import { RecordView } from '../../core/store/record-view.js';
import { SF_CATEGORY, SF_ORDER } from './order.js';
import { storefrontSettingsOf, type StorefrontSettings } from '../org-settings/index.js';
import { STOREFRONT_ACTOR, type StorefrontMessage } from './messages.js';

const NS = 'storefront';
const ORDER_NUMBER_KEY = 'orderNumber';
/** The first order number of a tenant is this + 1. */
export const ORDER_NUMBER_BASE = 1000;

interface State {
  lastNumber: number | undefined;
  claims: Map<string, string>;
  view: RecordView;
  settings: StorefrontSettings | undefined;
}

function lastOrderNumber(ctx: ActorContext): number {
  const stored = ctx.store.getKv<number>(ctx.tenant, NS, ORDER_NUMBER_KEY);
  if (typeof stored === 'number') return stored;
  // First use: continue after any order imported through the record store.
  let max = ORDER_NUMBER_BASE;
  for (const r of ctx.store.scan(ctx.tenant, SF_ORDER)) {
    const n = Number(r.data.orderNumber);
    if (Number.isSafeInteger(n) && n > max) max = n;
  }
  return max;
}

function receive(state: State, msg: StorefrontMessage, ctx: ActorContext): unknown {
  switch (msg.type) {
    case 'next-order-numbers': {
      const first = (state.lastNumber ??= lastOrderNumber(ctx)) + 1;
      state.lastNumber += Math.max(1, msg.count);
      ctx.batch.putKv(ctx.tenant, NS, ORDER_NUMBER_KEY, state.lastNumber);
      return first;
    }

    case 'claim-ref': {
      const key = `ref:${msg.gateway}:${msg.ref}`;
      const holder = state.claims.get(key) ?? ctx.store.getKv<string>(ctx.tenant, NS, key);
      if (holder && holder !== msg.orderId) {
        throw appError('ERR_CONFLICT', `payment ${msg.ref} of gateway ${msg.gateway} was already applied to another order (${holder})`);
      }
      if (!holder) {
        ctx.batch.putKv(ctx.tenant, NS, key, msg.orderId);
        // The map only bridges the time until the write lands; the store keeps every claim.
        if (state.claims.size >= 10_000) {
          for (const k of state.claims.keys()) if (ctx.store.getKv(ctx.tenant, NS, k) !== undefined) state.claims.delete(k);
        }
        state.claims.set(key, msg.orderId);
      }
      return { orderId: msg.orderId };
    }

    case 'create-category': {
      state.view.prune();
      const name = String(msg.data.name);
      const taken = state.view
        .scan(SF_CATEGORY)
        .some((c) => typeof c.data.name === 'string' && c.data.name.trim().toLowerCase() === name.toLowerCase() &&
          (c.data.businessLocationId ?? null) === (msg.data.businessLocationId ?? null));
      if (taken) throw appError('ERR_CONFLICT', `a category named "${name}" already exists`);
      const rec: StoredRecord = newRecord(ctx.tenant, SF_CATEGORY, { ...msg.data }, { now: ctx.clock.now(), state: 'active' });
      return state.view.put(ctx.batch, rec, 0);
    }

    case 'update-settings': {
      const org = ctx.store.getOrg(ctx.tenant);
      if (!org) throw appError('ERR_NOT_FOUND', `organisation ${ctx.tenant}`);
      const next: StorefrontSettings = { ...(state.settings ?? storefrontSettingsOf(org)), ...msg.patch };
      const settings = { ...((org.settings as Record<string, unknown> | undefined) ?? {}), ...next };
      ctx.batch.patchOrg(ctx.tenant, { settings });
      state.settings = next;
      return next;
    }

    case 'record-intent':
      recordIdempotent(ctx.store, ctx.batch, ctx.tenant, msg.key, msg.print, msg.result, ctx.clock);
      return msg.result;

    case 'queue-receipt':
      return ctx.services.outbox.send(ctx.tenant, msg.msg, ctx.batch);

    default:
      throw appError('ERR_BAD_REQUEST', `unknown storefront message ${(msg as { type?: unknown }).type}`);
  }
}

export const storefrontActor: ActorKind<State, StorefrontMessage, unknown> = {
  kind: STOREFRONT_ACTOR,
  activate: (ctx) => ({ lastNumber: undefined, claims: new Map(), view: new RecordView(ctx.store, ctx.tenant), settings: undefined }),
  receive,
};
