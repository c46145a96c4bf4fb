// Support tickets (datatype `support_ticket`, not the event `ticket`). One actor per ticket, so
// replies, comments and field changes are applied one at a time and the counters on the ticket
// never lose an increment.
//
// A ticket's thread holds two kinds of entries (datatype `support_ticket_message`):
// - `message`: public. The requester's own messages and staff replies. A staff reply is emailed
//   to the requester through the outbox, in the same batch as the message record.
// - `comment`: internal. Staff notes; never sent to the requester and never listed with the
//   messages.
import type { ActorContext, ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { AppError, appError } from '../../core/errors.js';
import { newRecord, nextVersion, type Data, type StoredRecord } from '../../core/store/record.js';
import { queueEvent } from '../../core/webhooks/catalogue.js';
import { type Author, SUPPORT_TICKET_ACTOR, type TicketMsg, type TicketReply } from './messages.js';

export const SUPPORT_TICKET = 'support_ticket';
export const SUPPORT_TICKET_MESSAGE = 'support_ticket_message';

export const TICKET_STATUSES = ['open', 'pending', 'on_hold', 'solved', 'closed'] as const;
export const TICKET_PRIORITIES = ['low', 'normal', 'high', 'urgent'] as const;

type State = { ticket: StoredRecord | undefined };

function requireTicket(state: State, id: string): StoredRecord {
  if (!state.ticket) throw appError('ERR_NOT_FOUND', `support ticket ${id}`);
  return state.ticket;
}

function threadEntry(
  ctx: ActorContext,
  ticketId: string,
  kind: 'message' | 'comment',
  body: string,
  author: Author,
  extra: Data = {},
): StoredRecord {
  const now = ctx.clock.now();
  const rec = newRecord(
    ctx.tenant,
    SUPPORT_TICKET_MESSAGE,
    {
      ticketId,
      kind,
      visibility: kind === 'message' ? 'public' : 'internal',
      author: Object.fromEntries(Object.entries(author).filter(([, v]) => v !== undefined)),
      body,
      at: new Date(now).toISOString(),
      ...extra,
    },
    { now },
  );
  return rec;
}

export function supportTicketActor(): ActorKind<State, TicketMsg, TicketReply> {
  return {
    kind: SUPPORT_TICKET_ACTOR,
    activate(ctx: ActivationContext): State {
      return { ticket: ctx.store.getRecord(ctx.tenant, SUPPORT_TICKET, ctx.key) };
    },
    async receive(state, msg, ctx) {
      const now = ctx.clock.now();
      const iso = new Date(now).toISOString();
      switch (msg.type) {
        case 'create': {
          if (state.ticket) throw appError('ERR_CONFLICT', `support ticket ${ctx.key} already exists`);
          const f = msg.fields;
          const data: Data = {
            ...f,
            requester: { ...f.requester, email: f.requester.email.trim().toLowerCase() },
            status: f.status ?? 'open',
            priority: f.priority ?? 'normal',
            assignee: f.assignee ? f.assignee.toLowerCase() : null,
            tags: f.tags ?? [],
            messageCount: 0,
            commentCount: 0,
            lastMessageAt: null,
          };
          let message: StoredRecord | undefined;
          if (msg.description) {
            // The description is the requester's first message.
            message = threadEntry(ctx, ctx.key, 'message', msg.description, {
              type: 'requester',
              email: (data.requester as { email: string }).email,
              name: f.requester.name,
            });
            ctx.batch.putRecord(message, 0);
            data.messageCount = 1;
            data.lastMessageAt = iso;
          }
          const ticket = newRecord(ctx.tenant, SUPPORT_TICKET, data, { sk: ctx.key, state: 'open', now });
          ctx.batch.putRecord(ticket, 0);
          queueEvent(ctx.services.webhooks, ctx.batch, ctx.tenant, 'support_ticket.created', ticket, now);
          state.ticket = ticket;
          return { ticket, message };
        }
        case 'update': {
          const cur = requireTicket(state, ctx.key);
          if (cur.version !== msg.version) {
            throw new AppError('ERR_VERSION_CONFLICT', [`support ticket ${ctx.key}`, msg.version, cur.version]);
          }
          const data: Data = { ...cur.data };
          for (const [k, v] of Object.entries(msg.changes)) {
            if (v === null && k !== 'assignee') delete data[k];
            else data[k] = k === 'assignee' && typeof v === 'string' ? v.toLowerCase() : v;
          }
          if (typeof data.subject !== 'string' || !data.subject) {
            throw appError('ERR_VALIDATION', 'body/data/subject cannot be removed from a support ticket');
          }
          const next = nextVersion(cur, { data, state: String(data.status ?? cur.state) }, now);
          ctx.batch.putRecord(next, cur.version);
          state.ticket = next;
          return { ticket: next };
        }
        case 'reply': {
          const cur = requireTicket(state, ctx.key);
          const requester = cur.data.requester as { email: string; name?: string };
          const subject = msg.subject ?? `Re: ${String(cur.data.subject)}`;
          const message = threadEntry(ctx, ctx.key, 'message', msg.body, msg.author, { subject });
          const sent = await ctx.services.outbox.send(
            ctx.tenant,
            {
              channel: 'email',
              to: requester.email,
              subject,
              body: msg.body,
              kind: 'support-ticket-reply',
              payload: { ticketId: ctx.key, messageId: message.sk },
            },
            ctx.batch,
          );
          message.data.delivery = { channel: 'email', to: requester.email, outboxId: sent.id, provider: sent.provider };
          ctx.batch.putRecord(message, 0);
          const data: Data = {
            ...cur.data,
            messageCount: Number(cur.data.messageCount ?? 0) + 1,
            lastMessageAt: message.data.at,
            lastReplyAt: message.data.at,
          };
          if (msg.status) data.status = msg.status;
          const next = nextVersion(cur, { data, state: String(data.status) }, now);
          ctx.batch.putRecord(next, cur.version);
          state.ticket = next;
          return { ticket: next, message };
        }
        case 'comment': {
          const cur = requireTicket(state, ctx.key);
          const message = threadEntry(ctx, ctx.key, 'comment', msg.body, msg.author);
          ctx.batch.putRecord(message, 0);
          const next = nextVersion(
            cur,
            { data: { ...cur.data, commentCount: Number(cur.data.commentCount ?? 0) + 1 } },
            now,
          );
          ctx.batch.putRecord(next, cur.version);
          state.ticket = next;
          return { ticket: next, message };
        }
      }
    },
  };
}
