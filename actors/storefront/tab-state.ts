// The POS tabs actor's state and what every step of it shares: the open tabs and their keys, the
// location, how an order is loaded, saved and created, and the idempotent answers of this location.
import { askerOf } from '../../core/actor/asker.js';
import type { ActorContext } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import { findIdempotent, recordIdempotent } from '../../core/idempotency.js';
import { isId } from '../../core/ids.js';
import { currencyOf, formatMinor } from '../../core/money.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { RecordView } from '../../core/store/record-view.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { findLocation, locationNotFound } from '../reservations/index.js';
import { SERVICE_POINT_DATATYPE, setServicePointStatus } from '../service-points/index.js';
import { OPEN, type Order, orderData, readOrder, SF_ORDER } from './order.js';
import type { StorefrontServices } from './services.js';
import { STOREFRONT_ACTOR, STOREFRONT_KEY, type StorefrontMessage } from './messages.js';

export const MAX_IDEM_MEMORY = 10_000;

/** What an open tab is found by (spec: tabs are keyed by service-point name and display label). */
export interface TabKeys {
  pointId?: string;
  pointName?: string;
  label?: string;
}

export interface State {
  slug: string;
  view: RecordView;
  /** This location's open tabs, oldest first, with their keys. */
  open: Map<string, TabKeys>;
  /** Idempotent results written but perhaps not yet visible in the store. */
  idem: Map<string, { print: string; body: unknown }>;
  /** Set once the current message changed state: a refusal after that must rebuild the actor. */
  touched: boolean;
}

export interface Ctx {
  state: State;
  actor: ActorContext;
  services: StorefrontServices;
  now: number;
  iso: string;
}

export function askStorefront<R>(c: Ctx, msg: StorefrontMessage): Promise<R> {
  return c.actor.ask<R>(STOREFRONT_ACTOR, STOREFRONT_KEY, msg);
}

export function label(o: Order): string {
  return `#${String(o.rec.data.orderNumber ?? o.rec.sk)}`;
}

export function money(o: Order, minor: number): string {
  return `${formatMinor(minor, o.exponent)} ${o.currency}`;
}

export function pointIdOf(o: Order): string | undefined {
  return typeof o.rec.data.servicePointId === 'string' && o.rec.data.servicePointId ? o.rec.data.servicePointId : undefined;
}

export function pointNameOf(o: Order): string | undefined {
  return typeof o.rec.data.servicePointName === 'string' && o.rec.data.servicePointName ? o.rec.data.servicePointName : undefined;
}

export function sameText(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' && a.trim().toLowerCase() === b.trim().toLowerCase();
}

export function location(c: Ctx): StoredRecord {
  const loc = findLocation(c.actor.store, c.actor.tenant, c.state.slug);
  if (!loc) throw locationNotFound(c.state.slug);
  return loc;
}

export function currencyAt(c: Ctx, loc: StoredRecord | undefined): string {
  return currencyOf(loc?.data.currency, c.services.defaultCurrency);
}

/** This location's order `id` (another location's is not found here). */
export function loadOrder(c: Ctx, id: string): Order {
  const rec = typeof id === 'string' ? c.state.view.get(SF_ORDER, id) : undefined;
  if (!rec || rec.data.businessLocationId !== c.state.slug) throw appError('ERR_NOT_FOUND', `order ${id}`);
  return readOrder(rec, c.services.defaultCurrency);
}

export function keysOf(rec: StoredRecord): TabKeys {
  const d = rec.data;
  const keys: TabKeys = {};
  if (typeof d.servicePointId === 'string' && d.servicePointId) keys.pointId = d.servicePointId;
  if (typeof d.servicePointName === 'string' && d.servicePointName) keys.pointName = d.servicePointName;
  if (typeof d.tabLabel === 'string' && d.tabLabel) keys.label = d.tabLabel;
  return keys;
}

export function isOpenRecord(rec: StoredRecord): boolean {
  const s = rec.data.status;
  return s === undefined || s === null || s === '' || s === OPEN;
}

/** The open tab at `id`, or undefined when it is gone, moved or no longer open. */
export function openOrder(c: Ctx, id: string): Order | undefined {
  const rec = c.state.view.get(SF_ORDER, id);
  if (!rec || rec.data.businessLocationId !== c.state.slug || !isOpenRecord(rec)) return undefined;
  return readOrder(rec, c.services.defaultCurrency);
}

