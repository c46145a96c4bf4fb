// An `sf_order` (POS tab or order) read into integer units and written back with every derived
// amount recomputed. Reading is lenient (spec: Fields known per kind → sf_order): records written
// through the record store may carry money and quantities as strings, lines without ids, or only a
// `subtotal` on an open tab, and all of them read. Writing is strict: the actor only stores what it
// parsed with core/money.ts.
//
// Amounts: a line is quantity × (unit price + modifier prices), its tax is that amount at the
// line's rate (fixed at the moment the line was added: the product's rate, else the location's),
// rounded per line; subtotal and tax are the sums of the lines; total = subtotal + tax + tip.
// A tab read with no lines but a subtotal keeps that subtotal as `openingBalance`.
import type { StoredRecord } from '../../core/store/record.js';
import {
  currencyExponent,
  currencyOf,
  lineAmount,
  looseLinePrice,
  looseMoney,
  looseQuantity,
  looseRate,
  quantityOf,
  rateOf,
  sum,
  taxOn,
  toMajor,
} from '../../core/money.js';

export const SF_ORDER = 'sf_order';
export const SF_PRODUCT = 'sf_product';
export const SF_CATEGORY = 'sf_category';
export const BM_LOCATION_PRODUCT = 'bm_location_product';

export const OPEN = 'open';
export const CLOSED = 'closed';
export const SPLIT = 'split';

export interface Modifier {
  name: string;
  /** Minor units, per unit of the line. */
  price: number;
}

export interface Line {
  lineId: string;
  productId?: string;
  name: string;
  /** Thousandths. */
  quantity: number;
  /** Minor units. */
  unitPrice: number;
  modifiers: Modifier[];
  notes?: string;
  /** Ten-thousandths of a percent. */
  taxRate: number;
  /** A split share's tax, carried as it was divided rather than recomputed. */
  fixedTax?: number;
  taskId?: string;
  firedAt?: string;
  addedAt?: string;
  /** Fields we do not know, kept as they were. */
  extra: Record<string, unknown>;
}

export interface Allocation {
  transactionId: string;
  amount: number;
  gatewayRefundId?: string;
}

export interface Transaction {
  id: string;
  type: 'payment' | 'refund';
  method: string;
  gateway?: string;
  ref?: string;
  /** Payment: what was tendered. Refund: what was given back. Minor units. */
  amount: number;
  /** Payment: the part of `amount` counted toward the order (the rest is change). */
  applied: number;
  change: number;
  tip: number;
  /** Payment: how much of it has been refunded since. */
  refunded: number;
  allocations?: Allocation[];
  reason?: string;
  at: string;
  by?: string;
  status: 'succeeded';
}

export interface Order {
  rec: StoredRecord;
  status: string;
  currency: string;
  exponent: number;
  lines: Line[];
  openingBalance: number;
  /**
   * Tax already in the stored `total` of a tab that came with no lines (total − subtotal − tip),
   * so an imported tab owes what its record says.
   */
  openingTax: number;
  tip: number;
  amountPaid: number;
  amountRefunded: number;
  changeDue: number;
  payments: Transaction[];
}

export interface Totals {
  subtotal: number;
  tax: number;
  total: number;
  /** Paid minus refunded. */
  netPaid: number;
  /** What an open tab still owes (never negative). */
  balanceDue: number;
}

const LINE_KNOWN = new Set([
  'lineId',
  'id',
  'productId',
  'name',
  'title',
  'quantity',
  'qty',
  'unitPrice',
  'price',
  'modifiers',
  'notes',
  'taxRate',
  'fixedTax',
  'taskId',
  'firedAt',
  'addedAt',
  'subtotal',
  'tax',
  'total',
]);

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.length > 0 ? v : undefined;
}

function readModifiers(v: unknown, exponent: number): Modifier[] {
  if (!Array.isArray(v)) return [];
  const out: Modifier[] = [];
  for (const m of v) {
    if (typeof m === 'string') out.push({ name: m, price: 0 });
    else if (m && typeof m === 'object') {
      const o = m as Record<string, unknown>;
      out.push({ name: String(o.name ?? o.title ?? ''), price: looseLinePrice(o.price, exponent) });
    }
  }
  return out;
}

