// The community's announcements (actors/chat/ports.ts) as /community-chat events: which event,
// to which audience (a user's sockets, a group, the online-status watchers).
import type { Socket } from 'socket.io';
import type { CommunityFanout, PresenceFanout } from '../../actors/chat/index.js';
import type { Realtime } from './realtime.js';
import { communityTopic } from './topics.js';

export function communityFanout(rt: Realtime): CommunityFanout & Pick<PresenceFanout, 'onlineStatus'> {
  const user = (tenant: string, userId: string) => communityTopic.user(tenant, userId);
  const group = (tenant: string, groupId: string) => communityTopic.group(tenant, groupId);
  return {
    directMessage: (tenant, [to, from], m, origin) => rt.emit(tenant, [user(tenant, to), user(tenant, from)], 'message', m, origin as Socket | undefined),
    groupMessage: (tenant, groupId, m, origin) => rt.emit(tenant, [group(tenant, groupId)], 'groupMessage', m, origin as Socket | undefined),
    typingToUser: (tenant, to, event) => rt.emit(tenant, [user(tenant, to)], 'typing', event),
    typingInGroup: (tenant, groupId, event) => rt.emit(tenant, [group(tenant, groupId)], 'typing', event),
    followGroup: (tenant, userId, groupId) => rt.subscribeUser(tenant, user(tenant, userId), group(tenant, groupId)),
    unfollowGroup: (tenant, userId, groupId) => rt.unsubscribeUser(tenant, user(tenant, userId), group(tenant, groupId)),
    onlineStatus: (tenant, status) => rt.emit(tenant, [communityTopic.presence(tenant)], 'onlineStatus', status),
  };
}
