// The writes of one batch inside its LMDB transaction: its version conditions checked first (a
// conflicting batch writes nothing), each value held to the size and document limits, indexes
// and usage counters kept in the same transaction.
import type { Database, Key } from 'lmdb';
import type { DocumentLimits } from '../document-limits.js';
import { assertDocument } from '../document-limits.js';
import { AppError } from '../errors.js';
import { ALREADY_APPLIED, markPassed, putMark, type AppliedMark } from './applied-mark.js';
import { storedBytes, type EncodedSize } from './lmdb-encoding.js';
import type { LmdbIndexes } from './lmdb-indexes.js';
import type { LmdbRecords } from './lmdb-records.js';
import type { LmdbUsage } from './lmdb-usage.js';
import type { StoredRecord } from './record.js';
import type { Org, WriteBatch } from './store.js';
import { UsageDelta, type QuotaPolicy } from './usage.js';
import { documentBytesOver } from './value-size.js';

/** Records a commit read in its transaction, by recordKey: null when there was none. */
export type RecordsRead = Map<string, StoredRecord | null>;

function recordKey(tenant: string, datatype: string, sk: string): string {
  return tenant + '\u0000' + datatype + '\u0000' + sk;
}

/** A failed version condition: what, the version asked for, the version stored. */
export type Conflict = [string, number, number];

export interface BatchApplierDbs {
  meta: Database<unknown, Key>;
  records: Database<StoredRecord, Key>;
  logs: Database<unknown, Key>;
  kv: Database<unknown, Key>;
  orgs: Database<Org, Key>;
}

export class BatchApplier {
  /** The usage changes of the batch being applied (apply runs synchronously, one at a time). */
  private readonly delta = new UsageDelta();

  constructor(
    private readonly dbs: BatchApplierDbs,
    private readonly reads: LmdbRecords,
    private readonly indexes: LmdbIndexes,
    private readonly usage: LmdbUsage,
    private readonly encoded: EncodedSize,
    private readonly quota: QuotaPolicy | undefined,
    private readonly maxRecordBytes: number,
    private readonly documentLimits: DocumentLimits,
  ) {}

  /**
   * The first failed condition of the batch against what is stored now, or null. `seen` (see
   * RecordsRead) keeps the records it read, so a commit does not read them again to re-index.
   */
  conflictOf(batch: WriteBatch, seen?: RecordsRead): Conflict | null {
    for (const o of batch.ops) {
      if (o.op === 'putRecord' && o.ifVersion !== undefined) {
        const r = o.record;
        const rec = this.reads.get(r.pk, r.datatype, r.sk);
        seen?.set(recordKey(r.pk, r.datatype, r.sk), rec ?? null);
        const stored = rec?.version ?? 0;
        if (stored !== o.ifVersion) return [`${r.datatype} ${r.sk}`, o.ifVersion, stored];
      } else if (o.op === 'deleteRecord' && o.ifVersion !== undefined) {
        const rec = this.reads.get(o.tenant, o.datatype, o.sk);
        seen?.set(recordKey(o.tenant, o.datatype, o.sk), rec ?? null);
        const stored = rec?.version ?? 0;
        if (stored !== o.ifVersion) return [`${o.datatype} ${o.sk}`, o.ifVersion, stored];
      }
    }
    return null;
  }

  /** A record as the current transaction holds it, through `seen` when the batch read it already. */
  private recordIn(seen: RecordsRead, tenant: string, datatype: string, sk: string): StoredRecord | undefined {
    const hit = seen.get(recordKey(tenant, datatype, sk));
    if (hit !== undefined) return hit ?? undefined;
    return this.dbs.records.get([tenant, datatype, sk]);
  }

