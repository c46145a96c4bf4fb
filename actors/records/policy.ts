// What the generic record store may and may not touch (spec: Resources → "The record store refuses
// partial updates on user, customer, apikey, user_security and two_factor_backup. It also refuses
// deletes of user and customer"; Authentication 6: sensitive account data changes only through the
// dedicated account and security endpoints, never through the record store).
import { appError } from '../../core/errors.js';
import type { StoredRecord } from '../../core/store/record.js';

/**
 * Account datatypes: the record store never creates, updates or partially updates them. Access
 * cards are sign-in credentials (a card names the user it signs in as), so they change only
 * through /profile/passcode/card/* too, or anyone with a staff token could mint a card for an
 * admin's employee id.
 */
export const SENSITIVE_DATATYPES: ReadonlySet<string> = new Set([
  'user',
  'customer',
  'apikey',
  'user_security',
  'two_factor_backup',
  'passcode_card',
]);

/**
 * Never readable through the record store: credentials, second factors and API keys, and the
 * local outbox (its messages carry one-time sign-in and 2FA codes; ours, not in the spec's list).
 */
export const UNREADABLE_DATATYPES: ReadonlySet<string> = new Set([
  'apikey',
  'user_security',
  'two_factor_backup',
  'outbox_message',
  // A card's uid is what a reader presents to sign in: /profile/passcode/cards shows them to
  // their owners and admins only.
  'passcode_card',
]);

/** Readable, but their records are stripped of anything credential-like first. */
export const STRIPPED_DATATYPES: ReadonlySet<string> = new Set(['user', 'customer']);

/**
 * Datatypes whose records change how people sign in, written through the record store by role
 * Admin only, as the settings routes that govern sign-in are (`/profile/org/security-settings`):
 * the `setting` document `base-setting` turns PIN and card sign-in on for the whole organisation
 * (spec: Resources, `passcodeLoginSettings`). Reads are unchanged.
 */
export const ADMIN_WRITTEN_DATATYPES: ReadonlySet<string> = new Set(['setting']);
const ADMIN = 'Admin';

export type WriteKind = 'create' | 'update' | 'update-partial' | 'delete';

/**
 * Throws 403 when the record store must not perform `kind` on `datatype` for a writer with
 * `roles` (the verified principal's).
 */
export function assertWritable(datatype: string, kind: WriteKind, roles: readonly string[]): void {
  if (datatype === 'outbox_message') {
    throw appError('ERR_FORBIDDEN', 'outbox messages are written by the service only');
  }
  if (ADMIN_WRITTEN_DATATYPES.has(datatype) && !roles.includes(ADMIN)) {
    throw appError('ERR_FORBIDDEN', `${datatype} records change how people sign in: writing them through the record store needs role ${ADMIN}`);
  }
  if (!SENSITIVE_DATATYPES.has(datatype)) return;
  // Spec: deletes of user and customer are refused; the others are account secrets and
  // credentials, which Authentication 6 keeps out of the record store for every kind of change.
  const what = kind === 'update-partial' ? 'partial updates' : kind === 'delete' ? 'deletes' : `${kind}s`;
  throw appError(
    'ERR_FORBIDDEN',
    `the record store refuses ${what} of ${datatype} records: account data changes only through the account and security endpoints`,
  );
}

/** Throws 403 when records of `datatype` must not be read through the record store. */
export function assertReadable(datatype: string): void {
  if (UNREADABLE_DATATYPES.has(datatype)) {
    throw appError('ERR_FORBIDDEN', `${datatype} records cannot be read through the record store`);
  }
}

/**
 * Field names treated as credentials on user and customer records. The auth area keeps such
 * values out of these records; this is the defence in depth for whatever slips in.
 */
const CREDENTIAL = /pass(word|wd|code|phrase)?$|^pass|secret|salt|hash|^pins?$|^pin[_-]?(code|hash)?$|otp|mfa|2fa|two[_-]?factor|backup[_-]?codes?|recovery[_-]?codes?|token|apikey|api[_-]key|private[_-]?key/i;

export function isCredentialName(name: string): boolean {
  return CREDENTIAL.test(name);
}

function stripValue(v: unknown, depth: number): unknown {
  if (depth > 32 || v === null || typeof v !== 'object') return v;
  if (Array.isArray(v)) return v.map((x) => stripValue(x, depth + 1));
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) {
    if (isCredentialName(k)) continue;
    out[k] = stripValue((v as Record<string, unknown>)[k], depth + 1);
  }
  return out;
}

/** The record as a reader may see it: user and customer records lose credential-like fields. */
export function forReader(rec: StoredRecord): StoredRecord {
  if (!STRIPPED_DATATYPES.has(rec.datatype)) return rec;
  const out: StoredRecord = { ...rec, data: stripValue(rec.data, 0) as StoredRecord['data'] };
  for (const k of Object.keys(out)) {
    if (k === 'data') continue;
    if (isCredentialName(k)) delete out[k];
    else out[k] = stripValue(out[k], 0);
  }
  return out;
}

/** Does any field path or `$field` reference in `v` name a credential-like field? */
export function mentionsCredential(v: unknown, depth = 0): boolean {
  if (depth > 64) return true;
  if (typeof v === 'string') return v.startsWith('$') && v.slice(1).split('.').some(isCredentialName);
  if (v === null || typeof v !== 'object') return false;
  if (Array.isArray(v)) return v.some((x) => mentionsCredential(x, depth + 1));
  for (const [k, x] of Object.entries(v)) {
    if (!k.startsWith('$') && k.split('.').some(isCredentialName)) return true;
    if (mentionsCredential(x, depth + 1)) return true;
  }
  return false;
}

/**
 * Refuses a filter, sort or field that names a credential of a stripped datatype: matching on a
 * field a reader cannot see would turn `total` into an oracle for its value.
 */
export function assertNoCredentialReference(datatype: string, ...parts: unknown[]): void {
  if (!STRIPPED_DATATYPES.has(datatype)) return;
  if (parts.some((p) => mentionsCredential(p))) {
    throw appError('ERR_FORBIDDEN', `credential fields of ${datatype} records cannot be queried`);
  }
}
