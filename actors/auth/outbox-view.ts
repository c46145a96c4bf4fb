// What of a recorded outbox message each reader may see. A message that carries a way in (a
// sign-in or verification code, a magic or reset link, an invitation) is readable by the person it
// was sent to and by nobody else: an Admin who could read another account's code could sign in as
// that account (issue 17, the founder takeover). Admins see such messages as envelopes only.
// Decided by kind (every kind this area sends is listed), and by shape for anything else: a
// message with a `code` is treated as secret whatever its kind says. The recipient is the account
// the code was sent for (payload.account), not whoever claims the address: a customer may sign up
// with any email, the founder's included.
import type { OutboxEntry } from '../../core/outbox.js';

/** The kinds this area sends. */
export const CODE_KINDS = { magic: 'magic-code', twoFactor: 'two-factor', verifyEmail: 'verify-email', passwordReset: 'password-reset' } as const;
export type CodeKind = (typeof CODE_KINDS)[keyof typeof CODE_KINDS];

/** Kinds whose body is a credential: ours, and the names other senders may use for the same thing. */
const SECRET_KINDS: ReadonlySet<string> = new Set([
  ...Object.values(CODE_KINDS),
  'magic-link',
  '2fa',
  'otp',
  'reset',
  'password-reset',
  'passcode',
  'new-device',
  'verification',
  'invitation',
  'invite',
]);
const SECRET_KIND = /code|link|2fa|two-factor|otp|reset|pass(word|code)|new-device|verif|invit|token|secret/i;

export function carriesCredential(m: Pick<OutboxEntry, 'kind' | 'code'>): boolean {
  if (m.code !== undefined) return true;
  const kind = m.kind ?? '';
  return SECRET_KINDS.has(kind) || SECRET_KIND.test(kind);
}

export interface OutboxView {
  id: string;
  channel: string;
  to: string;
  subject?: string;
  kind?: string;
  provider: string;
  sentAt: string;
  body?: string;
  code?: string;
  /** True when the body and code were left out because they belong to the recipient alone. */
  withheld?: boolean;
}

function envelope(m: OutboxEntry): OutboxView {
  const v: OutboxView = { id: m.id, channel: m.channel, to: m.to, provider: m.provider, sentAt: m.sentAt };
  if (m.subject !== undefined) v.subject = m.subject;
  if (m.kind !== undefined) v.kind = m.kind;
  return v;
}

/** An Admin's view: the envelope, plus the body of messages that carry no credential. */
export function adminView(m: OutboxEntry): OutboxView {
  const v = envelope(m);
  if (carriesCredential(m)) v.withheld = true;
  else if (m.body !== undefined) v.body = m.body;
  return v;
}

/** How a code message names the account it was sent for. */
export function accountOf(kind: string, sub: string): string {
  return `${kind}:${sub}`;
}

/**
 * The view of `account` on a message addressed to one of its addresses: in full when it carries no
 * credential or was sent for this account, else the envelope.
 */
export function recipientView(m: OutboxEntry, account: string): OutboxView {
  return !carriesCredential(m) || m.payload?.account === account ? ownerView(m) : adminView(m);
}

/** Everything that was recorded (the smtp provider records envelopes only). */
export function ownerView(m: OutboxEntry): OutboxView {
  const v = envelope(m);
  if (m.body !== undefined) v.body = m.body;
  if (m.code !== undefined) v.code = m.code;
  return v;
}
