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
import { createHash } from 'node:crypto';
import type { ActorContext, ActorKind } from '../../core/actor/runtime.js';
import { AppError, appError, fromWire, toWire, type WireError } from '../../core/errors.js';
import { findIdempotent, fingerprint, recordIdempotent } from '../../core/idempotency.js';
import { isId, newId } from '../../core/ids.js';
import { GatewayError, type PaymentGateway, type PaymentIntent } from '../../core/payments/gateway.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { findLocation, locationNotFound } from '../reservations/queries.js';
import { SERVICE_POINT_DATATYPE } from '../service-points/actor.js';
import { setServicePointStatus } from '../service-points/client.js';
import { askerOf, createTask } from '../workflow/client.js';
import { KITCHEN_WORKFLOW } from '../workflow/definitions.js';
import { RecordView } from '../workflow/record-view.js';
import {
  POS_TABS_ACTOR,
  type FireReply,
  type ItemInput,
  type OpenInput,
  type OpenReply,
  type PosMessage,
  type PosReply,
  type RefundInput,
  type SettleInput,
  type SettleReply,
  type SplitReply,
} from './messages.js';
import {
  currencyOf,
  divide,
  formatMinor,
  looseMoney,
  looseRate,
  parseMoney,
  parseQuantity,
  parseRate,
  QTY_SCALE,
  sum,
} from './money.js';
import {
  BM_LOCATION_PRODUCT,
  CLOSED,
  OPEN,
  orderData,
  readOrder,
  SF_ORDER,
  SF_PRODUCT,
  SPLIT,
  totalsOf,
  transactionData,
  type Allocation,
  type Line,
  type Modifier,
  type Order,
  type Transaction,
} from './order.js';
import { storefrontServicesOf, type StorefrontServices } from './services.js';
import { STOREFRONT_ACTOR, STOREFRONT_KEY, type StorefrontMessage } from './tenant-actor.js';

export const MAX_LINES = 500;
export const MAX_PAYMENTS = 500;
const MAX_IDEM_MEMORY = 10_000;

/** What an open tab is found by (spec: tabs are keyed by service-point name and display label). */
interface TabKeys {
  pointId?: string;
  pointName?: string;
  label?: string;
}

interface State {
  slug: string;
  view: RecordView;
  /** This location's open tabs, oldest first, with their keys. */
  open: Map<string, TabKeys>;
  /** Idempotent results written but perhaps not yet visible in the store. */
  idem: Map<string, { print: string; body: unknown }>;
  /** Set once the current message changed state: a refusal after that must rebuild the actor. */
  touched: boolean;
}

interface Ctx {
  state: State;
  actor: ActorContext;
  services: StorefrontServices;
  now: number;
  iso: string;
}

function askStorefront<R>(c: Ctx, msg: StorefrontMessage): Promise<R> {
  return c.actor.ask<R>(STOREFRONT_ACTOR, STOREFRONT_KEY, msg);
}

function label(o: Order): string {
  return `#${String(o.rec.data.orderNumber ?? o.rec.sk)}`;
}

function money(o: Order, minor: number): string {
  return `${formatMinor(minor, o.exponent)} ${o.currency}`;
}

function pointIdOf(o: Order): string | undefined {
  return typeof o.rec.data.servicePointId === 'string' && o.rec.data.servicePointId ? o.rec.data.servicePointId : undefined;
}

function pointNameOf(o: Order): string | undefined {
  return typeof o.rec.data.servicePointName === 'string' && o.rec.data.servicePointName ? o.rec.data.servicePointName : undefined;
}

function sameText(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' && a.trim().toLowerCase() === b.trim().toLowerCase();
}

function location(c: Ctx): StoredRecord {
  const loc = findLocation(c.actor.store, c.actor.tenant, c.state.slug);
  if (!loc) throw locationNotFound(c.state.slug);
  return loc;
}

function currencyAt(c: Ctx, loc: StoredRecord | undefined): string {
  return currencyOf(loc?.data.currency, c.services.defaultCurrency);
}

/** This location's order `id` (another location's is not found here). */
function loadOrder(c: Ctx, id: string): Order {
  const rec = typeof id === 'string' ? c.state.view.get(SF_ORDER, id) : undefined;
  if (!rec || rec.data.businessLocationId !== c.state.slug) throw appError('ERR_NOT_FOUND', `order ${id}`);
  return readOrder(rec, c.services.defaultCurrency);
}

