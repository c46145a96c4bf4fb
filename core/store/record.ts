// The record envelope every stored record carries (spec: Resources → Record envelope).
import { newId } from '../ids.js';

export type Data = Record<string, unknown>;

export interface StoredRecord<D extends Data = Data> {
  /** Tenant id. */
  pk: string;
  /** Record id, 24 hex characters. */
  sk: string;
  datatype: string;
  /** Optimistic-concurrency counter: 1 on create, +1 on every write. */
  version: number;
  state: string;
  createdate: string;
  modifydate: string;
  data: D;
  /** Root-level fields written by a partial update with keys outside `data.` (spec warns of it). */
  [root: string]: unknown;
}

export interface ListResult<T = StoredRecord> {
  data: T[];
  total: number;
  hasNext: boolean;
  page: number;
  pageSize: number;
  /** The cursor of the next page (FindOptions.after), when the listing was read by index and has one. */
  next?: string;
}

export const ENVELOPE_KEYS = new Set([
  'pk',
  'sk',
  'datatype',
  'version',
  'state',
  'createdate',
  'modifydate',
  'data',
]);

export function newRecord<D extends Data>(
  tenant: string,
  datatype: string,
  data: D,
  opts: { sk?: string; state?: string; now?: number } = {},
): StoredRecord<D> {
  const now = opts.now ?? Date.now();
  const iso = new Date(now).toISOString();
  return {
    pk: tenant,
    sk: opts.sk ?? newId(now),
    datatype,
    version: 1,
    state: opts.state ?? 'new',
    createdate: iso,
    modifydate: iso,
    data,
  };
}

/** The next version of `rec`: a shallow copy with version+1 and a fresh modifydate. */
export function nextVersion<D extends Data>(
  rec: StoredRecord<D>,
  changes: Partial<StoredRecord<D>> = {},
  now: number = Date.now(),
): StoredRecord<D> {
  return {
    ...rec,
    ...changes,
    pk: rec.pk,
    sk: rec.sk,
    datatype: rec.datatype,
    createdate: rec.createdate,
    version: rec.version + 1,
    modifydate: new Date(now).toISOString(),
  };
}
