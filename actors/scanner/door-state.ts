// The door's memory of one event: who is inside and where, per-zone occupancy, the check-in
// counters and the nonces of offline scans. It is a pure fold over the scan log: the live path and
// activation both go through `apply`, so what a restart rebuilds is exactly what was answered.
import { UNKNOWN_ZONE, type EventConfig } from '../event-records/index.js';
import { foldPatch, type DoorPatch } from './door-fields.js';
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

export interface NonceResult {
  ok: boolean;
  reason: string | null;
  ticketId: string | null;
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

export class DoorState {
  /** Check-in scans (spec: total is the number of scans). */
  readonly checkins = counts();
  readonly checkouts = counts();
  /** People who ever checked in (spec: unique attendees). */
  uniqueAttendees = 0;
  /** Ticket id → zone it is inside now. */
  readonly inside = new Map<string, string>();
  readonly byZone = new Map<string, Counts>();
  /** Hour bucket (epoch ms / 1 h) → counts. */
  readonly byHour = new Map<number, Counts>();
  readonly byReason = new Map<string, number>();
  readonly zones = new Map<string, ZoneCounters>();
  /** Nonce of an offline scan → its original answer. */
  readonly nonces = new Map<string, NonceResult>();
  /** Sequence of the last applied scan log entry. */
  seq = 0;
  /** Every entry up to this sequence is in the ticket records (the `door-materialized` kv). */
  materialized = 0;
  /**
   * Ticket id → door fields the log holds and its record does not yet, in the order they fell
   * behind (ascending `since`): the materializer writes them from the front.
   */
  readonly behind = new Map<string, DoorPatch>();

  private zone(id: string): ZoneCounters {
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

  /** Applies entry `seq` (the next one) of the log; answers the ticket's door fields not yet in its record. */
  apply(e: ScanEntry, seq: number): DoorPatch | undefined {
    this.seq = seq;
    let patch: DoorPatch | undefined;
    if (e.ok && e.ticketId && seq > this.materialized) {
      patch = this.behind.get(e.ticketId);
      // Folded in place: the map keeps the ticket where it first fell behind.
      if (patch) foldPatch(patch, e, seq);
      else this.behind.set(e.ticketId, (patch = foldPatch(undefined, e, seq)));
    }
    if (e.kind === 'in') {
      bump(this.checkins, e.ok);
      let c = this.byZone.get(e.zone);
      if (!c) this.byZone.set(e.zone, (c = counts()));
      bump(c, e.ok);
      const hour = Math.floor(e.at / HOUR_MS);
      let h = this.byHour.get(hour);
      if (!h) this.byHour.set(hour, (h = counts()));
      bump(h, e.ok);
      const z = this.zone(e.zone);
      z.attempts++;
      if (e.ok) {
        z.entries++;
        if (e.ticketId) this.inside.set(e.ticketId, e.zone);
        if (e.first) this.uniqueAttendees++;
      } else if (e.reason) {
        this.byReason.set(e.reason, (this.byReason.get(e.reason) ?? 0) + 1);
      }
    } else {
      bump(this.checkouts, e.ok);
      if (e.ok) {
        if (e.from) this.zone(e.from).exits++;
        if (e.ticketId) this.inside.delete(e.ticketId);
      }
    }
    if (e.nonce) this.nonces.set(e.nonce, { ok: e.ok, reason: e.reason, ticketId: e.ticketId });
    return patch;
  }

  stats(): CheckinStats {
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
      inside: this.inside.size,
    };
  }

  /** Keyed by the event's zone ids; `unknown` and zones no longer defined are left out. */
  occupancyByZone(ev: EventConfig): Record<string, ZoneOccupancy> {
    const out: Record<string, ZoneOccupancy> = {};
    for (const zone of ev.zones) {
      if (zone.id === UNKNOWN_ZONE) continue;
      const z = this.zones.get(zone.id);
      const current = this.occupancy(zone.id);
      const cap = zone.capacity;
      out[zone.id] = {
        zoneId: zone.id,
        zoneName: zone.name,
        capacity: cap,
        currentOccupancy: current,
        availableCapacity: cap === null ? null : Math.max(0, cap - current),
        percentFull: cap === null ? null : cap === 0 ? 100 : Math.round((current / cap) * 1000) / 10,
        totalEntranceScans: z?.entries ?? 0,
        totalEligibilityScans: z?.attempts ?? 0,
      };
    }
    return out;
  }
}
