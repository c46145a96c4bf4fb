// Print jobs and sent receipts leave through the outbox: stored now, in a transaction of their own
// (nothing else changes with them), and handed to the provider by the dispatcher after commit.
import type { OutboxEntry, OutboxMessage, OutboxProvider } from '../../core/outbox.js';
import { WriteBatch, type Store } from '../../core/store/store.js';

export async function queueReceipt(store: Store, outbox: OutboxProvider, tenant: string, msg: OutboxMessage): Promise<OutboxEntry> {
  const batch = new WriteBatch();
  const sent = await outbox.send(tenant, msg, batch);
  await store.commit(batch);
  return sent;
}
