// What the door writes for every scan, allowed or denied: the durable scan log's line, folded into
// the door's state (door-state.ts) and its fields on the ticket (door-fields.ts).

/** One line of the durable scan log `scan:<eventId>`. Every scan is logged, denied ones too. */
export interface ScanEntry {
  /** When the scan happened (the offline scanner's `scannedAt`, else receipt), epoch ms. */
  at: number;
  kind: 'in' | 'out';
  ok: boolean;
  reason: string | null;
  ticketId: string | null;
  /** The zone scanned at; `unknown` when the request named none. */
  zone: string;
  /** Successful check-out: the zone the ticket was inside (its exit is counted there). */
  from: string | null;
  checkpoint: string | null;
  /** The check-in list the scan named; absent when it named none (the event's own door). */
  list?: string;
  nonce: string | null;
  /** Successful check-in that was the ticket's first ever entry (a unique attendee). */
  first: boolean;
  /** Who scanned (the staff user id) and on what device. */
  by: string | null;
  device: string | null;
  /** Receipt time when it differs from `at` (offline scans). */
  receivedAt: number | null;
  /** The scanned text, kept only when it matched no ticket (audit of bad codes). */
  code: string | null;
}
