// The counters of one door: check-in and check-out scans, people who entered, who is inside and
// where, per zone, per hour and per denial reason. The event's door keeps one over every scan, and
// each check-in list keeps its own over the scans that name it (door-state.ts folds both).
import { UNKNOWN_ZONE, type EventConfig } from '../event-records/index.js';
import type { ScanEntry } from './scan-entry.js';

export interface Counts {
  total: number;
  successful: number;
  denied: number;
}

interface ZoneCounters {
  /** Successful entries into the zone. */
  entries: number;
  /** Successful exits from it. */
  exits: number;
  /** Every check-in attempt at it, allowed or denied. */
  attempts: number;
}

export interface CheckinStats {
  total: number;
  successful: number;
  denied: number;
  uniqueAttendees: number;
  byZone: Record<string, Counts>;
  byHour: Record<string, Counts>;
  byReason: Record<string, number>;
  checkouts: Counts;
  inside: number;
  /** Successful entries by checkpoint (scans naming one), net of annulments. */
  byCheckpoint: Record<string, number>;
  /** Successful entries by device (scans naming one), net of annulments. */
  byDevice: Record<string, number>;
  /** Offline admissions (check-ins) the server would have refused (ScanEntry.conflict), net of annulments. */
  conflicts: number;
}

export interface ZoneOccupancy {
  zoneId: string;
  zoneName: string;
  capacity: number | null;
  currentOccupancy: number;
  availableCapacity: number | null;
  percentFull: number | null;
  totalEntranceScans: number;
  totalEligibilityScans: number;
}

const HOUR_MS = 3_600_000;

function counts(): Counts {
  return { total: 0, successful: 0, denied: 0 };
}

function bump(c: Counts, ok: boolean): void {
  c.total++;
  if (ok) c.successful++;
  else c.denied++;
}

/** An annulled successful scan leaves the counts. */
function unbump(c: Counts | undefined): void {
  if (!c) return;
  c.total--;
  c.successful--;
}

/**
 * Counts by a key that repeats scan after scan (a checkpoint, a device): the last key's counter is
 * kept at hand, so a run of scans at one gate costs a comparison, not a map lookup.
 */
class KeyCounts {
  private readonly m = new Map<string, { n: number }>();
  private lastKey: string | null = null;
  private last: { n: number } | undefined;

  add(k: string | null, d: number): void {
    if (k === null) return;
    let c = k === this.lastKey ? this.last : this.m.get(k);
    if (!c) this.m.set(k, (c = { n: 0 }));
    c.n += d;
    this.lastKey = k;
    this.last = c;
  }

  /** Keys with a count (an entry annulled away leaves none). */
  record(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const [k, c] of this.m) if (c.n !== 0) out[k] = c.n;
    return out;
  }
}

export class DoorTally {
  /** Check-in scans (spec: total is the number of scans). */
  readonly checkins = counts();
  readonly checkouts = counts();
  /** People who ever checked in (spec: unique attendees). */
  uniqueAttendees = 0;
  /** Offline admissions the server would have refused (ScanEntry.conflict). */
  conflicts = 0;
  /** Ticket id → zone it is inside now. */
  readonly inside = new Map<string, string>();
  readonly byZone = new Map<string, Counts>();
  /** Hour bucket (epoch ms / 1 h) → counts. */
  readonly byHour = new Map<number, Counts>();
  readonly byReason = new Map<string, number>();
  readonly zones = new Map<string, ZoneCounters>();
  readonly byCheckpoint = new KeyCounts();
  readonly byDevice = new KeyCounts();
  /**
   * Ticket id → sequence of its latest successful scan through this door: an annulment of that
   * scan restores the one before (ScanEntry.prev), of an earlier one leaves the door as it is.
   */
  readonly last = new Map<string, number>();

  zone(id: string): ZoneCounters {
    let z = this.zones.get(id);
    if (!z) {
      z = { entries: 0, exits: 0, attempts: 0 };
      this.zones.set(id, z);
    }
    return z;
  }

