// The records area's API: everything the edge asks of the generic record store, one call per
// request. Writes are asks to the tenant's records actor (one writer per tenant); reads go to the
// store (a get by id, the caller's own records, a small simple find) or the query pool (every
// other client filter or sort), as reads.ts and dynamic-query.ts say. A route validates, makes one of these calls and serializes.
import type { ActorRuntime } from '../../core/actor/runtime.js';
import type { NodeServices } from '../../core/actor/services.js';
import type { Principal } from '../../core/auth/tokens.js';
import type { QueryRunner } from '../../core/query/pool.js';
import type { Filter, FindExplain } from '../../core/store/query.js';
import type { ListResult, StoredRecord } from '../../core/store/record.js';
import type { RecordText, TextPage } from '../../core/store/record-cache.js';
import type { Store } from '../../core/store/store.js';
import type { TenantIndex, TenantIndexSpec } from '../../core/store/tenant-indexes.js';
import { ownRecords, ownReservation, profile } from './client-data.js';
import { dynamicAggregate, dynamicCount, dynamicDistinct, dynamicExplain, dynamicFind, dynamicFindOne } from './dynamic-query.js';
import { assertComment, listNotes } from './notes.js';
import type { DynamicFind, FindRequest } from './query-requests.js';
import { explainFind, findRecords, getRecord, getRecordText, readerText } from './reads.js';
import { declareIndex, dropIndex, getIndex, listIndexes, type ListedBuiltIn } from './indexes.js';
import { RECORDS_ACTOR, RECORDS_KEY, type CreateReply, type RecordsMsg } from './messages.js';

/** What the area needs of its node. */
export interface RecordsParts {
  readonly runtime: ActorRuntime;
  readonly store: Store;
  readonly queries: QueryRunner;
  /** Reads of tickets pass the door's barrier first (reads.ts). */
  readonly services: NodeServices;
  /** The bound on client finds run on the event loop (`query.inPlaceMaxCandidates`, reads.ts). */
  readonly config?: { readonly query: { readonly inPlaceMaxCandidates?: number }; readonly store?: { readonly indexBuildStep?: number } };
}

type Data = Record<string, unknown>;

export interface RecordsApi {
  create(tenant: string, roles: readonly string[], r: { datatype: string; data: Data; state?: string; idempotency?: { key: string; print: string } }): Promise<CreateReply>;
  update(tenant: string, roles: readonly string[], r: { datatype: string; sk: string; data: Data; version: number; state?: string }): Promise<StoredRecord>;
  updatePartial(tenant: string, roles: readonly string[], r: { datatype: string; sk: string; set: Record<string, unknown>; version?: number }): Promise<boolean>;
  remove(tenant: string, roles: readonly string[], r: { datatype: string; sk: string; version?: number }): Promise<{ deleted: boolean; datatype: string; sk: string }>;
  get(tenant: string, datatype: string, sk: string): StoredRecord | Promise<StoredRecord>;
  /** `get` as `by` writes the record, kept while no write changes it (`by`: one function, of the record alone). */
  getText(tenant: string, datatype: string, sk: string, by: RecordText): string | Promise<string>;
  /** With `by`, a find one index read answers exactly may come as `texts` (reads.ts findHere). */
  find(tenant: string, datatype: string, req: FindRequest, by?: RecordText): Promise<TextPage>;
  /** How `find` runs: its plan, index keys and records examined (MongoDB's explain with executionStats). */
  explain(tenant: string, datatype: string, req: FindRequest): Promise<FindExplain>;
  dynamicFind(tenant: string, q: DynamicFind): Promise<ListResult<Data>>;
  dynamicFindOne(tenant: string, q: DynamicFind): Promise<Data | null>;
  dynamicExplain(tenant: string, q: DynamicFind): Promise<FindExplain>;
  count(tenant: string, datatype: string, filter: Filter | undefined): Promise<number>;
  distinct(tenant: string, datatype: string, field: string, filter: Filter | undefined): Promise<unknown[]>;
  aggregate(tenant: string, datatype: string, pipeline: Record<string, unknown>[]): Promise<Data[]>;
  /** Adds a note (its author is the verified caller) to a record; 400 on an empty comment. */
  addNote(tenant: string, subject: { datatype: string; id: string }, comment: unknown, author: Principal): Promise<StoredRecord>;
  notes(tenant: string, subject: { datatype: string; id: string }, page: number, pageSize: number): Promise<ListResult>;
  /** The caller's own customer record. */
  profile(tenant: string, caller: Principal): StoredRecord;
  /** The caller's own records of `datatype` (orders, reservations), newest first. */
  ownRecords(tenant: string, caller: Principal, datatype: string, page: number, pageSize: number): Promise<ListResult>;
  ownReservation(tenant: string, caller: Principal, id: string): StoredRecord;
  /** Declares an index of the tenant's (indexes.ts), at most `max` per tenant. */
  declareIndex(tenant: string, spec: TenantIndexSpec, max: number): Promise<TenantIndex>;
  indexes(tenant: string): { declared: TenantIndex[]; builtIn: ListedBuiltIn[] };
  index(tenant: string, id: string): TenantIndex;
  dropIndex(tenant: string, id: string): Promise<void>;
}