  /**
   * The writes of one batch, inside its transaction: the failed condition, or null when written.
   * `replay`: the batch's log appends may be in LMDB already (a journal's).
   */
  apply(batch: WriteBatch, mark: AppliedMark | undefined, replay = false): Conflict | typeof ALREADY_APPLIED | null {
    const { records, logs, kv, orgs } = this.dbs;
    if (mark !== undefined && markPassed(this.dbs.meta, mark)) return ALREADY_APPLIED;
    // Check every condition first so a conflicting batch writes nothing (but its mark).
    const seen: RecordsRead = new Map();
    const failed = this.conflictOf(batch, seen);
    if (failed) {
      if (mark !== undefined) putMark(this.dbs.meta, mark);
      return failed;
    }
    // A batch of the commit stream (a mark) was checked against the unique indexes by the owner
    // before it was appended; here it is applied as the owner decided.
    const checkUnique = mark === undefined;
    const delta = this.delta;
    delta.clear();
    this.indexes.listings.discard();
    this.indexes.counts.discard();
    // Appends and kv puts are sized before anything is written: a batch of several that runs
    // without a child transaction (lmdb-store's cannotFailHalfway) must not fail after a write.
    const sized = batch.ops.length > 1;
    if (sized) {
      for (const o of batch.ops) {
        if (o.op === 'append') this.assertSize(o.entry, `log ${o.log} entry ${o.seq}`);
        else if (o.op === 'putKv') this.assertSize(o.value, `${o.ns} ${o.key}`);
      }
    }
    for (const o of batch.ops) {
      switch (o.op) {
        case 'putRecord': {
          const r = o.record;
          this.assertSize(r, `${r.datatype} ${r.sk}`);
          assertDocument(r, this.documentLimits, `record ${r.datatype} ${r.sk}`);
          // The record it replaces matters only to re-index it (read once, see conflictOf).
          const indexed = this.indexes.indexed(r.pk, r.datatype) ? this.indexes.reindex(r.pk, r.datatype, r.sk, this.recordIn(seen, r.pk, r.datatype, r.sk), r, checkUnique) : 0;
          const key = [r.pk, r.datatype, r.sk];
          const was = storedBytes(records, key);
          records.put(key, r);
          const grew = this.encoded.bytes - was + indexed;
          const d = delta.of(r.pk);
          d.records += grew;
          if (this.quota && !this.quota.exemptDatatypes.has(r.datatype)) d.enforced += grew;
          if (seen.size > 0) seen.set(recordKey(r.pk, r.datatype, r.sk), r);
          break;
        }
        case 'deleteRecord': {
          let old: StoredRecord | undefined;
          let indexed = 0;
          try {
            old = this.recordIn(seen, o.tenant, o.datatype, o.sk);
          } catch {
            // Undecodable: its index entries cannot be derived from it, so look them up.
            indexed = this.indexes.unindex(o.tenant, o.datatype, o.sk);
          }
          if (old) indexed = this.indexes.reindex(o.tenant, o.datatype, o.sk, old, undefined);
          const key = [o.tenant, o.datatype, o.sk];
          const was = storedBytes(records, key);
          if (was > 0 || indexed !== 0) delta.of(o.tenant).records += indexed - was;
          records.remove(key);
          if (seen.size > 0) seen.set(recordKey(o.tenant, o.datatype, o.sk), null);
          break;
        }
        case 'append': {
          if (!sized) this.assertSize(o.entry, `log ${o.log} entry ${o.seq}`);
          // A log's writer owns its sequence, so an append adds an entry (the door's hot path skips
          // a lookup); only a journal's replay may write one LMDB holds already, whose size comes off.
          const key = [o.tenant, o.log, o.seq];
          const was = replay ? storedBytes(logs, key) : 0;
          logs.put(key, o.entry);
          delta.of(o.tenant).records += this.encoded.bytes - was;
          break;
        }
        case 'putKv': {
          if (!sized) this.assertSize(o.value, `${o.ns} ${o.key}`);
          const key = [o.tenant, o.ns, o.key];
          // A key minted for this write replaces nothing (a journal's replay may find it written).
          const was = o.fresh && !replay ? 0 : storedBytes(kv, key);
          kv.put(key, o.value);
          delta.of(o.tenant).records += this.encoded.bytes - was;
          break;
        }
        case 'deleteKv': {
          const key = [o.tenant, o.ns, o.key];
          const was = storedBytes(kv, key);
          if (was > 0) delta.of(o.tenant).records -= was;
          kv.remove(key);
          break;
        }
        case 'media': {
          const d = delta.of(o.tenant);
          if (o.counted) {
            d.mediaCounted = o.bytes;
            d.media = 0;
          } else d.media += o.bytes;
          break;
        }
        case 'putOrg':
          orgs.put(o.org.orgId, o.org);
          break;
        case 'declareIndex':
          this.indexes.declared.declareFromStream(o.tenant, o.id, { datatype: o.datatype, path: o.path, unique: o.unique }, o.createdAt);
          break;
        case 'dropIndex':
          this.indexes.declared.dropFromStream(o.tenant, o.id);
          break;
        case 'patchOrg': {
          // Read inside the transaction: the organisation as every earlier commit (and earlier
          // ops of this batch) left it.
          const org = orgs.get(o.orgId);
          if (!org) throw new AppError('ERR_NOT_FOUND', [`organisation ${o.orgId}`]);
          orgs.put(o.orgId, { ...org, ...o.fields, orgId: org.orgId });
          break;
        }
      }
    }
    this.indexes.listings.flush();
    this.indexes.counts.flush();
    for (const d of delta.entries()) this.usage.count(d);
    if (mark !== undefined) putMark(this.dbs.meta, mark);
    return null;
  }

  /** Refuses a value whose encoding would pass maxRecordBytes (see documentBytesOver). */
  assertSize(value: unknown, what: string): void {
    if (documentBytesOver(value, this.maxRecordBytes) > this.maxRecordBytes) {
      throw new AppError('ERR_RECORD_TOO_LARGE', [what, this.maxRecordBytes]);
    }
  }
}
