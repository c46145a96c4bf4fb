// Ticket money in one convention with the rest of the API (spec: sf_order, "Money ... can arrive
// as numbers or as strings"): prices and amounts are sent and answered in major units of the
// event currency, as numbers or numeric strings (25, 25.5, "25.00"). Computation stays in integer
// minor units (core/money.ts), so sums and refunds are exact.
//
// Stored records carry the unit: ticket types, tickets and event orders written since this
// convention hold major units and `moneyUnit: "major"`. Records without the marker were written
// before it and hold integer minor units (cents). They are converted when read (every read of a
// price or amount goes through here) and rewritten in major units the next time the service writes
// them, so nothing has to be migrated at start-up and no reader ever guesses: the marker decides.
// A record written through the record store without the marker is read the old way: a number is
// minor units, a numeric string (which the API never stored) is major units.
import { appError } from '../../core/errors.js';
import { currencyExponent, currencyOf, looseMoney, parseMoney, toMajor } from '../../core/money.js';
import type { StoredRecord } from '../../core/store/record.js';

export const MONEY_UNIT_FIELD = 'moneyUnit';
export const MAJOR = 'major';

/** Largest ticket price in minor units (as before the change: 1,000,000.00 in a 2-decimal currency). */
export const MAX_PRICE_MINOR = 100_000_000;

type Data = Record<string, unknown>;

/** Decimals of the event currency's minor unit (an unusable code reads as USD's 2). */
export function exponentOf(currency: unknown): number {
  return currencyExponent(currencyOf(currency, 'USD'));
}

export function isMajor(data: Data): boolean {
  return data[MONEY_UNIT_FIELD] === MAJOR;
}

/** A stored price or amount (`field` of `data`) in minor units, whichever unit the record holds. */
export function storedMinor(data: Data, field: string, exponent: number): number {
  const v = data[field];
  if (isMajor(data) || typeof v === 'string') return looseMoney(v, exponent, 0);
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? Math.round(v) : 0;
}

/** A price sent by a client, in minor units; a bad one is a 400 naming `field`. */
export function parsePrice(v: unknown, field: string, exponent: number): number {
  const minor = parseMoney(v, field, exponent);
  if (minor > MAX_PRICE_MINOR) throw appError('ERR_VALIDATION', `${field} is too large (at most ${toMajor(MAX_PRICE_MINOR, exponent)})`);
  return minor;
}

/** The money fields of a record to write: major units, marked. */
export function majorFields(values: Record<string, number>, exponent: number): Data {
  const out: Data = { [MONEY_UNIT_FIELD]: MAJOR };
  for (const [k, minor] of Object.entries(values)) out[k] = toMajor(minor, exponent);
  return out;
}

/**
 * A ticket type as answered: a record written before the convention gets its price in major
 * units and the marker (the stored bytes change on its next write).
 */
export function ticketTypeRead(rec: StoredRecord, exponent: number): StoredRecord {
  if (isMajor(rec.data)) return rec;
  return { ...rec, data: { ...rec.data, ...majorFields({ price: storedMinor(rec.data, 'price', exponent) }, exponent) } };
}
