// The organisation's phone numbers (datatype `phone_number`, id derived from the number). A number
// is assigned to the staff listed in `assignedTo`; a number with nobody listed is shared by every
// staff user of the organisation. Registration answers a user's assigned numbers.
import type { Clock } from '../../core/clock.js';
import { appError } from '../../core/errors.js';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import { WriteBatch, type Store } from '../../core/store/store.js';
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

export interface NumberSettings {
  /** E.164, already normalised. */
  number: string;
  label?: string;
  capabilities?: string[];
  assignedTo?: string[];
}

/**
 * Adds a number, or replaces the settings given for a known one (keyed by the number). The write
 * carries the version it read, so two admins changing one number together get one 409, not a
 * lost change; no actor is needed to serialize it.
 */
export async function saveNumber(store: Store, clock: Clock, tenant: string, input: NumberSettings): Promise<{ rec: StoredRecord; created: boolean; assignedTo: string[] }> {
  const id = numberRecordId(input.number);
  const cur = store.getRecord(tenant, PHONE_NUMBER, id);
  const data = {
    number: input.number,
    label: input.label ?? (cur?.data.label as string | undefined) ?? input.number,
    capabilities: input.capabilities ?? (cur?.data.capabilities as string[] | undefined) ?? ['voice', 'sms'],
    assignedTo: (input.assignedTo ?? (cur?.data.assignedTo as string[] | undefined) ?? []).map((e) => e.toLowerCase()),
  };
  const now = clock.now();
  const rec = cur ? nextVersion(cur, { data }, now) : newRecord(tenant, PHONE_NUMBER, data, { sk: id, state: 'active', now });
  await store.commit(new WriteBatch().putRecord(rec, cur ? cur.version : 0));
  return { rec, created: !cur, assignedTo: data.assignedTo };
}

/** Removes a number (404 when unknown); answers the removed record. */
export async function removeNumber(store: Store, tenant: string, id: string): Promise<StoredRecord> {
  const cur = store.getRecord(tenant, PHONE_NUMBER, id);
  if (!cur) throw appError('ERR_NOT_FOUND', `phone number ${id}`);
  await store.commit(new WriteBatch().deleteRecord(tenant, PHONE_NUMBER, cur.sk, cur.version));
  return cur;
}
