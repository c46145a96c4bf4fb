// Support chat over REST (spec: Endpoints → Chat and presence): chat sessions, history, a
// customer's messages, the widget configuration, and the queue.
import { Type } from '@sinclair/typebox';
import { CHAT_DATATYPE } from '../../../actors/chat/index.js';
import { resolvePaging } from '../../../core/store/query.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import type { ChatFeature } from '../../sockets/chat-feature.js';
import { OneOf } from '../../sockets/schemas.js';
import { AfterCursor, ListOf, RecordSchema } from '../records/schemas.js';
import { ChatId, ChatMessage, EmailParam, pageOf, pageQuery, Participant, TAG_CHAT } from './common.js';
import { listRecords } from '../../../actors/records/index.js';

const QueueEntry = Type.Object({
  chatId: Type.String(),
  position: Type.Integer({ description: '1 is next' }),
  queuedAt: Type.String({ format: 'date-time' }),
  waitSeconds: Type.Integer(),
  department: Type.Union([Type.String(), Type.Null()]),
  subject: Type.Union([Type.String(), Type.Null()]),
  customer: Participant,
});

const Position = Type.Object({
  chatId: Type.String(),
  status: Type.String({ description: 'The chat status: `ai`, `queued`, `assigned` or `closed`' }),
  position: Type.Union([Type.Integer(), Type.Null()], { description: 'Null unless the chat waits in the queue' }),
  waiting: Type.Integer({ description: 'Chats waiting in the queue' }),
});

const WidgetConfig = Type.Object({
  chatId: Type.String(),
  greeting: Type.String(),
  departments: Type.Array(Type.Object({ id: Type.String(), name: Type.String() }, { additionalProperties: true })),
  aiEnabled: Type.Boolean(),
  aiName: Type.String(),
  offlineMessage: Type.String(),
  requireEmail: Type.Boolean(),
  source: Type.String({ description: '`widget` (its own chat_config record), `default` (the tenant\'s) or `built-in`' }),
});

