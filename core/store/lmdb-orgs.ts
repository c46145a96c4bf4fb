// Organisations in the LMDB store, read on every request (the edge resolves `orgid`): a cache of
// them as committed. Entries are dropped once a commit that writes the organisation has landed,
// so a read never sees a write before it is durable. Misses are not kept (unknown ids are the
// caller's to choose).
import type { Database, Key } from 'lmdb';
import type { Org, WriteBatch } from './store.js';

const ORG_CACHE_MAX = 10_000;

export class LmdbOrgs {
  private readonly cache = new Map<string, Org>();

  constructor(private readonly orgs: Database<Org, Key>) {}

  get(orgId: string): Org | undefined {
    const hit = this.cache.get(orgId);
    if (hit !== undefined) return hit;
    const org = this.orgs.get(orgId);
    if (org !== undefined) {
      if (this.cache.size >= ORG_CACHE_MAX) this.cache.clear();
      this.cache.set(orgId, org);
    }
    return org;
  }

  list(): Org[] {
    return [...this.orgs.getRange({}).map(({ value }) => value)];
  }

  /** A batch landed (or failed): the next read of an organisation it wrote goes to the store. */
  forget(batch: WriteBatch): void {
    if (this.cache.size === 0) return;
    for (const o of batch.ops) {
      if (o.op === 'putOrg') this.cache.delete(o.org.orgId);
      else if (o.op === 'patchOrg') this.cache.delete(o.orgId);
    }
  }
}
