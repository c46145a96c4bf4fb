// The scanner actor's state (one per event) and what its handlers share. The actor is the single
// writer of its event's tickets: scans and every ticket change go through its mailbox, so a
// read-check-write on a ticket can never race another one.
import type { StoredRecord } from '../../core/store/record.js';
import type { Store, WriteBatch } from '../../core/store/store.js';
import { SECRET_NS, TICKET, type EventConfig, type SoldCounts } from '../event-records/index.js';
import { withDoor } from './door-fields.js';
import type { DoorState } from './door-state.js';
import type { RecordOverlay } from './record-overlay.js';
import type { CheckinList } from './checkin-list.js';
import type { FeedLog } from './door-feed.js';
import type { DoorKeyring } from './door-keyring.js';

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
  /** The store notes this event as behind (kv `door-behind`): written once per fall, not per scan. */
  behindKv: boolean;
  /** The event's check-in lists by id (this actor writes them: see list-ops.ts). */
  readonly lists: Map<string, CheckinList>;
  /** The door feed's change log of the event's tickets and lists (door-feed.ts). */
  readonly feed: FeedLog;
  /** The event's door keys, loaded on first need (door-keys.ts). */
  doorKeys?: DoorKeyring;
  /** When the edge was last told a scan committed (door-view.ts DOOR_NOTICE_MS). */
  noticeAt?: number;
}

/** A ticket as this actor last wrote it, with the door fields the scan log holds (door-fields.ts). */
export function readTicket(st: ScannerState, id: string): StoredRecord | undefined {
  const t = st.overlay.get(TICKET, id);
  if (!t || st.door.behind.size === 0) return t;
  const p = st.door.behind.get(id);
  return p ? withDoor(t, p) : t;
}

/**
 * Queues a write of ticket `next`, built from `readTicket`'s view (door fields included): the
 * record now carries its door fields, so they are no longer behind. After a crash the log past the
 * watermark puts them back, which changes nothing (withDoor is idempotent).
 */
export function writeTicket(st: ScannerState, batch: WriteBatch, next: StoredRecord, ifVersion: number): void {
  st.overlay.put(batch, next, ifVersion);
  st.door.behind.delete(next.sk);
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