function keysOf(rec: StoredRecord): TabKeys {
  const d = rec.data;
  const keys: TabKeys = {};
  if (typeof d.servicePointId === 'string' && d.servicePointId) keys.pointId = d.servicePointId;
  if (typeof d.servicePointName === 'string' && d.servicePointName) keys.pointName = d.servicePointName;
  if (typeof d.tabLabel === 'string' && d.tabLabel) keys.label = d.tabLabel;
  return keys;
}

function isOpenRecord(rec: StoredRecord): boolean {
  const s = rec.data.status;
  return s === undefined || s === null || s === '' || s === OPEN;
}

/** The open tab at `id`, or undefined when it is gone, moved or no longer open. */
function openOrder(c: Ctx, id: string): Order | undefined {
  const rec = c.state.view.get(SF_ORDER, id);
  if (!rec || rec.data.businessLocationId !== c.state.slug || !isOpenRecord(rec)) return undefined;
  return readOrder(rec, c.services.defaultCurrency);
}

/** The open tabs of this location, oldest first (every one read: for lists). */
function openTabs(c: Ctx): Order[] {
  const out: Order[] = [];
  for (const id of [...c.state.open.keys()].sort()) {
    const o = openOrder(c, id);
    if (o) out.push(o);
  }
  return out;
}

/**
 * The oldest open tab whose keys match. Keys are held in memory, so only a candidate is read;
 * it is checked against its record, which may have been edited through the record store.
 */
function findOpen(c: Ctx, match: (k: TabKeys) => boolean, except?: string): Order | undefined {
  for (const [id, keys] of c.state.open) {
    if (id === except || !match(keys)) continue;
    const o = openOrder(c, id);
    if (o && match(keysOf(o.rec))) return o;
  }
  return undefined;
}

/** Tabs name their point by id, or (records written elsewhere: spec, tabs are keyed by the point's name) by name. */
function atPoint(point: StoredRecord): (k: TabKeys) => boolean {
  return (k) =>
    k.pointId === point.sk || sameText(k.pointId, point.data.name) || (k.pointId === undefined && sameText(k.pointName, point.data.name));
}

function tabAtPoint(c: Ctx, point: StoredRecord, except?: string): Order | undefined {
  return findOpen(c, atPoint(point), except);
}

function tabsHoldingPoint(c: Ctx, pointId: string, except: string): number {
  let n = 0;
  for (const [id, keys] of c.state.open) if (id !== except && keys.pointId === pointId) n++;
  return n;
}

/** The order as answered: its data with every amount computed. */
function presented(o: Order): StoredRecord {
  return { ...o.rec, data: orderData(o) };
}

/** A service point of this location by id or by name (exact first, then without case). */
function findPoint(c: Ctx, ref: string): StoredRecord {
  const { store, tenant } = c.actor;
  if (isId(ref)) {
    const byId = store.getRecord(tenant, SERVICE_POINT_DATATYPE, ref);
    if (byId && byId.data.businessLocationId === c.state.slug) return byId;
  }
  const points = store.scan(tenant, SERVICE_POINT_DATATYPE, { 'data.businessLocationId': c.state.slug });
  const exact = points.filter((p) => p.data.name === ref);
  if (exact.length === 1) return exact[0];
  const loose = points.filter((p) => sameText(p.data.name, ref));
  if (loose.length === 1) return loose[0];
  if (exact.length + loose.length > 1) throw appError('ERR_CONFLICT', `several service points are named "${ref}"; send the id`);
  throw appError('ERR_NOT_FOUND', `service point ${ref} at location ${c.state.slug}`);
}

async function setPointStatus(c: Ctx, pointId: string, status: string): Promise<StoredRecord> {
  return setServicePointStatus({ runtime: askerOf(c.actor), store: c.actor.store }, c.actor.tenant, {
    servicePointId: pointId,
    status,
    businessLocationId: c.state.slug,
  });
}

/** Frees a point a tab no longer holds, unless another open tab still sits there. Never fails the caller. */
async function freePoint(c: Ctx, o: Order, status: string): Promise<void> {
  const id = pointIdOf(o);
  if (!id || tabsHoldingPoint(c, id, o.rec.sk) > 0) return;
  try {
    await setPointStatus(c, id, status);
  } catch (err) {
    c.services.logger?.warn({ err, tenant: c.actor.tenant, servicePointId: id }, 'could not set the service point status after a tab let it go');
  }
}

/** Queues the order's next version; the only place an order is written after it was created. */
function save(c: Ctx, o: Order, fields: Record<string, unknown> = {}, drop: string[] = []): StoredRecord {
  c.state.touched = true;
  const data = { ...orderData(o), ...fields };
  for (const k of drop) delete data[k];
  const next = nextVersion(o.rec, { data, state: o.status, amountPaid: data.amountPaid }, c.now);
  c.state.view.put(c.actor.batch, next, o.rec.version);
  if (o.status === OPEN) c.state.open.set(o.rec.sk, keysOf(next));
  else c.state.open.delete(o.rec.sk);
  return next;
}

