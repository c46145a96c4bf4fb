// The shapes the kit reads from the server's public door routes (GET /events/:id/door-keys and
// GET /events/:id/door-feed) and the shapes it answers a scanner app with. The kit is embedded in
// apps outside the repository: it imports nothing of the server, so these are declared here.

export type DenialReason =
  | 'invalid_code'
  | 'bad_signature'
  | 'expired_code'
  | 'wrong_event'
  | 'already_checked_in'
  | 'refunded'
  | 'cancelled'
  | 'not_active'
  | 'product'
  | 'invalid_time'
  | 'max_entries';

export interface DoorKey {
  kid: string;
  alg: 'Ed25519';
  /** base64url of the raw 32-byte public key. */
  publicKey: string;
  createdAt: string;
  retiredAt: string | null;
}

export interface DoorKeys {
  eventId: string;
  activeKid: string;
  keys: DoorKey[];
}

export interface FeedEvent {
  id: string;
  timezone: string;
  allowReentry: boolean;
  codeWindowSeconds: number;
  codeSkewSeconds: number;
  zones: Array<{ id: string; name: string; capacity: number | null }>;
}

export interface FeedTicket {
  id: string;
  /** The static code as issued. */
  number: string;
  /** The ticket's code generation: signed codes carry it in their message. */
  codeTag: string | null;
  ticketTypeId: string;
  holderName: string | null;
  status: string;
  requiresActivation: boolean;
  activated: boolean;
  /** Ever entered at the event. */
  checkedIn: boolean;
  /** The lists it entered on, as the server counts them. */
  lists: Record<string, { entries: number; inside: boolean }>;
}

export interface FeedList {
  id: string;
  name: string;
  ticketTypeIds: string[] | null;
  zones: string[] | null;
  allowReentry: boolean | null;
  allowMultipleEntries: boolean;
  rules: {
    validFrom: string | null;
    validUntil: string | null;
    maxEntries: number | null;
    maxEntriesPerDay: number | null;
    /** ISO weekdays, 1 = Monday … 7 = Sunday; null: every day. */
    weekdays: number[] | null;
  };
}

export interface FeedRevoked {
  id: string;
  reason: 'refunded' | 'cancelled' | 'deleted' | 'transferred';
  at: string;
}

export interface FeedPage {
  event: FeedEvent;
  tickets: FeedTicket[];
  lists: FeedList[];
  revoked: FeedRevoked[];
  cursor: string;
  complete: boolean;
}

/** What the kit decided about one scan, as the app shows it and the upload reports it. */
export interface Decision {
  admitted: boolean;
  reason?: DenialReason;
  /** The ticket the code named (absent for `invalid_code`). */
  ticket?: FeedTicket;
  eventId: string;
  listId: string | null;
  /** The scan's idempotency key: the upload sends it, a retried upload sends it again. */
  nonce: string;
  scannedAt: string;
}
