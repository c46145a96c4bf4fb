// The audiences of server events, as uWS topics (see realtime.ts).
import { NS_CHAT, NS_COMMUNITY, Realtime } from './realtime.js';

export const chatTopic = {
  /** Every staff socket of the tenant on /chat (queue-updated, presence-change, sms.received). */
  staff: (tenant: string) => Realtime.topic(NS_CHAT, tenant, 'staff'),
  /** Every /chat socket of one user. */
  user: (tenant: string, userId: string) => Realtime.topic(NS_CHAT, tenant, 'u', userId),
  /** Everyone in a chat: its customer, its agent, observers. */
  chat: (tenant: string, chatId: string) => Realtime.topic(NS_CHAT, tenant, 'chat', chatId),
};

export const communityTopic = {
  /** Every /community-chat socket of one user. */
  user: (tenant: string, userId: string) => Realtime.topic(NS_COMMUNITY, tenant, 'u', userId),
  group: (tenant: string, groupId: string) => Realtime.topic(NS_COMMUNITY, tenant, 'g', groupId),
  /** Sockets that asked getOnlineUsers: they get onlineStatus on every connect and disconnect. */
  presence: (tenant: string) => Realtime.topic(NS_COMMUNITY, tenant, 'presence'),
};