export function createRecordsApi(parts: RecordsParts): RecordsApi {
  const { runtime, store } = parts;
  const ask = <R>(tenant: string, msg: RecordsMsg) => runtime.ask<R>(tenant, RECORDS_ACTOR, RECORDS_KEY, msg);
  // The store keeps texts by function: one reader's function per caller's `by` (a route passes one
  // it made once; a few at most, else they are made afresh).
  const readers = new Map<RecordText, RecordText>();
  const reader = (by: RecordText): RecordText => {
    let f = readers.get(by);
    if (!f) {
      if (readers.size >= 16) readers.clear();
      f = readerText(by);
      readers.set(by, f);
    }
    return f;
  };
  // Builds a restart interrupted, and deleted indexes' entries, go on from here (this node's writer).
  store.startIndexBuilds({ step: parts.config?.store?.indexBuildStep });
  return {
    create: (tenant, roles, r) => ask(tenant, { type: 'create', ...r, roles }),
    update: (tenant, roles, r) => ask(tenant, { type: 'update', ...r, roles }),
    updatePartial: (tenant, roles, r) => ask(tenant, { type: 'update-partial', ...r, roles }),
    remove: (tenant, roles, r) => ask(tenant, { type: 'delete', ...r, roles }),
    get: (tenant, datatype, sk) => getRecord(parts, tenant, datatype, sk),
    getText: (tenant, datatype, sk, by) => getRecordText(parts, tenant, datatype, sk, reader(by)),
    find: (tenant, datatype, req, by) => findRecords(parts, tenant, datatype, req, by && reader(by)),
    explain: (tenant, datatype, req) => explainFind(parts, tenant, datatype, req),
    dynamicFind: (tenant, q) => dynamicFind(parts, tenant, q),
    dynamicExplain: (tenant, q) => dynamicExplain(parts, tenant, q),
    dynamicFindOne: (tenant, q) => dynamicFindOne(parts, tenant, q),
    count: (tenant, datatype, filter) => dynamicCount(parts, tenant, datatype, filter),
    distinct: (tenant, datatype, field, filter) => dynamicDistinct(parts, tenant, datatype, field, filter),
    aggregate: (tenant, datatype, pipeline) => dynamicAggregate(parts, tenant, datatype, pipeline),
    addNote: (tenant, subject, comment, author) => {
      assertComment(comment);
      const by = author.email ? { id: author.sub, email: author.email } : { id: author.sub };
      return ask(tenant, { type: 'add-note', subject, comment, author: by });
    },
    notes: (tenant, subject, page, pageSize) => listNotes(parts, tenant, subject, page, pageSize),
    profile: (tenant, caller) => profile(store, tenant, caller),
    ownRecords: (tenant, caller, datatype, page, pageSize) => ownRecords(parts, tenant, caller, datatype, page, pageSize),
    ownReservation: (tenant, caller, id) => ownReservation(store, tenant, caller, id),
    declareIndex: (tenant, spec, max) => declareIndex(store, tenant, spec, max),
    indexes: (tenant) => listIndexes(store, tenant),
    index: (tenant, id) => getIndex(store, tenant, id),
    dropIndex: (tenant, id) => dropIndex(store, tenant, id),
  };
}
