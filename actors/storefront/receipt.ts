// Printer-ready receipt and check payloads (spec: `receipt-payload`, `check-payload`, with
// `copy=customer|merchant`). A payload is structured data a printer driver or a client lays out:
// business and location header, lines with modifiers, subtotal, tax, tip, total, payments, change,
// footer and the copy's name. `receiptText` renders the same payload as fixed-width text for the
// print job's body (42 columns: an 80 mm thermal printer's default font).
import { formatMinor, RATE_SCALE, taxOn, toMajor } from '../../core/money.js';
import type { StoredRecord } from '../../core/store/record.js';
import { lineSubtotal, lineTax, totalsOf, type Order } from './order.js';

export type Copy = 'customer' | 'merchant';
export type PayloadKind = 'receipt' | 'check';

const WIDTH = 42;
const TIP_PERCENTS = [15, 18, 20];

export interface PayloadLine {
  lineId: string;
  name: string;
  quantity: number;
  unitPrice: number;
  modifiers: Array<{ name: string; price: number }>;
  notes?: string;
  amount: number;
  tax: number;
  fired: boolean;
}

export interface PayloadPayment {
  id: string;
  type: 'payment' | 'refund';
  method: string;
  gateway?: string;
  ref?: string;
  amount: number;
  change: number;
  at: string;
}

