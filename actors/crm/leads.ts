// Leads (datatype `lead`): the rules for creating, changing and searching them. Writes are
// optimistic: an update carries the version it read and the store refuses a stale one with 409
// (spec: Versioning 1), so two editors never overwrite each other silently.
//
// Why these functions commit themselves rather than through an actor: each write is one record
// op whose condition the store checks inside the commit's own transaction (a create with
// ifVersion 0 on a fresh id, an update or delete with the version read), so two writers racing
// for a lead are already serialized by LMDB and the loser gets the 409 the spec asks for. Nothing
// else is decided from memory (no counters, no idempotency keys, no messages in an outbox), so
// an actor's mailbox would add a hop and serialize nothing more. A lead rule that reads one lead
// to write another, or sends something, belongs in an actor.
import { AppError, appError } from '../../core/errors.js';
import { newRecord, nextVersion, type Data, type StoredRecord } from '../../core/store/record.js';
import type { Filter } from '../../core/store/query.js';
import { WriteBatch, type Store } from '../../core/store/store.js';

export const LEAD = 'lead';
export const LEAD_DEFAULT_STATUS = 'new';

/** Fields the free-text search looks at. */
const TEXT_FIELDS = ['data.name', 'data.email', 'data.company', 'data.phone', 'data.notes', 'data.source'];

function escapeRegex(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface LeadSearch {
  status?: string;
  owner?: string;
  q?: string;
}

export function leadFilter(s: LeadSearch): Filter {
  const f: Filter = {};
  if (s.status) f['data.status'] = s.status;
  if (s.owner) f['data.owner'] = s.owner.toLowerCase();
  const q = s.q?.trim();
  if (q) {
    const re = { $regex: escapeRegex(q), $options: 'i' };
    f.$or = TEXT_FIELDS.map((path) => ({ [path]: re }));
  }
  return f;
}

/** Lower-cases the address fields so filters and duplicates match however they were typed. */
function normalize(data: Data): Data {
  const out = { ...data };
  if (typeof out.email === 'string') out.email = out.email.trim().toLowerCase();
  if (typeof out.owner === 'string') out.owner = out.owner.trim().toLowerCase();
  return out;
}

export async function createLead(store: Store, tenant: string, fields: Data, now: number): Promise<StoredRecord> {
  const data = normalize({ status: LEAD_DEFAULT_STATUS, ...fields });
  const rec = newRecord(tenant, LEAD, data, { now });
  await store.commit(new WriteBatch().putRecord(rec, 0));
  return rec;
}

/**
 * Applies `changes` to the lead's data as a JSON merge patch (a `null` value removes the field)
 * when `version` is the stored one; otherwise the store answers 409 and nothing is written.
 */
export async function updateLead(
  store: Store,
  tenant: string,
  id: string,
  version: number,
  changes: Data,
  now: number,
): Promise<StoredRecord> {
  const cur = store.getRecord(tenant, LEAD, id);
  if (!cur) throw appError('ERR_NOT_FOUND', `lead ${id}`);
  if (cur.version !== version) {
    throw new AppError('ERR_VERSION_CONFLICT', [`lead ${id}`, version, cur.version]);
  }
  const data: Data = { ...cur.data };
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) delete data[k];
    else data[k] = v;
  }
  if (typeof data.name !== 'string' || data.name.trim() === '') {
    throw appError('ERR_VALIDATION', 'body/data/name cannot be removed from a lead');
  }
  if (data.status === undefined) data.status = LEAD_DEFAULT_STATUS;
  const next = nextVersion(cur, { data: normalize(data), state: 'updated' }, now);
  // ifVersion makes the check atomic with the write: a concurrent update that lands between the
  // read above and this commit still fails this one with 409.
  await store.commit(new WriteBatch().putRecord(next, version));
  return next;
}

export async function deleteLead(store: Store, tenant: string, id: string, version?: number): Promise<StoredRecord> {
  const cur = store.getRecord(tenant, LEAD, id);
  if (!cur) throw appError('ERR_NOT_FOUND', `lead ${id}`);
  await store.commit(new WriteBatch().deleteRecord(tenant, LEAD, id, version ?? cur.version));
  return cur;
}
