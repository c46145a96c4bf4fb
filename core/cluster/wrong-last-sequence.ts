// JetStream's refusal of a write that expected another last sequence (error 10071): how a KV
// compare-and-set (a lease, an applier position) and a checked append learn that someone else
// wrote, or that the key is gone.
export function isWrongLastSequence(err: unknown): boolean {
  return (err as { code?: number }).code === 10071 || /wrong last sequence/i.test(String((err as Error)?.message));
}