/** Creates a tab record with number `orderNumber`. */
function create(c: Ctx, data: Record<string, unknown>, currency: string): StoredRecord {
  c.state.touched = true;
  const blank = newRecord(c.actor.tenant, SF_ORDER, { ...data, status: OPEN, currency }, { now: c.now, state: OPEN });
  const o = readOrder(blank, c.services.defaultCurrency);
  o.openingBalance = 0;
  o.openingTax = 0;
  return createFrom(c, o, blank.data);
}

function createFrom(c: Ctx, o: Order, base: Record<string, unknown>): StoredRecord {
  c.state.touched = true;
  const data = { ...base, ...orderData(o) };
  const rec: StoredRecord = { ...o.rec, data, state: o.status, amountPaid: data.amountPaid };
  c.state.view.put(c.actor.batch, rec, 0);
  if (o.status === OPEN) c.state.open.set(rec.sk, keysOf(rec));
  return rec;
}

function assertOpen(o: Order, action: string): void {
  if (o.status !== OPEN) throw appError('ERR_CONFLICT', `cannot ${action} order ${label(o)}: it is ${o.status}`);
}

// ---- open ------------------------------------------------------------------------------------

/**
 * The guest's contact and the order's owner. The owner is `input.customerId` only, which the edge
 * sets from a credential (a customer token, or staff naming the customer); a `customerId` inside
 * the typed contact is dropped, so no body alone makes an order someone's.
 */
function customerOf(input: OpenInput): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const cust = input.customer;
  if (cust) {
    const clean = Object.fromEntries(
      Object.entries(cust)
        .filter(([k, v]) => k !== 'customerId' && typeof v === 'string' && v.trim())
        .map(([k, v]) => [k, (v as string).trim()]),
    );
    if (Object.keys(clean).length) out.customer = clean;
  }
  if (input.customerId) out.customerId = input.customerId;
  return out;
}

async function open(c: Ctx, input: OpenInput): Promise<OpenReply> {
  const loc = location(c);
  const tabLabel = input.tabLabel?.trim() || undefined;
  let point: StoredRecord | undefined;
  if (input.servicePointId) {
    point = findPoint(c, input.servicePointId);
    const existing = tabAtPoint(c, point);
    if (existing) return { order: presented(existing), created: false };
  } else if (tabLabel) {
    const existing = findOpen(c, (k) => sameText(k.label, tabLabel));
    if (existing) return { order: presented(existing), created: false };
  }
  const orderNumber = await askStorefront<number>(c, { type: 'next-order-numbers', count: 1 });
  if (point) await setPointStatus(c, point.sk, 'occupied');
  const data: Record<string, unknown> = {
    orderNumber,
    businessLocationId: c.state.slug,
    tabLabel: tabLabel ?? (point ? String(point.data.name) : `#${orderNumber}`),
    ...(point ? { servicePointId: point.sk, servicePointName: String(point.data.name) } : {}),
    ...customerOf(input),
    openedAt: c.iso,
    ...(input.by ? { openedBy: input.by } : {}),
  };
  return { order: create(c, data, currencyAt(c, loc)), created: true };
}

// ---- lines -----------------------------------------------------------------------------------

function parseModifiers(raw: ItemInput['modifiers'], field: string, exponent: number): Modifier[] {
  if (raw === undefined) return [];
  return raw.map((m, i) => {
    if (typeof m === 'string') return { name: m, price: 0 };
    return { name: m.name, price: m.price === undefined ? 0 : parseMoney(m.price, `${field}/${i}/price`, exponent) };
  });
}

/** The product's price at this location (`bm_location_product`), else its own. */
function productPrice(c: Ctx, product: StoredRecord, exponent: number): number | undefined {
  const at = c.actor.store.scan(c.actor.tenant, BM_LOCATION_PRODUCT, { 'data.businessLocationId': c.state.slug, 'data.productId': product.sk })[0];
  const local = at ? looseMoney(at.data.price, exponent, -1) : -1;
  if (local >= 0) return local;
  const own = looseMoney(product.data.price, exponent, -1);
  return own >= 0 ? own : undefined;
}

