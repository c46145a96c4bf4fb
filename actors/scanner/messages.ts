// What the scanner actors (one per event; the tenant's unmatched scans) accept and answer, and
// their kinds' names.
import type { StoredRecord } from '../../core/store/record.js';
import type { Located } from './locate.js';
import type { ScanEntry } from './scan-entry.js';
import type { Payment } from '../event-records/index.js';

export const SCANNER = 'scanner';

/** Stable denial reasons, documented in the OpenAPI description of the scan routes. */
export const DENIAL_REASONS = [
  'invalid_code',
  'bad_signature',
  'expired_code',
  'wrong_event',
  'already_checked_in',
  'refunded',
  'cancelled',
  'not_active',
  'zone_full',
  'not_checked_in',
  'product',
  'invalid_time',
  'max_entries',
] as const;

export type DenialReason = (typeof DENIAL_REASONS)[number];

/** What each reason means: the reference's reason table and the scan routes' descriptions. */
export const DENIAL_MEANINGS: Readonly<Record<DenialReason, string>> = {
  invalid_code: 'the code matches no ticket',
  bad_signature: 'a signed QR code (dynamic, or static `ticketId:S:…`) whose signature does not verify: forged, of a key no longer listed, or from before a transfer',
  expired_code: "a dynamic QR code outside the event's window (default 30 s, ±60 s clock skew)",
  wrong_event: 'the ticket belongs to another event than the one the scan or its check-in list names',
  already_checked_in: 'inside now, or used when re-entry is off (with a check-in list: on that list)',
  refunded: 'the ticket was refunded',
  cancelled: 'the ticket was cancelled',
  not_active: 'the ticket type requires activation and the ticket is not activated',
  zone_full: 'the zone is at capacity',
  not_checked_in: 'check-out of a ticket that is not inside (with a check-in list: on that list)',
  product: "check-in list: the ticket's type is not on the list",
  invalid_time: "check-in list: outside its validFrom/validUntil, or on a weekday it does not admit (in the event's time zone)",
  max_entries: "check-in list: the ticket has made the list's maxEntries, or maxEntriesPerDay on this local day",
};

export interface ScanInput {
  code?: string;
  /** Check-out only: the ticket by id instead of a code. */
  ticketId?: string;
  zone?: string;
  checkpoint?: string;
  /** The check-in list scanned at (its id); absent: the event's own door. */
  list?: string;
  nonce?: string;
  /** When an offline scanner made the scan (epoch ms). */
  scannedAt?: number;
  device?: string;
  /** The ticket the edge already found for the code (to route a scan naming no event): not resolved again. */
  located?: Located;
  /** A scan decided by an offline device (batch upload): its decision is recorded, not made again. */
  offline?: OfflineDecision;
}

/** What an offline device decided at `scannedAt`; `reason`: its denial reason, when it gave one. */
export interface OfflineDecision {
  decision: 'admitted' | 'denied';
  reason?: DenialReason;
}

export interface ScanReply {
  success: boolean;
  ticket?: StoredRecord;
  reason?: DenialReason;
  /** Batch uploads: the device's decision, recorded as made; its answer names the ticket (`ticketId`) instead of carrying it. */
  offline?: true;
  ticketId?: string;
  /** An offline admission the server would have refused (`conflictReason`): a double entry, a revoked ticket. */
  conflict?: true;
  conflictReason?: DenialReason;
}

/** A batch item the door could not take (a bad item): answered in its slot, the others commit. */
export interface BatchItemError {
  success: false;
  error: { statusCode: number; error: string; message: string };
}

export type BatchItemReply = ScanReply | BatchItemError;

export interface ValidateReply {
  valid: boolean;
  ticket?: StoredRecord;
  reason?: DenialReason;
}

export type ScannerMsg =
  | ({ type: 'in' | 'out'; by: string | null } & ScanInput)
  | { type: 'validate'; code: string; zone?: string; list?: string; located?: Located }
  | { type: 'batch'; by: string | null; scans: Array<ScanInput & { direction: 'in' | 'out' }> }
  /** `list`: narrowed to that check-in list. */
  | { type: 'stats'; list?: string }
  | { type: 'occupancy'; list?: string }
  /** The live door view's figures (door-view.ts). */
  | { type: 'door-view' }
  | { type: 'reload' }
  /** Writes up to `max` tickets' door fields into their records; answers how many are still behind. */
  | { type: 'materialize'; max: number }
  | AnnulMsg
  /** Which of these scans were annulled: the annulment's sequence for each, 0 when not. */
  | { type: 'annulled'; seqs: number[] }
  /** The door feed: the lists each ticket entered on, its entries and whether it is inside there (door-feed.ts). */
  | { type: 'door-of'; ticketIds: string[] }
  /** The door feed: ticket `ticketId` was written or deleted around this actor (the record store). */
  | { type: 'feed-touch'; ticketId: string }
  /** The durable timer of a list's `exitAllAt` (payload `at`: the time it was set for). */
  | { type: 'exit-all'; listId: string; jobId: string; at: string }
  | IssueMsg
  | TicketOpMsg
  | ListOpMsg
  | DoorKeyMsg;

