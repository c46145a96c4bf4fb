// Record ids derived from a natural key (a device id, a provider's message SID, a contact and a
// channel): the same key always lands on the same record, so a retried webhook or a re-registered
// device updates instead of duplicating. 24 hex characters, like every other record id.
import { createHash } from 'node:crypto';

export function stableId(...parts: string[]): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(p).update('\u0000');
  return h.digest('hex').slice(0, 24);
}
