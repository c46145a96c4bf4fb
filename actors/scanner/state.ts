// The scanner actor's state (one per event) and what its handlers share. The actor is the single
// writer of its event's tickets: scans and every ticket change go through its mailbox, so a
// read-check-write on a ticket can never race another one.
import { AppError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { SECRET_NS, TICKET, type EventConfig, type SoldCounts } from '../events/records.js';
import type { DoorState } from './door-state.js';
import type { RecordOverlay } from './record-overlay.js';

export interface ScannerState {
  readonly tenant: string;
  readonly eventId: string;
  /** Undefined once the event is deleted. */
  ev: EventConfig | undefined;
  readonly door: DoorState;
  readonly overlay: RecordOverlay;
  /** Ticket id → codeSecret ('' once rotated away), read through from the `ticket-secret` kv. */
  readonly secrets: Map<string, string>;
  sold: SoldCounts;
  /** `scan:<eventId>` */
  readonly log: string;
  readonly store: Store;
}

/**
 * An expected refusal (404, 409, 400) answered as a value rather than thrown: a throw makes the
 * runtime drop the actor's state and replay the scan log, which is the wrong price for a typo.
 */
export class Failure {
  constructor(readonly error: AppError) {}
}

export function readTicket(st: ScannerState, id: string): StoredRecord | undefined {
  return st.overlay.get(TICKET, id);
}

const SECRET_CACHE_MAX = 100_000;

export function secretOf(st: ScannerState, ticketId: string): string | undefined {
  let s = st.secrets.get(ticketId);
  if (s === undefined) {
    s = st.store.getKv<string>(st.tenant, SECRET_NS, ticketId) ?? '';
    if (st.secrets.size >= SECRET_CACHE_MAX) st.secrets.clear();
    st.secrets.set(ticketId, s);
  }
  return s === '' ? undefined : s;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString();
}
