// The organisation's phone numbers (datatype `phone_number`, id derived from the number). A number
// is assigned to the staff listed in `assignedTo`; a number with nobody listed is shared by every
// staff user of the organisation. Registration answers a user's assigned numbers. Changes are
// made by the number's actor (number-actor.ts).
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { stableId } from '../../core/stable-id.js';

export const PHONE_NUMBER = 'phone_number';

export function numberRecordId(number: string): string {
  return stableId('phone-number', number);
}

export function assignedTo(rec: StoredRecord, email: string): boolean {
  const list = Array.isArray(rec.data.assignedTo) ? (rec.data.assignedTo as string[]) : [];
  return list.length === 0 || list.includes(email);
}

export interface NumberView {
  id: string;
  number: string;
  label: string;
  capabilities: string[];
  shared: boolean;
}

export function numberView(rec: StoredRecord): NumberView {
  const list = Array.isArray(rec.data.assignedTo) ? (rec.data.assignedTo as string[]) : [];
  return {
    id: rec.sk,
    number: String(rec.data.number),
    label: String(rec.data.label ?? rec.data.number),
    capabilities: (rec.data.capabilities as string[]) ?? [],
    shared: list.length === 0,
  };
}

/** The numbers a user may use, in number order. */
export function numbersFor(store: Store, tenant: string, email: string): NumberView[] {
  return store
    .scan(tenant, PHONE_NUMBER)
    .filter((r) => assignedTo(r, email))
    .map(numberView)
    .sort((a, b) => (a.number < b.number ? -1 : 1));
}

/** A number as an admin sees it: who it is assigned to, and whether the caller may use it. */
export interface NumberAdminView extends NumberView {
  assignedTo: string[];
  mine: boolean;
}

export function numberAdminView(rec: StoredRecord, email: string): NumberAdminView {
  const list = (rec.data.assignedTo as string[]) ?? [];
  return { ...numberView(rec), assignedTo: list, mine: list.length === 0 || list.includes(email) };
}

/** Every number of the organisation (or only those `email` may use), in number order. */
export function numbersAdmin(store: Store, tenant: string, email: string, mineOnly: boolean): NumberAdminView[] {
  return store
    .scan(tenant, PHONE_NUMBER)
    .map((r) => numberAdminView(r, email))
    .filter((n) => !mineOnly || n.mine)
    .sort((a, b) => (a.number < b.number ? -1 : 1));
}

export interface NumberSettings {
  /** E.164, already normalised. */
  number: string;
  label?: string;
  capabilities?: string[];
  assignedTo?: string[];
}
