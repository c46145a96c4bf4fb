// What the CRM actors (lead, support ticket, customer activity, social sync) accept and answer,
// and their kinds' names.
import type { Data, StoredRecord } from '../../core/store/record.js';

export const LEAD_ACTOR = 'crm-lead';

export type LeadMsg =
  | { type: 'create'; fields: Data }
  | { type: 'update'; version: number; changes: Data }
  | { type: 'delete'; version?: number };

export const SUPPORT_TICKET_ACTOR = 'support-ticket';

export interface Author {
  type: 'staff' | 'requester';
  email?: string;
  name?: string;
  id?: string;
}

export interface TicketFields {
  subject: string;
  requester: { email: string; name?: string };
  status?: string;
  priority?: string;
  assignee?: string | null;
  channel?: string;
  tags?: string[];
  [field: string]: unknown;
}

export type TicketMsg =
  | { type: 'create'; fields: TicketFields; description?: string; author: Author }
  | { type: 'update'; version: number; changes: Data; author: Author }
  | { type: 'reply'; body: string; subject?: string; status?: string; author: Author }
  | { type: 'comment'; body: string; author: Author };

export interface TicketReply {
  ticket: StoredRecord;
  message?: StoredRecord;
}

export const CUSTOMER_ACTIVITY_ACTOR = 'customer-activity';

export const ACTIVITY_TYPES = ['screen_view', 'action', 'search', 'event_action'] as const;

export type ActivityType = (typeof ACTIVITY_TYPES)[number];

export interface ActivityInput {
  email: string;
  type: ActivityType;
  name: string;
  importance?: number;
  properties?: Record<string, unknown>;
  /** ISO 8601; defaults to now. */
  at?: string;
}

export type ActivityMsg = { type: 'record'; activity: ActivityInput } | { type: 'erase' };

export const SOCIAL_ACTOR = 'social-sync';

export const SOCIAL_KINDS = ['comment', 'message', 'engagement'] as const;

export type SocialKind = (typeof SOCIAL_KINDS)[number];

export interface SocialItem {
  kind: SocialKind;
  platform: string;
  externalId: string;
  postId?: string;
  author?: { id?: string; name?: string; handle?: string };
  text?: string;
  url?: string;
  direction?: 'inbound' | 'outbound';
  metrics?: Record<string, number>;
  at?: string;
  [field: string]: unknown;
}

/** One ingest: the items a connector pushed in. */
export interface SocialSyncMsg {
  items: SocialItem[];
}

export interface IngestResult {
  created: StoredRecord[];
  updated: StoredRecord[];
}
