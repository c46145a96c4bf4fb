// Which organisations a background loop must look at on its next pass, so that a pass costs what
// is queued rather than the number of organisations (10,000 empty ranged reads hold the event loop
// about 50 ms). A tenant is due when the store says it queued work (Store.watchKv: `mark`), when
// the loop set a time for it (`later`), or when it was never looked at since this node served it:
// those are found a bounded number a pass (start-up, a cluster takeover).
export class DueTenants {
  /** Tenant → when to look at it next (0: marked, now). */
  private readonly due = new Map<string, number>();
  /** Tenants looked at once since this node served them. */
  private readonly looked = new Set<string>();
  private undiscovered = false;

  constructor(private readonly discoverPerPass: number) {}

  /** `tenant` queued work: look at it on the next pass. */
  mark(tenant: string): void {
    this.due.set(tenant, 0);
  }

  /** Look at `tenant` again at `at`, or sooner if it is marked meanwhile. */
  later(tenant: string, at: number): void {
    const cur = this.due.get(tenant);
    if (cur === undefined || at < cur) this.due.set(tenant, at);
  }

  /**
   * Tenants of `served` to look at now, each taken off the list: the loop puts back (`later`) the
   * ones with work still to come; a mark while it looks stays. Tenants no longer served are dropped.
   */
  next(served: Iterable<string>, now: number): string[] {
    const set = served instanceof Set ? (served as Set<string>) : new Set(served);
    for (const t of this.due.keys()) if (!set.has(t)) this.due.delete(t);
    for (const t of this.looked) if (!set.has(t)) this.looked.delete(t);
    if (this.looked.size < set.size) {
      let found = 0;
      for (const t of set) {
        if (this.looked.has(t)) continue;
        this.looked.add(t);
        this.due.set(t, 0);
        if (++found >= this.discoverPerPass) break;
      }
    }
    this.undiscovered = this.looked.size < set.size;
    const out: string[] = [];
    for (const [t, at] of this.due) {
      if (at > now) continue;
      out.push(t);
      this.due.delete(t);
    }
    return out;
  }

  /** Some served tenant was never looked at after the last pass: the loop has more to find. */
  get discovering(): boolean {
    return this.undiscovered;
  }
}
