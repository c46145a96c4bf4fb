// What the presence actor accepts and answers, and its kind's name: callers address it with these.

export const PRESENCE_KEY = 'tenant';

export const PRESENCE_ACTOR = 'presence';

export type PresenceStatus = 'online' | 'away' | 'busy' | 'offline';

export type UserKind = 'agent' | 'customer';

export interface PresenceUser {
  userId: string;
  email: string | null;
  name: string | null;
  kind: UserKind;
}

export interface PresenceView extends PresenceUser {
  status: PresenceStatus;
  online: boolean;
  connections: number;
  lastSeen: string | null;
}

export interface PresenceChange extends PresenceView {
  /** True when the user went from offline to online or back (not just a status change). */
  onlineChanged: boolean;
}

export type PresenceMsg =
  | { type: 'connect'; user: PresenceUser; socketId: string }
  | { type: 'disconnect'; user: PresenceUser; socketId: string; graceMs: number }
  | { type: 'set-status'; user: PresenceUser; status: PresenceStatus; viaRest: boolean; ttlMs: number }
  | { type: 'sweep'; graceMs: number }
  | { type: 'get'; kind: UserKind; email: string }
  | { type: 'list'; kind?: UserKind; onlineOnly: boolean }
  | { type: 'stats' };

export interface PresenceReply {
  changes: PresenceChange[];
  /** Epoch ms of the next moment a sweep may change something (0: nothing new pending). */
  dueAt: number;
  users?: PresenceView[];
  user?: PresenceView | null;
  stats?: { agents: Record<PresenceStatus, number>; customers: { online: number; offline: number }; connections: number };
}
