// What of an order a caller who is not staff may read. Orders carry the guest's contact (typed at
// the till or by the guest) and may carry more, written through the record store. An answer to
// anyone but staff or the order's own customer keeps the guest's name (what the tab is called at
// the counter and printed on the receipt) and leaves out every other field of `data.customer`, the
// link to the customer record, and the contact fields an order may hold at its top level.
import type { StoredRecord } from '../../core/store/record.js';
import { SF_ORDER } from './order.js';

const CONTACT_FIELDS = [
  'customerId',
  'email',
  'phone',
  'address',
  'customerEmail',
  'customerPhone',
  'customerAddress',
  'deliveryAddress',
  'shippingAddress',
  'billingAddress',
];

export function isOrderRecord(v: unknown): v is StoredRecord {
  if (!v || typeof v !== 'object') return false;
  const r = v as Record<string, unknown>;
  return r.datatype === SF_ORDER && !!r.data && typeof r.data === 'object' && !Array.isArray(r.data);
}

/** The order as a stranger may see it (a copy; the record is untouched). */
export function withoutPersonalData(rec: StoredRecord): StoredRecord {
  const data: Record<string, unknown> = { ...rec.data };
  for (const k of CONTACT_FIELDS) delete data[k];
  const c = data.customer;
  if (c !== undefined) {
    const name = c && typeof c === 'object' ? (c as Record<string, unknown>).name : undefined;
    if (typeof name === 'string' && name) data.customer = { name };
    else delete data.customer;
  }
  return { ...rec, data };
}

/** The contact the order already has: where a receipt may go when the sender may not name one. */
export function contactOf(rec: StoredRecord): { email?: string; phone?: string } {
  const c = rec.data.customer && typeof rec.data.customer === 'object' ? (rec.data.customer as Record<string, unknown>) : {};
  const str = (v: unknown) => (typeof v === 'string' && v.trim() ? v.trim() : undefined);
  const email = str(c.email) ?? str(rec.data.customerEmail) ?? str(rec.data.email);
  const phone = str(c.phone) ?? str(rec.data.customerPhone) ?? str(rec.data.phone);
  return { ...(email ? { email } : {}), ...(phone ? { phone } : {}) };
}
