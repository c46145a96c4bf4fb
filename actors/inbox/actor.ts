// Inbox conversations: one per contact plus channel (datatype `inbox_conversation`, id derived
// from the pair), each holding its messages (datatype `comm_message`, indexed by conversation).
// One actor per conversation applies inbound messages, read flags, status, assignment and
// outbound sends one at a time, so unread counts are exact.
//
// An outbound message is wrapped into a `comm_message` record and handed to the outbox in the
// same batch: either both exist or neither. An inbound SMS is published on the bus as
// `sms.received.<tenant>` once committed (the chat module relays it to staff sockets).
import type { ActorContext, ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { appError } from '../../core/errors.js';
import { newRecord, nextVersion, type Data, type StoredRecord } from '../../core/store/record.js';
import { stableId } from '../../core/stable-id.js';
import type { Channel } from './contact.js';
import { INBOX_ACTOR, type InboxMsg, type InboxReply } from './messages.js';

export const INBOX_CONVERSATION = 'inbox_conversation';
export const COMM_MESSAGE = 'comm_message';

type State = { conversation: StoredRecord | undefined };

const PREVIEW = 140;

export function messageIdFor(channel: Channel, externalId: string): string {
  return stableId('comm', channel, externalId);
}

function newConversation(ctx: ActorContext, channel: Channel, contact: string, now: number): StoredRecord {
  return newRecord(
    ctx.tenant,
    INBOX_CONVERSATION,
    {
      channel,
      contact,
      contactName: null,
      status: 'open',
      assignedTo: null,
      unread: 0,
      messageCount: 0,
      lastMessageAt: null,
      lastMessagePreview: null,
      lastDirection: null,
      address: null,
    },
    { sk: ctx.key, state: 'open', now },
  );
}

function withMessage(conv: StoredRecord, msg: StoredRecord, now: number, extra: Data = {}): StoredRecord {
  const d = msg.data as { at: string; body: string; direction: string };
  const later = !conv.data.lastMessageAt || d.at >= String(conv.data.lastMessageAt);
  return nextVersion(
    conv,
    {
      data: {
        ...conv.data,
        messageCount: Number(conv.data.messageCount ?? 0) + 1,
        ...(later
          ? { lastMessageAt: d.at, lastMessagePreview: d.body.slice(0, PREVIEW), lastDirection: d.direction }
          : {}),
        ...extra,
      },
    },
    now,
  );
}

/** Sets read flags on inbound messages and answers the number still unread. */
function markRead(ctx: ActorContext, conversationId: string, read: boolean, ids: string[] | undefined, now: number): number {
  const inbound = ctx.store
    .scan(ctx.tenant, COMM_MESSAGE, { 'data.conversationId': conversationId })
    .filter((m) => m.data.direction === 'inbound');
  let targets: StoredRecord[];
  if (ids) {
    const wanted = new Set(ids);
    targets = inbound.filter((m) => wanted.has(m.sk));
    const found = new Set(targets.map((m) => m.sk));
    const missing = ids.filter((id) => !found.has(id));
    if (missing.length) throw appError('ERR_NOT_FOUND', `inbound message ${missing.join(', ')} of this conversation`);
  } else if (read) {
    targets = inbound;
  } else {
    // "Mark as unread" with no ids flags the newest inbound message.
    targets = inbound.sort((a, b) => (String(a.data.at) < String(b.data.at) ? 1 : -1)).slice(0, 1);
  }
  const changed = new Set<string>();
  for (const m of targets) {
    if (Boolean(m.data.read) === read) continue;
    ctx.batch.putRecord(nextVersion(m, { data: { ...m.data, read } }, now), m.version);
    changed.add(m.sk);
  }
  return inbound.filter((m) => (changed.has(m.sk) ? !read : !m.data.read)).length;
}

export function inboxActor(): ActorKind<State, InboxMsg, InboxReply> {
  return {
    kind: INBOX_ACTOR,
    // Messages are read from the store (unread counts, mark-read, duplicate webhooks): each
    // message sees the ones written before it.
    readsOwnWrites: true,
    activate(ctx: ActivationContext): State {
      return { conversation: ctx.store.getRecord(ctx.tenant, INBOX_CONVERSATION, ctx.key) };
    },
    async receive(state, msg, ctx) {
      const now = ctx.clock.now();
      if (msg.type === 'receive') {
        const m = msg.message;
        const sk = m.externalId ? messageIdFor(m.channel, m.externalId) : undefined;
        if (sk) {
          const seen = ctx.store.getRecord(ctx.tenant, COMM_MESSAGE, sk);
          if (seen) {
            return { conversation: state.conversation ?? newConversation(ctx, m.channel, m.contact, now), message: seen, duplicate: true };
          }
        }
        const conv = state.conversation ?? newConversation(ctx, m.channel, m.contact, now);
        const message = newRecord(
          ctx.tenant,
          COMM_MESSAGE,
          {
            conversationId: ctx.key,
            channel: m.channel,
            direction: 'inbound',
            contact: m.contact,
            address: m.address ?? null,
            from: m.contact,
            to: m.address ?? null,
            body: m.body,
            ...(m.subject ? { subject: m.subject } : {}),
            externalId: m.externalId ?? null,
            status: 'received',
            read: false,
            at: new Date(m.at ? Date.parse(m.at) : now).toISOString(),
            ...(m.meta ? { meta: m.meta } : {}),
          },
          { sk, state: 'received', now },
        );
        ctx.batch.putRecord(message, 0);
        const next = withMessage(conv, message, now, {
          unread: Number(conv.data.unread ?? 0) + 1,
          // A new message from the contact reopens a closed conversation.
          status: conv.data.status === 'closed' ? 'open' : conv.data.status,
          ...(m.contactName ? { contactName: m.contactName } : {}),
          ...(m.address ? { address: m.address } : {}),
        });
        next.state = String(next.data.status);
        if (!state.conversation) next.version = 1;
        ctx.batch.putRecord(next, state.conversation ? conv.version : 0);
        state.conversation = next;
        if (m.channel === 'sms') ctx.publish(`sms.received.${ctx.tenant}`, message);
        return { conversation: next, message };
      }

      // update
      let conv = state.conversation;
      const created = !conv;
      if (!conv) {
        if (!msg.send || !msg.channel || !msg.contact) throw appError('ERR_NOT_FOUND', `conversation ${ctx.key}`);
        conv = newConversation(ctx, msg.channel, msg.contact, now);
      }
      const channel = conv.data.channel as Channel;
      const contact = String(conv.data.contact);
      const data: Data = { ...conv.data };
      if (msg.status) data.status = msg.status;
      if (msg.assignedTo !== undefined) data.assignedTo = msg.assignedTo === null ? null : msg.assignedTo.toLowerCase();
      if (msg.read !== undefined && !created) data.unread = markRead(ctx, ctx.key, msg.read, msg.messageIds, now);
      let message: StoredRecord | undefined;
      if (msg.send) {
        if (channel !== 'email' && channel !== 'sms') {
          throw appError('ERR_BAD_REQUEST', `the ${channel} channel has no outbox provider: send=true works for email and sms conversations`);
        }
        const from = msg.send.from ?? (conv.data.address as string | null) ?? undefined;
        message = newRecord(
          ctx.tenant,
          COMM_MESSAGE,
          {
            conversationId: ctx.key,
            channel,
            direction: 'outbound',
            contact,
            address: from ?? null,
            from: from ?? null,
            to: contact,
            body: msg.send.body,
            ...(msg.send.subject ? { subject: msg.send.subject } : {}),
            status: 'queued',
            read: true,
            sentBy: msg.by.email ?? msg.by.id,
            at: new Date(now).toISOString(),
          },
          { state: 'queued', now },
        );
        const sent = await ctx.services.outbox.send(
          ctx.tenant,
          {
            channel,
            to: contact,
            body: msg.send.body,
            ...(channel === 'email' ? { subject: msg.send.subject ?? 'Message' } : {}),
            kind: 'inbox',
            payload: { conversationId: ctx.key, messageId: message.sk, ...(from ? { from } : {}) },
          },
          ctx.batch,
        );
        message.data.delivery = { outboxId: sent.id, provider: sent.provider, sentAt: sent.sentAt };
        ctx.batch.putRecord(message, 0);
      }
      let next = message ? withMessage({ ...conv, data }, message, now) : nextVersion(conv, { data }, now);
      if (created) next = { ...next, version: 1 };
      next.state = String(next.data.status);
      ctx.batch.putRecord(next, created ? 0 : conv.version);
      state.conversation = next;
      return { conversation: next, message };
    },
  };
}
