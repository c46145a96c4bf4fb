// Tabs: opening one (at a service point, under a label), adding lines, and moving it between
// service points.
import { appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { looseMoney, looseRate, parseMoney, parseQuantity, parseRate } from '../../core/money.js';
import type { StoredRecord } from '../../core/store/record.js';
import { findLocation } from '../reservations/index.js';
import type { ItemInput, OpenInput, OpenReply } from './messages.js';
import { BM_LOCATION_PRODUCT, type Line, type Modifier, SF_PRODUCT, totalsOf } from './order.js';
import { askStorefront, assertOpen, create, type Ctx, currencyAt, findOpen, findPoint, freePoint, label, loadOrder, location, pointIdOf, pointNameOf, presented, sameText, save, setPointStatus, tabAtPoint } from './tab-state.js';

export const MAX_LINES = 500;

// ---- open ------------------------------------------------------------------------------------

/**
 * The guest's contact and the order's owner. The owner is `input.customerId` only, which the edge
 * sets from a credential (a customer token, or staff naming the customer); a `customerId` inside
 * the typed contact is dropped, so no body alone makes an order someone's.
 */
export function customerOf(input: OpenInput): Record<string, unknown> {
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

export async function open(c: Ctx, input: OpenInput): Promise<OpenReply> {
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

export function parseModifiers(raw: ItemInput['modifiers'], field: string, exponent: number): Modifier[] {
  if (raw === undefined) return [];
  return raw.map((m, i) => {
    if (typeof m === 'string') return { name: m, price: 0 };
    return { name: m.name, price: m.price === undefined ? 0 : parseMoney(m.price, `${field}/${i}/price`, exponent) };
  });
}

/** The product's price at this location (`bm_location_product`), else its own. */
export function productPrice(c: Ctx, product: StoredRecord, exponent: number): number | undefined {
  const at = c.actor.store.scan(c.actor.tenant, BM_LOCATION_PRODUCT, { 'data.businessLocationId': c.state.slug, 'data.productId': product.sk })[0];
  const local = at ? looseMoney(at.data.price, exponent, -1) : -1;
  if (local >= 0) return local;
  const own = looseMoney(product.data.price, exponent, -1);
  return own >= 0 ? own : undefined;
}

export function addItems(c: Ctx, orderId: string, items: ItemInput[]): StoredRecord {
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

// ---- service points --------------------------------------------------------------------------

export async function assignPoint(c: Ctx, orderId: string, ref: string): Promise<StoredRecord> {
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

export async function releasePoint(c: Ctx, orderId: string, status: string | undefined): Promise<StoredRecord> {
  const o = loadOrder(c, orderId);
  if (!pointIdOf(o) && !pointNameOf(o)) throw appError('ERR_CONFLICT', `order ${label(o)} holds no service point`);
  await freePoint(c, o, status?.trim() || 'dirty');
  return save(c, o, {}, ['servicePointId', 'servicePointName']);
}
