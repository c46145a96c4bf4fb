// The attendee community over REST: the same message send as the /community-chat socket, for a
// client whose socket is down (spec: Events → /community-chat).
import { Type } from '@sinclair/typebox';
import type { CommunityUser } from '../../../actors/community/community.js';
import { appError } from '../../../core/errors.js';
import type { AppDeps } from '../../deps.js';
import { route, type RouteDef } from '../../route.js';
import type { ChatFeature } from '../../sockets/chat-feature.js';
import { GroupId, messageText, UserId } from '../../sockets/schemas.js';
import { TAG_COMMUNITY } from './common.js';

const CommunityMessage = Type.Object(
  {
    id: Type.String(),
    seq: Type.Integer({ description: 'Position in its conversation, from 1' }),
    threadId: Type.String({ description: '`d:<a>:<b>` (direct) or `g:<groupId>`' }),
    groupId: Type.Optional(Type.String()),
    to: Type.Optional(Type.String()),
    from: Type.Object({ id: Type.String(), name: Type.Optional(Type.String()), email: Type.Optional(Type.String()) }),
    text: Type.String(),
    at: Type.String({ format: 'date-time' }),
    clientId: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export function communityRoutes(f: ChatFeature, deps: AppDeps): RouteDef[] {
  return [
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
        const { to, groupId, text, clientId } = ctx.body;
        if ((to === undefined) === (groupId === undefined)) throw appError('ERR_VALIDATION', 'body needs exactly one of to or groupId');
        const p = ctx.principal!;
        const from: CommunityUser = { id: p.sub };
        if (p.email) from.email = p.email.toLowerCase();
        return to !== undefined
          ? f.community.sendDirect(ctx.tenant, from, to, text, clientId)
          : f.community.sendGroup(ctx.tenant, from, groupId!, text, clientId);
      },
    }),
  ];
}
