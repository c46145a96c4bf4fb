// What the door writes for every scan, allowed or denied: the durable scan log's line, folded into
// the door's state (door-state.ts) and its fields on the ticket (door-fields.ts).

/**
 * What an annulment records of the scan it reverses (copied from that scan's entry) and what it
 * decided, so the fold undoes it without reading the log (door-state.ts).
 */
export interface AnnulledScan {
  /** The scan's sequence in the log. */
  seq: number;
  kind: 'in' | 'out';
  at: number;
  zone: string;
  from: string | null;
  first: boolean;
  checkpoint: string | null;
  device: string | null;
  /** The scan was an offline admission the server would have refused (ScanEntry.conflict). */
  conflict?: string;
  /** It was the ticket's latest successful scan on its door (nothing after it stands). */
  latest: boolean;
  /** The ticket's previous successful scan on the door that still stands (0: none): its new latest. */
  prev: number;
  /** Latest only: the zone the ticket is inside on the door once the scan is undone (the standing entry before it); null: not inside. */
  restore: string | null;
  /** Check-in only: no successful entry of the ticket is left anywhere at the event. */
  none: boolean;
  /** The ticket's door fields once undone: inside at the event, and where. */
  inside: boolean;
  insideZone: string | null;
}

/** One line of the durable scan log `scan:<eventId>`. Every scan is logged, denied ones too. */
export interface ScanEntry {
  /** When the scan happened (the offline scanner's `scannedAt`, else receipt), epoch ms. */
  at: number;
  /** `annul`: the annulment of an earlier successful scan (`annuls`), by `by` at `at`. */
  kind: 'in' | 'out' | 'annul';
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
  /**
   * Decided by an offline device and uploaded later (`POST /events/checkin/batch` with `offline`):
   * `ok` and `reason` are the device's decision.
   */
  offline?: true;
  /**
   * An offline admission the server's own decision would have refused, and why (a denial reason:
   * `already_checked_in` for a double entry, `refunded`, …). It counts as a successful entry and in
   * `conflicts`. A ticket inside on the scan's door when it is applied is moved, not doubled, as a
   * multiple-entry list moves it; a code matching no ticket of the event (or one of another event,
   * `ticketId` null) is counted and places no one.
   */
  conflict?: string;
  /**
   * Successful scan: the ticket's previous successful scan on the same door (the list's, or the
   * event's own), so an annulment can restore what stood before (set by the fold, DoorState.apply).
   */
  prev?: number;
  /** Annulment only: the scan reversed. */
  annuls?: AnnulledScan;
}
