// The shared inbox (spec: Endpoints → CRM (staff)): conversations threaded server-side by contact
// plus channel (email, sms, chat, social), their messages, and one update route for status, read
// flags and assignment that, with `?send=true`, also wraps a message into a record and sends it
// through the channel's outbox provider (which is how staff send an SMS).
import { Type } from '@sinclair/typebox';
import { CHANNELS, CONVERSATION_STATUSES, normalizeContact, type ConversationRef, type InboxApi } from '../../../actors/inbox/index.js';
import { AppError } from '../../../core/errors.js';
import type { CrmApi } from '../../../actors/crm/index.js';
import { route, type RouteDef } from '../../route.js';
import { crmList } from './listing.js';
import { Enum, Email, Id, ListOf, PageProps, RecordOf } from './schemas.js';

const TAG = 'Inbox';
const ChannelT = Enum(CHANNELS);
const StatusT = Enum(CONVERSATION_STATUSES);
const ConversationRecord = RecordOf(
  // Free-form: the generic record store can write a conversation record with any data, and the
  // list must still answer it as stored.
  Type.Object(
    {},
    {
      additionalProperties: true,
      description: 'channel, contact, contactName, status, assignedTo, unread, messageCount, lastMessageAt, lastMessagePreview, lastDirection, address',
    },
  ),
);
const MessageRecord = RecordOf(
  Type.Object({}, {
    additionalProperties: true,
    description: 'conversationId, channel, direction (inbound or outbound), contact, from, to, body, subject, status, read, at, delivery {outboxId}',
  }),
);

export function inboxRoutes(crm: CrmApi, inbox: InboxApi): RouteDef[] {
  return [
    route({
      method: 'GET',
      path: '/crm/inbox/conversations',
      auth: 'staff',
      tag: TAG,
      summary: 'Conversations, most recent message first, with unread counts',
      description:
        'One conversation per contact plus channel. Filters: channel, status, assignedTo (`none` for unassigned), unread (true: only those with unread messages), q (contact or name). `unreadTotal` sums the unread messages of every matching conversation, `unreadConversations` counts them.',
      query: Type.Object({
        channel: Type.Optional(ChannelT),
        status: Type.Optional(StatusT),
        assignedTo: Type.Optional(Type.String({ minLength: 1, maxLength: 254 })),
        unread: Type.Optional(Type.Boolean()),
        q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
        ...PageProps,
      }),
      response: ListOf(ConversationRecord, { unreadTotal: Type.Integer(), unreadConversations: Type.Integer() }),
      handler: (ctx) => crmList(ctx, { list: 'inbox', ...ctx.query }),
    }),
    route({
      method: 'GET',
      path: '/crm/inbox/conversations/:parties',
      auth: 'staff',
      tag: TAG,
      summary: 'One conversation and its messages',
      description:
        '`parties` is the conversation id or `<channel>:<contact>` (e.g. `sms:+15551234567`, `email:ana@example.com`). Messages are oldest first unless `sortType=desc`; reading does not mark them read (use POST /crm/inbox/update).',
      params: Type.Object({ parties: Type.String({ minLength: 3, maxLength: 400 }) }),
      query: Type.Object({
        sortType: Type.Optional(Enum(['asc', 'desc'])),
        ...PageProps,
      }),
      response: Type.Object({ conversation: ConversationRecord, messages: ListOf(MessageRecord) }),
      errors: [404],
      handler: (ctx) => crm.conversation(ctx.tenant, ctx.params.parties, ctx.query),
    }),
    route({
      method: 'POST',
      path: '/crm/inbox/update',
      auth: 'staff',
      tag: TAG,
      summary: 'Change a conversation (status, read flags, assignment); with send=true, send a message',
      description:
        'Name the conversation by `conversationId`, or by `channel` and `contact`. `read` marks every inbound message read (true) or the newest unread (false); with `messageIds` only those. `assignedTo` is a staff email, null unassigns. With `?send=true`, `message {body, subject?, from?}` is recorded in the thread and sent through the outbox (email or sms channels); sending to a new contact opens the conversation.',
      query: Type.Object({ send: Type.Optional(Type.Boolean({ description: 'Send `message` through the channel provider' })) }),
      body: Type.Object({
        conversationId: Type.Optional(Id),
        channel: Type.Optional(ChannelT),
        contact: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
        status: Type.Optional(StatusT),
        read: Type.Optional(Type.Boolean()),
        messageIds: Type.Optional(Type.Array(Id, { minItems: 1, maxItems: 500 })),
        assignedTo: Type.Optional(Type.Union([Email, Type.Null()])),
        message: Type.Optional(
          Type.Object({
            body: Type.String({ minLength: 1, maxLength: 20_000 }),
            subject: Type.Optional(Type.String({ minLength: 1, maxLength: 300 })),
            from: Type.Optional(Type.String({ minLength: 1, maxLength: 320 })),
          }),
        ),
      }),
      response: Type.Object({ conversation: ConversationRecord, message: Type.Optional(MessageRecord) }),
      errors: [404],
      handler: async (ctx) => {
        const b = ctx.body;
        const send = ctx.query.send === true;
        const problems: string[] = [];
        if (!b.conversationId && !(b.channel && b.contact)) {
          problems.push('body/conversationId is required (or body/channel with body/contact)');
        }
        if (send && !b.message) problems.push('body/message is required with send=true');
        if (!send && b.message) problems.push('body/message is only accepted with send=true');
        if (b.messageIds && b.read === undefined) problems.push('body/read is required with body/messageIds');
        if (!b.message && b.status === undefined && b.read === undefined && b.assignedTo === undefined) {
          problems.push('body must change something: status, read, assignedTo or (with send=true) message');
        }
        if (problems.length) throw new AppError('ERR_VALIDATION', [problems.join('; ')], { messages: problems });
        const ref: ConversationRef = b.conversationId
          ? { conversationId: b.conversationId }
          : { channel: b.channel!, contact: normalizeContact(b.channel!, b.contact!, 'body/contact') };
        return inbox.update(ctx.tenant, ref, {
          status: b.status,
          read: b.read,
          messageIds: b.messageIds,
          assignedTo: b.assignedTo,
          send: send ? b.message : undefined,
          by: { email: ctx.principal!.email, id: ctx.principal!.sub },
        });
      },
    }),
  ];
}
