// Cluster mode (core/cluster/commit-log.ts): the position in the cluster's commit stream that a
// batch comes from, kept in the store's `meta` under ['applied', key] as [seq, n].
import type { Database, Key } from 'lmdb';

/**
 * The position a batch comes from, written in the batch's own transaction. `n` counts the batches
 * of stream message `seq` applied so far (one message may carry several). A batch whose mark is
 * not past the stored one was applied already: it is skipped, so applying a message twice is
 * harmless.
 */
export interface AppliedMark {
  key: string;
  seq: number;
  n: number;
}

export const ALREADY_APPLIED = 'already-applied';

/** The stored mark of `key` as [seq, n] ([0, 0] when nothing was applied). */
export function appliedMark(meta: Database<unknown, Key>, key: string): [number, number] {
  return (meta.get(['applied', key]) as [number, number] | undefined) ?? [0, 0];
}

/** Inside the batch's transaction: true when the batch was applied already (nothing to write). */
export function markPassed(meta: Database<unknown, Key>, mark: AppliedMark): boolean {
  const [seq, n] = appliedMark(meta, mark.key);
  return seq > mark.seq || (seq === mark.seq && n >= mark.n);
}

/**
 * Inside the batch's transaction, once its writes are done (or its condition failed): records
 * `mark`. Last, so a batch that throws half-way leaves no mark behind, even in a transaction it
 * shares with others (lmdb-store.ts runs a one-op batch without a child transaction).
 */
export function putMark(meta: Database<unknown, Key>, mark: AppliedMark): void {
  meta.put(['applied', mark.key], [mark.seq, mark.n]);
}