function readLine(raw: unknown, i: number, exponent: number): Line | undefined {
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) return undefined;
  const o = raw as Record<string, unknown>;
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!LINE_KNOWN.has(k)) extra[k] = v;
  const line: Line = {
    lineId: str(o.lineId) ?? str(o.id) ?? `line-${i + 1}`,
    name: str(o.name) ?? str(o.title) ?? str(o.productId) ?? 'Item',
    quantity: looseQuantity(o.quantity ?? o.qty),
    unitPrice: looseLinePrice(o.unitPrice ?? o.price, exponent),
    modifiers: readModifiers(o.modifiers, exponent),
    taxRate: looseRate(o.taxRate) ?? 0,
    extra,
  };
  const productId = str(o.productId);
  if (productId) line.productId = productId;
  if (str(o.notes)) line.notes = o.notes as string;
  if (o.fixedTax !== undefined && o.fixedTax !== null) line.fixedTax = looseMoney(o.fixedTax, exponent);
  if (str(o.taskId)) line.taskId = o.taskId as string;
  if (str(o.firedAt)) line.firedAt = o.firedAt as string;
  if (str(o.addedAt)) line.addedAt = o.addedAt as string;
  return line;
}

function readTransaction(raw: unknown, exponent: number): Transaction | undefined {
  if (!raw || typeof raw !== 'object') return undefined;
  const o = raw as Record<string, unknown>;
  const amount = looseMoney(o.amount, exponent);
  const tx: Transaction = {
    id: str(o.id) ?? '',
    type: o.type === 'refund' ? 'refund' : 'payment',
    method: str(o.method) ?? 'other',
    amount,
    applied: looseMoney(o.applied, exponent, amount),
    change: looseMoney(o.change, exponent),
    tip: looseMoney(o.tip, exponent),
    refunded: looseMoney(o.refunded, exponent),
    at: str(o.at) ?? '',
    status: 'succeeded',
  };
  if (str(o.gateway)) tx.gateway = o.gateway as string;
  if (str(o.ref)) tx.ref = o.ref as string;
  if (str(o.reason)) tx.reason = o.reason as string;
  if (str(o.by)) tx.by = o.by as string;
  if (Array.isArray(o.allocations)) {
    tx.allocations = o.allocations
      .filter((a): a is Record<string, unknown> => !!a && typeof a === 'object')
      .map((a) => ({
        transactionId: String(a.transactionId ?? ''),
        amount: looseMoney(a.amount, exponent),
        ...(str(a.gatewayRefundId) ? { gatewayRefundId: a.gatewayRefundId as string } : {}),
      }));
  }
  return tx;
}

/** Reads a stored order; `defaultCurrency` applies when the record names none. */
export function readOrder(rec: StoredRecord, defaultCurrency: string): Order {
  const d = rec.data;
  const currency = currencyOf(d.currency, defaultCurrency);
  const exponent = currencyExponent(currency);
  const lines = (Array.isArray(d.productItems) ? d.productItems : [])
    .map((l, i) => readLine(l, i, exponent))
    .filter((l): l is Line => l !== undefined);
  // spec: open tabs may carry only `subtotal`; with no lines it is kept as an opening balance,
  // and what a stored `total` holds beyond it (and the tip) as the opening tax.
  const imported = lines.length === 0 && d.openingBalance === undefined;
  const openingBalance = d.openingBalance !== undefined
    ? looseMoney(d.openingBalance, exponent)
    : imported
      ? looseMoney(d.subtotal, exponent, looseMoney(d.total, exponent))
      : 0;
  const tip = looseMoney(d.tip, exponent);
  const openingTax = d.openingTax !== undefined
    ? looseMoney(d.openingTax, exponent)
    : imported && d.subtotal !== undefined && d.total !== undefined
      ? Math.max(0, looseMoney(d.total, exponent) - openingBalance - tip)
      : 0;
  const status = typeof d.status === 'string' && d.status ? d.status : OPEN;
  return {
    rec,
    status,
    currency,
    exponent,
    lines,
    openingBalance,
    openingTax,
    tip,
    amountPaid: looseMoney(d.amountPaid ?? rec.amountPaid, exponent),
    amountRefunded: looseMoney(d.amountRefunded, exponent),
    changeDue: looseMoney(d.changeDue, exponent),
    payments: (Array.isArray(d.payments) ? d.payments : [])
      .map((p) => readTransaction(p, exponent))
      .filter((p): p is Transaction => p !== undefined),
  };
}

