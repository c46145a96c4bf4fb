// The presence actor, one per tenant (key `tenant`): who is online, on how many sockets, with
// which status. A user is online while they have at least one socket, or posted a status over
// REST recently (clients poll every 15 s: spec Limits), and stays online for a grace period after
// the last socket is gone, so a reconnect does not flap. Agents choose `online`, `away`, `busy` or
// `offline` (invisible); everyone else is online or offline.
//
// Sockets are memory only (they die with the process); the chosen status and the last-seen time
// are kept in the store (kv `presence`) so they survive a restart. The actor has no timers: the
// edge asks it to `sweep` when the earliest grace period or REST freshness runs out.
import type { ActorKind, ActivationContext } from '../../core/actor/runtime.js';
import { PRESENCE_ACTOR, type PresenceChange, type PresenceMsg, type PresenceReply, type PresenceStatus, type PresenceUser, type PresenceView, type UserKind } from './messages.js';
const KV = 'presence';

interface Entry extends PresenceUser {
  sockets: Set<string>;
  /** The status the user chose (agents); `online` otherwise. */
  chosen: PresenceStatus;
  /** Whether the last change told anyone this user is online. */
  shownOnline: boolean;
  lastSeen: number | null;
  /** When the last socket went away (epoch ms), while the grace period runs. */
  goneAt: number | null;
  /** Online by REST status until then (epoch ms). */
  restUntil: number;
}

export interface PresenceState {
  users: Map<string, Entry>;
}

interface Stored {
  userId: string;
  email: string | null;
  name: string | null;
  kind: UserKind;
  chosen: PresenceStatus;
  lastSeen: number | null;
}

export function presenceKey(kind: UserKind, emailOrId: string): string {
  return `${kind}:${emailOrId.toLowerCase()}`;
}

function keyOf(u: PresenceUser): string {
  return presenceKey(u.kind, u.email ?? u.userId);
}

function connected(e: Entry, now: number, graceMs: number): boolean {
  return e.sockets.size > 0 || (e.goneAt !== null && now < e.goneAt + graceMs) || now < e.restUntil;
}

function view(e: Entry, online: boolean): PresenceView {
  return {
    userId: e.userId,
    email: e.email,
    name: e.name,
    kind: e.kind,
    status: online ? e.chosen : 'offline',
    online,
    connections: e.sockets.size,
    lastSeen: e.lastSeen === null ? null : new Date(e.lastSeen).toISOString(),
  };
}

export const presenceActor: ActorKind<PresenceState, PresenceMsg, PresenceReply> = {
  kind: PRESENCE_ACTOR,
  // Sockets live only in this actor's memory: never passivate it while the process runs.
  idleMs: 2_000_000_000,

  activate(ctx: ActivationContext): PresenceState {
    const users = new Map<string, Entry>();
    for (const { key, value } of ctx.store.listKv<Stored>(ctx.tenant, KV)) {
      users.set(key, { ...value, sockets: new Set(), shownOnline: false, goneAt: null, restUntil: 0 });
    }
    return { users };
  },

  receive(s, msg, ctx): PresenceReply {
    const now = ctx.clock.now();
    const changes: PresenceChange[] = [];
    const persist = (e: Entry) => {
      const v: Stored = { userId: e.userId, email: e.email, name: e.name, kind: e.kind, chosen: e.chosen, lastSeen: e.lastSeen };
      ctx.batch.putKv(ctx.tenant, KV, keyOf(e), v);
    };
    const entry = (u: PresenceUser): Entry => {
      const k = keyOf(u);
      let e = s.users.get(k);
      if (!e) {
        e = { ...u, sockets: new Set(), chosen: 'online', shownOnline: false, lastSeen: null, goneAt: null, restUntil: 0 };
        s.users.set(k, e);
      } else {
        e.userId = u.userId;
        if (u.name) e.name = u.name;
      }
      return e;
    };
    /** Records a change when what others see of `e` differs from what they were last told. */
    const settle = (e: Entry, online: boolean, statusChanged: boolean) => {
      const onlineChanged = online !== e.shownOnline;
      if (!onlineChanged && !statusChanged) return;
      e.shownOnline = online;
      changes.push({ ...view(e, online), onlineChanged });
    };
    const due = (graceMs: number): number => {
      let next = 0;
      for (const e of s.users.values()) {
        if (!e.shownOnline || e.sockets.size > 0) continue;
        const t = Math.max(e.goneAt === null ? 0 : e.goneAt + graceMs, e.restUntil, now);
        if (next === 0 || t < next) next = t;
      }
      return next;
    };

    switch (msg.type) {
      case 'connect': {
        const e = entry(msg.user);
        // Connecting again is coming back: an agent who had gone invisible is online again.
        if (e.sockets.size === 0 && e.chosen === 'offline') e.chosen = 'online';
        e.sockets.add(msg.socketId);
        e.goneAt = null;
        e.lastSeen = now;
        settle(e, e.chosen !== 'offline', false);
        return { changes, dueAt: 0 };
      }
      case 'disconnect': {
        const e = s.users.get(keyOf(msg.user));
        if (!e || !e.sockets.delete(msg.socketId)) return { changes, dueAt: 0 };
        e.lastSeen = now;
        if (e.sockets.size > 0) return { changes, dueAt: 0 };
        e.goneAt = now;
        persist(e);
        // Only this user's grace period is new; the edge keeps the earliest of those pending.
        return { changes, dueAt: Math.max(now + msg.graceMs, e.restUntil) };
      }
      case 'set-status': {
        const e = entry(msg.user);
        const statusChanged = e.chosen !== msg.status;
        e.chosen = msg.status;
        e.lastSeen = now;
        if (msg.viaRest) e.restUntil = now + msg.ttlMs;
        persist(e);
        const online = msg.status !== 'offline' && (e.sockets.size > 0 || now < e.restUntil || (e.goneAt !== null && e.shownOnline));
        settle(e, online, statusChanged && online);
        return { changes, dueAt: msg.viaRest ? now + msg.ttlMs : 0, user: view(e, online) };
      }
      case 'sweep': {
        for (const e of s.users.values()) {
          if (!e.shownOnline || connected(e, now, msg.graceMs)) continue;
          e.goneAt = null;
          settle(e, false, false);
        }
        return { changes, dueAt: due(msg.graceMs) };
      }
      case 'get': {
        const e = s.users.get(presenceKey(msg.kind, msg.email));
        return { changes, dueAt: 0, user: e ? view(e, e.shownOnline) : null };
      }
      case 'list': {
        const users: PresenceView[] = [];
        for (const e of s.users.values()) {
          if (msg.kind && e.kind !== msg.kind) continue;
          if (msg.onlineOnly && !e.shownOnline) continue;
          users.push(view(e, e.shownOnline));
        }
        users.sort((a, b) => (a.email ?? a.userId).localeCompare(b.email ?? b.userId));
        return { changes, dueAt: 0, users };
      }
      case 'stats': {
        const agents: Record<PresenceStatus, number> = { online: 0, away: 0, busy: 0, offline: 0 };
        const customers = { online: 0, offline: 0 };
        let connections = 0;
        for (const e of s.users.values()) {
          connections += e.sockets.size;
          if (e.kind === 'agent') agents[e.shownOnline ? e.chosen : 'offline']++;
          else customers[e.shownOnline ? 'online' : 'offline']++;
        }
        return { changes, dueAt: 0, stats: { agents, customers, connections } };
      }
    }
  },
};
