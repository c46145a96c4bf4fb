// What events and tickets look like in the store, and the small pure helpers both the events actor
// and the scanner actor use. Business fields live under `data` (spec: Record envelope).
//
//   event             one event: name, slug, zones, re-entry, dynamic-code window, status
//   ticket_type       a ticket type of one event (title, colour, price, quantity, perks)
//   ticket            one ticket (spec: Fields known per kind → ticket). Its id is derived from
//                     its number (see ticketIdFor): the number is the key, so a scanned static
//                     code is one key read, and creating the record claims the number
//   ticket_code       claim of a credential code, sk `C:<code>`: a conditional create makes it
//                     unique per tenant, and a key read resolves it
//   event_order       one purchase (buyer, amount, payment, ticket ids)
//   event_session, event_participant, event_media   records of an event
//
// Key-value namespaces: `ticket-secret` (ticket id → codeSecret; kept out of the record so no
// route can ever return it), `event-sold` (event id → issued counts per ticket type),
// `ticket-fulfilled` (order id → the tickets a fulfil issued).
import { hash, randomBytes } from 'node:crypto';
import { newRecord, nextVersion, type StoredRecord } from '../../core/store/record.js';
import type { Store } from '../../core/store/store.js';
import { isId } from '../../core/ids.js';

export const EVENT = 'event';
export const TICKET_TYPE = 'ticket_type';
export const TICKET = 'ticket';
export const TICKET_CODE = 'ticket_code';
export const EVENT_ORDER = 'event_order';
export const EVENT_SESSION = 'event_session';
export const EVENT_PARTICIPANT = 'event_participant';
export const EVENT_MEDIA = 'event_media';

export const SECRET_NS = 'ticket-secret';
export const SOLD_NS = 'event-sold';
export const FULFILLED_NS = 'ticket-fulfilled';

/** Scans sent without a zone are counted under this zone id (spec: Derived shapes → Occupancy). */
export const UNKNOWN_ZONE = 'unknown';

export const DEFAULT_CODE_WINDOW_SECONDS = 30;
export const DEFAULT_CODE_SKEW_SECONDS = 60;

export type TicketStatus = 'valid' | 'checked_in' | 'refunded' | 'cancelled';

/** Statuses that hold a seat: counted as sold, scannable, transferable. */
export function isLive(status: unknown): boolean {
  return status === 'valid' || status === 'checked_in';
}

export interface Zone {
  id: string;
  name: string;
  /** null: no limit. */
  capacity: number | null;
}

/** The parts of an event the door needs. */
export interface EventConfig {
  id: string;
  slug: string;
  name: string;
  status: string;
  zones: Zone[];
  zoneById: Map<string, Zone>;
  allowReentry: boolean;
  codeWindowMs: number;
  codeSkewMs: number;
  currency: string;
  timezone: string;
}

export function eventConfig(rec: StoredRecord): EventConfig {
  const d = rec.data as Record<string, any>;
  const zones: Zone[] = Array.isArray(d.zones)
    ? d.zones.map((z: any) => ({ id: String(z.id), name: String(z.name ?? z.id), capacity: typeof z.capacity === 'number' ? z.capacity : null }))
    : [];
  return {
    id: rec.sk,
    slug: typeof d.slug === 'string' ? d.slug : '',
    name: typeof d.name === 'string' ? d.name : '',
    status: typeof d.status === 'string' ? d.status : 'draft',
    zones,
    zoneById: new Map(zones.map((z) => [z.id, z])),
    allowReentry: d.allowReentry !== false,
    codeWindowMs: 1000 * (typeof d.codeWindowSeconds === 'number' ? d.codeWindowSeconds : DEFAULT_CODE_WINDOW_SECONDS),
    codeSkewMs: 1000 * (typeof d.codeSkewSeconds === 'number' ? d.codeSkewSeconds : DEFAULT_CODE_SKEW_SECONDS),
    currency: typeof d.currency === 'string' ? d.currency : 'USD',
    timezone: typeof d.timezone === 'string' ? d.timezone : 'UTC',
  };
}

/** True when a ticket's `data.event` (an id or a slug: spec says both occur) names this event. */
export function ticketOfEvent(ticket: StoredRecord, ev: { id: string; slug: string }): boolean {
  const e = ticket.data.event;
  return e === ev.id || (ev.slug !== '' && e === ev.slug);
}