  /** People inside `zoneId` now: entries minus exits, never below 0. */
  occupancy(zoneId: string): number {
    const z = this.zones.get(zoneId);
    return z ? Math.max(0, z.entries - z.exits) : 0;
  }

  /** Counts a check-in scan, allowed or denied (not who is inside: see DoorState.apply). */
  countIn(e: ScanEntry): void {
    bump(this.checkins, e.ok);
    let c = this.byZone.get(e.zone);
    if (!c) this.byZone.set(e.zone, (c = counts()));
    bump(c, e.ok);
    const hour = Math.floor(e.at / HOUR_MS);
    let h = this.byHour.get(hour);
    if (!h) this.byHour.set(hour, (h = counts()));
    bump(h, e.ok);
    this.zone(e.zone).attempts++;
    if (e.ok) {
      this.byCheckpoint.add(e.checkpoint, 1);
      this.byDevice.add(e.device, 1);
      if (e.conflict !== undefined) this.conflicts++;
    } else if (e.reason) this.byReason.set(e.reason, (this.byReason.get(e.reason) ?? 0) + 1);
  }

  /** Takes an annulled successful check-in out of the counts `countIn` put it in (not who is inside). */
  uncountIn(x: { at: number; zone: string; checkpoint: string | null; device: string | null; conflict?: string }): void {
    if (x.conflict !== undefined) this.conflicts--;
    unbump(this.checkins);
    unbump(this.byZone.get(x.zone));
    unbump(this.byHour.get(Math.floor(x.at / HOUR_MS)));
    this.zone(x.zone).attempts--;
    this.byCheckpoint.add(x.checkpoint, -1);
    this.byDevice.add(x.device, -1);
  }

  uncountOut(): void {
    unbump(this.checkouts);
  }

  countOut(ok: boolean): void {
    bump(this.checkouts, ok);
  }

  /** `inside`: tickets inside now (the event's door counts a ticket inside two lists once). */
  stats(inside = this.inside.size): CheckinStats {
    const byZone: Record<string, Counts> = {};
    for (const [k, v] of this.byZone) byZone[k] = { ...v };
    const byHour: Record<string, Counts> = {};
    for (const k of [...this.byHour.keys()].sort((a, b) => a - b)) {
      byHour[new Date(k * HOUR_MS).toISOString()] = { ...this.byHour.get(k)! };
    }
    return {
      total: this.checkins.total,
      successful: this.checkins.successful,
      denied: this.checkins.denied,
      uniqueAttendees: this.uniqueAttendees,
      byZone,
      byHour,
      byReason: Object.fromEntries(this.byReason),
      checkouts: { ...this.checkouts },
      inside,
      byCheckpoint: this.byCheckpoint.record(),
      byDevice: this.byDevice.record(),
      conflicts: this.conflicts,
    };
  }

  /**
   * Keyed by the event's zone ids (those in `only` when given); `unknown` and zones no longer
   * defined are left out. A list's tally passes the event's as `whole`: a zone's free places are
   * those of the zone, whoever fills it.
   */
  occupancyByZone(ev: EventConfig, only?: ReadonlySet<string> | null, whole: DoorTally = this): Record<string, ZoneOccupancy> {
    const out: Record<string, ZoneOccupancy> = {};
    for (const zone of ev.zones) {
      if (zone.id === UNKNOWN_ZONE || (only && !only.has(zone.id))) continue;
      const z = this.zones.get(zone.id);
      const current = this.occupancy(zone.id);
      const cap = zone.capacity;
      out[zone.id] = {
        zoneId: zone.id,
        zoneName: zone.name,
        capacity: cap,
        currentOccupancy: current,
        availableCapacity: cap === null ? null : Math.max(0, cap - whole.occupancy(zone.id)),
        percentFull: cap === null ? null : cap === 0 ? 100 : Math.round((whole.occupancy(zone.id) / cap) * 1000) / 10,
        totalEntranceScans: z?.entries ?? 0,
        totalEligibilityScans: z?.attempts ?? 0,
      };
    }
    return out;
  }
}
