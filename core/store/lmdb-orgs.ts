// Organisations in the LMDB store, read on every request (the edge resolves `orgid`): a cache of
// them as committed. Entries are dropped once a commit that writes the organisation has landed,
// so a read never sees a write before it is durable. Misses are not kept (unknown ids are the
// caller's to choose). The list of ids, which background loops read every second, is kept too and
// dropped when a landed commit puts an organisation (organisations are never deleted).
import type { Database, Key } from 'lmdb';
import type { Org, WriteBatch } from './store.js';

const ORG_CACHE_MAX = 10_000;

export class LmdbOrgs {
  private readonly cache = new Map<string, Org>();
  private ids: readonly string[] | undefined;

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

  /** Every organisation's id in key order, read from keys only (no record is decoded). */
  listIds(): readonly string[] {
    return (this.ids ??= Array.from(this.orgs.getKeys({}), String));
  }

  /** Organisations were written around the batch path (a platform copy loaded): read them again. */
  forgetAll(): void {
    this.cache.clear();
    this.ids = undefined;
  }

  /** A batch landed (or failed): the next read of an organisation it wrote goes to the store. */
  forget(batch: WriteBatch): void {
    for (const o of batch.ops) {
      if (o.op === 'putOrg') {
        this.cache.delete(o.org.orgId);
        this.ids = undefined;
      }
      else if (o.op === 'patchOrg' && this.cache.size > 0) this.cache.delete(o.orgId);
    }
  }
}
