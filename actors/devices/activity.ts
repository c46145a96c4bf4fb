// When each device was last seen and how many scans it made, noted in memory on every request and
// written behind in one message per organisation (ScannerDevices.flush, every few seconds): a scan's
// only write stays its log entry. A node that dies loses at most one interval of these figures,
// never a scan.

export interface Pending {
  lastSeenAt: number;
  scans: number;
}

export class DeviceActivity {
  /** tenant → device id → activity since the last drain. */
  private readonly byTenant = new Map<string, Map<string, Pending>>();

  private entry(tenant: string, id: string, now: number): Pending {
    let devices = this.byTenant.get(tenant);
    if (!devices) this.byTenant.set(tenant, (devices = new Map()));
    let p = devices.get(id);
    if (!p) devices.set(id, (p = { lastSeenAt: now, scans: 0 }));
    return p;
  }

  seen(tenant: string, id: string, now: number): void {
    const p = this.entry(tenant, id, now);
    if (now > p.lastSeenAt) p.lastSeenAt = now;
  }

  scanned(tenant: string, id: string, scans: number, now: number): void {
    this.entry(tenant, id, now).scans += scans;
  }

  /** Not yet written for `id` (the list adds it, so it is current on the node that answers). */
  pending(tenant: string, id: string): Pending | undefined {
    return this.byTenant.get(tenant)?.get(id);
  }

  /** Everything noted so far, by tenant; forgotten here. */
  drain(): Array<[string, Array<{ id: string } & Pending>]> {
    const out: Array<[string, Array<{ id: string } & Pending>]> = [];
    for (const [tenant, devices] of this.byTenant) out.push([tenant, [...devices].map(([id, p]) => ({ id, ...p }))]);
    this.byTenant.clear();
    return out;
  }
}
