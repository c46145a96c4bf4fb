// Leads (datatype `lead`): the rules for searching and changing them. The writes themselves are
// made by the lead's actor (lead-actor.ts); these functions only decide what a lead becomes.
import { appError } from '../../core/errors.js';
import type { Data } from '../../core/store/record.js';
import type { Filter } from '../../core/store/query.js';

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

/** A new lead's data: the fields as sent, status `new` unless given. */
export function newLeadData(fields: Data): Data {
  return normalize({ status: LEAD_DEFAULT_STATUS, ...fields });
}

/** `changes` applied to a lead's data as a JSON merge patch (a `null` value removes the field). */
export function changedLeadData(current: Data, changes: Data): Data {
  const data: Data = { ...current };
  for (const [k, v] of Object.entries(changes)) {
    if (v === null) delete data[k];
    else data[k] = v;
  }
  if (typeof data.name !== 'string' || data.name.trim() === '') {
    throw appError('ERR_VALIDATION', 'body/data/name cannot be removed from a lead');
  }
  if (data.status === undefined) data.status = LEAD_DEFAULT_STATUS;
  return normalize(data);
}
