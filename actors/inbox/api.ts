// The inbox area's API: a conversation is addressed by its id or by the channel and contact it is
// threaded on (contact.ts: conversationId); every change is an ask to that conversation's actor.
import type { ActorRuntime } from '../../core/actor/runtime.js';

import { conversationId, type Channel } from './contact.js';
import { INBOX_ACTOR, type ConversationChange, type InboundMessage, type InboxMsg, type InboxReply } from './messages.js';

/** What the area needs of its node. */
export interface InboxParts {
  readonly runtime: Pick<ActorRuntime, 'ask'>;
}

/** A conversation by its id, or by channel and (normalized) contact, which opens it when new. */
export type ConversationRef = { conversationId: string } | { channel: Channel; contact: string };

export interface InboxApi {
  /** Threads an inbound message (contact normalized) into its conversation; a repeated externalId answers `duplicate`. */
  receive(tenant: string, message: InboundMessage): Promise<InboxReply & { conversationId: string }>;
  update(tenant: string, ref: ConversationRef, change: ConversationChange): Promise<InboxReply>;
}

export function createInboxApi(parts: InboxParts): InboxApi {
  const { runtime } = parts;
  const ask = (tenant: string, id: string, msg: InboxMsg) => runtime.ask<InboxReply>(tenant, INBOX_ACTOR, id, msg);
  return {
    async receive(tenant, message) {
      const id = conversationId(message.channel, message.contact);
      return { ...(await ask(tenant, id, { type: 'receive', message })), conversationId: id };
    },
    update(tenant, ref, change) {
      if ('conversationId' in ref) return ask(tenant, ref.conversationId, { type: 'update', ...change });
      return ask(tenant, conversationId(ref.channel, ref.contact), { type: 'update', channel: ref.channel, contact: ref.contact, ...change });
    },
  };
}