/**
 * Finds an event by id or slug (both forms are used for `data.event` and in paths). Slugs never
 * look like ids (the slug rule forbids 24 hex characters), so the two cannot be confused.
 */
export function findEvent(store: Store, tenant: string, idOrSlug: string): StoredRecord | undefined {
  if (isId(idOrSlug)) return store.getRecord(tenant, EVENT, idOrSlug);
  if (!SLUG.test(idOrSlug)) return undefined;
  return store.find(tenant, EVENT, { 'data.slug': idOrSlug }, { pageSize: 1 }).data[0];
}

/** Lower-case words separated by single dashes; never 24 hex characters (that is an id). */
export const SLUG = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

export function kebab(text: string, max = 60): string {
  const s = text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, max)
    .replace(/-+$/g, '');
  return s || 'item';
}

/** Words that are path segments under /events/ (`/events/tickets/...`): no event may be named so. */
export const RESERVED_SLUGS: ReadonlySet<string> = new Set(['tickets', 'checkin', 'checkout', 'checkin-lists', 'sessions', 'participants']);

/** A slug that is neither an id nor reserved: the kebab-cased name, suffixed when it would be. */
export function slugFrom(text: string): string {
  const s = kebab(text);
  return isId(s) || RESERVED_SLUGS.has(s) ? `${s}-event` : s;
}

// Ticket numbers: 10 characters of an alphabet without 0/O and 1/I, so a number read aloud or
// typed from paper is not mistyped; 50 bits, so a collision (checked anyway) is vanishingly rare.
const NUMBER_ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';

export function newTicketNumber(): string {
  const bytes = randomBytes(10);
  let s = '';
  for (let i = 0; i < 10; i++) s += NUMBER_ALPHABET[bytes[i] & 31];
  return s;
}

/**
 * The id of the ticket whose number is `number` (24 hex characters, like every record id).
 * Numbers are unique per tenant regardless of case, so the id is taken from the upper-cased
 * number: a scan in any case finds the ticket with one key read, and a create with
 * `ifVersion: 0` is the uniqueness check. 96 bits of SHA-256: collisions are not a concern.
 */
export function ticketIdFor(number: string): string {
  // One-shot hash: every door scan computes this, and it is ~3× cheaper than a Hash object.
  return hash('sha256', 'ticket-number\u0000' + number.toUpperCase(), 'hex').slice(0, 24);
}

/** The claim key of a credential code (matched exactly). */
export function credentialClaim(code: string): string {
  return `C:${code}`;
}

/** The claim key of a ticket number (case-blind, like ticketIdFor). */
export function numberClaim(number: string): string {
  return `N:${number.toUpperCase()}`;
}

/**
 * A ticket written through the record store (an import) has an id of its own, not the one its
 * number derives, so the door could not find it by its static code with one key read. Writing it
 * also writes this pointer, `ticket_code` `N:<NUMBER>` → ticket id, which the door reads when the
 * derived id names nothing: still a key read or two, never an index query. Undefined when no
 * pointer is needed or the stored one (`existing`) already points there. Numbers are unique per
 * tenant, so the last ticket written with a number owns it.
 */
export function numberPointer(ticket: StoredRecord, existing: StoredRecord | undefined, now: number): StoredRecord | undefined {
  const n = ticket.data.number;
  if (ticket.datatype !== TICKET || typeof n !== 'string' || n === '' || ticket.sk === ticketIdFor(n)) return undefined;
  if (existing && existing.data.ticketId === ticket.sk) return undefined;
  const data = { ticketId: ticket.sk, kind: 'number', value: n };
  return existing ? nextVersion(existing, { data }, now) : newRecord(ticket.pk, TICKET_CODE, data, { sk: numberClaim(n), state: 'active', now });
}

export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

/** Lower-cased words of a holder name, indexed so the desk can look a ticket up by name. */
export function nameKeys(name: unknown): string[] {
  if (typeof name !== 'string') return [];
  const words = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w.length > 0);
  return [...new Set(words)].slice(0, 10);
}

/** Issued counts of one event, kept by its scanner actor (the single writer of its tickets). */
export interface SoldCounts {
  total: number;
  byType: Record<string, number>;
}
