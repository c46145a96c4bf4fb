// Schemas and helpers shared by the chat, presence and community routes.
import { Type } from '@sinclair/typebox';
import { pageItems } from '../../../core/store/query.js';
import type { ListResult } from '../../../core/store/record.js';
import type { AppDeps } from '../../deps.js';

export const TAG_CHAT = 'Chat';
export const TAG_PRESENCE = 'Presence';
export const TAG_AI = 'AI';
export const TAG_COMMUNITY = 'Attendee community';

export const ChatId = Type.String({ pattern: '^[0-9a-f]{24}$', description: '24-character hexadecimal chat id' });
export const EmailParam = Type.Object({ email: Type.String({ format: 'email', maxLength: 320 }) });

export const Participant = Type.Object(
  {
    id: Type.String(),
    role: Type.String({ description: '`customer`, `agent`, `ai` or `system`' }),
    name: Type.Optional(Type.String()),
    email: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);

export const ChatMessage = Type.Object(
  {
    id: Type.String(),
    seq: Type.Integer({ description: 'Position in the chat, from 1, without gaps' }),
    chatId: Type.String(),
    from: Participant,
    text: Type.String(),
    type: Type.String({ description: '`text` or `system`' }),
    at: Type.String({ format: 'date-time' }),
    clientId: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
    status: Type.Optional(Type.String({ description: '`sent`, `delivered` or `read`: the other side\'s receipts' })),
  },
  { additionalProperties: true },
);

export const PresenceView = Type.Object({
  userId: Type.Union([Type.String(), Type.Null()]),
  email: Type.Union([Type.String(), Type.Null()]),
  name: Type.Union([Type.String(), Type.Null()]),
  kind: Type.String({ description: '`agent` or `customer`' }),
  status: Type.String({ description: '`online`, `away`, `busy` or `offline`' }),
  online: Type.Boolean(),
  connections: Type.Integer({ description: 'Open sockets' }),
  lastSeen: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
});

export function pageQuery(maxPageSize: number) {
  return {
    page: Type.Optional(Type.Integer({ minimum: 1, description: 'Page, 1-based (default 1)' })),
    pageSize: Type.Optional(Type.Integer({ minimum: 1, maximum: maxPageSize, description: `Page size (default 20, at most ${maxPageSize})` })),
  };
}

/** Pages an in-memory list into the spec's list envelope, with the store's paging rules. */
export function pageOf<T>(items: T[], q: { page?: number; pageSize?: number }, deps: AppDeps): ListResult<T> {
  return pageItems(items, q.page, q.pageSize, deps.config.store);
}
