// The matches of exact small finds (one equality an index answers exactly, lmdb-records.ts
// exactTexts), kept by the equality, so a find asked again reads neither its index keys nor its
// plan's estimate: the record store's hottest client read, a lookup by a customer or an owner,
// becomes a map lookup and its page's texts (record-cache.ts). An entry is valid while no landed
// commit has put or removed an index key of its path and value in its tenant (the write path
// tells which, lmdb-indexes.ts `moved`; the entry goes once the commit lands, as the record cache
// forgets its records), and while the datatype's readable indexes are the ones it was read with.
// So a write-heavy datatype keeps the entries its writes do not touch. A write that cannot say
// (a raw record written past the indexes) voids its datatype's entries in its tenant (a
// generation per tenant and datatype). Bounded in entries and in the ids one entry holds; the
// oldest entries leave first.

/** Ids one entry holds at most: a few pages of matches, not a listing. */
export const EXACT_IDS_MAX = 100;
/**
 * Ids kept across tenants (~60 MiB at most), and for one tenant: one busy organisation cannot take
 * the others' share. An entry counts its ids plus ENTRY_WEIGHT for itself.
 */
const IDS_MAX = 1_000_000;
const TENANT_IDS_MAX = 250_000;
const ENTRY_WEIGHT = 4;
/** Tenant and datatype pairs whose write stamps are kept; past it every entry goes (see put). */
const PAIRS_MAX = 65_536;

interface Entry extends ExactMatches {
  gen: number;
  paths: string;
}

/**
 * An equality's matches, and beside each id the record cache's entry of its text once read (so
 * a page asked again reads no map per record; the reader checks the entry is still live).
 */
export interface ExactMatches {
  readonly ids: readonly string[];
  readonly slots: Array<object | undefined>;
}

const weightOf = (e: Entry): number => e.ids.length + ENTRY_WEIGHT;

export class ExactIdsCache {
  /**
   * Tenant and datatype → the stamp of its last landed write, for the pairs entries were made for
   * only. A pair without one has no valid entry (so forgetting the map is always safe).
   */
  private readonly gens = new Map<string, number>();
  private stamp = 0;
  /** Tenant → its entries by datatype and equality, oldest first; tenants in the order they last cached. */
  private readonly tenants = new Map<string, Map<string, Entry>>();
  private readonly weights = new Map<string, number>();
  private count = 0;
  private weight = 0;

  /** A commit that wrote or deleted a record of `datatype` in `tenant` has landed. */
  touched(tenant: string, datatype: string): void {
    const k = tenant + '\0' + datatype;
    if (this.gens.has(k)) this.gens.set(k, ++this.stamp);
  }

  /** A landed commit put or removed a key of `value` in the tenant's index of `datatype` on `path`. */
  moved(tenant: string, datatype: string, path: string, value: string | number): void {
    const mine = this.tenants.get(tenant);
    if (!mine) return;
    const k = datatype + '\0' + equalityKey(path, value);
    const had = mine.get(k);
    if (had) this.take(tenant, mine, k, had);
  }

  /** Every datatype of `tenant` changed (its keys were replaced whole). */
  touchedTenant(tenant: string): void {
    const prefix = tenant + '\0';
    for (const k of this.gens.keys()) if (k.startsWith(prefix)) this.gens.set(k, ++this.stamp);
  }

  /** The ids `equality` (equalityKey) matched, if nothing they depend on changed since. */
  get(tenant: string, datatype: string, equality: string, paths: string): readonly string[] | undefined {
    return this.matches(tenant, datatype, equality, paths)?.ids;
  }

  /** As get, with the slots of the ids' texts. */
  matches(tenant: string, datatype: string, equality: string, paths: string): ExactMatches | undefined {
    const e = this.tenants.get(tenant)?.get(datatype + '\0' + equality);
    if (!e || e.paths !== paths || e.gen !== this.gens.get(tenant + '\0' + datatype)) return undefined;
    return e;
  }

  /** Keeps the ids `equality` matches now (read in the same synchronous stretch as this call). */
  put(tenant: string, datatype: string, equality: string, paths: string, ids: readonly string[]): ExactMatches | undefined {
    if (ids.length > EXACT_IDS_MAX) return undefined;
    const pair = tenant + '\0' + datatype;
    let gen = this.gens.get(pair);
    if (gen === undefined) {
      // Past the bound every entry goes with the stamps (none is valid without its pair's).
      if (this.gens.size >= PAIRS_MAX) {
        this.gens.clear();
        this.tenants.clear();
        this.weights.clear();
        this.count = 0;
        this.weight = 0;
      }
      gen = ++this.stamp;
      this.gens.set(pair, gen);
    }
    const k = datatype + '\0' + equality;
    const had = this.tenants.get(tenant)?.get(k);
    if (had) this.take(tenant, this.tenants.get(tenant)!, k, had);
    // The tenant goes last in the order of eviction (the one that cached least lately goes first).
    let mine = this.tenants.get(tenant);
    if (mine) this.tenants.delete(tenant);
    else mine = new Map();
    this.tenants.set(tenant, mine);
    const e: Entry = { gen, paths, ids, slots: [] };
    mine.set(k, e);
    this.count++;
    this.weight += weightOf(e);
    this.weights.set(tenant, (this.weights.get(tenant) ?? 0) + weightOf(e));
    while ((this.weights.get(tenant) ?? 0) > TENANT_IDS_MAX) this.dropOldest(tenant, mine);
    // Over the node's bound, the tenant that cached least lately gives up its oldest.
    while (this.weight > IDS_MAX) {
      const [first, theirs] = this.tenants.entries().next().value!;
      this.dropOldest(first, theirs);
    }
    return e;
  }

  private dropOldest(tenant: string, entries: Map<string, Entry>): void {
    const [k, e] = entries.entries().next().value!;
    this.take(tenant, entries, k, e);
  }

  private take(tenant: string, entries: Map<string, Entry>, k: string, e: Entry): void {
    entries.delete(k);
    this.count--;
    this.weight -= weightOf(e);
    const left = (this.weights.get(tenant) ?? 0) - weightOf(e);
    if (entries.size === 0) {
      this.tenants.delete(tenant);
      this.weights.delete(tenant);
    } else this.weights.set(tenant, left);
  }

  get size(): number {
    return this.count;
  }
}

/** The cache key of an equality on `path` to `value` (a number and a string never share one). */
export function equalityKey(path: string, value: string | number): string {
  return (typeof value === 'number' ? 'n' : 's') + path + '\0' + value;
}
