// A batch's log and kv writes as the write journal keeps them, and back.
import { WriteBatch } from './store.js';
import type { JournalOp } from './write-journal.js';

/** A batch's log and kv writes as journal ops (undefined if it writes anything else). */
export function journalOps(batch: WriteBatch): JournalOp[] | undefined {
  const ops: JournalOp[] = [];
  for (const o of batch.ops) {
    if (o.op === 'append') ops.push(['a', o.tenant, o.log, o.seq, o.entry]);
    else if (o.op === 'putKv') ops.push(['k', o.tenant, o.ns, o.key, o.value]);
    else if (o.op === 'deleteKv') ops.push(['d', o.tenant, o.ns, o.key]);
    else return undefined;
  }
  return ops;
}

/** Journal ops back as one batch for LMDB. */
export function journalBatch(ops: JournalOp[]): WriteBatch {
  const batch = new WriteBatch();
  for (const op of ops) {
    if (op[0] === 'a') batch.append(op[1], op[2], op[3], op[4]);
    else if (op[0] === 'k') batch.putKv(op[1], op[2], op[3], op[4]);
    else batch.deleteKv(op[1], op[2], op[3]);
  }
  return batch;
}