/** The open tabs of this location, oldest first (every one read: for lists). */
export function openTabs(c: Ctx): Order[] {
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
export function findOpen(c: Ctx, match: (k: TabKeys) => boolean, except?: string): Order | undefined {
  for (const [id, keys] of c.state.open) {
    if (id === except || !match(keys)) continue;
    const o = openOrder(c, id);
    if (o && match(keysOf(o.rec))) return o;
  }
  return undefined;
}

/** Tabs name their point by id, or (records written elsewhere: spec, tabs are keyed by the point's name) by name. */
export function atPoint(point: StoredRecord): (k: TabKeys) => boolean {
  return (k) =>
    k.pointId === point.sk || sameText(k.pointId, point.data.name) || (k.pointId === undefined && sameText(k.pointName, point.data.name));
}

export function tabAtPoint(c: Ctx, point: StoredRecord, except?: string): Order | undefined {
  return findOpen(c, atPoint(point), except);
}

export function tabsHoldingPoint(c: Ctx, pointId: string, except: string): number {
  let n = 0;
  for (const [id, keys] of c.state.open) if (id !== except && keys.pointId === pointId) n++;
  return n;
}

/** The order as answered: its data with every amount computed. */
export function presented(o: Order): StoredRecord {
  return { ...o.rec, data: orderData(o) };
}

/** A service point of this location by id or by name (exact first, then without case). */
export function findPoint(c: Ctx, ref: string): StoredRecord {
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

export async function setPointStatus(c: Ctx, pointId: string, status: string): Promise<StoredRecord> {
  return setServicePointStatus({ runtime: askerOf(c.actor), store: c.actor.store }, c.actor.tenant, {
    servicePointId: pointId,
    status,
    businessLocationId: c.state.slug,
  });
}

/** Frees a point a tab no longer holds, unless another open tab still sits there. Never fails the caller. */
export async function freePoint(c: Ctx, o: Order, status: string): Promise<void> {
  const id = pointIdOf(o);
  if (!id || tabsHoldingPoint(c, id, o.rec.sk) > 0) return;
  try {
    await setPointStatus(c, id, status);
  } catch (err) {
    c.services.logger?.warn({ err, tenant: c.actor.tenant, servicePointId: id }, 'could not set the service point status after a tab let it go');
  }
}

/** Queues the order's next version; the only place an order is written after it was created. */
export function save(c: Ctx, o: Order, fields: Record<string, unknown> = {}, drop: string[] = []): StoredRecord {
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
export function create(c: Ctx, data: Record<string, unknown>, currency: string): StoredRecord {
  c.state.touched = true;
  const blank = newRecord(c.actor.tenant, SF_ORDER, { ...data, status: OPEN, currency }, { now: c.now, state: OPEN });
  const o = readOrder(blank, c.services.defaultCurrency);
  o.openingBalance = 0;
  o.openingTax = 0;
  return createFrom(c, o, blank.data);
}

export function createFrom(c: Ctx, o: Order, base: Record<string, unknown>): StoredRecord {
  c.state.touched = true;
  const data = { ...base, ...orderData(o) };
  const rec: StoredRecord = { ...o.rec, data, state: o.status, amountPaid: data.amountPaid };
  c.state.view.put(c.actor.batch, rec, 0);
  if (o.status === OPEN) c.state.open.set(rec.sk, keysOf(rec));
  queueEvent(c.actor.services.webhooks, c.actor.batch, c.actor.tenant, 'order.opened', rec, c.now);
  return rec;
}

export function assertOpen(o: Order, action: string): void {
  if (o.status !== OPEN) throw appError('ERR_CONFLICT', `cannot ${action} order ${label(o)}: it is ${o.status}`);
}

/** A retried request with the same key answers the first result (spec: Limits → Idempotency). */
export function replay(c: Ctx, key: string | undefined, print: string): unknown {
  if (!key) return undefined;
  const mem = c.state.idem.get(key);
  if (mem) {
    if (mem.print !== print) throw new AppError('ERR_IDEMPOTENCY_MISMATCH');
    return mem.body;
  }
  return findIdempotent(c.actor.store, c.actor.tenant, key, print, c.actor.clock)?.body;
}

export function remember(c: Ctx, key: string | undefined, print: string, body: unknown): void {
  if (!key) return;
  recordIdempotent(c.actor.store, c.actor.batch, c.actor.tenant, key, print, { status: 200, body }, c.actor.clock);
  if (c.state.idem.size >= MAX_IDEM_MEMORY) c.state.idem.clear();
  c.state.idem.set(key, { print, body });
}
