// Who wants to know that a tenant put keys in a kv namespace: loops that would otherwise look at
// every organisation each pass (the outbox and webhook dispatchers) look only at the tenants told
// here. A watcher hears of a batch once it has landed, so a read it then makes sees the keys.
import type { WriteBatch } from './store.js';

export type KvWatcher = (tenant: string) => void;

export class KvWatch {
  private readonly watchers = new Map<string, KvWatcher[]>();

  /** Answers a function that ends the watch. */
  add(ns: string, fn: KvWatcher): () => void {
    const list = this.watchers.get(ns);
    if (list) list.push(fn);
    else this.watchers.set(ns, [fn]);
    return () => {
      const now = this.watchers.get(ns)?.filter((f) => f !== fn) ?? [];
      if (now.length > 0) this.watchers.set(ns, now);
      else this.watchers.delete(ns);
    };
  }

  /** `done` (the batch's commit), then the watchers of every namespace the batch puts a key in. */
  after(batch: WriteBatch, done: Promise<unknown>): Promise<void> {
    if (this.watchers.size === 0 || !this.watches(batch)) return done as Promise<void>;
    return done.then(() => this.tell(batch));
  }

  /** Tells the watchers of every namespace `batch` puts a key in (once per tenant and namespace). */
  tell(batch: WriteBatch): void {
    let told: Set<string> | undefined;
    for (const o of batch.ops) {
      if (o.op !== 'putKv') continue;
      const list = this.watchers.get(o.ns);
      if (!list) continue;
      const id = `${o.ns}\u0000${o.tenant}`;
      if (told?.has(id)) continue;
      (told ??= new Set()).add(id);
      for (const fn of list) {
        // A watcher's failure is its own: the batch has landed, and its commit must not fail.
        try {
          fn(o.tenant);
        } catch {
          // nothing to undo
        }
      }
    }
  }

  private watches(batch: WriteBatch): boolean {
    for (const o of batch.ops) if (o.op === 'putKv' && this.watchers.has(o.ns)) return true;
    return false;
  }
}