export interface ReceiptPayload {
  type: PayloadKind;
  copy: Copy;
  copyLabel: string;
  currency: string;
  business: { orgId: string; name: string };
  location: { businessLocationId: string; name: string; address: string[]; phone?: string; taxId?: string };
  order: {
    id: string;
    orderNumber: string;
    tabLabel: string;
    servicePointName?: string;
    status: string;
    openedAt?: string;
    closedAt?: string;
    customerName?: string;
  };
  lines: PayloadLine[];
  subtotal: number;
  tax: number;
  tip: number;
  total: number;
  amountPaid: number;
  amountRefunded: number;
  balanceDue: number;
  payments: PayloadPayment[];
  change: number;
  /** Check only: tips at common rates of the subtotal. */
  tipSuggestions?: Array<{ percent: number; amount: number }>;
  /** Merchant copy of a card payment: a line to sign. */
  signatureLine: boolean;
  footer: string;
  printedAt: string;
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

function addressLines(v: unknown): string[] {
  if (typeof v === 'string') return v.split(/\r?\n/).map((s) => s.trim()).filter(Boolean);
  if (v && typeof v === 'object') {
    const a = v as Record<string, unknown>;
    const cityLine = [text(a.postalCode) ?? text(a.postal_code) ?? text(a.zip), text(a.city), text(a.state)].filter(Boolean).join(' ');
    return [text(a.line1) ?? text(a.street), text(a.line2), cityLine || undefined, text(a.country)].filter((s): s is string => !!s);
  }
  return [];
}

export function buildPayload(
  kind: PayloadKind,
  copy: Copy,
  o: Order,
  org: { orgId: string; displayName?: string } | undefined,
  location: StoredRecord | undefined,
  printedAt: string,
): ReceiptPayload {
  const e = o.exponent;
  const d = o.rec.data;
  const t = totalsOf(o);
  const loc = location?.data ?? {};
  const slug = String(d.businessLocationId ?? '');
  const customer = (d.customer ?? {}) as Record<string, unknown>;
  const payments = o.payments.map((p) => {
    const out: PayloadPayment = { id: p.id, type: p.type, method: p.method, amount: toMajor(p.amount, e), change: toMajor(p.change, e), at: p.at };
    if (p.gateway) out.gateway = p.gateway;
    // The processor's reference is for the merchant's reconciliation, not for the guest.
    if (p.ref && copy === 'merchant') out.ref = p.ref;
    return out;
  });
  const payload: ReceiptPayload = {
    type: kind,
    copy,
    copyLabel: copy === 'customer' ? 'Customer copy' : 'Merchant copy',
    currency: o.currency,
    business: { orgId: org?.orgId ?? o.rec.pk, name: org?.displayName ?? o.rec.pk },
    location: {
      businessLocationId: slug,
      name: text(loc.displayName) ?? text(loc.title) ?? text(loc.label) ?? slug,
      address: addressLines(loc.address),
      ...(text(loc.phone) ? { phone: text(loc.phone) } : {}),
      ...(text(loc.taxId) ? { taxId: text(loc.taxId) } : {}),
    },
    order: {
      id: o.rec.sk,
      orderNumber: String(d.orderNumber ?? ''),
      tabLabel: String(d.tabLabel ?? ''),
      ...(text(d.servicePointName) ? { servicePointName: text(d.servicePointName) } : {}),
      status: o.status,
      ...(text(d.openedAt) ? { openedAt: text(d.openedAt) } : {}),
      ...(text(d.closedAt) ? { closedAt: text(d.closedAt) } : {}),
      ...(text(customer.name) ? { customerName: text(customer.name) } : {}),
    },
    lines: o.lines.map((l) => ({
      lineId: l.lineId,
      name: l.name,
      quantity: l.quantity / 1000,
      unitPrice: toMajor(l.unitPrice, e),
      modifiers: l.modifiers.map((m) => ({ name: m.name, price: toMajor(m.price, e) })),
      ...(l.notes ? { notes: l.notes } : {}),
      amount: toMajor(lineSubtotal(l), e),
      tax: toMajor(lineTax(l), e),
      fired: !!l.taskId,
    })),
    subtotal: toMajor(t.subtotal, e),
    tax: toMajor(t.tax, e),
    tip: toMajor(o.tip, e),
    total: toMajor(t.total, e),
    amountPaid: toMajor(o.amountPaid, e),
    amountRefunded: toMajor(o.amountRefunded, e),
    balanceDue: toMajor(o.status === 'open' ? t.balanceDue : 0, e),
    payments,
    change: toMajor(o.changeDue, e),
    signatureLine: copy === 'merchant' && o.payments.some((p) => p.type === 'payment' && p.method !== 'cash'),
    footer:
      text(kind === 'check' ? loc.checkFooter : loc.receiptFooter) ??
      (kind === 'check' ? 'This is not a receipt. Thank you!' : 'Thank you for your visit!'),
    printedAt,
  };
  if (o.openingBalance > 0) {
    payload.lines.unshift({
      lineId: 'opening-balance',
      name: 'Opening balance',
      quantity: 1,
      unitPrice: toMajor(o.openingBalance, e),
      modifiers: [],
      amount: toMajor(o.openingBalance, e),
      tax: toMajor(o.openingTax, e),
      fired: false,
    });
  }
  if (kind === 'check') {
    payload.tipSuggestions = TIP_PERCENTS.map((percent) => ({ percent, amount: toMajor(taxOn(t.subtotal, percent * RATE_SCALE), e) }));
  }
  return payload;
}

function row(left: string, right: string): string {
  const room = WIDTH - right.length - 1;
  const l = left.length > room ? left.slice(0, Math.max(0, room - 1)) + '…' : left;
  return l + ' '.repeat(Math.max(1, WIDTH - l.length - right.length)) + right;
}

function center(s: string): string {
  const t = s.length > WIDTH ? s.slice(0, WIDTH) : s;
  return ' '.repeat(Math.floor((WIDTH - t.length) / 2)) + t;
}

/** The payload as fixed-width text (what a plain-text printer prints). */
export function receiptText(p: ReceiptPayload, exponent: number): string {
  const f = (n: number) => formatMinor(Math.round(n * 10 ** exponent), exponent);
  const rule = '-'.repeat(WIDTH);
  const out: string[] = [center(p.business.name), center(p.location.name), ...p.location.address.map(center)];
  if (p.location.phone) out.push(center(p.location.phone));
  if (p.location.taxId) out.push(center(`Tax id ${p.location.taxId}`));
  out.push(rule, center(`${p.type === 'check' ? 'CHECK' : 'RECEIPT'} · ${p.copyLabel}`));
  out.push(row(`Order #${p.order.orderNumber}`, p.order.tabLabel));
  if (p.order.servicePointName && p.order.servicePointName !== p.order.tabLabel) out.push(row('Table', p.order.servicePointName));
  if (p.order.customerName) out.push(row('Guest', p.order.customerName));
  out.push(rule);
  for (const l of p.lines) {
    out.push(row(`${l.quantity} × ${l.name}`, f(l.amount)));
    for (const m of l.modifiers) out.push(row(`   + ${m.name}`, m.price ? f(m.price) : ''));
    if (l.notes) out.push(`   ${l.notes}`.slice(0, WIDTH));
  }
  out.push(rule, row('Subtotal', f(p.subtotal)), row('Tax', f(p.tax)));
  if (p.tip) out.push(row('Tip', f(p.tip)));
  out.push(row(`Total ${p.currency}`, f(p.total)));
  for (const pay of p.payments) {
    const what = pay.type === 'refund' ? `Refund (${pay.method})` : `Paid ${pay.method}${pay.gateway ? ` via ${pay.gateway}` : ''}`;
    out.push(row(what, f(pay.type === 'refund' ? -pay.amount : pay.amount)));
    if (pay.ref) out.push(`   ref ${pay.ref}`.slice(0, WIDTH));
  }
  if (p.change) out.push(row('Change', f(p.change)));
  if (p.balanceDue) out.push(row('Balance due', f(p.balanceDue)));
  if (p.tipSuggestions) {
    out.push(rule, 'Suggested tip:');
    for (const s of p.tipSuggestions) out.push(row(`  ${s.percent}%`, f(s.amount)));
  }
  if (p.signatureLine) out.push('', '', 'Signature: ' + '_'.repeat(WIDTH - 11));
  out.push(rule, center(p.footer), center(p.printedAt));
  return out.join('\n') + '\n';
}
