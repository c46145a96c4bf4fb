// The chat area's announcements (actors/chat/ports.ts) as /chat events: which event, to which
// audience (a chat, a user's sockets, the staff). Delivery is realtime.ts's.
import type { Socket } from 'socket.io';
import type { PresenceFanout, SupportFanout } from '../../actors/chat/index.js';
import type { Realtime } from './realtime.js';
import { chatTopic } from './topics.js';

export function chatFanout(rt: Realtime): SupportFanout & Pick<PresenceFanout, 'agentPresence'> {
  const chat = (tenant: string, chatId: string) => [chatTopic.chat(tenant, chatId)];
  const user = (tenant: string, userId: string) => [chatTopic.user(tenant, userId)];
  return {
    queueUpdated: (tenant, view) => rt.emit(tenant, [chatTopic.staff(tenant)], 'queue-updated', view),
    queuePosition: (tenant, chatId, place) => rt.emit(tenant, chat(tenant, chatId), 'queue-notification', place),
    message: (tenant, m, origin) => rt.emit(tenant, chat(tenant, m.chatId), 'message', m, origin as Socket | undefined),
    chatUpdate: (tenant, chatId, update) => rt.emit(tenant, chat(tenant, chatId), 'update', update),
    receipts: (tenant, chatId, event) => rt.emit(tenant, chat(tenant, chatId), 'status', event),
    follow: (tenant, userId, chatId) => rt.subscribeUser(tenant, chatTopic.user(tenant, userId), chatTopic.chat(tenant, chatId)),
    unfollow: (tenant, userId, chatId) => rt.unsubscribeUser(tenant, chatTopic.user(tenant, userId), chatTopic.chat(tenant, chatId)),
    chatAssigned: (tenant, agentId, event) => rt.emit(tenant, user(tenant, agentId), 'chat-assigned', event),
    agentAssigned: (tenant, chatId, event) => rt.emit(tenant, chat(tenant, chatId), 'agent-assigned', event),
    chatTransferred: (tenant, agentId, event) => rt.emit(tenant, user(tenant, agentId), 'chat-transferred', event),
    agentChanged: (tenant, chatId, event) => rt.emit(tenant, chat(tenant, chatId), 'agent-changed', event),
    chatEnded: (tenant, chatId, event) => rt.emit(tenant, chat(tenant, chatId), 'chat-ended', event),
    aiStream: (tenant, chatId, part) => rt.emit(tenant, chat(tenant, chatId), 'ai-stream', part),
    assistStream: (tenant, agentId, part) => rt.emit(tenant, user(tenant, agentId), 'chat-stream', part),
    agentPresence: (tenant, view) => rt.emit(tenant, [chatTopic.staff(tenant)], 'presence-change', view),
  };
}
