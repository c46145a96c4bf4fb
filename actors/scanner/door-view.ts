// What the live door view shows of one event, as its scanner actor knows it: each zone's occupancy
// against capacity, the scan rate per checkpoint over the last hour, denials by reason, conflicts
// and the entries per device. The edge adds the enrolled devices' names and last-seen times
// (edge/routes/events/door-view.ts). Built from memory only: no read of the store.
import { UNKNOWN_ZONE } from '../event-records/index.js';
import type { ScanRates } from './scan-rate.js';
import type { ScannerState } from './state.js';

/** Subject on which a scanner says "a scan of this event committed": `door.<tenant>.<eventId>`. */
export const DOOR_SCANNED = 'door';

export function doorScannedSubject(tenant: string, eventId: string): string {
  return `${DOOR_SCANNED}.${tenant}.${eventId}`;
}

/** The shortest gap between two such notices of one event: a rush costs a few, not one per scan. */
export const DOOR_NOTICE_MS = 200;

export interface DoorViewZone {
  zoneId: string;
  zoneName: string;
  capacity: number | null;
  inside: number;
  percentFull: number | null;
}

export interface DoorViewFigures {
  eventId: string;
  eventName: string;
  /** The actor's clock when built (ISO). */
  at: string;
  zones: DoorViewZone[];
  /** Tickets inside now, a ticket inside on two lists once. */
  inside: number;
  /** Check-in scans, allowed or denied. */
  scans: number;
  admitted: number;
  denied: number;
  checkouts: number;
  /** Scans (check-ins and check-outs, allowed or denied) per minute per checkpoint. */
  rate: ScanRates;
  denials: Record<string, number>;
  conflicts: number;
  /** Successful entries per device id (scans naming one). */
  byDevice: Record<string, number>;
}

export function doorView(st: ScannerState, now: number): DoorViewFigures {
  const ev = st.ev!;
  const s = st.door.stats();
  const zones: DoorViewZone[] = [];
  for (const z of ev.zones) {
    if (z.id === UNKNOWN_ZONE) continue;
    const inside = st.door.occupancy(z.id);
    zones.push({
      zoneId: z.id,
      zoneName: z.name,
      capacity: z.capacity,
      inside,
      percentFull: z.capacity === null ? null : z.capacity === 0 ? 100 : Math.round((inside / z.capacity) * 1000) / 10,
    });
  }
  // `conflicts` joins the stats with offline uploads (issue 32); 0 until then.
  const conflicts = (s as { conflicts?: unknown }).conflicts;
  return {
    eventId: st.eventId,
    eventName: ev.name,
    at: new Date(now).toISOString(),
    zones,
    inside: s.inside,
    scans: s.total,
    admitted: s.successful,
    denied: s.denied,
    checkouts: s.checkouts.total,
    rate: st.door.rate.window(now),
    denials: s.byReason,
    conflicts: typeof conflicts === 'number' ? conflicts : 0,
    byDevice: s.byDevice,
  };
}