function addItems(c: Ctx, orderId: string, items: ItemInput[]): StoredRecord {
  const o = loadOrder(c, orderId);
  assertOpen(o, 'add lines to');
  if (o.lines.length + items.length > MAX_LINES) throw appError('ERR_VALIDATION', `an order holds at most ${MAX_LINES} lines`);
  const loc = findLocation(c.actor.store, c.actor.tenant, c.state.slug);
  const locationRate = looseRate(loc?.data.taxRate) ?? 0;
  const e = o.exponent;
  items.forEach((item, i) => {
    const field = `body/items/${i}`;
    const quantity = parseQuantity(item.quantity, `${field}/quantity`);
    const product = item.productId ? c.actor.store.getRecord(c.actor.tenant, SF_PRODUCT, item.productId) : undefined;
    if (!product && (item.unitPrice === undefined || !item.name?.trim())) {
      if (item.productId) throw appError('ERR_NOT_FOUND', `product ${item.productId}`);
      throw appError('ERR_VALIDATION', `${field} needs a productId, or a name and a unitPrice`);
    }
    let unitPrice: number;
    if (item.unitPrice !== undefined) unitPrice = parseMoney(item.unitPrice, `${field}/unitPrice`, e);
    else {
      const p = productPrice(c, product!, e);
      if (p === undefined) throw appError('ERR_VALIDATION', `${field}: product ${product!.sk} has no price; send unitPrice`);
      unitPrice = p;
    }
    const productRate = product && product.data.taxRate !== undefined ? parseRate(product.data.taxRate, `product ${product.sk} taxRate`) : undefined;
    const line: Line = {
      lineId: newId(c.now),
      name: item.name?.trim() || String(product?.data.name ?? product?.data.title ?? item.productId),
      quantity,
      unitPrice,
      modifiers: parseModifiers(item.modifiers, `${field}/modifiers`, e),
      taxRate: productRate ?? locationRate,
      addedAt: c.iso,
      extra: {},
    };
    if (item.productId) line.productId = item.productId;
    if (item.notes?.trim()) line.notes = item.notes.trim();
    o.lines.push(line);
  });
  totalsOf(o); // refuses totals beyond the safe range before anything is written
  return save(c, o);
}

// ---- fire ------------------------------------------------------------------------------------

async function fire(c: Ctx, orderId: string, by: string | undefined): Promise<FireReply> {
  const o = loadOrder(c, orderId);
  if (o.status === SPLIT) throw appError('ERR_CONFLICT', `cannot fire order ${label(o)}: it was split; fire the new tabs`);
  // spec: States and transitions → order line: lines that already have a taskId are dropped.
  const unfired = o.lines.filter((l) => !l.taskId);
  if (unfired.length === 0) return { order: presented(o), task: null, fired: 0 };
  const ids = unfired.map((l) => l.lineId);
  // The same set of lines always maps to the same live task, so a fire retried after a failure
  // between the task and the order write finds that task instead of making a second one.
  const digest = createHash('sha256').update(ids.join('\u0000')).digest('base64url').slice(0, 22);
  const summary = unfired.map((l) => `${l.quantity / QTY_SCALE} × ${l.name}`).join(', ');
  const task = await createTask(askerOf(c.actor), c.actor.tenant, {
    workflowId: KITCHEN_WORKFLOW,
    title: `${label(o)} ${String(o.rec.data.tabLabel ?? '')}: ${summary}`.slice(0, 200),
    orderId: o.rec.sk,
    ...(unfired.length === 1 ? { lineId: unfired[0].lineId } : {}),
    businessLocationId: c.state.slug,
    ...(pointIdOf(o) ? { servicePointId: pointIdOf(o) } : {}),
    ...(pointNameOf(o) ? { servicePointName: pointNameOf(o) } : {}),
    uniqueKey: `order:${o.rec.sk}:fire:${digest}`,
    payload: {
      orderNumber: o.rec.data.orderNumber,
      lineIds: ids,
      lines: unfired.map((l) => ({
        lineId: l.lineId,
        ...(l.productId ? { productId: l.productId } : {}),
        name: l.name,
        quantity: l.quantity / QTY_SCALE,
        modifiers: l.modifiers.map((m) => m.name),
        ...(l.notes ? { notes: l.notes } : {}),
      })),
    },
    ...(by ? { by } : {}),
  });
  for (const l of unfired) {
    l.taskId = task.sk;
    l.firedAt = c.iso;
  }
  return { order: save(c, o), task, fired: unfired.length };
}

// ---- payments --------------------------------------------------------------------------------