export function chatRoutes(f: ChatFeature, deps: AppDeps): RouteDef[] {
  const max = deps.config.store.maxPageSize;
  const svc = f.api.chat;

  return [
    route({
      method: 'GET',
      path: '/chat/sessions',
      auth: 'staff',
      tag: TAG_CHAT,
      summary: 'List chat sessions (support conversations), newest first',
      description:
        'Each is a `chat` record; `data.lastSeq` is the sequence number of its latest message. Filter by `status` (`ai`, ' +
        '`queued`, `assigned`, `closed`), `agentId` or customer `email`. All sessions, or those of one filter, are read by ' +
        'index: any page answers as fast as the first, with `total` exact, by `page` or by cursor (send back as `after` the ' +
        '`next` of the previous page); two filters together read the smaller one\'s sessions and test each, the same way ' +
        'while they are at most 1,000, else by number only.',
      query: Type.Object({
        status: Type.Optional(OneOf(['ai', 'queued', 'assigned', 'closed'])),
        agentId: Type.Optional(Type.String({ minLength: 1, maxLength: 128 })),
        email: Type.Optional(Type.String({ format: 'email' })),
        ...pageQuery(max),
        ...AfterCursor,
      }),
      response: ListOf(RecordSchema),
      handler: async (ctx) => {
        const filter: Record<string, unknown> = {};
        if (ctx.query.status) filter['data.status'] = ctx.query.status;
        if (ctx.query.agentId) filter['data.agentId'] = ctx.query.agentId;
        if (ctx.query.email) filter['data.customerEmail'] = ctx.query.email.toLowerCase();
        const list = await listRecords(deps, ctx.tenant, CHAT_DATATYPE, filter, {
          page: ctx.query.page,
          pageSize: ctx.query.pageSize,
          after: ctx.query.after,
          sort: 'createdate',
          sortType: 'desc',
        });
        return { ...list, data: await svc.withLastSeq(ctx.tenant, list.data) };
      },
    }),

    route({
      method: 'GET',
      path: '/chat/history/:chatId',
      auth: 'staff',
      tag: TAG_CHAT,
      summary: "A chat's messages, paged by sequence number",
      description:
        'Without `afterSeq` or `beforeSeq` the latest `limit` messages (default 50, at most 200). `afterSeq` pages forward (a client catching up), `beforeSeq` pages back. Each message carries `status` from the other side\'s receipts.',
      params: Type.Object({ chatId: ChatId }),
      query: Type.Object({
        afterSeq: Type.Optional(Type.Integer({ minimum: 0 })),
        beforeSeq: Type.Optional(Type.Integer({ minimum: 1 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      }),
      response: Type.Object({
        chatId: Type.String(),
        chat: Type.Object({}, { additionalProperties: true }),
        data: Type.Array(ChatMessage),
        hasMore: Type.Boolean(),
        lastSeq: Type.Integer(),
      }),
      errors: [404],
      handler: (ctx) => svc.historyPage(ctx.tenant, ctx.params.chatId, ctx.query),
    }),

    route({
      method: 'GET',
      path: '/chat/messages/:email',
      auth: 'staff',
      tag: TAG_CHAT,
      summary: "Every chat message of one customer, across their chats, newest first",
      params: EmailParam,
      query: Type.Object(pageQuery(max)),
      response: ListOf(ChatMessage),
      handler: async (ctx) => {
        const { page, pageSize, offset } = resolvePaging(ctx.query, deps.config.store);
        const { data, total } = await svc.customerMessages(ctx.tenant, ctx.params.email.toLowerCase(), { offset, pageSize });
        return { data, total, hasNext: offset + data.length < total, page, pageSize };
      },
    }),

    route({
      method: 'GET',
      path: '/chat/config/:chatId',
      auth: 'none',
      tag: TAG_CHAT,
      summary: "The chat widget's configuration: greeting, departments, AI on or off",
      description:
        'Public (the widget reads it before anyone signs in). `chatId` names a widget (a `chat_config` record with that `data.chatId`) or a conversation (the configuration of the widget it came from); otherwise the tenant default (`data.chatId` = `default`) or the built-in one applies. With AI on, a customer\'s first message is answered by the AI; with it off, it goes straight to the queue.',
      params: Type.Object({ chatId: Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_.:-]+$' }) }),
      response: WidgetConfig,
      handler: (ctx) => svc.config(ctx.tenant, ctx.params.chatId),
    }),

    route({
      method: 'GET',
      path: '/chat/queue',
      auth: 'staff',
      tag: TAG_CHAT,
      summary: 'The chats waiting for an agent, longest-waiting first',
      query: Type.Object({ department: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })), ...pageQuery(max) }),
      response: ListOf(QueueEntry),
      handler: async (ctx) => pageOf(await svc.waitingList(ctx.tenant, ctx.query.department), ctx.query, deps),
    }),

    route({
      method: 'POST',
      path: '/chat/queue',
      auth: 'staff',
      tag: TAG_CHAT,
      summary: 'Put a chat in the queue (for example one the AI is handling)',
      description: 'Idempotent: a chat already waiting keeps its place. A chat with an agent is transferred instead (409); a closed chat stays closed (409).',
      body: Type.Object({ chatId: ChatId, department: Type.Optional(Type.String({ minLength: 1, maxLength: 100 })) }),
      response: Position,
      errors: [404, 409],
      handler: async (ctx) => {
        const p = ctx.principal!;
        const r = await svc.requeue(ctx.tenant, { id: p.sub, role: 'agent', ...(p.email ? { email: p.email } : {}) }, ctx.body.chatId, ctx.body.department ?? null);
        return { chatId: r.chat.chatId, status: r.chat.status, position: r.position, waiting: r.waiting };
      },
    }),

    route({
      method: 'GET',
      path: '/chat/queue/stats',
      auth: 'staff',
      tag: TAG_CHAT,
      summary: 'Queue length and waiting times, and how many agents are available',
      response: Type.Object({
        waiting: Type.Integer(),
        longestWaitSeconds: Type.Integer(),
        averageWaitSeconds: Type.Integer(),
        byDepartment: Type.Record(Type.String(), Type.Integer()),
        agentsOnline: Type.Integer({ description: 'Agents online, away or busy' }),
        agentsAvailable: Type.Integer({ description: 'Agents whose status is `online`' }),
      }),
      handler: (ctx) => svc.queueStats(ctx.tenant),
    }),

    route({
      method: 'GET',
      path: '/chat/queue/position/:chatId',
      auth: 'staff',
      tag: TAG_CHAT,
      summary: "A chat's place in the queue",
      params: Type.Object({ chatId: ChatId }),
      response: Position,
      errors: [404],
      handler: (ctx) => svc.position(ctx.tenant, ctx.params.chatId),
    }),
  ];
}