/** Who asks to annul a scan: the scan's maker (its `by`) within the window, an Admin at any time. */
export interface AnnulCaller {
  /** The principal id, compared with the scan's `by`. */
  id: string;
  admin: boolean;
  /** The device the annulment is made on, logged with it. */
  device?: string;
}

/** Reverses one successful scan, named by its sequence or its nonce. */
export interface AnnulMsg {
  type: 'annul';
  seq?: number;
  nonce?: string;
  caller: AnnulCaller;
  /** DOOR_ANNUL_WINDOW_S in ms: how long after its receipt the maker may annul a scan. */
  windowMs: number;
}

export interface ListRules {
  validFrom?: string;
  validUntil?: string;
  maxEntries?: number;
  maxEntriesPerDay?: number;
  weekdays?: number[];
}

/** What a list's create or change sets (absent: unchanged on a change; null: back to the default). */
export interface ListInput {
  name?: string;
  ticketTypeIds?: string[] | null;
  zones?: string[] | null;
  allowReentry?: boolean | null;
  allowMultipleEntries?: boolean;
  exitAllAt?: string | null;
  rules?: ListRules;
}

export type ListOpMsg =
  | { type: 'list-create'; input: ListInput & { name: string }; by: string | null }
  | { type: 'list-update'; listId: string; input: ListInput; version?: number }
  | { type: 'list-delete'; listId: string };

export interface WalkInResult extends IssueResult {
  checkins?: ScanReply[];
}

export type IssueSource = 'create' | 'purchase' | 'comp' | 'fulfill' | 'walk-in';

export interface IssueItem {
  ticketTypeId: string;
  quantity: number;
  holderEmail?: string;
  holderName?: string;
  holderPhone?: string;
  customerId?: string;
  /** A chosen static code (single-ticket create only); generated when absent. */
  number?: string;
}

export interface IssueMsg {
  type: 'issue';
  source: IssueSource;
  items: IssueItem[];
  by: string | null;
  note?: string;
  /** Purchases: the buyer and the payment already taken. */
  order?: {
    buyer: { email: string; name?: string };
    customerId?: string;
    /** Minor units (stored in major units, see ./money.ts). */
    amount: number;
    currency: string;
    /** As recorded and answered: its `amount` in major units. */
    payment: Payment | null;
  };
  /** Fulfilment of an order paid elsewhere: remembered so a second fulfil returns the same tickets. */
  fulfillOrderId?: string;
  idempotency?: { key: string; print: string };
  /**
   * Like `idempotency`, for results too large to store whole (a comp of 25,000 tickets): issue()
   * records the result as a reference (`IssueReplay`) in the same batch, and each ticket carries
   * `issueId` and `issueSeq`, from which a retry rebuilds the answer (replayIssue).
   */
  replay?: { key: string; print: string };
  /** Walk-ins: check the new tickets in at once. */
  checkIn?: { zone?: string; checkpoint?: string; device?: string };
}

export interface IssueResult {
  tickets: StoredRecord[];
  order?: StoredRecord;
  payment?: Payment | null;
}

export type TicketOpMsg =
  | { type: 'transfer'; ticketId: string; holderEmail: string; holderName?: string; by: string | null }
  | { type: 'refund'; ticketId: string; refund: Record<string, unknown> | null; reason?: string; by: string | null }
  | { type: 'cancel'; ticketId: string; reason?: string; by: string | null }
  | { type: 'activate'; ticketId: string; credentialCode?: string; by: string | null }
  | { type: 'secret'; ticketId: string }
  | { type: 'badge-printed'; ticketId: string; printer?: string; by: string | null }
  | { type: 'perk-claim'; ticketId: string; perkId: string; note?: string; by: string | null };

/** The event's door keys (door-keys.ts): a ticket's codes signed now, the public keys, a rotation. */
export type DoorKeyMsg = { type: 'qr'; ticketId: string } | { type: 'door-keys' } | { type: 'door-keys-rotate' };

export const UNMATCHED_SCANS = 'scan-unmatched';

/** A scan whose code matched no ticket, logged as it was made. */
export type UnmatchedScanMsg = ScanEntry;
