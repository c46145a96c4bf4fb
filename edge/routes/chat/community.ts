// The attendee community over REST (spec: Events → /community-chat): the same message send as
// the /community-chat socket, for a client whose socket is down; the caller's conversations with
// unread counts; a page of one conversation; the read marker.
import { Type } from '@sinclair/typebox';
import type { CommunityUser } from '../../../actors/chat/index.js';
import { appError } from '../../../core/errors.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import { ListOf } from '../../schemas.js';
import type { ChatFeature } from '../../sockets/chat-feature.js';
import { CommunityMessage, GroupId, messageText, ThreadId, UserId } from '../../sockets/schemas.js';
import { pageOf, pageQuery, TAG_COMMUNITY } from './common.js';

const THREAD_ID_SHAPE = '`d:<lower user id>:<higher user id>` (direct) or `g:<groupId>`';
const THREAD_ID_DOC = `a conversation: ${THREAD_ID_SHAPE}, as \`threadId\` in messages; URL-encoded or not`;
const ThreadParam = Type.Object({ threadId: Type.String({ minLength: 3, maxLength: 400, description: THREAD_ID_DOC }) });
const threadIdPattern = new RegExp(ThreadId.pattern as string);

/** The thread id of the path, decoded (clients encode the colons) and checked. */
function threadIdOf(raw: string): string {
  let id: string;
  try {
    id = decodeURIComponent(raw);
  } catch {
    id = raw;
  }
  if (!threadIdPattern.test(id)) throw appError('ERR_VALIDATION', `params/threadId must be ${THREAD_ID_SHAPE}`);
  return id;
}

export function communityRoutes(f: ChatFeature, deps: AppDeps): RouteDef[] {
  const maxPage = deps.config.store.maxPageSize;
  const ThreadSummary = Type.Object({
    threadId: Type.String({ description: THREAD_ID_DOC }),
    kind: Type.String({ description: '`direct` or `group`' }),
    with: Type.Optional(Type.String({ description: 'The other user of a direct conversation' })),
    groupId: Type.Optional(Type.String()),
    lastSeq: Type.Integer({ description: 'Seq of the latest message (0: none yet)' }),
    readSeq: Type.Integer({ description: "The caller's read marker (markRead); their own messages count as read" }),
    unread: Type.Integer({ description: 'Messages after the read marker' }),
    lastMessage: Type.Union([CommunityMessage, Type.Null()]),
  });
  const Page = Type.Object({
    threadId: Type.String(),
    messages: Type.Array(CommunityMessage),
    hasMore: Type.Boolean({ description: 'More messages in the direction paged' }),
    lastSeq: Type.Integer(),
    readSeq: Type.Integer(),
  });

  return [
    route({
      method: 'GET',
      path: '/client/community/threads',
      auth: 'customer',
      tag: TAG_COMMUNITY,
      summary: "The caller's community conversations with unread counts",
      description:
        "Direct conversations (listed for both users from their first message, so a customer who never connected finds the messages sent to them) and the groups the caller joined, latest message first, with `unread` = messages after the caller's read marker (`markRead` on the socket or `POST /client/community/threads/:threadId/read`). `unread=true` lists only those with unread messages. Page a conversation with `GET /client/community/threads/:threadId/messages`. Customer and staff tokens alike: each sees their own conversations. On connect, `/community-chat` replays these unread messages itself (at most `COMMUNITY_REPLAY_LIMIT`, " +
        String(deps.config.chat.communityReplayLimit) +
        ", per connect; past it the `replay-truncated` event names where each conversation stopped).",
      query: Type.Object({
        unread: Type.Optional(Type.Boolean({ description: 'Only conversations with unread messages' })),
        ...pageQuery(maxPage),
      }),
      response: ListOf(ThreadSummary),
      handler: (ctx) => pageOf(f.api.community.threads(ctx.tenant, ctx.principal!.sub, ctx.query.unread === true), ctx.query, deps),
    }),

    route({
      method: 'GET',
      path: '/client/community/threads/:threadId/messages',
      auth: 'customer',
      tag: TAG_COMMUNITY,
      summary: 'A page of one community conversation',
      description:
        'With `afterSeq`: the messages after it, oldest first (catch up from a seq, e.g. `nextAfterSeq` of `replay-truncated`). Otherwise the latest messages before `beforeSeq` (default: the newest), oldest first, for scrolling back. `limit` 1-200 (default 50). Direct conversations are read by their two users, groups by their members (403 until joined). Reading does not move the read marker.',
      params: ThreadParam,
      query: Type.Object({
        afterSeq: Type.Optional(Type.Integer({ minimum: 0 })),
        beforeSeq: Type.Optional(Type.Integer({ minimum: 1 })),
        limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
      }),
      response: Page,
      errors: [403, 404],
      handler: (ctx) => f.api.community.page(ctx.tenant, ctx.principal!.sub, threadIdOf(ctx.params.threadId), ctx.query),
    }),

    route({
      method: 'POST',
      path: '/client/community/threads/:threadId/read',
      auth: 'customer',
      tag: TAG_COMMUNITY,
      summary: 'Move the read marker of a community conversation',
      description:
        "As `markRead` on the socket: the caller has read up to `seq`. The marker never goes back (a lower seq is accepted and changes nothing); a seq past the last message is refused. It sets `unread` in the thread list and where the next connect's replay starts.",
      params: ThreadParam,
      body: Type.Object({ seq: Type.Integer({ minimum: 1 }) }),
      response: Type.Object({ threadId: Type.String(), seq: Type.Integer() }),
      errors: [403, 404],
      handler: (ctx) => f.api.community.readUpTo(ctx.tenant, ctx.principal!.sub, threadIdOf(ctx.params.threadId), ctx.body.seq),
    }),

    route({
      method: 'POST',
      path: '/client/community/messages',
      auth: 'customer',
      tag: TAG_COMMUNITY,
      summary: 'Send a community message (direct or to a group) without the socket',
      description:
        'Exactly one of `to` (a user id: direct message) or `groupId` (a group the caller has joined). The message is stored and delivered to every open socket of the recipient (or group members) as `message` / `groupMessage`. A resend with the same `clientId` answers the first message again instead of storing a second.',
      status: 201,
      body: Type.Object({
        to: Type.Optional(UserId),
        groupId: Type.Optional(GroupId),
        text: messageText(deps.config.chat.maxMessageLength),
        clientId: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
      }),
      response: CommunityMessage,
      errors: [403, 404],
      handler: (ctx) => {
        const p = ctx.principal!;
        const from: CommunityUser = { id: p.sub };
        if (p.email) from.email = p.email.toLowerCase();
        return f.api.community.send(ctx.tenant, from, ctx.body);
      },
    }),
  ];
}
