// What the events actor accepts and answers, and its kind's name and key.
import type { StoredRecord } from '../../core/store/record.js';
import { EVENT_MEDIA, EVENT_PARTICIPANT, EVENT_SESSION } from '../event-records/index.js';

export const EVENTS = 'events';

/** The per-tenant events actor's key. */
export const EVENTS_KEY = '_';

export interface ZoneInput {
  id?: string;
  name: string;
  capacity?: number | null;
}

export interface PerkInput {
  id?: string;
  name: string;
  description?: string;
}

export interface TicketTypeInput {
  id?: string;
  title?: string;
  colour?: string;
  /** Major units of the event currency: a number or a numeric string (see ./money.ts). */
  price?: unknown;
  quantity?: number | null;
  perks?: PerkInput[];
  requiresActivation?: boolean;
  description?: string;
}

export interface EventInput {
  name?: string;
  slug?: string;
  description?: string;
  startDate?: string;
  endDate?: string;
  timezone?: string;
  venue?: string;
  currency?: string;
  capacity?: number | null;
  zones?: ZoneInput[];
  allowReentry?: boolean;
  codeWindowSeconds?: number;
  codeSkewSeconds?: number;
  ticketTypes?: TicketTypeInput[];
}

export type ChildKind = typeof EVENT_SESSION | typeof EVENT_PARTICIPANT | typeof EVENT_MEDIA;

export type EventsMsg =
  | { type: 'create-event'; input: EventInput & { name: string }; by: string | null }
  | { type: 'update-event'; eventId: string; input: EventInput; version?: number }
  | { type: 'publish-event'; eventId: string; by: string | null }
  | { type: 'delete-event'; eventId: string }
  | { type: 'create-child'; datatype: ChildKind; eventId: string; data: Record<string, unknown>; state: string }
  | { type: 'update-child'; datatype: ChildKind; id: string; patch: Record<string, unknown>; version?: number }
  | { type: 'delete-child'; datatype: ChildKind; id: string }
  | { type: 'confirm-participant'; id: string; by: string | null }
  /** Records the share on each media record and queues one email per recipient, in one batch. */
  | { type: 'media-shared'; ids: string[]; recipients: string[]; by: string | null; eventId: string; subject: string; note?: string };

export interface EventWithTypes {
  event: StoredRecord;
  /** Every ticket type of the event as it stands after the change, oldest first. */
  ticketTypes: StoredRecord[];
}
