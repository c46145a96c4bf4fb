// Who a conversation is with. The inbox threads messages by contact plus channel, so the same
// person must produce the same key however the address was typed: emails are lower-cased, phone
// numbers lose their punctuation, and the pair is hashed into the conversation id.
import { appError } from '../../core/errors.js';
import { stableId } from '../../core/stable-id.js';

export const CHANNELS = ['email', 'sms', 'chat', 'social'] as const;
export type Channel = (typeof CHANNELS)[number];

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const PHONE = /^\+?[1-9][0-9]{4,14}$/;

/** A phone number without spaces, dashes, dots or brackets; `00` prefix becomes `+`. */
export function normalizePhone(raw: string): string | undefined {
  let s = raw.trim().replace(/[\s().-]/g, '');
  if (s.startsWith('00')) s = '+' + s.slice(2);
  return PHONE.test(s) ? s : undefined;
}

/** The canonical contact for a channel; throws 400 naming `field` when it does not fit. */
export function normalizeContact(channel: Channel, raw: string, field = 'contact'): string {
  const s = raw.trim();
  switch (channel) {
    case 'email':
      if (!EMAIL.test(s)) throw appError('ERR_VALIDATION', `${field} must be an email address for the email channel`);
      return s.toLowerCase();
    case 'sms': {
      const p = normalizePhone(s);
      if (!p) throw appError('ERR_VALIDATION', `${field} must be a phone number (E.164, e.g. +15551234567) for the sms channel`);
      return p;
    }
    case 'chat':
      if (!s) throw appError('ERR_VALIDATION', `${field} must not be empty`);
      return EMAIL.test(s) ? s.toLowerCase() : s;
    case 'social':
      // `<platform>:<handle or id>`, e.g. `instagram:@venue_fan`.
      if (!/^[a-z0-9_-]+:.+$/i.test(s)) throw appError('ERR_VALIDATION', `${field} must be "<platform>:<handle>" for the social channel`);
      return s.slice(0, s.indexOf(':')).toLowerCase() + s.slice(s.indexOf(':'));
  }
}

export function conversationId(channel: Channel, contact: string): string {
  return stableId('inbox', channel, contact);
}

/** `/crm/inbox/conversations/:parties`: a conversation id, or `<channel>:<contact>`. */
export function parseParties(parties: string): { id: string; channel?: Channel; contact?: string } {
  if (/^[0-9a-f]{24}$/.test(parties)) return { id: parties };
  const i = parties.indexOf(':');
  const channel = parties.slice(0, i) as Channel;
  if (i < 1 || !CHANNELS.includes(channel)) {
    throw appError('ERR_VALIDATION', 'params/parties must be a conversation id or "<channel>:<contact>" with channel email, sms, chat or social');
  }
  const contact = normalizeContact(channel, parties.slice(i + 1), 'params/parties');
  return { id: conversationId(channel, contact), channel, contact };
}
