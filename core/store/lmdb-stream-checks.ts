// Cluster mode (core/cluster/commit-log.ts): what the owner of a tenant checks against its store
// before it appends a batch whose outcome a node applying the stream could not decide alike: a
// write into a unique index an organisation declared (each node builds its indexes at its own
// pace), and the declaration or deletion of such an index. The stream then holds only batches the
// owner accepted, and every node applies them as they are.
import { AppError } from '../errors.js';
import type { LmdbTenantIndexes } from './lmdb-tenant-indexes.js';
import type { StoredRecord } from './record.js';
import type { WriteBatch } from './store.js';

/** True when the batch must be checked by its owner before it is appended (see streamRefusal). */
export function needsStreamCheck(declared: LmdbTenantIndexes, batch: WriteBatch): boolean {
  for (const o of batch.ops) {
    if (o.op === 'declareIndex' || o.op === 'dropIndex') return true;
    if (o.op === 'putRecord' && declared.keptBy(o.record.pk, o.record.datatype)?.some((d) => d.unique)) return true;
  }
  return false;
}

/** Why the owner refuses the batch (409, or 404 for an index that is gone), or null. */
export function streamRefusal(declared: LmdbTenantIndexes, builtIn: (datatype: string) => readonly string[], batch: WriteBatch): AppError | null {
  const writes: Array<{ tenant: string; datatype: string; sk: string; record: StoredRecord }> = [];
  for (const o of batch.ops) {
    if (o.op === 'declareIndex') {
      const refused = declared.refusal(o.tenant, { datatype: o.datatype, path: o.path, unique: o.unique }, o.max, builtIn(o.datatype));
      if (refused) return refused;
    } else if (o.op === 'dropIndex') {
      const d = declared.get(o.tenant, o.id);
      if (!d || d.dropped) return new AppError('ERR_NOT_FOUND', [`index ${o.id}`]);
    } else if (o.op === 'putRecord') {
      writes.push({ tenant: o.record.pk, datatype: o.record.datatype, sk: o.record.sk, record: o.record });
    }
  }
  return writes.length > 0 ? declared.uniqueRefusal(writes) : null;
}