/** A gateway's failure as our error (`note` appended to its message); anything else as it is. */
function gatewayAppError(err: unknown, note = ''): unknown {
  if (err instanceof GatewayError) {
    if (err.kind === 'declined') return appError('ERR_PAYMENT_DECLINED', err.message + note);
    if (err.kind === 'invalid') return appError('ERR_BAD_REQUEST', err.message + note);
    return appError('ERR_UNAVAILABLE', `payment gateway unavailable: ${err.message}${note}`);
  }
  return err;
}

function gatewayError(err: unknown): never {
  throw gatewayAppError(err);
}

/**
 * A refusal answered after changes were recorded: money already moved at a gateway (the first
 * payments of a refund spread over several) is written down, and the caller still hears what failed.
 */
class RecordedFailure extends Error {
  constructor(readonly error: AppError) {
    super(error.message);
  }
}

function gatewayNamed(c: Ctx, name: string, field: string): PaymentGateway {
  const g = c.services.gateways.get(name);
  if (!g) {
    const names = c.services.gateways.list().map((x) => x.name).join(', ');
    throw appError('ERR_VALIDATION', `${field} "${name}" is not a configured payment gateway (configured: ${names})`);
  }
  return g;
}

/** A retried request with the same key answers the first result (spec: Limits → Idempotency). */
function replay(c: Ctx, key: string | undefined, print: string): unknown {
  if (!key) return undefined;
  const mem = c.state.idem.get(key);
  if (mem) {
    if (mem.print !== print) throw new AppError('ERR_IDEMPOTENCY_MISMATCH');
    return mem.body;
  }
  return findIdempotent(c.actor.store, c.actor.tenant, key, print, c.actor.clock)?.body;
}

function remember(c: Ctx, key: string | undefined, print: string, body: unknown): void {
  if (!key) return;
  recordIdempotent(c.actor.batch, c.actor.tenant, key, print, { status: 200, body }, c.actor.clock);
  if (c.state.idem.size >= MAX_IDEM_MEMORY) c.state.idem.clear();
  c.state.idem.set(key, { print, body });
}

async function verifyIntent(c: Ctx, o: Order, gateway: PaymentGateway, ref: string, amount: number): Promise<PaymentIntent> {
  let intent: PaymentIntent | undefined;
  try {
    intent = await gateway.getIntent(c.actor.tenant, ref);
  } catch (err) {
    gatewayError(err);
  }
  if (!intent) throw appError('ERR_VALIDATION', `body/ref "${ref}" is not a payment intent of gateway ${gateway.name}`);
  if (intent.status !== 'succeeded' && intent.status !== 'requires_capture') {
    throw appError('ERR_VALIDATION', `payment intent ${ref} has not succeeded (status: ${intent.status}${intent.failureMessage ? `, ${intent.failureMessage}` : ''})`);
  }
  if (intent.currency !== o.currency) throw appError('ERR_VALIDATION', `payment intent ${ref} is in ${intent.currency}, the order in ${o.currency}`);
  if (intent.amount !== amount) {
    throw appError('ERR_VALIDATION', `body/amount ${money(o, amount)} does not match payment intent ${ref} (${money(o, intent.amount)})`);
  }
  if (o.payments.some((p) => p.type === 'payment' && p.ref === ref && p.gateway === gateway.name)) {
    throw appError('ERR_CONFLICT', `payment ${ref} is already recorded on order ${label(o)}`);
  }
  return intent;
}

