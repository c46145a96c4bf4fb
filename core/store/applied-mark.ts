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

/** Inside the batch's transaction: false when the batch was applied already, else records `mark`. */
export function claimMark(meta: Database<unknown, Key>, mark: AppliedMark): boolean {
  const [seq, n] = appliedMark(meta, mark.key);
  if (seq > mark.seq || (seq === mark.seq && n >= mark.n)) return false;
  meta.put(['applied', mark.key], [mark.seq, mark.n]);
  return true;
}
