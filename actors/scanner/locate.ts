// Finding the ticket a scanned code names, in the spec's order (Endpoints → Events, payload rule
// 1): a dynamic QR payload, then a static ticket code matched as typed, upper-cased and
// lower-cased, then a credential code. A ticket's id is derived from its number (a ticket imported
// through the record store has a number pointer instead) and credential codes are claimed in
// `ticket_code` records, so each lookup is a key read or two, a miss included. (A query through
// the `data.number` index costs ~50 times more on a miss, so the door never falls back to it; only
// the desk's lookup does, see `byNumberIndex`, and finds tickets written straight into the store.)
import type { StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { credentialClaim, numberClaim, TICKET, TICKET_CODE, ticketIdFor } from '../event-records/index.js';
import { parseDynamicCode, parseStaticCode } from './ticket-code.js';

/** Reads one record: the store, or the scanner's overlay of writes still in flight. */
export type RecordReader = (datatype: string, sk: string) => StoredRecord | undefined;

function variants(code: string): string[] {
  const upper = code.toUpperCase();
  const lower = code.toLowerCase();
  const out = [code];
  if (upper !== code) out.push(upper);
  if (lower !== code && lower !== upper) out.push(lower);
  return out;
}

/** The ticket whose number equals the code as typed, upper-cased or lower-cased. */
export function byStaticCode(read: RecordReader, code: string): StoredRecord | undefined {
  // A ticket imported through the record store has an id of its own: its number pointer names it.
  const t = read(TICKET, ticketIdFor(code)) ?? byPointer(read, numberClaim(code));
  if (!t) return undefined;
  const n = t.data.number;
  // The id is case-blind (numbers are unique regardless of case); the match the spec asks for is
  // as typed, upper-cased or lower-cased.
  return n === code || n === code.toUpperCase() || n === code.toLowerCase() ? t : undefined;
}

function byPointer(read: RecordReader, claimKey: string): StoredRecord | undefined {
  const claim = read(TICKET_CODE, claimKey);
  return claim && typeof claim.data.ticketId === 'string' ? read(TICKET, claim.data.ticketId) : undefined;
}

export function byCredentialCode(read: RecordReader, code: string): StoredRecord | undefined {
  return byPointer(read, credentialClaim(code));
}

/**
 * Tickets whose number is `code` (as typed, upper- or lower-cased) through the `data.number`
 * index: also finds tickets written straight into the record store, without a claim. For the
 * desk's lookup, not the door.
 */
export function byNumberIndex(store: Store, tenant: string, code: string): StoredRecord[] {
  return store.scan(tenant, TICKET, { 'data.number': { $in: variants(code) } });
}

/** A ticket the edge found for a code; `dynamic`: through a signed code (dynamic or signed static), whose signature is not checked yet. */
export interface Located {
  ticketId: string;
  dynamic: boolean;
}

/**
 * Which ticket a code points at, without judging it (no signature or window check): the edge uses
 * it to route a scan that names no event to that ticket's event, and hands the ticket on to the
 * scanner so the lookup is not done twice.
 */
export function locateTicket(store: Store, tenant: string, code: string): { ticket: StoredRecord; located: Located } | undefined {
  const read: RecordReader = (datatype, sk) => store.getRecord(tenant, datatype, sk);
  const signed = parseDynamicCode(code) ?? parseStaticCode(code);
  if (signed) {
    const t = read(TICKET, signed.ticketId);
    if (t) return { ticket: t, located: { ticketId: t.sk, dynamic: true } };
  }
  const t = byStaticCode(read, code) ?? byCredentialCode(read, code);
  return t && { ticket: t, located: { ticketId: t.sk, dynamic: false } };
}