async function settle(c: Ctx, orderId: string, input: SettleInput, by: string | undefined): Promise<SettleReply> {
  const print = fingerprint(`storefront.settle:${orderId}`, input);
  const seen = replay(c, input.idempotencyKey, print);
  if (seen !== undefined) return seen as SettleReply;
  const o = loadOrder(c, orderId);
  assertOpen(o, 'settle');
  if (o.payments.length >= MAX_PAYMENTS) throw appError('ERR_CONFLICT', `order ${label(o)} has reached ${MAX_PAYMENTS} transactions`);
  const e = o.exponent;
  const amount = parseMoney(input.amount, 'body/amount', e);
  const tip = input.tip === undefined ? 0 : parseMoney(input.tip, 'body/tip', e);
  const ref = input.ref?.trim() || undefined;
  const method = (input.method?.trim() || (ref ? 'card' : 'cash')).toLowerCase();
  const gatewayName = input.gateway?.trim() || (ref ? c.services.gateways.defaultProcessor : undefined);
  const gateway = gatewayName ? gatewayNamed(c, gatewayName, 'body/gateway') : undefined;
  if (ref && method === 'cash') throw appError('ERR_VALIDATION', 'a cash payment takes no ref: ref names a card payment intent');

  o.tip += tip;
  const before = totalsOf(o);
  const due = before.total - before.netPaid;
  if (amount === 0 && due > 0) throw appError('ERR_VALIDATION', 'body/amount must be greater than 0');
  if (amount > due && method !== 'cash') {
    throw appError('ERR_VALIDATION', `body/amount ${money(o, amount)} is more than the balance due ${money(o, Math.max(0, due))}; only cash can be overpaid (change is given)`);
  }
  if (ref && gateway) {
    const intent = await verifyIntent(c, o, gateway, ref, amount);
    await askStorefront(c, { type: 'claim-ref', gateway: gateway.name, ref, orderId: o.rec.sk });
    if (intent.status === 'requires_capture') {
      try {
        const captured = await gateway.capture(c.actor.tenant, ref);
        if (captured.status !== 'succeeded') throw appError('ERR_VALIDATION', `payment intent ${ref} could not be captured (status: ${captured.status})`);
      } catch (err) {
        gatewayError(err);
      }
    }
  }

  const applied = Math.max(0, Math.min(amount, due));
  const tx: Transaction = {
    id: newId(c.now),
    type: 'payment',
    method,
    ...(gateway ? { gateway: gateway.name } : {}),
    ...(ref ? { ref } : {}),
    amount,
    applied,
    change: amount - applied,
    tip,
    refunded: 0,
    at: c.iso,
    ...(by ? { by } : {}),
    status: 'succeeded',
  };
  o.payments.push(tx);
  o.amountPaid += applied;
  o.changeDue += tx.change;
  const after = totalsOf(o);
  const closes = after.netPaid >= after.total;
  const fields: Record<string, unknown> = {};
  if (closes) {
    o.status = CLOSED;
    fields.closedAt = c.iso;
    if (by) fields.closedBy = by;
  }
  const order = save(c, o, fields);
  // spec (issue): when a tab closes its service point becomes `dirty`.
  if (closes) await freePoint(c, o, 'dirty');
  const reply: SettleReply = { order, transaction: transactionData(tx, e) };
  remember(c, input.idempotencyKey, print, reply);
  return reply;
}

async function refund(c: Ctx, orderId: string, input: RefundInput, by: string | undefined): Promise<SettleReply> {
  const print = fingerprint(`storefront.refund:${orderId}`, input);
  const seen = replay(c, input.idempotencyKey, print);
  if (seen !== undefined) {
    // A refund that stopped part-way answers its retries as it answered first (what it refunded
    // is recorded): refunding again is a new request, with a new key.
    const failure = (seen as { failure?: WireError }).failure;
    if (failure !== undefined) throw new RecordedFailure(fromWire(failure));
    return seen as SettleReply;
  }
  const o = loadOrder(c, orderId);
  if (o.payments.length >= MAX_PAYMENTS) throw appError('ERR_CONFLICT', `order ${label(o)} has reached ${MAX_PAYMENTS} transactions`);
  const e = o.exponent;
  const paid = o.payments.filter((p) => p.type === 'payment');
  let allocations: Array<{ tx?: Transaction; amount: number }>;
  let amount: number;
  if (input.transactionId) {
    const tx = paid.find((p) => p.id === input.transactionId);
    if (!tx) throw appError('ERR_VALIDATION', `body/transactionId: order ${label(o)} has no payment ${input.transactionId}`);
    const left = tx.applied - tx.refunded;
    amount = input.amount === undefined ? left : parseMoney(input.amount, 'body/amount', e, { zero: false });
    if (left <= 0) throw appError('ERR_VALIDATION', `payment ${tx.id} has been refunded in full`);
    if (amount > left) throw appError('ERR_VALIDATION', `a refund of ${money(o, amount)} is more than the ${money(o, left)} left of payment ${tx.id}`);
    allocations = [{ tx, amount }];
  } else {
    const left = o.amountPaid - o.amountRefunded;
    if (left <= 0) throw appError('ERR_VALIDATION', `nothing to refund: order ${label(o)} has no payment left to refund`);
    amount = input.amount === undefined ? left : parseMoney(input.amount, 'body/amount', e, { zero: false });
    if (amount > left) throw appError('ERR_VALIDATION', `a refund of ${money(o, amount)} is more than the ${money(o, left)} paid (and not yet refunded) on order ${label(o)}`);
    // Newest payment first; what no recorded payment covers (an imported amountPaid) is recorded alone.
    allocations = [];
    let rest = amount;
    for (const tx of [...paid].reverse()) {
      const take = Math.min(rest, tx.applied - tx.refunded);
      if (take > 0) {
        allocations.push({ tx, amount: take });
        rest -= take;
      }
      if (rest === 0) break;
    }
    if (rest > 0) allocations.push({ amount: rest });
  }
  const done: Allocation[] = [];
  let failure: unknown;
  for (const a of allocations) {
    const entry: Allocation = { transactionId: a.tx?.id ?? '', amount: a.amount };
    if (a.tx?.gateway && a.tx.ref) {
      try {
        const gateway = gatewayNamed(c, a.tx.gateway, 'the payment\'s gateway');
        const r = await gateway.refund({
          tenant: c.actor.tenant,
          intentId: a.tx.ref,
          amount: a.amount,
          currency: o.currency,
          ...(input.reason ? { reason: input.reason } : {}),
          ...(input.idempotencyKey ? { idempotencyKey: `${input.idempotencyKey}:${a.tx.id}` } : {}),
        });
        entry.gatewayRefundId = r.id;
      } catch (err) {
        // Nothing refunded yet: a plain refusal. Otherwise the payments refunded so far are
        // recorded below (their money has moved) and the answer still says what failed.
        if (done.length === 0) gatewayError(err);
        failure = err;
        break;
      }
    }
    done.push(entry);
  }
  const refunded = allocations.slice(0, done.length);
  if (failure !== undefined) amount = sum(refunded.map((a) => a.amount));
  for (const a of refunded) if (a.tx) a.tx.refunded += a.amount;
  const methods = [...new Set(refunded.map((a) => a.tx?.method ?? 'other'))];
  const tx: Transaction = {
    id: newId(c.now),
    type: 'refund',
    method: methods.length === 1 ? methods[0] : 'mixed',
    amount,
    applied: 0,
    change: 0,
    tip: 0,
    refunded: 0,
    allocations: done,
    ...(input.reason?.trim() ? { reason: input.reason.trim() } : {}),
    at: c.iso,
    ...(by ? { by } : {}),
    status: 'succeeded',
  };
  o.payments.push(tx);
  o.amountRefunded += amount;
  const order = save(c, o);
  if (failure !== undefined) {
    const note = `; ${money(o, amount)} was refunded to the first ${done.length} payment(s) and is recorded on order ${label(o)}: refund the rest with a new request`;
    const mapped = gatewayAppError(failure, note);
    const err = mapped instanceof AppError ? mapped : appError('ERR_UNAVAILABLE', `payment gateway failed${note}`);
    remember(c, input.idempotencyKey, print, { failure: toWire(err) });
    throw new RecordedFailure(err);
  }
  const reply: SettleReply = { order, transaction: transactionData(tx, e) };
  remember(c, input.idempotencyKey, print, reply);
  return reply;
}