export function lineSubtotal(l: Line): number {
  return lineAmount(l.quantity, sum([l.unitPrice, ...l.modifiers.map((m) => m.price)]));
}

export function lineTax(l: Line): number {
  return l.fixedTax ?? taxOn(lineSubtotal(l), l.taxRate);
}

export function totalsOf(o: Order): Totals {
  const subtotal = sum([o.openingBalance, ...o.lines.map(lineSubtotal)]);
  const tax = sum([o.openingTax, ...o.lines.map(lineTax)]);
  const total = sum([subtotal, tax, o.tip]);
  const netPaid = o.amountPaid - o.amountRefunded;
  return { subtotal, tax, total, netPaid, balanceDue: Math.max(0, total - netPaid) };
}

export function isOpen(o: Order): boolean {
  return o.status === OPEN;
}

function lineData(l: Line, e: number): Record<string, unknown> {
  const sub = lineSubtotal(l);
  const tax = lineTax(l);
  const out: Record<string, unknown> = {
    ...l.extra,
    lineId: l.lineId,
    ...(l.productId ? { productId: l.productId } : {}),
    name: l.name,
    quantity: quantityOf(l.quantity),
    unitPrice: toMajor(l.unitPrice, e),
    modifiers: l.modifiers.map((m) => ({ name: m.name, price: toMajor(m.price, e) })),
    ...(l.notes ? { notes: l.notes } : {}),
    taxRate: rateOf(l.taxRate),
    ...(l.fixedTax !== undefined ? { fixedTax: toMajor(l.fixedTax, e) } : {}),
    subtotal: toMajor(sub, e),
    tax: toMajor(tax, e),
    total: toMajor(sub + tax, e),
  };
  if (l.taskId) out.taskId = l.taskId;
  if (l.firedAt) out.firedAt = l.firedAt;
  if (l.addedAt) out.addedAt = l.addedAt;
  return out;
}

export function transactionData(t: Transaction, e: number): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: t.id,
    type: t.type,
    method: t.method,
    ...(t.gateway ? { gateway: t.gateway } : {}),
    ...(t.ref ? { ref: t.ref } : {}),
    amount: toMajor(t.amount, e),
    status: t.status,
    at: t.at,
    ...(t.by ? { by: t.by } : {}),
  };
  if (t.type === 'payment') {
    out.applied = toMajor(t.applied, e);
    out.change = toMajor(t.change, e);
    out.tip = toMajor(t.tip, e);
    out.refunded = toMajor(t.refunded, e);
  } else {
    if (t.reason) out.reason = t.reason;
    out.allocations = (t.allocations ?? []).map((a) => ({
      transactionId: a.transactionId,
      amount: toMajor(a.amount, e),
      ...(a.gatewayRefundId ? { gatewayRefundId: a.gatewayRefundId } : {}),
    }));
  }
  return out;
}

/** The order's data with every amount recomputed, as stored and as answered (numbers in major units). */
export function orderData(o: Order): Record<string, unknown> {
  const e = o.exponent;
  const t = totalsOf(o);
  const out: Record<string, unknown> = {
    ...o.rec.data,
    status: o.status,
    currency: o.currency,
    productItems: o.lines.map((l) => lineData(l, e)),
    subtotal: toMajor(t.subtotal, e),
    tax: toMajor(t.tax, e),
    tip: toMajor(o.tip, e),
    total: toMajor(t.total, e),
    amountPaid: toMajor(o.amountPaid, e),
    amountRefunded: toMajor(o.amountRefunded, e),
    balanceDue: toMajor(o.status === OPEN ? t.balanceDue : 0, e),
    changeDue: toMajor(o.changeDue, e),
    payments: o.payments.map((p) => transactionData(p, e)),
  };
  if (o.openingBalance > 0) out.openingBalance = toMajor(o.openingBalance, e);
  else delete out.openingBalance;
  if (o.openingTax > 0) out.openingTax = toMajor(o.openingTax, e);
  else delete out.openingTax;
  return out;
}

/** A stored order as answered: the envelope with its data normalised (nothing is written). */
export function presentOrder(rec: StoredRecord, defaultCurrency: string): StoredRecord {
  return { ...rec, data: orderData(readOrder(rec, defaultCurrency)) };
}
