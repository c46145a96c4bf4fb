// The POS tabs actor: one per location (key: the location slug), the one writer of that location's
// `sf_order` records. It holds the open tabs (found by service-point name and by display label),
// and every change of a tab (lines, firing, payments, refunds, splits, service points) is one
// message here, so two settles racing on one tab are applied one after the other: the tab closes
// once and no payment is lost (spec: Endpoints → Storefront: POS tabs and orders).
//
// Tab life (spec: "POS tab/order lifecycle ... not shown", so these are ours):
//   open ──settle (paid in full)──▶ closed        open ──split──▶ split (its lines or shares move
//   to new open tabs). Lines are added and payments taken only while open; firing works on open
//   and closed tabs (pay-first counters); refunds work on open and closed tabs.
// Opening a tab at a service point marks the point `occupied`; closing the last open tab there
// marks it `dirty`.
//
// This file is the actor: its activation and its one dispatch of messages. Each step is a file of
// its own: tabs.ts (open, lines, service points), tab-firing.ts, tab-payments.ts, tab-refunds.ts,
// tab-splits.ts; what they share is tab-state.ts.
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { RecordView } from '../../core/store/record-view.js';
import { POS_TABS_ACTOR, type PosMessage } from './messages.js';
import { SF_ORDER } from './order.js';
import { fire } from './tab-firing.js';
import { settle } from './tab-payments.js';
import { refund } from './tab-refunds.js';
import { split } from './tab-splits.js';
import { type Ctx, isOpenRecord, keysOf, openTabs, presented, type State, type TabKeys } from './tab-state.js';
import { addItems, assignPoint, open, releasePoint } from './tabs.js';

async function handle(c: Ctx, msg: PosMessage): Promise<unknown> {
  switch (msg.type) {
    case 'open':
      return open(c, msg.input);
    case 'list-open':
      return openTabs(c).map(presented);
    case 'add-items':
      return addItems(c, msg.orderId, msg.items);
    case 'fire':
      return fire(c, msg.orderId, msg.by);
    case 'settle':
      return settle(c, msg.orderId, msg.input, msg.by);
    case 'refund':
      return refund(c, msg.orderId, msg.input, msg.by);
    case 'split':
      if ((msg.itemIds === undefined) === (msg.parts === undefined)) throw appError('ERR_VALIDATION', 'send either itemIds or parts');
      return split(c, msg.orderId, msg.itemIds, msg.parts, msg.by);
    case 'assign-point':
      return assignPoint(c, msg.orderId, msg.servicePointId);
    case 'release-point':
      return releasePoint(c, msg.orderId, msg.status);
    case 'tab-written': {
      // Written through the record store: take its keys as they are now (a new open tab, a
      // closed one reopened, a label changed), or forget it.
      const rec = c.state.view.get(SF_ORDER, msg.orderId);
      if (rec && rec.data.businessLocationId === c.state.slug && isOpenRecord(rec)) c.state.open.set(rec.sk, keysOf(rec));
      else c.state.open.delete(msg.orderId);
      return true;
    }
    default:
      throw appError('ERR_BAD_REQUEST', `unknown pos-tabs message ${(msg as { type?: unknown }).type}`);
  }
}

function receive(state: State, msg: PosMessage, ctx: ActorContext): Promise<unknown> {
  state.view.prune();
  state.touched = false;
  const now = ctx.clock.now();
  const c: Ctx = { state, actor: ctx, services: ctx.services.storefront, now, iso: new Date(now).toISOString() };
  return handle(c, msg);
}

export const posTabsActor: ActorKind<State, PosMessage, unknown> = {
  kind: POS_TABS_ACTOR,
  // A refusal raised before anything changed (tab-state.ts: touched) leaves the state as it was;
  // one raised after recording what had happened is thrown with refuseAfterWrites (tab-refunds.ts).
  refusalKeepsState: (state) => !state.touched,
  activate(ctx) {
    const open = new Map<string, TabKeys>();
    for (const r of ctx.store.scan(ctx.tenant, SF_ORDER, { 'data.businessLocationId': ctx.key })) if (isOpenRecord(r)) open.set(r.sk, keysOf(r));
    return { slug: ctx.key, view: new RecordView(ctx.store, ctx.tenant), open, idem: new Map(), touched: false };
  },
  receive,
};