// ---- split -----------------------------------------------------------------------------------

function inherited(o: Order): Record<string, unknown> {
  const d = o.rec.data;
  const out: Record<string, unknown> = { businessLocationId: d.businessLocationId };
  for (const k of ['servicePointId', 'servicePointName', 'customer', 'customerId']) if (d[k] !== undefined) out[k] = d[k];
  return out;
}

async function split(c: Ctx, orderId: string, itemIds: string[] | undefined, parts: number | undefined, by: string | undefined): Promise<SplitReply> {
  const o = loadOrder(c, orderId);
  assertOpen(o, 'split');
  if (o.amountPaid > 0 || o.payments.length > 0) {
    throw appError('ERR_CONFLICT', `order ${label(o)} has payments; a tab can be split only before it is paid`);
  }
  const tabLabel = String(o.rec.data.tabLabel ?? label(o));
  const stamp = { openedAt: c.iso, splitFrom: o.rec.sk, ...(by ? { openedBy: by } : {}) };

  if (itemIds) {
    const wanted = new Set(itemIds);
    const unknown = itemIds.filter((id) => !o.lines.some((l) => l.lineId === id));
    if (unknown.length) throw appError('ERR_VALIDATION', `body/itemIds: order ${label(o)} has no line ${unknown.join(', ')}`);
    const moved = o.lines.filter((l) => wanted.has(l.lineId));
    const kept = o.lines.filter((l) => !wanted.has(l.lineId));
    if (kept.length === 0 && o.openingBalance === 0 && o.openingTax === 0) throw appError('ERR_VALIDATION', 'body/itemIds names every line: nothing would be left on the tab');
    const orderNumber = await askStorefront<number>(c, { type: 'next-order-numbers', count: 1 });
    const base = { ...inherited(o), orderNumber, tabLabel: `${tabLabel} (split)`, ...stamp };
    const child = readOrder(newRecord(c.actor.tenant, SF_ORDER, { status: OPEN, currency: o.currency }, { now: c.now, state: OPEN }), o.currency);
    child.openingBalance = 0;
    child.openingTax = 0;
    child.lines = moved;
    const created = createFrom(c, child, base);
    o.lines = kept;
    const order = save(c, o, { splitInto: [...((o.rec.data.splitInto as string[] | undefined) ?? []), created.sk] });
    return { order, orders: [created] };
  }

  const n = parts!;
  const t = totalsOf(o);
  if (t.total === 0) throw appError('ERR_VALIDATION', `order ${label(o)} has nothing to split`);
  // Each amount is divided on its own, remainder on the first share, so every sum is the original's.
  const subs = divide(t.subtotal, n);
  const taxes = divide(t.tax, n);
  const tips = divide(o.tip, n);
  const first = await askStorefront<number>(c, { type: 'next-order-numbers', count: n });
  const orders: StoredRecord[] = [];
  for (let i = 0; i < n; i++) {
    const part = readOrder(newRecord(c.actor.tenant, SF_ORDER, { status: OPEN, currency: o.currency }, { now: c.now, state: OPEN }), o.currency);
    part.openingBalance = 0;
    part.openingTax = 0;
    part.tip = tips[i];
    part.lines = [
      {
        lineId: newId(c.now),
        name: `Share ${i + 1} of ${n} of order ${label(o)}`,
        quantity: QTY_SCALE,
        unitPrice: subs[i],
        modifiers: [],
        taxRate: 0,
        fixedTax: taxes[i],
        addedAt: c.iso,
        extra: {},
      },
    ];
    orders.push(createFrom(c, part, { ...inherited(o), orderNumber: first + i, tabLabel: `${tabLabel} (${i + 1}/${n})`, splitPart: i + 1, splitParts: n, ...stamp }));
  }
  o.status = SPLIT;
  const order = save(c, o, { closedAt: c.iso, splitInto: orders.map((r) => r.sk), ...(by ? { closedBy: by } : {}) });
  return { order, orders };
}

