// Whether a route's answer waits for the door (actors/scanner/door-backlog.ts): every events route
// does, so its tickets and the door's counters match the latest acknowledged scan, unless its
// definition says otherwise here. A scan writes the door's log and reads through the scanner's
// memory; a route that reads no ticket record (events, their types, schedule and media) has
// nothing behind to wait for. During a rush the tickets behind can be many: settling them is for
// readers of tickets, not for a dashboard listing the events.
import type { RouteDef } from '../../route.js';

interface DoorFlag {
  readonly waitsForDoor?: boolean;
}

/** Declares that `r` reads no ticket record (or is a scan): it answers without settling the door. */
export function doorFree(r: RouteDef): RouteDef {
  return Object.assign(r, { waitsForDoor: false } satisfies DoorFlag);
}

export function waitsForDoor(r: RouteDef): boolean {
  return (r as RouteDef & DoorFlag).waitsForDoor !== false;
}
