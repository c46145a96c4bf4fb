// What the /chat and /community channels need from the node's chat feature (chat-feature.ts, which
// builds them and is one): the realtime server, the node's deps and chat API, the organisations
// the handshake checks, the idle customer sockets, and the charge of one client event to its
// organisation's rate limit.
import type { Socket } from 'socket.io';
import type { ChatApi, ChatConnection } from '../../actors/chat/index.js';
import type { OrgLookup } from '../../core/auth/org-lookup.js';
import type { Principal } from '../../core/auth/tokens.js';
import type { AppDeps } from '../deps.js';
import type { Realtime } from './realtime.js';

/** A customer socket's idle tracking (the session itself is the chat area's). */
export interface ChatSocketState {
  readonly chat: ChatConnection;
  lastActivity: number;
  warned: boolean;
  timers: NodeJS.Timeout[];
  clearTimers(): void;
}

export interface ChannelHost {
  readonly rt: Realtime;
  readonly deps: AppDeps;
  readonly api: ChatApi;
  readonly orgs: OrgLookup;
  /** Customer sockets on /chat of this node (idle sessions). */
  readonly customerSockets: Map<Socket, ChatSocketState>;
  chargeEvent(tenant: string, principal: Principal): void;
}