// ---- service points --------------------------------------------------------------------------

async function assignPoint(c: Ctx, orderId: string, ref: string): Promise<StoredRecord> {
  const o = loadOrder(c, orderId);
  assertOpen(o, 'move');
  const point = findPoint(c, ref);
  if (pointIdOf(o) === point.sk) return presented(o);
  const other = tabAtPoint(c, point, o.rec.sk);
  if (other) throw appError('ERR_CONFLICT', `service point ${String(point.data.name)} already has open tab ${label(other)}`);
  await setPointStatus(c, point.sk, 'occupied');
  await freePoint(c, o, 'dirty');
  const name = String(point.data.name);
  const relabel = sameText(o.rec.data.tabLabel, pointNameOf(o)) ? { tabLabel: name } : {};
  return save(c, o, { servicePointId: point.sk, servicePointName: name, ...relabel });
}

async function releasePoint(c: Ctx, orderId: string, status: string | undefined): Promise<StoredRecord> {
  const o = loadOrder(c, orderId);
  if (!pointIdOf(o) && !pointNameOf(o)) throw appError('ERR_CONFLICT', `order ${label(o)} holds no service point`);
  await freePoint(c, o, status?.trim() || 'dirty');
  return save(c, o, {}, ['servicePointId', 'servicePointName']);
}

// ---- dispatch --------------------------------------------------------------------------------

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

async function receive(state: State, msg: PosMessage, ctx: ActorContext): Promise<PosReply<unknown>> {
  state.view.prune();
  state.touched = false;
  const now = ctx.clock.now();
  const c: Ctx = { state, actor: ctx, services: storefrontServicesOf(ctx.store, ctx.clock), now, iso: new Date(now).toISOString() };
  try {
    return { ok: true, value: await handle(c, msg) };
  } catch (err) {
    // A refusal raised before anything changed leaves the state as it was: answer it as a value.
    if (err instanceof AppError && !state.touched && ctx.batch.size === 0) return { ok: false, error: toWire(err) };
    // One raised after recording what had happened: the writes stand (committed with the answer).
    if (err instanceof RecordedFailure) return { ok: false, error: toWire(err.error) };
    throw err;
  }
}

export const posTabsActor: ActorKind<State, PosMessage, PosReply<unknown>> = {
  kind: POS_TABS_ACTOR,
  activate(ctx) {
    const open = new Map<string, TabKeys>();
    for (const r of ctx.store.scan(ctx.tenant, SF_ORDER, { 'data.businessLocationId': ctx.key })) if (isOpenRecord(r)) open.set(r.sk, keysOf(r));
    return { slug: ctx.key, view: new RecordView(ctx.store, ctx.tenant), open, idem: new Map(), touched: false };
  },
  receive,
};

