// Splitting a tab: its lines, or equal shares of what is due, move to new open tabs.
import { appError } from '../../core/errors.js';
import { newId } from '../../core/ids.js';
import { divide, QTY_SCALE } from '../../core/money.js';
import { newRecord, type StoredRecord } from '../../core/store/record.js';
import type { SplitReply } from './messages.js';
import { OPEN, type Order, readOrder, SF_ORDER, SPLIT, totalsOf } from './order.js';
import { askStorefront, assertOpen, createFrom, type Ctx, label, loadOrder, save } from './tab-state.js';

export function inherited(o: Order): Record<string, unknown> {
  const d = o.rec.data;
  const out: Record<string, unknown> = { businessLocationId: d.businessLocationId };
  for (const k of ['servicePointId', 'servicePointName', 'customer', 'customerId']) if (d[k] !== undefined) out[k] = d[k];
  return out;
}

export async function split(c: Ctx, orderId: string, itemIds: string[] | undefined, parts: number | undefined, by: string | undefined): Promise<SplitReply> {
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
